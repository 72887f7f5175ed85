package audit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

// TestBundleVersionField: a record names the policy bundle version after the profile hash and
// reads back; a record without one encodes exactly as before the field existed.
func TestBundleVersionField(t *testing.T) {
	t.Parallel()
	rec := audit.Record{Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Profile: "PROFILE-DEV", Kind: audit.KindDecision,
		Decision: policy.Allow, RuleMatched: "matrix", ProfileHash: "sha256:aa", BundleVersion: 42}
	line, err := audit.AppendJSON(nil, &rec)
	require.NoError(t, err)
	assert.Contains(t, string(line), `"profile_hash":"sha256:aa","bundle_version":42`)
	back, err := audit.ParseJSON(line)
	require.NoError(t, err)
	assert.Equal(t, uint64(42), back.BundleVersion)

	rec.BundleVersion = 0
	line, err = audit.AppendJSON(nil, &rec)
	require.NoError(t, err)
	assert.NotContains(t, string(line), "bundle_version", "omitted when zero: older readers read it")
}
