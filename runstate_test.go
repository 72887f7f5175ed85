package reins_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

func TestRepeatedFailuresLatchOrDeescalate(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("tool broke")
	fail := func(context.Context, gate.Decision) error { return boom }

	f := newFixture(t, profile.PermissionAutonomous, nil)
	for range 3 {
		_, err := f.r.Do(ctx, writeAction("main.go"), fail)
		require.ErrorIs(t, err, boom)
	}
	h, halted := f.halted()
	require.True(t, halted)
	assert.Equal(t, gate.CauseToolFailures, h.Cause)

	f = newFixture(t, profile.PermissionAutonomous, func(o *reins.Options) { o.OnRepeatedFailure = reins.FailuresDeescalate })
	for range 3 {
		_, err := f.r.Do(ctx, writeAction("main.go"), fail)
		require.ErrorIs(t, err, boom)
	}
	_, halted = f.halted()
	assert.False(t, halted)
	assert.Equal(t, policy.BandTrusted, f.r.Profile().Band(), "one band down")
	for range 3 {
		_, _ = f.r.Do(ctx, writeAction("main.go"), fail)
	}
	assert.Equal(t, policy.BandSupervised, f.r.Profile().Band())
	// Supervised asks for writes; nobody to ask: denied, so no more failures count. A latch
	// is the last step.
	r2, err := reins.New(ctx, profile.MustBuiltin(profile.PermissionSupervised), &reins.Options{Workspace: []string{f.ws}, OnRepeatedFailure: reins.FailuresDeescalate})
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, r2.RecordResult(ctx, policy.Action{Tool: "x"}, gate.Decision{Verdict: policy.Allow}, boom))
	}
	_, halted = r2.Halted(ctx)
	assert.True(t, halted, "nowhere lower to step: latched")
	var applied int
	for _, r := range f.sink.Records() {
		if r.Kind == audit.KindProfileSwitchApplied {
			applied++
		}
	}
	assert.Equal(t, 2, applied, "each step down is a recorded switch")
}

func TestBudgetMetersWarnThenStop(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, profile.PermissionAutonomous, func(o *reins.Options) {
		o.Meters = []reins.Meter{
			{Name: reins.MeterCost, Limit: 10, WarnAt: 0.5},
			{Name: reins.MeterTokens, Limit: 1000},
			{Name: reins.MeterActions, Limit: 100},
			{Name: reins.MeterWallTime, Limit: 3600},
		}
	})
	read := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}}
	for _, m := range []struct {
		name       string
		warn, stop float64
	}{{reins.MeterCost, 5, 5}, {reins.MeterTokens, 800, 200}} {
		require.NoError(t, f.r.Use(ctx, m.name, m.warn))
		st := meterOf(t, f.r, m.name)
		assert.True(t, st.Warned, m.name)
		assert.False(t, st.Exhausted, m.name)
		_, err := f.r.Do(ctx, read, ok)
		require.NoError(t, err, "a warning does not stop")
		require.NoError(t, f.r.Use(ctx, m.name, m.stop))
		h, halted := f.halted()
		require.True(t, halted, m.name)
		assert.Equal(t, gate.CauseBudget, h.Cause)
		_, err = f.r.Do(ctx, read, ok)
		require.ErrorIs(t, err, gate.ErrDenied)
		require.NoError(t, f.r.Reset(ctx, "more budget"))
		_, err = f.r.Do(ctx, read, ok)
		require.NoError(t, err)
	}
	// The actions meter counts actions that ran: the fourth would pass the limit of 3.
	require.NoError(t, f.r.ResetMeter(ctx, reins.MeterActions, 3, "start counting, with a limit of 3"))
	for range 3 {
		_, err := f.r.Do(ctx, read, ok)
		require.NoError(t, err)
	}
	_, err := f.r.Do(ctx, read, ok)
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.True(t, meterOf(t, f.r, reins.MeterActions).Exhausted)

	var warns, stops int
	for _, n := range f.notices() {
		switch n.Kind {
		case reins.NoticeBudgetWarning:
			warns++
		case reins.NoticeBudgetExceeded:
			stops++
		}
	}
	assert.Equal(t, 3, warns)
	assert.Equal(t, 3, stops)
	assert.Error(t, f.r.Use(ctx, "unknown", 1))
	assert.Error(t, f.r.Use(ctx, reins.MeterCost, -1))
}

