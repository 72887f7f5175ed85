package reins_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

func TestEndToEndApprovedDestructiveFailureIsRolledBack(t *testing.T) {
	ctx := context.Background()
	e := newE2E(t, func(o *reins.Options) {
		o.Approver = reins.ApproverFunc(func(_ context.Context, req reins.Request) (reins.Answer, error) {
			if req.Action.Command == "rm -rf build && false" {
				return reins.Answer{Verdict: policy.Allow, By: "erin", Note: "try it"}, nil
			}
			return reins.Answer{Verdict: policy.Deny, By: "erin"}, nil
		})
	})
	out, _, err := e.r.DoCommand(ctx, shellAction("rm -rf build && false"), sandbox.Command{})
	var ae *reins.ActionError
	require.ErrorAs(t, err, &ae)
	assert.True(t, out.RolledBack)
	assert.FileExists(t, filepath.Join(e.ws, "build", "out.bin"), "rolled back")

	// A denied action leaves the workspace untouched.
	_, _, err = e.r.DoCommand(ctx, shellAction("rm -rf docs"), sandbox.Command{})
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.FileExists(t, filepath.Join(e.ws, "docs", "a.md"))

	recs := e.verify(t)
	var kinds []audit.Kind
	for _, r := range recs {
		if r.DecisionID == out.Decision.DecisionID {
			kinds = append(kinds, r.Kind)
		}
	}
	assert.Equal(t, []audit.Kind{audit.KindDecision, audit.KindApproval, audit.KindCheckpointCreated,
		audit.KindOutcome, audit.KindCheckpointRestored}, kinds, "decision, approval, checkpoint, failure, rollback")
	for _, r := range recs {
		if r.Kind == audit.KindApproval && r.Decision == policy.Allow {
			assert.Equal(t, "erin", r.Approver)
			assert.Equal(t, "once", r.ApprovalScope)
			assert.True(t, r.UserOverride)
		}
		if r.Kind == audit.KindOutcome && r.DecisionID == out.Decision.DecisionID {
			assert.Equal(t, audit.OutcomeRolledBack, r.Outcome)
		}
	}
}

func TestEndToEndFailuresLatchOrDeescalate(t *testing.T) {
	ctx := context.Background()
	for _, pol := range []reins.FailurePolicy{reins.FailuresLatch, reins.FailuresDeescalate} {
		e := newE2E(t, func(o *reins.Options) { o.OnRepeatedFailure = pol })
		for range 3 {
			_, _, err := e.r.DoCommand(ctx, shellAction("sh -c 'exit 3'"), sandbox.Command{})
			var ce *reins.CommandError
			require.ErrorAs(t, err, &ce)
		}
		_, halted := e.r.Halted(ctx)
		assert.Equal(t, pol == reins.FailuresLatch, halted)
		if pol == reins.FailuresDeescalate {
			assert.Equal(t, policy.BandSupervised, e.r.Profile().Band())
		}
		e.verify(t)
	}
}

func TestEndToEndEmergencyStopCancelsASandboxedCommand(t *testing.T) {
	ctx := context.Background()
	e := newE2E(t, nil)
	done := make(chan error, 1)
	go func() {
		_, _, err := e.r.DoCommand(ctx, shellAction("sleep 30"), sandbox.Command{})
		done <- err
	}()
	for e.r.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	at := time.Now()
	e.r.EmergencyStop(ctx, "stop")
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Less(t, time.Since(at), time.Second)
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled")
	}
	e.verify(t)
}

func TestEndToEndEscapeLatchesThroughTheRunner(t *testing.T) {
	ctx := context.Background()
	e := newE2E(t, nil)
	// The command line is harmless as written; the working directory it asks for is outside
	// the workspace, which only the sandbox sees.
	_, res, err := e.r.DoCommand(ctx, shellAction("ls"), sandbox.Command{Args: []string{"ls"}, Dir: "/etc"})
	require.Error(t, err)
	require.True(t, res.Escaped(), "the sandbox reports a violation")
	h, halted := e.r.Halted(ctx)
	require.True(t, halted)
	assert.Equal(t, gate.CauseSandboxEscape, h.Cause)
	_, _, err = e.r.DoCommand(ctx, shellAction("ls"), sandbox.Command{})
	require.ErrorIs(t, err, gate.ErrDenied)
	e.verify(t)
}
