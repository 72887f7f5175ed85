package audit_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

// TestInputField: a tool call's input is encoded like encoding/json does, reads back, and is
// redacted by the default redactor.
func TestInputField(t *testing.T) {
	r := audit.Record{Kind: audit.KindDecision, Tool: "mcp__gh__create", Input: `{"title":"x","token":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}`}
	enc, err := audit.AppendJSON(nil, &r)
	require.NoError(t, err)
	var back audit.Record
	require.NoError(t, json.Unmarshal(enc, &back))
	assert.Equal(t, r.Input, back.Input)

	red := r
	audit.RedactSecrets(&red)
	assert.NotContains(t, red.Input, "ghp_0123456789abcdefghij")
	assert.Contains(t, red.Input, audit.Mask)
}
