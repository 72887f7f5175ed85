package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

// e2e is the real stack: a git workspace, the real checkpointer, the hardened sandbox as the
// runner for every command (skipped with a reason where the machine cannot provide it, failed
// under REINS_TEST_STRICT=1) and a JSONL audit log.
type e2e struct {
	ws, log string
	sink    *audit.JSONL
	g       *gate.Gate
	s       *session.Session
}

func newE2E(t *testing.T, gopts gate.Options, tune func(*session.Options)) *e2e {
	t.Helper()
	ws := gitWorkspace(t)
	hard, err := hardened.New(hardened.Config{Root: ws})
	if err == nil {
		var res sandbox.Result
		res, err = hard.Run(context.Background(), sandbox.Command{Args: []string{"true"}})
		if err == nil && res.ExitCode != 0 {
			err = errors.New(string(res.Stderr))
		}
	}
	if err != nil {
		if os.Getenv("REINS_TEST_STRICT") == "1" {
			t.Fatalf("the hardened sandbox is not available: %v", err)
		}
		t.Skipf("the hardened sandbox is not available here: %v", err)
	}
	t.Cleanup(func() { _ = hard.Close() })
	e := &e2e{ws: ws, log: filepath.Join(t.TempDir(), "audit.jsonl")}
	e.sink, err = audit.OpenJSONL(e.log, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.sink.Close(context.Background()) })
	cp, err := checkpoint.New(context.Background(), ws, &checkpoint.Options{ShadowRoot: t.TempDir()})
	require.NoError(t, err)
	gopts.Workspace, gopts.Audit, gopts.ConfigDir = []string{ws}, e.sink, filepath.Join(t.TempDir(), "reins")
	e.g, err = gate.New(profile.MustBuiltin(profile.PermissionTrusted), &gopts)
	require.NoError(t, err)
	o := &session.Options{Checkpointer: cp, Sandbox: hard,
		Notifier: session.NotifierFunc(func(context.Context, session.Notice) error { return nil })}
	if tune != nil {
		tune(o)
	}
	e.s, err = session.New(context.Background(), e.g, o)
	require.NoError(t, err)
	return e
}

func (e *e2e) verify(t *testing.T) []audit.Record {
	t.Helper()
	require.NoError(t, e.sink.Close(context.Background()))
	_, err := audit.Verify(e.log)
	require.NoError(t, err, "the log verifies")
	var out []audit.Record
	for r, err := range audit.Scan(e.log, nil) {
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

func TestEndToEndApprovedDestructiveFailureIsRolledBack(t *testing.T) {
	ctx := context.Background()
	e := newE2E(t, gate.Options{}, func(o *session.Options) {
		o.Approver = session.ApproverFunc(func(_ context.Context, req session.Request) (session.Answer, error) {
			if req.Action.Command == "rm -rf build && false" {
				return session.Answer{Verdict: policy.Allow, By: "erin", Note: "try it"}, nil
			}
			return session.Answer{Verdict: policy.Deny, By: "erin"}, nil
		})
	})
	out, _, err := e.s.DoCommand(ctx, shellAction("rm -rf build && false"), sandbox.Command{})
	var ae *session.ActionError
	require.ErrorAs(t, err, &ae)
	assert.True(t, out.RolledBack)
	assert.FileExists(t, filepath.Join(e.ws, "build", "out.bin"), "rolled back")

	// A denied action leaves the workspace untouched.
	_, _, err = e.s.DoCommand(ctx, shellAction("rm -rf docs"), sandbox.Command{})
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.FileExists(t, filepath.Join(e.ws, "docs", "a.md"))

	recs := e.verify(t)
	var kinds []audit.Kind
	for _, r := range recs {
		if r.DecisionID == out.Decision.DecisionID {
			kinds = append(kinds, r.Kind)
		}
	}
	assert.Equal(t, []audit.Kind{audit.KindDecision, session.KindApproval, audit.KindCheckpointCreated,
		audit.KindOutcome, audit.KindCheckpointRestored}, kinds, "decision, approval, checkpoint, failure, rollback")
	for _, r := range recs {
		if r.Kind == session.KindApproval && r.Decision == policy.Allow {
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
	for _, pol := range []gate.FailurePolicy{gate.FailuresLatch, gate.FailuresDeescalate} {
		e := newE2E(t, gate.Options{OnRepeatedFailure: pol}, nil)
		for range 3 {
			_, _, err := e.s.DoCommand(ctx, shellAction("sh -c 'exit 3'"), sandbox.Command{})
			var ce *session.CommandError
			require.ErrorAs(t, err, &ce)
		}
		_, halted := e.g.Halted()
		assert.Equal(t, pol == gate.FailuresLatch, halted)
		if pol == gate.FailuresDeescalate {
			assert.Equal(t, policy.BandSupervised, e.g.Profile().Band())
		}
		e.verify(t)
	}
}

func TestEndToEndEmergencyStopCancelsASandboxedCommand(t *testing.T) {
	ctx := context.Background()
	e := newE2E(t, gate.Options{}, nil)
	done := make(chan error, 1)
	go func() {
		_, _, err := e.s.DoCommand(ctx, shellAction("sleep 30"), sandbox.Command{})
		done <- err
	}()
	for e.g.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	at := time.Now()
	e.g.EmergencyStop(ctx, "stop")
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
	e := newE2E(t, gate.Options{}, nil)
	// The command line is harmless as written; the working directory it asks for is outside
	// the workspace, which only the sandbox sees.
	_, res, err := e.s.DoCommand(ctx, shellAction("ls"), sandbox.Command{Args: []string{"ls"}, Dir: "/etc"})
	require.Error(t, err)
	require.True(t, res.Escaped(), "the sandbox reports a violation")
	h, halted := e.g.Halted()
	require.True(t, halted)
	assert.Equal(t, gate.CauseSandboxEscape, h.Cause)
	_, _, err = e.s.DoCommand(ctx, shellAction("ls"), sandbox.Command{})
	require.ErrorIs(t, err, gate.ErrDenied)
	e.verify(t)
}
