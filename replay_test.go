package reins_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Issue 24: replay re-decides the records a standing grant decided and those a hard stop that
// depends on the action alone decided (a write outside the workspace), and reports the records
// it cannot re-decide, with the reason for each: a latched halt, a budget hard stop (both the
// run's state at the time), an unreadable run state (a failure of the moment).
func TestReplayRedecidesGrantAndExternalWriteRecords(t *testing.T) {
	ctx := context.Background()
	ws := workspace(t)
	outside := filepath.Join(t.TempDir(), "x")
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := audit.OpenJSONL(logPath, nil)
	require.NoError(t, err)
	trusted := builtin(profile.PermissionTrusted)

	state := reins.NewMemoryStore()
	ap := &script{answers: []reins.Answer{{Verdict: policy.Allow, Scope: reins.ForSession, By: "alice"}}}
	r, err := reins.New(ctx, trusted, &reins.Options{Workspace: []string{ws}, Audit: sink, Approver: ap, Store: state,
		Checkpointer: &nopCheckpointer{}, Meters: []reins.Meter{{Name: reins.MeterCost, Limit: 100}}, TrustAnalysis: true})
	require.NoError(t, err)
	defer r.Close()
	rm := shellAction("rm -rf build")
	_, err = r.Do(ctx, rm, ok) // CONFIRM by the matrix, approved for the session
	require.NoError(t, err)
	out, err := r.Do(ctx, rm, ok) // ALLOW by the grant
	require.NoError(t, err)
	require.True(t, grantedBy(out.Decision))
	d, err := r.Check(ctx, writeAction(outside)) // DENY by the external-write hard stop, latched
	require.NoError(t, err)
	require.Equal(t, gate.CheckHardStopExternalWrite, d.RuleID)
	_, err = r.Check(ctx, readme) // DENY: halted
	require.NoError(t, err)
	require.NoError(t, r.Reset(ctx, "reviewed"))
	// A budget meter exhausted in a shared store (another run spent it; its halt was reset):
	// the budget hard stop decides.
	_, err = state.Update(ctx, func(s *reins.RunState) error {
		m := s.Meters[reins.MeterCost]
		m.Used, m.Exhausted, m.Reason = 100, true, "budget exceeded: cost used 100 of 100"
		s.Meters[reins.MeterCost] = m
		return nil
	})
	require.NoError(t, err)
	d, err = r.Check(ctx, readme)
	require.NoError(t, err)
	require.Equal(t, gate.CheckHardStopBudget, d.RuleID)
	_, err = r.Check(ctx, readme) // halted by the budget
	require.NoError(t, err)
	// A run whose state cannot be read: the Deny is recorded.
	broken, err := reins.New(ctx, trusted, &reins.Options{Workspace: []string{ws}, Audit: sink, Store: brokenStore{}})
	require.NoError(t, err)
	_, err = broken.Check(ctx, readme)
	require.ErrorIs(t, err, reins.ErrRunState)
	require.NoError(t, sink.Close(ctx))

	var grantRec, writeRec bool
	for rec, err := range audit.Scan(logPath, nil) {
		require.NoError(t, err)
		grantRec = grantRec || rec.Kind == audit.KindDecision && strings.HasPrefix(rec.RuleMatched, gate.CheckGrantPrefix)
		writeRec = writeRec || rec.Kind == audit.KindDecision && rec.RuleMatched == gate.CheckHardStopExternalWrite
	}
	require.True(t, grantRec && writeRec, "the log holds a grant's and an external write's decision")
	wantSkipped := map[string]int{
		"decided by the run's state (a latched halt)":    2,
		"decided by the run's state (hard-stop:budget)":  1,
		"decided by a failure of the moment (run-state)": 1,
	}

	// Under the same profile nothing changes, and both records were re-decided.
	rep, err := reins.Replay(ctx, audit.Scan(logPath, nil), trusted, &reins.ReplayOptions{Workspace: []string{ws}})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Decisions, "the CONFIRM, the grant's ALLOW, the external write")
	assert.Equal(t, 4, rep.Skipped)
	assert.Equal(t, wantSkipped, rep.SkippedWhy)
	assert.Empty(t, rep.Changes)

	// Under a profile that denies rm -rf build, the grant's ALLOW would change: no grant
	// outranks a DENY.
	rep, err = reins.Replay(ctx, audit.Scan(logPath, nil), builtin(profile.PermissionSupervised), &reins.ReplayOptions{Workspace: []string{ws}})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Decisions)
	assert.Equal(t, wantSkipped, rep.SkippedWhy)
	var byGrant bool
	for _, c := range rep.Changes {
		if strings.HasPrefix(c.Record.RuleMatched, gate.CheckGrantPrefix) {
			byGrant = true
			assert.Equal(t, policy.Allow, c.Was.Decision.Verdict)
			assert.Equal(t, policy.Deny, c.Now.Decision.Verdict)
			assert.Equal(t, "rm -rf build", c.Action.Command)
		}
	}
	assert.True(t, byGrant, "the grant-decided record is re-decided: %v", rep.Changes)

	// Under a profile that leaves external writes to its rules, the hard stop's DENY would
	// change.
	rep, err = reins.Replay(ctx, audit.Scan(logPath, nil), builtin(profile.ApprovalSafe), &reins.ReplayOptions{Workspace: []string{ws}})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Decisions)
	var byWrite bool
	for _, c := range rep.Changes {
		if c.Record.RuleMatched == gate.CheckHardStopExternalWrite {
			byWrite = true
			assert.Equal(t, policy.Deny, c.Was.Decision.Verdict)
			assert.NotEqual(t, policy.Deny, c.Now.Decision.Verdict, "%s", c)
		}
	}
	assert.True(t, byWrite, "the external write's record is re-decided: %v", rep.Changes)
}
