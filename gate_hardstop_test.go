package gate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

var readme = policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}}

func assertHalted(t *testing.T, f *fixture, cause gate.Cause) {
	t.Helper()
	h, halted := f.g.Halted()
	require.True(t, halted)
	assert.Equal(t, cause, h.Cause)
	d := f.check(t, readme)
	assert.Equal(t, policy.Deny, d.Verdict, "a halted gate denies even reads: %s", d)
	assert.Equal(t, policy.LayerHalted, d.Layer)
	assert.Equal(t, gate.CheckHalted, d.RuleID)
	require.NoError(t, f.g.Reset(context.Background(), "operator reviewed"))
	_, halted = f.g.Halted()
	assert.False(t, halted)
	assert.Equal(t, policy.Allow, f.check(t, readme).Verdict, "reset clears the latch")
	var kinds []audit.Kind
	for _, r := range f.sink.Records() {
		kinds = append(kinds, r.Kind)
		switch r.Kind {
		case audit.KindHalt:
			assert.Equal(t, cause.CheckID(), r.RuleMatched, "the halt record names the hard stop's check")
		case audit.KindReset:
			assert.Equal(t, gate.CheckReset, r.RuleMatched)
		}
	}
	assert.Contains(t, kinds, audit.KindHalt)
	assert.Contains(t, kinds, audit.KindReset)
}

func TestHardStopBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := workspace(t)
	sink := audit.NewMemory(0)
	g, err := gate.New(builtin(profile.PermissionAutonomous), &gate.Options{Workspace: []string{ws}, Audit: sink, Budget: 10})
	require.NoError(t, err)
	f := &fixture{g: g, ws: ws, sink: sink}
	require.NoError(t, g.RecordSpend(ctx, 6))
	assert.Equal(t, policy.Allow, f.check(t, readme).Verdict)
	require.NoError(t, g.RecordSpend(ctx, 5))
	assert.Equal(t, 11.0, g.Spent())
	h, halted := g.Halted()
	require.True(t, halted)
	assert.Equal(t, gate.CauseBudget, h.Cause)
	require.NoError(t, g.Reset(ctx, "reset without raising the budget"))
	d := f.check(t, readme)
	assert.Equal(t, policy.LayerHardStop, d.Layer, "still over budget: the next check halts again: %s", d)
	require.NoError(t, g.SetBudget(100))
	assertHalted(t, f, gate.CauseBudget)

	assert.Error(t, g.RecordSpend(ctx, -1))
	assert.Error(t, g.RecordSpend(ctx, nan()))
	assert.Error(t, g.SetBudget(-5))
	_, err = gate.New(builtin(profile.PermissionAutonomous), &gate.Options{Workspace: []string{ws}, Budget: nan()})
	assert.Error(t, err)
}

func TestHardStopSandboxEscape(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ProfileFullAuto))
	f.g.RecordViolation(context.Background(), "landlock denied write to /etc/passwd")
	assertHalted(t, f, gate.CauseSandboxEscape)
}

func TestHardStopRepeatedToolFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, builtin(profile.PermissionAutonomous))
	boom := errors.New("exit status 1")
	f.g.RecordResult(ctx, "bash", boom)
	f.g.RecordResult(ctx, "bash", boom)
	f.g.RecordResult(ctx, "bash", nil) // a success resets the count
	f.g.RecordResult(ctx, "bash", boom)
	f.g.RecordResult(ctx, "other", boom)
	f.g.RecordResult(ctx, "bash", boom)
	_, halted := f.g.Halted()
	assert.False(t, halted, "two failures in a row, not three")
	f.g.RecordResult(ctx, "bash", boom)
	assertHalted(t, f, gate.CauseToolFailures)
}