// The wall-time meter runs on the run's clock: a fake clock advanced past the warning and then
// the limit warns, then halts, with no sleeping (issue 24: injectable clock).
func TestWallTimeMeter(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	f := newFixture(t, profile.PermissionAutonomous, func(o *reins.Options) {
		o.Clock = clock
		o.Meters = []reins.Meter{{Name: reins.MeterWallTime, Limit: 60, WarnAt: 0.5}}
	})
	read := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}}
	clock.Advance(29 * time.Second)
	_, err := f.r.Do(ctx, read, ok)
	require.NoError(t, err)
	st := meterOf(t, f.r, reins.MeterWallTime)
	assert.Equal(t, 29.0, st.Used, "the elapsed time on the run's clock")
	assert.False(t, st.Warned)
	clock.Advance(time.Second)
	_, err = f.r.Do(ctx, read, ok)
	require.NoError(t, err, "a warning does not stop")
	st = meterOf(t, f.r, reins.MeterWallTime)
	assert.True(t, st.Warned)
	assert.False(t, st.Exhausted)
	clock.Advance(30 * time.Second)
	_, err = f.r.Do(ctx, read, ok)
	require.ErrorIs(t, err, gate.ErrDenied)
	st = meterOf(t, f.r, reins.MeterWallTime)
	assert.True(t, st.Warned)
	assert.True(t, st.Exhausted)
	h, halted := f.halted()
	require.True(t, halted)
	assert.Equal(t, gate.CauseBudget, h.Cause)
	var warns, stops int
	for _, n := range f.notices() {
		switch n.Kind {
		case reins.NoticeBudgetWarning:
			warns++
		case reins.NoticeBudgetExceeded:
			stops++
		}
	}
	assert.Equal(t, 1, warns)
	assert.Equal(t, 1, stops)

	// A reset starts the meter again from now.
	require.NoError(t, f.r.Reset(ctx, "another minute"))
	_, err = f.r.Do(ctx, read, ok)
	require.NoError(t, err)
	clock.Advance(59 * time.Second)
	_, err = f.r.Do(ctx, read, ok)
	require.NoError(t, err)
	clock.Advance(time.Second)
	_, err = f.r.Do(ctx, read, ok)
	require.ErrorIs(t, err, gate.ErrDenied)
}

func TestEmergencyStopCancelsInFlightWork(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, profile.PermissionAutonomous, nil)
	done := make(chan error, 1)
	started := time.Now()
	go func() {
		_, _, err := f.r.DoCommand(ctx, shellAction("sleep 30"), sandbox.Command{})
		done <- err
	}()
	// Stop once the command is in flight.
	for f.r.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	stopAt := time.Now()
	f.r.EmergencyStop(ctx, "the user pressed stop")
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Less(t, time.Since(stopAt), time.Second, "cancelled within a second")
		assert.Less(t, time.Since(started), 10*time.Second)
	case <-time.After(5 * time.Second):
		t.Fatal("the command was not cancelled")
	}
	h, halted := f.halted()
	require.True(t, halted)
	assert.Equal(t, gate.CauseEmergency, h.Cause)
	_, err := f.r.Do(ctx, writeAction("main.go"), ok)
	require.ErrorIs(t, err, gate.ErrDenied, "everything new is denied")
	require.NoError(t, f.r.Reset(ctx, "resume"))
	_, err = f.r.Do(ctx, writeAction("main.go"), ok)
	require.NoError(t, err)
}

