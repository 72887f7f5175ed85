package reins_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// The gate's budget (Options.Budget, RecordSpend, SetBudget, Spent) is now the cost meter of
// the run.
func TestHardStopBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newPlain(t, builtin(profile.PermissionAutonomous), func(o *reins.Options) {
		o.Meters = []reins.Meter{{Name: reins.MeterCost, Limit: 10}}
	})
	require.NoError(t, f.r.Use(ctx, reins.MeterCost, 6))
	assert.Equal(t, policy.Allow, f.check(t, readme).Verdict)
	require.NoError(t, f.r.Use(ctx, reins.MeterCost, 5))
	assert.Equal(t, 11.0, meterOf(t, f.r, reins.MeterCost).Used)
	h, halted := f.halted()
	require.True(t, halted)
	assert.Equal(t, gate.CauseBudget, h.Cause)
	d := f.check(t, readme)
	assert.Equal(t, policy.LayerHalted, d.Layer, "over budget: halted: %s", d)

	// Changed: the gate's Reset left the spend over the budget, so the next check halted again;
	// the run's Reset starts every exhausted meter again (its limit kept), and ResetMeter raises
	// a limit. Over budget again after a reset halts again.
	require.NoError(t, f.r.Reset(ctx, "reset without raising the budget"))
	assert.Zero(t, meterOf(t, f.r, reins.MeterCost).Used)
	assert.Equal(t, 10.0, meterOf(t, f.r, reins.MeterCost).Limit)
	require.NoError(t, f.r.Use(ctx, reins.MeterCost, 10))
	d = f.check(t, readme)
	assert.Equal(t, policy.LayerHalted, d.Layer, "the limit is reached again: %s", d)
	require.NoError(t, f.r.ResetMeter(ctx, reins.MeterCost, 100, "more budget"))
	assert.Equal(t, 100.0, meterOf(t, f.r, reins.MeterCost).Limit)
	assertHalted(t, f, gate.CauseBudget)
	require.NoError(t, f.r.Use(ctx, reins.MeterCost, 50))
	assert.Equal(t, policy.Allow, f.check(t, readme).Verdict, "under the raised limit")

	assert.Error(t, f.r.Use(ctx, reins.MeterCost, -1))
	assert.Error(t, f.r.Use(ctx, reins.MeterCost, nan()))
	// Changed: SetBudget(-5) was an error; ResetMeter raises the limit only for a positive one
	// (documented), so a negative one keeps it.
	require.NoError(t, f.r.ResetMeter(ctx, reins.MeterCost, -5, "keep the limit"))
	assert.Equal(t, 100.0, meterOf(t, f.r, reins.MeterCost).Limit)
	_, err := reins.New(ctx, builtin(profile.PermissionAutonomous), &reins.Options{Workspace: []string{f.ws},
		Meters: []reins.Meter{{Name: reins.MeterCost, Limit: nan()}}})
	assert.Error(t, err)
}

func TestHardStopSandboxEscape(t *testing.T) {
	t.Parallel()
	f := newPlain(t, builtin(profile.ProfileFullAuto), nil)
	f.r.RecordViolation(context.Background(), "landlock denied write to /etc/passwd")
	assertHalted(t, f, gate.CauseSandboxEscape)
}

func TestHardStopRepeatedToolFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newPlain(t, builtin(profile.PermissionAutonomous), nil)
	boom := errors.New("exit status 1")
	result := func(tool string, err error) {
		require.NoError(t, f.r.RecordResult(ctx, policy.Action{Tool: tool}, gate.Decision{Verdict: policy.Allow}, err))
	}
	result("bash", boom)
	result("bash", boom)
	result("bash", nil) // a success resets the count
	result("bash", boom)
	result("other", boom)
	result("bash", boom)
	_, halted := f.halted()
	assert.False(t, halted, "two failures in a row, not three")
	result("bash", boom)
	assertHalted(t, f, gate.CauseToolFailures)
}

