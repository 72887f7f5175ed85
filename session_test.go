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
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

func TestApprovalScopes(t *testing.T) {
	ctx := context.Background()
	ap := &script{}
	f := newFixture(t, profile.PermissionTrusted, nil, func(o *session.Options) { o.Approver = ap })
	rm := shellAction("rm -rf build")

	// Once: asked each time.
	ap.answers = []session.Answer{{Verdict: policy.Allow, By: "alice"}, {Verdict: policy.Allow, By: "alice"}}
	for range 2 {
		out, err := f.s.Do(ctx, rm, ok)
		require.NoError(t, err)
		require.NotNil(t, out.Approval)
		assert.Equal(t, session.Once, out.Approval.Scope)
		assert.Equal(t, "alice", out.Approval.By)
	}
	assert.Equal(t, 2, ap.count())

	// Session: asked once, then the grant answers.
	ap.answers = []session.Answer{{Verdict: policy.Allow, Scope: session.ForSession, By: "bob", Note: "cleanup is fine"}}
	out, err := f.s.Do(ctx, rm, ok)
	require.NoError(t, err)
	require.NotEmpty(t, out.Approval.Grant)
	out, err = f.s.Do(ctx, rm, ok)
	require.NoError(t, err)
	assert.Nil(t, out.Approval, "the grant answered")
	assert.Equal(t, gate.CheckGrantPrefix+f.s.Grants()[0].ID, out.Decision.RuleID)
	assert.Equal(t, policy.Allow, out.Decision.Verdict)
	assert.True(t, out.Decision.Obligations.Has(policy.Checkpoint), "a grant keeps the obligations")
	assert.Equal(t, 3, ap.count())
	// A different command is not covered.
	_, err = f.s.Do(ctx, shellAction("rm -rf docs"), ok)
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.Equal(t, 4, ap.count())

	// The approval record says who, the scope and the note; user_override is set.
	var approvals []audit.Record
	for _, r := range f.sink.Records() {
		if r.Kind == session.KindApproval {
			approvals = append(approvals, r)
		}
	}
	require.Len(t, approvals, 4)
	assert.True(t, approvals[2].UserOverride)
	assert.Equal(t, audit.DecidedByUser, approvals[2].DecidedBy)
	assert.Contains(t, approvals[2].Reason, "bob")
	assert.Contains(t, approvals[2].Reason, "cleanup is fine")
	assert.Equal(t, gate.CheckApprovalSession, approvals[2].RuleMatched)
	assert.Equal(t, "bob", approvals[2].Approver)
	assert.Equal(t, "session", approvals[2].ApprovalScope)
	assert.Equal(t, "cleanup is fine", approvals[2].Note)

	// Revoke: asked again.
	require.NoError(t, f.s.Revoke(ctx, f.s.Grants()[0].ID))
	assert.Empty(t, f.s.Grants())
	_, err = f.s.Do(ctx, rm, ok)
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.Equal(t, 5, ap.count())
}

func TestAlwaysGrantIsReviewedSavedAndReloaded(t *testing.T) {
	ctx := context.Background()
	store := session.NewFileStore(filepath.Join(t.TempDir(), "reins", "grants.json"))
	ap := &script{answers: []session.Answer{
		{Verdict: policy.Allow, Scope: session.Always, By: "carol", MaxUses: 5},
		{Verdict: policy.Allow, By: "carol"}, // confirms the proposal
	}}
	f := newFixture(t, profile.PermissionTrusted, nil, func(o *session.Options) { o.Approver = ap; o.Grants = store })
	out, err := f.s.Do(ctx, shellAction("rm -rf build"), ok)
	require.NoError(t, err)
	assert.Equal(t, session.Always, out.Approval.Scope)
	require.Equal(t, 2, ap.count())
	prop := ap.asked[1].Proposal
	require.NotNil(t, prop, "the second question shows the proposal")
	assert.Equal(t, []string{"rm -rf build"}, prop.Grant.Rules[0].Condition.Commands)
	assert.Contains(t, prop.Matches, "rm -rf build")
	assert.Contains(t, prop.NonMatches, "rm -rf build && rm -rf ~")
	assert.Contains(t, prop.NonMatches, "rm -rf other")

	saved, err := store.Load(ctx)
	require.NoError(t, err)
	require.Len(t, saved, 1)
	assert.Equal(t, 5, saved[0].MaxUses)

	// A new session under the same profile loads it: no question.
	ap2 := &script{}
	g2, err := gate.New(profile.MustBuiltin(profile.PermissionTrusted), &gate.Options{Workspace: []string{f.ws}, Audit: audit.Discard})
	require.NoError(t, err)
	s2, err := session.New(ctx, g2, &session.Options{Approver: ap2, Grants: store, Checkpointer: f.cp})
	require.NoError(t, err)
	_, err = s2.Do(ctx, shellAction("rm -rf build"), ok)
	require.NoError(t, err)
	assert.Zero(t, ap2.count())

	// Under a more restrictive profile it does not apply.
	g3, err := gate.New(profile.MustBuiltin(profile.PermissionSupervised), &gate.Options{Workspace: []string{f.ws}, Audit: audit.Discard})
	require.NoError(t, err)
	_, err = session.New(ctx, g3, &session.Options{Grants: store})
	require.NoError(t, err)
	d, err := g3.Check(ctx, shellAction("rm -rf build"))
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, d.Verdict)
	d, err = g3.Check(ctx, writeAction("main.go"))
	require.NoError(t, err)
	assert.Equal(t, policy.Confirm, d.Verdict)
}