func TestBatchRollsBackTheGroup(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, profile.PermissionAutonomous, nil)
	write := func(name, body string) reins.Func {
		return func(context.Context, gate.Decision) error {
			return os.WriteFile(filepath.Join(f.ws, name), []byte(body), 0o644)
		}
	}
	out, err := f.r.Batch(ctx, "refactor", func(ctx context.Context, b *reins.Batch) error {
		if _, err := b.Do(ctx, writeAction("main.go"), write("main.go", "changed")); err != nil {
			return err
		}
		if _, err := b.Do(ctx, writeAction("new.go"), write("new.go", "new")); err != nil {
			return err
		}
		_, _, err := b.DoCommand(ctx, shellAction("false"), sandbox.Command{})
		return err
	})
	require.Error(t, err)
	assert.True(t, out.RolledBack)
	b, err := os.ReadFile(filepath.Join(f.ws, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, "package main\n", string(b))
	assert.NoFileExists(t, filepath.Join(f.ws, "new.go"))
	kinds := f.kinds()
	require.NotEmpty(t, kinds)
	assert.Equal(t, audit.KindCheckpointCreated, kinds[0])
	assert.Equal(t, audit.KindCheckpointRestored, kinds[len(kinds)-1])
	n := 0
	for _, k := range kinds {
		if k == audit.KindCheckpointCreated {
			n++
		}
	}
	assert.Equal(t, 1, n, "one checkpoint for the group")

	out, err = f.r.Batch(ctx, "fine", func(ctx context.Context, b *reins.Batch) error {
		_, err := b.Do(ctx, writeAction("main.go"), write("main.go", "kept"))
		return err
	})
	require.NoError(t, err)
	assert.False(t, out.RolledBack)
	b, err = os.ReadFile(filepath.Join(f.ws, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, "kept", string(b))
}

func TestReplayUnderAStricterProfile(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t)
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := audit.OpenJSONL(logPath, nil)
	require.NoError(t, err)
	r, err := reins.New(ctx, profile.MustBuiltin(profile.PermissionAutonomous), &reins.Options{Workspace: []string{ws}, Audit: sink})
	require.NoError(t, err)
	actions := []policy.Action{
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}}, // allow -> allow
		writeAction("main.go"), // allow+checkpoint -> confirm+checkpoint
		{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"docs/a.md"}}, // confirm -> deny
		shellAction("ls -la"), // allow -> allow
		{Tool: "fetch", Operation: policy.OpNetwork, Host: "example.com"},        // allow -> confirm
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{".env"}}, // boundary deny -> deny
	}
	for _, a := range actions {
		_, err := r.Check(ctx, a)
		require.NoError(t, err)
	}
	r.Halt(ctx, "end of run")
	_, err = r.Check(ctx, actions[0]) // halted: skipped by replay
	require.NoError(t, err)
	require.NoError(t, sink.Close(ctx))

	sup := profile.MustBuiltin(profile.PermissionSupervised)
	auto := profile.MustBuiltin(profile.PermissionAutonomous)
	for _, baseline := range []*profile.Profile{nil, &auto} {
		rep, err := reins.Replay(ctx, audit.Scan(logPath, nil), sup, &reins.ReplayOptions{Workspace: []string{ws}, Baseline: baseline})
		require.NoError(t, err)
		assert.Equal(t, 6, rep.Decisions)
		assert.Equal(t, 1, rep.Skipped)
		assert.Equal(t, map[string]int{"decided by the run's state (a latched halt)": 1}, rep.SkippedWhy)
		var changed []string
		for _, c := range rep.Changes {
			changed = append(changed, c.Action.Tool)
			assert.NotEqual(t, c.Was.Decision.Verdict, c.Now.Decision.Verdict, c.String())
			assert.NotEmpty(t, c.Now.Steps, "the new decision is explained in full")
		}
		assert.Equal(t, []string{"write_file", "delete_file", "fetch"}, changed)
	}
	// The same profile changes nothing.
	rep, err := reins.Replay(ctx, audit.Scan(logPath, nil), auto, &reins.ReplayOptions{Workspace: []string{ws}})
	require.NoError(t, err)
	assert.Empty(t, rep.Changes)
}