// With FailuresDeescalate, repeated failures of a tool step the autonomy down one band at a
// time (autonomous, trusted, supervised), each step a recorded profile switch that restarts the
// count, and latch the hard stop only when there is no band left below.
func TestRepeatedToolFailureDeescalates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := workspace(t)
	sink := audit.NewMemory(0)
	g, err := gate.New(builtin(profile.PermissionAutonomous), &gate.Options{Workspace: []string{ws}, Audit: sink, OnRepeatedFailure: gate.FailuresDeescalate})
	require.NoError(t, err)
	f := &fixture{g: g, ws: ws, sink: sink}
	boom := errors.New("exit status 1")
	fail := func(times int) {
		for range times {
			g.RecordResult(ctx, "bash", boom)
		}
	}
	fail(2)
	assert.Equal(t, policy.BandAutonomous, g.Profile().Band(), "two failures: no step yet")
	fail(1)
	_, halted := g.Halted()
	assert.False(t, halted, "a step down instead of the hard stop")
	assert.Equal(t, policy.BandTrusted, g.Profile().Band(), "one band down")
	assert.Contains(t, g.Profile().Profile().Description, `de-escalated to trusted after tool "bash" failed 3 times in a row`)
	fail(2)
	assert.Equal(t, policy.BandTrusted, g.Profile().Band(), "the step restarted the count")
	fail(1)
	assert.Equal(t, policy.BandSupervised, g.Profile().Band())
	_, halted = g.Halted()
	assert.False(t, halted)
	var applied []string
	for _, r := range sink.Records() {
		if r.Kind == audit.KindProfileSwitchApplied {
			applied = append(applied, r.Reason)
		}
	}
	assert.Len(t, applied, 2, "each step down is a recorded switch")
	fail(3)
	assertHalted(t, f, gate.CauseToolFailures)
}

func TestHardStopExternalWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.PermissionAutonomous))
	outside := t.TempDir()
	d := f.check(t, policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{outside + "/x"}})
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, policy.LayerHardStop, d.Layer)
	assert.Equal(t, gate.CheckHardStopExternalWrite, d.RuleID)
	assertHalted(t, f, gate.CauseExternalWrite)
	// Reading outside is not a write: it does not halt (the rules and matrix decide it).
	assert.Equal(t, policy.Allow, f.check(t, policy.Action{Operation: policy.OpRead, Targets: []string{outside}}).Verdict)
}

func TestManualHalt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.PermissionAutonomous))
	f.g.Halt(context.Background(), "user pressed stop")
	f.g.RecordViolation(context.Background(), "later cause") // the first cause wins
	assertHalted(t, f, gate.CauseManual)
}

func TestInvalidInputDenies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ApprovalYolo))
	d := f.check(t, policy.Action{Operation: policy.OpRead, Risk: risk.Set(1)})
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, policy.LayerInput, d.Layer)
	d = f.check(t, policy.Action{Operation: policy.OpRead, Severity: risk.Severity(9)})
	assert.Equal(t, policy.LayerInput, d.Layer)
	// An action with no operation and no declared risk is assumed destructive.
	d = f.check(t, policy.Action{Tool: "mystery"})
	assert.Equal(t, risk.Of(risk.Destructive), d.Risk)
	sup := newFixture(t, builtin(profile.PermissionSupervised))
	assert.Equal(t, policy.Deny, sup.check(t, policy.Action{Tool: "mystery"}).Verdict)
}

func TestAuditFailureDenies(t *testing.T) {
	t.Parallel()
	failing := audit.SinkFunc(func(context.Context, audit.Record) error { return errors.New("disk full") })
	g, err := gate.New(builtin(profile.ApprovalYolo), &gate.Options{Workspace: []string{workspace(t)}, Audit: failing})
	require.NoError(t, err)
	d, err := g.Check(context.Background(), readme)
	require.Error(t, err)
	assert.ErrorContains(t, err, "disk full")
	assert.Equal(t, policy.Deny, d.Verdict, "a decision that cannot be recorded does not happen")
	assert.Equal(t, policy.LayerAudit, d.Layer)
	assert.Zero(t, d.Obligations)
}

func TestCanceledContextDenies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ApprovalYolo))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := f.g.Check(ctx, readme)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, policy.Deny, d.Verdict)
}

func TestAuditRecordFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ProfileDev))
	corr := [16]byte{1, 2, 3}
	d := f.check(t, policy.Action{Tool: "edit_file", Operation: "file_write", Targets: []string{"src/pkg/main.go"}, CorrelationID: corr})
	recs := f.sink.Records()
	require.Len(t, recs, 1)
	r := recs[0]
	assert.Equal(t, audit.KindDecision, r.Kind)
	assert.Equal(t, profile.ProfileDev, r.Profile)
	assert.Equal(t, "file_write", r.Operation)
	assert.Equal(t, "src/pkg/main.go", r.Target)
	assert.Equal(t, policy.Allow, r.Decision)
	assert.Equal(t, "allow-low-med-risk", r.RuleMatched)
	assert.Equal(t, policy.LayerRule, r.Layer)
	assert.Equal(t, d.DecisionID, r.DecisionID)
	assert.Equal(t, byte(7), r.DecisionID[6]>>4, "decision ids are UUIDv7")
	assert.Equal(t, [16]byte(corr), [16]byte(r.CorrelationID))
	assert.False(t, r.Time.IsZero())
	assert.Equal(t, policy.Checkpoint|policy.Notify, r.Obligations)

	d2 := f.check(t, readme)
	assert.Equal(t, d2.DecisionID, d2.CorrelationID, "without a correlation id the decision id is used")
	assert.NotEqual(t, d.DecisionID, d2.DecisionID)
}

func TestNewOptionErrors(t *testing.T) {
	t.Parallel()
	_, err := gate.New(builtin(profile.PermissionTrusted), &gate.Options{Workspace: []string{t.TempDir()}, MaxConsecutiveFailures: -1})
	assert.Error(t, err)
	bad := builtin(profile.PermissionTrusted)
	bad.ProtectedPaths = append(bad.ProtectedPaths, "[ab].pem")
	_, err = gate.New(bad, &gate.Options{Workspace: []string{t.TempDir()}})
	assert.ErrorContains(t, err, "literal paths")
	bad = builtin(profile.PermissionTrusted)
	bad.Rules = []policy.Rule{{ID: "x", Condition: policy.Condition{CommandPattern: "("}}}
	_, err = gate.New(bad, &gate.Options{Workspace: []string{t.TempDir()}})
	assert.ErrorContains(t, err, `rule "x"`)
	g, err := gate.New(builtin(profile.PermissionTrusted), nil)
	require.NoError(t, err, "nil options: the working directory is the workspace")
	assert.Equal(t, profile.PermissionTrusted, g.Profile().Name())
}

// An emergency stop that lands between an operation's Begin and its Check cancels the
// operation's context. That Check is the halt's Deny, not a context error, and it is recorded
// like every decision; a plain cancellation is still an error, and nothing is recorded for it.
func TestEmergencyStopBeforeTheCheckIsARecordedDeny(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, builtin(profile.PermissionAutonomous))
	write := policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"main.go"}}
	for _, reset := range []bool{false, true} {
		op, err := f.g.Begin(ctx)
		require.NoError(t, err)
		f.g.EmergencyStop(ctx, "the user pressed stop")
		if reset {
			require.NoError(t, f.g.Reset(ctx, "resumed before the stopped operation checked"))
		}
		before := len(f.sink.Records())
		d, err := f.g.Check(op.Context(), write)
		require.NoError(t, err, "reset=%v", reset)
		assert.Equal(t, policy.Deny, d.Verdict, "reset=%v", reset)
		assert.Equal(t, policy.LayerHalted, d.Layer)
		assert.Equal(t, gate.CheckHalted, d.RuleID)
		recs := f.sink.Records()[before:]
		require.Len(t, recs, 1, "the Deny is recorded")
		assert.Equal(t, audit.KindDecision, recs[0].Kind)
		assert.Equal(t, d.DecisionID, recs[0].DecisionID)
		assert.Equal(t, policy.LayerHalted, recs[0].Layer)
		op.End()
		if !reset {
			require.NoError(t, f.g.Reset(ctx, "resumed"))
		}
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	before := len(f.sink.Records())
	d, err := f.g.Check(cctx, write)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, gate.CheckContext, d.RuleID)
	assert.Len(t, f.sink.Records(), before, "nothing decided, nothing recorded")
}
