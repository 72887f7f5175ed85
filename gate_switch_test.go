package gate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

func newSwitchGate(t *testing.T, start string, confirm func(context.Context, gate.SwitchRequest) (bool, error)) (*gate.Gate, *audit.Memory) {
	t.Helper()
	sink := audit.NewMemory(0)
	g, err := gate.New(builtin(start), &gate.Options{Workspace: []string{workspace(t)}, Audit: sink, ConfirmSwitch: confirm})
	require.NoError(t, err)
	return g, sink
}

func kinds(m *audit.Memory) []audit.Kind {
	var out []audit.Kind
	for _, r := range m.Records() {
		out = append(out, r.Kind)
	}
	return out
}

func TestSwitchToStricterIsAlwaysAllowed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, sink := newSwitchGate(t, profile.ProfileFullAuto, nil)
	sw, err := g.SwitchTo(ctx, profile.ProfileDev)
	require.NoError(t, err)
	assert.True(t, sw.Applied)
	assert.False(t, sw.Confirmed)
	assert.Equal(t, profile.ProfileDev, g.Profile().Name())
	assert.Equal(t, []audit.Kind{audit.KindProfileSwitchRequested, audit.KindProfileSwitchApplied}, kinds(sink))
	rec := sink.Records()[1]
	assert.Equal(t, profile.ProfileFullAuto, rec.Profile)
	assert.Equal(t, profile.ProfileDev, rec.RequestedProfile)
	assert.Equal(t, builtin(profile.ProfileDev).Hash(), rec.RequestedProfileHash)
	_, err = g.SwitchTo(ctx, profile.PermissionEmergencyStop)
	require.NoError(t, err, "an emergency stop never needs confirmation")
}

func TestSwitchToLooserNeedsConfirmation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, sink := newSwitchGate(t, profile.ProfileSafe, nil)
	_, err := g.SwitchTo(ctx, profile.ProfileFullAuto)
	require.ErrorIs(t, err, gate.ErrSwitchRefused)
	assert.ErrorContains(t, err, "no one can confirm")
	assert.Equal(t, profile.ProfileSafe, g.Profile().Name())
	assert.Equal(t, []audit.Kind{audit.KindProfileSwitchRequested, audit.KindProfileSwitchRefused}, kinds(sink))

	var asked gate.SwitchRequest
	answer := false
	var answerErr error
	g, _ = newSwitchGate(t, profile.ProfileSafe, func(_ context.Context, req gate.SwitchRequest) (bool, error) {
		asked = req
		return answer, answerErr
	})
	_, err = g.SwitchTo(ctx, profile.ProfileFullAuto)
	require.ErrorIs(t, err, gate.ErrSwitchRefused)
	assert.Equal(t, profile.ProfileSafe, asked.From.Name)
	assert.Equal(t, profile.ProfileFullAuto, asked.To.Name)
	assert.Contains(t, asked.Why, "more autonomous")
	answerErr = errors.New("no terminal")
	_, err = g.SwitchTo(ctx, profile.ProfileFullAuto)
	assert.ErrorContains(t, err, "no terminal")
	answer, answerErr = true, nil
	sw, err := g.SwitchTo(ctx, profile.ProfileFullAuto)
	require.NoError(t, err)
	assert.True(t, sw.Confirmed)
	assert.Equal(t, profile.ProfileFullAuto, g.Profile().Name())

	_, err = g.SwitchTo(ctx, "no-such-profile")
	assert.ErrorIs(t, err, gate.ErrSwitchRefused)
}

func TestSwitchWaitsForTheBoundary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, _ := newSwitchGate(t, profile.PermissionAutonomous, nil)
	op, err := g.Begin(ctx)
	require.NoError(t, err)
	sw, err := g.SwitchTo(ctx, profile.PermissionSupervised)
	require.NoError(t, err)
	assert.False(t, sw.Applied, "an operation is in flight")
	write := policy.Action{Tool: "t", Operation: policy.OpTool, Risk: risk.Of(risk.Mutating)}
	d, err := op.Check(ctx, write)
	require.NoError(t, err)
	assert.Equal(t, profile.PermissionAutonomous, d.Profile, "the operation keeps its profile")
	assert.Equal(t, policy.Allow, d.Verdict)

	started := make(chan string, 1)
	go func() {
		op2, err := g.Begin(ctx)
		if err != nil {
			started <- "error: " + err.Error()
			return
		}
		started <- op2.Profile().Name()
		op2.End()
	}()
	select {
	case name := <-started:
		t.Fatalf("a new operation began (%s) while a switch waited for the boundary", name)
	case <-time.After(50 * time.Millisecond):
	}
	assert.Equal(t, profile.PermissionAutonomous, g.Profile().Name())
	op.End()
	op.End() // idempotent
	assert.Equal(t, profile.PermissionSupervised, <-started, "the next operation runs under the new profile")
	assert.Equal(t, profile.PermissionSupervised, g.Profile().Name())
	assert.Zero(t, g.InFlight())

	// Begin respects its context while it waits.
	op, err = g.Begin(ctx)
	require.NoError(t, err)
	_, err = g.SwitchTo(ctx, profile.PermissionReadOnly)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = g.Begin(short)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	op.End()
	assert.Equal(t, profile.PermissionReadOnly, g.Profile().Name())
}

func TestConcurrencyLimitAndTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, _ := newSwitchGate(t, profile.ProfileSafe, nil) // 1 operation at a time, 2 minutes each
	op, err := g.Begin(ctx)
	require.NoError(t, err)
	deadline, ok := op.Context().Deadline()
	require.True(t, ok)
	assert.WithinDuration(t, time.Now().Add(2*time.Minute), deadline, 5*time.Second)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = g.Begin(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "max 1")
	assert.Equal(t, 1, g.InFlight())
	op.End()
	require.NoError(t, g.Run(ctx, func(ctx context.Context, op *gate.Op) error {
		assert.Equal(t, profile.ProfileSafe, op.Profile().Name())
		return nil
	}))
	boom := errors.New("boom")
	assert.ErrorIs(t, g.Run(ctx, func(context.Context, *gate.Op) error { return boom }), boom)
	assert.Zero(t, g.InFlight())
}

func TestMaxFilesPerPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ProfileFullAuto)) // 200 files per plan
	plan := func(n int) policy.Action {
		a := policy.Action{Tool: "plan", Operation: policy.OpPlan, Risk: risk.Of(risk.Mutating)}
		for i := range n {
			a.Targets = append(a.Targets, fmt.Sprintf("src/f%d.go", i))
		}
		return a
	}
	assert.Equal(t, policy.Allow, f.check(t, plan(200)).Verdict)
	d := f.check(t, plan(201))
	assert.Equal(t, policy.Confirm, d.Verdict)
	assert.Equal(t, gate.CheckMaxFilesPerPlan, d.RuleID)
}

func TestReload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, sink := newSwitchGate(t, profile.ProfileDev, nil)
	bad := builtin(profile.ProfileDev)
	bad.Rules = append(bad.Rules, policy.Rule{ID: "broken", Condition: policy.Condition{CommandPattern: "("}})
	_, err := g.Reload(ctx, bad)
	require.ErrorIs(t, err, gate.ErrSwitchRefused)
	assert.ErrorContains(t, err, `rule "broken"`)
	assert.Equal(t, builtin(profile.ProfileDev).Hash(), g.Profile().Profile().Hash(), "an invalid reload leaves the old profile active")

	looser := builtin(profile.ProfileDev)
	looser.ShellAllowlist = append(looser.ShellAllowlist, "terraform plan")
	sw, err := g.Reload(ctx, looser)
	require.NoError(t, err, "a reload is vouched for by the host")
	assert.True(t, sw.Applied)
	assert.Contains(t, g.Profile().Profile().ShellAllowlist, "terraform plan")
	recs := sink.Records()
	assert.Equal(t, audit.DecidedByHook, recs[len(recs)-1].DecidedBy)
}

// TestSwitchingUnderLoad: many goroutines run operations while profiles are switched. No
// operation sees two profiles between its begin and end, and the concurrency limit of its
// profile is never exceeded.
func TestSwitchingUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	confirm := func(context.Context, gate.SwitchRequest) (bool, error) { return true, nil }
	g, _ := newSwitchGate(t, profile.ProfileDev, confirm)
	names := []string{profile.ProfileSafe, profile.ProfileDev, profile.ProfileFullAuto}
	var active, maxSeen, violations atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := g.Run(ctx, func(ctx context.Context, op *gate.Op) error {
					n := active.Add(1)
					defer active.Add(-1)
					if int64(op.Profile().Limits().MaxConcurrentOps) < n {
						violations.Add(1)
					}
					for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
					}
					name := op.Profile().Name()
					for range 1 + rng.IntN(3) {
						d, err := op.Check(ctx, policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}})
						if err != nil {
							return err
						}
						if d.Profile != name || g.Profile().Name() != name {
							violations.Add(1)
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 60 {
		_, err := g.SwitchTo(ctx, names[i%len(names)])
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, violations.Load(), "an operation saw two profiles or exceeded its limit")
	assert.LessOrEqual(t, maxSeen.Load(), int64(5))
	assert.Zero(t, g.InFlight())
}

func TestProfilesListAndShow(t *testing.T) {
	t.Parallel()
	custom := builtin(profile.ProfileDev)
	custom.Name, custom.Family, custom.Description = "team-dev", profile.FamilyCustom, "DEV with the team's lists"
	g, err := gate.New(builtin(profile.ProfileDev), &gate.Options{Workspace: []string{workspace(t)}, Profiles: []profile.Profile{custom}})
	require.NoError(t, err)
	list := g.Profiles()
	require.Equal(t, "team-dev", list[0].Name, "host profiles come first")
	assert.Len(t, list, len(profile.Names())+1)
	active := 0
	for _, p := range list {
		if p.Active {
			active++
			assert.Equal(t, profile.ProfileDev, p.Name)
		}
	}
	assert.Equal(t, 1, active)
	out, err := g.ShowProfile("PROFILE-SAFE")
	require.NoError(t, err)
	assert.Contains(t, out, "deny-shell")
	_, err = g.ShowProfile("nope")
	assert.Error(t, err)
}