func TestAlwaysWithoutConfirmationStaysInTheSession(t *testing.T) {
	ctx := context.Background()
	store := session.NewFileStore(filepath.Join(t.TempDir(), "grants.json"))
	ap := &script{answers: []session.Answer{{Verdict: policy.Allow, Scope: session.Always}}} // proposal refused
	f := newFixture(t, profile.PermissionTrusted, nil, func(o *session.Options) { o.Approver = ap; o.Grants = store })
	out, err := f.s.Do(ctx, shellAction("rm -rf build"), ok)
	require.NoError(t, err)
	assert.Equal(t, session.ForSession, out.Approval.Scope)
	saved, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, saved)
}

func TestApprovalTimeoutIsADenial(t *testing.T) {
	ctx := context.Background()
	block := session.ApproverFunc(func(ctx context.Context, _ session.Request) (session.Answer, error) {
		<-ctx.Done()
		return session.Answer{Verdict: policy.Allow}, ctx.Err()
	})
	f := newFixture(t, profile.PermissionTrusted, nil, func(o *session.Options) { o.Approver = block; o.ApprovalTimeout = 30 * time.Millisecond })
	out, err := f.s.Do(ctx, shellAction("rm -rf build"), ok)
	var de *gate.DeniedError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, policy.LayerApproval, de.Decision.Layer)
	assert.Equal(t, gate.CheckApprovalTimeout, de.Decision.RuleID)
	assert.Zero(t, de.Decision.Obligations)
	assert.False(t, out.Ran)
	assert.False(t, out.Approval.Human)
	_, err = os.Stat(filepath.Join(f.ws, "build"))
	assert.NoError(t, err)

	// The default is the gate spec's 300 s.
	assert.Equal(t, 300*time.Second, session.DefaultApprovalTimeout)
}

func TestHeadlessDenyAndPark(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, profile.PermissionTrusted, nil, nil)
	_, err := f.s.Do(ctx, shellAction("rm -rf build"), ok)
	var de *gate.DeniedError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, gate.CheckApprovalNone, de.Decision.RuleID)
	require.NotEmpty(t, de.Alternatives)
	assert.Equal(t, gate.AltAsk, de.Alternatives[0].Kind)

	p := newFixture(t, profile.PermissionTrusted, nil, func(o *session.Options) { o.Headless = session.HeadlessPark })
	rm := shellAction("rm -rf build")
	out, err := p.s.Do(ctx, rm, ok)
	var pe *session.ParkedError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, session.ErrParked)
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.False(t, out.Ran)
	parked := p.s.Parked()
	require.Len(t, parked, 1)
	assert.Equal(t, pe.ID, parked[0].ID)

	// Resolved with approval: the retry goes through once.
	ap, err := p.s.Resolve(ctx, pe.ID, session.Answer{Verdict: policy.Allow, By: "dana"})
	require.NoError(t, err)
	assert.True(t, ap.Approved)
	assert.Empty(t, p.s.Parked())
	out, err = p.s.Do(ctx, rm, ok)
	require.NoError(t, err)
	assert.True(t, out.Ran)
	_, err = p.s.Do(ctx, rm, ok)
	require.ErrorIs(t, err, session.ErrParked, "a once approval is used up")

	// Refused: recorded, not run.
	id := p.s.Parked()[0].ID
	_, err = p.s.Resolve(ctx, id, session.Answer{Verdict: policy.Deny, By: "dana"})
	require.NoError(t, err)
	n := 0
	for _, r := range p.sink.Records() {
		if r.Kind == session.KindParkedResolved {
			n++
			assert.True(t, r.UserOverride)
		}
	}
	assert.Equal(t, 2, n)
	_, err = p.s.Resolve(ctx, id, session.Answer{})
	assert.Error(t, err)
}