// With FailuresDeescalate, repeated failures of a tool step the autonomy down one band at a
// time (autonomous, trusted, supervised), each step a recorded profile switch that restarts the
// count, and latch the hard stop only when there is no band left below.
func TestRepeatedToolFailureDeescalates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newPlain(t, builtin(profile.PermissionAutonomous), func(o *reins.Options) { o.OnRepeatedFailure = reins.FailuresDeescalate })
	boom := errors.New("exit status 1")
	fail := func(times int) {
		for range times {
			require.NoError(t, f.r.RecordResult(ctx, policy.Action{Tool: "bash"}, gate.Decision{Verdict: policy.Allow}, boom))
		}
	}
	fail(2)
	assert.Equal(t, policy.BandAutonomous, f.r.Profile().Band(), "two failures: no step yet")
	fail(1)
	_, halted := f.halted()
	assert.False(t, halted, "a step down instead of the hard stop")
	assert.Equal(t, policy.BandTrusted, f.r.Profile().Band(), "one band down")
	assert.Contains(t, f.r.Profile().Profile().Description, `de-escalated to trusted after tool "bash" failed 3 times in a row`)
	fail(2)
	assert.Equal(t, policy.BandTrusted, f.r.Profile().Band(), "the step restarted the count")
	fail(1)
	assert.Equal(t, policy.BandSupervised, f.r.Profile().Band())
	_, halted = f.halted()
	assert.False(t, halted)
	var applied []string
	for _, r := range f.sink.Records() {
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
	f := newPlain(t, builtin(profile.PermissionAutonomous), nil)
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
	f := newPlain(t, builtin(profile.PermissionAutonomous), nil)
	f.r.Halt(context.Background(), "user pressed stop")
	f.r.RecordViolation(context.Background(), "later cause") // the first cause wins
	assert.False(t, f.r.Latch(context.Background(), gate.CauseSandboxEscape, "yet another cause"), "the first cause wins")
	assertHalted(t, f, gate.CauseManual)
}

func TestInvalidInputDenies(t *testing.T) {
	t.Parallel()
	f := newPlain(t, builtin(profile.ApprovalYolo), nil)
	d := f.check(t, policy.Action{Operation: policy.OpRead, Risk: risk.Set(1)})
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, policy.LayerInput, d.Layer)
	d = f.check(t, policy.Action{Operation: policy.OpRead, Severity: risk.Severity(9)})
	assert.Equal(t, policy.LayerInput, d.Layer)
	// An action with no operation and no declared risk is assumed destructive.
	d = f.check(t, policy.Action{Tool: "mystery"})
	assert.Equal(t, risk.Of(risk.Destructive), d.Risk)
	sup := newPlain(t, builtin(profile.PermissionSupervised), nil)
	assert.Equal(t, policy.Deny, sup.check(t, policy.Action{Tool: "mystery"}).Verdict)
}

func TestAuditFailureDenies(t *testing.T) {
	t.Parallel()
	failing := audit.SinkFunc(func(context.Context, audit.Record) error { return errors.New("disk full") })
	r, err := reins.New(context.Background(), builtin(profile.ApprovalYolo), &reins.Options{Workspace: []string{workspace(t)}, Audit: failing})
	require.NoError(t, err)
	d, err := r.Check(context.Background(), readme)
	require.Error(t, err)
	assert.ErrorContains(t, err, "disk full")
	assert.Equal(t, policy.Deny, d.Verdict, "a decision that cannot be recorded does not happen")
	assert.Equal(t, policy.LayerAudit, d.Layer)
	assert.Zero(t, d.Obligations)
	// Do does not run it either.
	out, err := r.Do(context.Background(), readme, ok)
	require.Error(t, err)
	assert.False(t, out.Ran)
}

func TestCanceledContextDenies(t *testing.T) {
	t.Parallel()
	f := newPlain(t, builtin(profile.ApprovalYolo), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := f.r.Check(ctx, readme)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, policy.Deny, d.Verdict)
}

