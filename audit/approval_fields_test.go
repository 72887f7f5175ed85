package audit_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

// TestApprovalFieldsRoundTrip: the approval fields encode like encoding/json and parse back.
func TestApprovalFieldsRoundTrip(t *testing.T) {
	r := audit.Record{Time: time.Date(2026, 11, 23, 19, 0, 0, 0, time.UTC), Kind: "approval", Decision: policy.Allow,
		UserOverride: true, DecidedBy: audit.DecidedByUser, Approver: "alice <a@example.com>", ApprovalScope: "session",
		Note: "fine for the build dir"}
	enc, err := audit.AppendJSON(nil, &r)
	require.NoError(t, err)
	want, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(enc))
	back, err := audit.ParseJSON(enc)
	require.NoError(t, err)
	assert.Equal(t, r.Approver, back.Approver)
	assert.Equal(t, r.ApprovalScope, back.ApprovalScope)
	assert.Equal(t, r.Note, back.Note)

	red := r
	red.Note = "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	audit.RedactSecrets(&red)
	assert.NotContains(t, red.Note, "ghp_0123456789")
}