func TestDenialsAreFreshAndFailuresAreTheTools(t *testing.T) {
	ctx := context.Background()
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{gitWorkspace(t)}, Audit: audit.Discard})
	require.NoError(t, err)
	s, err := session.New(ctx, g, nil) // no checkpointer, no notifier
	require.NoError(t, err)
	out, err := s.Do(ctx, writeAction("main.go"), ok)
	var de *gate.DeniedError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, policy.LayerObligation, de.Decision.Layer)
	assert.Equal(t, gate.CheckObligationCheckpoint, de.Decision.RuleID)
	assert.Zero(t, de.Decision.Obligations, "no stale obligations")
	assert.Equal(t, de.Decision, out.Decision)
	assert.NotContains(t, de.Decision.String(), "allow-low-med-risk")

	f := newFixture(t, profile.ProfileDev, nil, nil)
	boom := errors.New("disk full")
	out, err = f.s.Do(ctx, writeAction("main.go"), func(context.Context, gate.Decision) error {
		require.NoError(t, os.WriteFile(filepath.Join(f.ws, "main.go"), []byte("half"), 0o644))
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.NotErrorIs(t, err, gate.ErrDenied)
	var ae *session.ActionError
	require.ErrorAs(t, err, &ae)
	assert.True(t, ae.RolledBack)
	assert.True(t, out.RolledBack)
	b, err := os.ReadFile(filepath.Join(f.ws, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, "package main\n", string(b))
	assert.Equal(t, []audit.Kind{audit.KindDecision, audit.KindCheckpointCreated, audit.KindOutcome, audit.KindCheckpointRestored}, f.kinds())
}

// fakeRunner is a sandbox runner that returns a fixed result.
type fakeRunner struct {
	res  sandbox.Result
	runs int
}

func (r *fakeRunner) Run(context.Context, sandbox.Command) (sandbox.Result, error) {
	r.runs++
	return r.res, nil
}

func TestDoCommandCarriesOutTheSandboxObligation(t *testing.T) {
	ctx := context.Background()
	// No runner: denied.
	f := newFixture(t, profile.PermissionTrusted, nil, func(o *session.Options) { o.Sandbox = nil })
	_, _, err := f.s.DoCommand(ctx, shellAction("go test ./..."), sandbox.Command{})
	var de *gate.DeniedError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, gate.CheckObligationSandbox, de.Decision.RuleID)
	// Plain Do of a sandboxed action: denied, with the sandbox as the way forward.
	_, err = f.s.Do(ctx, shellAction("go test ./..."), ok)
	require.ErrorAs(t, err, &de)
	require.NotEmpty(t, de.Alternatives)
	assert.Equal(t, gate.AltSandbox, de.Alternatives[0].Kind)

	// Violations latch the sandbox-escape hard stop.
	r := &fakeRunner{res: sandbox.Result{ExitCode: 126, Violations: []sandbox.Violation{{Subject: "/etc/passwd", Detail: "write refused"}}}}
	f = newFixture(t, profile.PermissionTrusted, nil, func(o *session.Options) { o.Sandbox = r })
	_, _, err = f.s.DoCommand(ctx, shellAction("go test ./..."), sandbox.Command{})
	var ce *session.CommandError
	require.ErrorAs(t, err, &ce)
	h, halted := f.g.Halted()
	require.True(t, halted)
	assert.Equal(t, gate.CauseSandboxEscape, h.Cause)

	// The local backend runs a real command.
	f = newFixture(t, profile.PermissionAutonomous, nil, nil)
	out, res, err := f.s.DoCommand(ctx, policy.Action{Tool: "bash"}, sandbox.Command{Args: []string{"sh", "-c", "echo hello"}})
	require.NoError(t, err)
	assert.True(t, out.Ran)
	assert.Equal(t, "hello\n", string(res.Stdout))
	_, _, err = f.s.DoCommand(ctx, shellAction("ls"), sandbox.Command{Args: []string{"rm", "-rf", "/"}})
	require.Error(t, err, "the action and the command must agree")
}