// A run state that cannot be read is a Deny (fail closed), recorded, with ErrRunState.
func TestUnreadableRunStateDenies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sink := audit.NewMemory(0)
	r, err := reins.New(ctx, builtin(profile.ApprovalYolo), &reins.Options{Workspace: []string{workspace(t)}, Audit: sink, Store: brokenStore{}})
	require.NoError(t, err)
	d, err := r.Check(ctx, readme)
	require.ErrorIs(t, err, reins.ErrRunState)
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, reins.CheckRunState, d.RuleID)
	require.Len(t, sink.Records(), 1)
	assert.Equal(t, policy.Deny, sink.Records()[0].Decision)
	_, halted := r.Halted(ctx)
	assert.True(t, halted, "an unreadable state counts as halted")
	out, err := r.Do(ctx, readme, ok)
	require.Error(t, err)
	assert.False(t, out.Ran)
}

func TestAuditRecordFields(t *testing.T) {
	t.Parallel()
	f := newPlain(t, builtin(profile.ProfileDev), nil)
	corr := [16]byte{1, 2, 3}
	d := f.check(t, policy.Action{Tool: "edit_file", Operation: "file_write", Targets: []string{"src/pkg/main.go"}, CorrelationID: corr})
	recs := f.sink.Records()
	require.Len(t, recs, 1)
	r := recs[0]
	assert.Equal(t, audit.KindDecision, r.Kind)
	assert.Equal(t, profile.ProfileDev, r.Profile)
	assert.Equal(t, builtin(profile.ProfileDev).Hash(), r.ProfileHash)
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
	ctx := context.Background()
	_, err := reins.New(ctx, builtin(profile.PermissionTrusted), &reins.Options{Workspace: []string{t.TempDir()}, MaxConsecutiveFailures: -1})
	assert.Error(t, err)
	_, err = reins.New(ctx, builtin(profile.PermissionTrusted), &reins.Options{Workspace: []string{t.TempDir()}, OnRepeatedFailure: 9})
	assert.Error(t, err)
	_, err = reins.New(ctx, builtin(profile.PermissionTrusted), &reins.Options{Workspace: []string{t.TempDir()}, Headless: 9})
	assert.Error(t, err)
	_, err = reins.New(ctx, builtin(profile.PermissionTrusted), &reins.Options{Workspace: []string{t.TempDir()},
		Meters: []reins.Meter{{Name: reins.MeterCost, Limit: 1}, {Name: reins.MeterCost, Limit: 2}}})
	assert.ErrorContains(t, err, "given twice")
	bad := builtin(profile.PermissionTrusted)
	bad.ProtectedPaths = append(bad.ProtectedPaths, "[ab].pem")
	_, err = reins.New(ctx, bad, &reins.Options{Workspace: []string{t.TempDir()}})
	assert.ErrorContains(t, err, "literal paths")
	bad = builtin(profile.PermissionTrusted)
	bad.Rules = []policy.Rule{{ID: "x", Condition: policy.Condition{CommandPattern: "("}}}
	_, err = reins.New(ctx, bad, &reins.Options{Workspace: []string{t.TempDir()}})
	assert.ErrorContains(t, err, `rule "x"`)
	r, err := reins.New(ctx, builtin(profile.PermissionTrusted), nil)
	require.NoError(t, err, "nil options: the working directory is the workspace")
	assert.Equal(t, profile.PermissionTrusted, r.Profile().Name())
	require.NoError(t, r.Close())
}

// An emergency stop that lands between an operation's Begin and its Check cancels the
// operation's context. That Check is the halt's Deny, not a context error, and it is recorded
// like every decision; a plain cancellation is still an error, and nothing is recorded for it.
func TestEmergencyStopBeforeTheCheckIsARecordedDeny(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newPlain(t, builtin(profile.PermissionAutonomous), nil)
	write := policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"main.go"}}
	for _, reset := range []bool{false, true} {
		op, err := f.r.Begin(ctx)
		require.NoError(t, err)
		f.r.EmergencyStop(ctx, "the user pressed stop")
		if reset {
			require.NoError(t, f.r.Reset(ctx, "resumed before the stopped operation checked"))
		}
		before := len(f.sink.Records())
		d, err := op.Check(op.Context(), write)
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
			require.NoError(t, f.r.Reset(ctx, "resumed"))
		}
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	before := len(f.sink.Records())
	d, err := f.r.Check(cctx, write)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, gate.CheckContext, d.RuleID)
	assert.Len(t, f.sink.Records(), before, "nothing decided, nothing recorded")
}
