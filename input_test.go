package reins_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestInputIsRecordedBounded: the tool call's input reaches the decision record, cut to
// policy.MaxInput bytes at a rune boundary.
func TestInputIsRecordedBounded(t *testing.T) {
	sink := audit.NewMemory(10)
	r, err := reins.New(context.Background(), profile.Dev.Profile(), &reins.Options{Workspace: []string{t.TempDir()}, Audit: sink})
	require.NoError(t, err)
	a := policy.Action{Tool: "mcp__x__y", Operation: policy.OpTool, Input: `{"q":"small"}`}
	_, _ = r.Check(context.Background(), a)
	a.Input = `{"q":"` + strings.Repeat("é", policy.MaxInput) + `"}`
	_, _ = r.Check(context.Background(), a)
	recs := sink.Records()
	require.Len(t, recs, 2)
	assert.Equal(t, `{"q":"small"}`, recs[0].Input)
	assert.LessOrEqual(t, len(recs[1].Input), policy.MaxInput+len("…[cut]"))
	assert.True(t, strings.HasSuffix(recs[1].Input, "…[cut]"))
	assert.True(t, utf8.ValidString(recs[1].Input))
}
