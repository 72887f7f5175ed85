package reins_test

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

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

func TestSwitchToStricterIsAlwaysAllowed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, sink := newSwitchRun(t, profile.ProfileFullAuto, nil)
	sw, err := r.SwitchTo(ctx, profile.ProfileDev)
	require.NoError(t, err)
	assert.True(t, sw.Applied)
	assert.False(t, sw.Confirmed)
	assert.Equal(t, profile.ProfileDev, r.Profile().Name())
	assert.Equal(t, []audit.Kind{audit.KindProfileSwitchRequested, audit.KindProfileSwitchApplied}, kinds(sink))
	rec := sink.Records()[1]
	assert.Equal(t, profile.ProfileFullAuto, rec.Profile)
	assert.Equal(t, profile.ProfileDev, rec.RequestedProfile)
	assert.Equal(t, builtin(profile.ProfileDev).Hash(), rec.RequestedProfileHash)
	_, err = r.SwitchTo(ctx, profile.PermissionEmergencyStop)
	require.NoError(t, err, "an emergency stop never needs confirmation")
}

func TestSwitchToLooserNeedsConfirmation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, sink := newSwitchRun(t, profile.ProfileSafe, nil)
	_, err := r.SwitchTo(ctx, profile.ProfileFullAuto)
	require.ErrorIs(t, err, reins.ErrSwitchRefused)
	assert.ErrorContains(t, err, "no one can confirm")
	assert.Equal(t, profile.ProfileSafe, r.Profile().Name())
	assert.Equal(t, []audit.Kind{audit.KindProfileSwitchRequested, audit.KindProfileSwitchRefused}, kinds(sink))

	var asked reins.SwitchRequest
	answer := false
	var answerErr error
	r, _ = newSwitchRun(t, profile.ProfileSafe, func(_ context.Context, req reins.SwitchRequest) (bool, error) {
		asked = req
		return answer, answerErr
	})
	_, err = r.SwitchTo(ctx, profile.ProfileFullAuto)
	require.ErrorIs(t, err, reins.ErrSwitchRefused)
	assert.Equal(t, profile.ProfileSafe, asked.From.Name)
	assert.Equal(t, profile.ProfileFullAuto, asked.To.Name)
	assert.Contains(t, asked.Why, "more autonomous")
	answerErr = errors.New("no terminal")
	_, err = r.SwitchTo(ctx, profile.ProfileFullAuto)
	assert.ErrorContains(t, err, "no terminal")
	answer, answerErr = true, nil
	sw, err := r.SwitchTo(ctx, profile.ProfileFullAuto)
	require.NoError(t, err)
	assert.True(t, sw.Confirmed)
	assert.Equal(t, profile.ProfileFullAuto, r.Profile().Name())

	_, err = r.SwitchTo(ctx, "no-such-profile")
	assert.ErrorIs(t, err, reins.ErrSwitchRefused)
}

// Issue 24: one restrictiveness order. A copy of PROFILE-DEV whose limits are raised (50 to
// 1,050 files per plan, 3 to 103 operations at once, an hour more of timeout) is looser than
// PROFILE-DEV: switching to it needs confirmation, as the loader counts raising a limit.
func TestSwitchToRaisedLimitsNeedsConfirmation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dev := builtin(profile.ProfileDev)
	raised := dev.Clone()
	raised.Name = "dev-raised-limits"
	raised.Limits.MaxFilesPerPlan += 1000
	raised.Limits.MaxConcurrentOps += 100
	raised.Limits.Timeout += time.Hour
	require.Equal(t, 1050, raised.Limits.MaxFilesPerPlan)
	require.Equal(t, 103, raised.Limits.MaxConcurrentOps)
	ok, why := profile.AtLeastAsRestrictive(raised, dev)
	require.False(t, ok, "one restrictiveness order, limits included")
	assert.Contains(t, why, "max_files_per_plan")

	r, sink := newSwitchRun(t, profile.ProfileDev, nil)
	sw, err := r.SwitchProfile(ctx, raised)
	require.ErrorIs(t, err, reins.ErrSwitchRefused, "raising limits loosens the profile")
	assert.False(t, sw.Applied)
	assert.False(t, sw.Confirmed)
	assert.Equal(t, profile.ProfileDev, r.Profile().Name())
	assert.Equal(t, []audit.Kind{audit.KindProfileSwitchRequested, audit.KindProfileSwitchRefused}, kinds(sink))

	var asked int
	r, _ = newSwitchRun(t, profile.ProfileDev, func(_ context.Context, req reins.SwitchRequest) (bool, error) {
		asked++
		assert.NotEmpty(t, req.Why)
		return true, nil
	})
	sw, err = r.SwitchProfile(ctx, raised)
	require.NoError(t, err)
	assert.Equal(t, 1, asked)
	assert.True(t, sw.Applied)
	assert.True(t, sw.Confirmed, "applied only with a confirmation")
	assert.Equal(t, 1050, r.Profile().Limits().MaxFilesPerPlan)

	// Lowering a limit is a tightening: no confirmation.
	lowered := dev.Clone()
	lowered.Name = "dev-lowered-limits"
	lowered.Limits.MaxConcurrentOps = 1
	r, _ = newSwitchRun(t, profile.ProfileDev, nil)
	sw, err = r.SwitchProfile(ctx, lowered)
	require.NoError(t, err)
	assert.False(t, sw.Confirmed)
}

func TestSwitchWaitsForTheBoundary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newSwitchRun(t, profile.PermissionAutonomous, nil)
	op, err := r.Begin(ctx)
	require.NoError(t, err)
	sw, err := r.SwitchTo(ctx, profile.PermissionSupervised)
	require.NoError(t, err)
	assert.False(t, sw.Applied, "an operation is in flight")
	write := policy.Action{Tool: "t", Operation: policy.OpTool, Risk: risk.Of(risk.Mutating)}
	d, err := op.Check(ctx, write)
	require.NoError(t, err)
	assert.Equal(t, profile.PermissionAutonomous, d.Profile, "the operation keeps its profile")
	assert.Equal(t, policy.Allow, d.Verdict)

	started := make(chan string, 1)
	go func() {
		op2, err := r.Begin(ctx)
		if err != nil {
			started <- "error: " + err.Error()
			return
		}
		started <- op2.Gate().Profile().Name()
		op2.End()
	}()
	select {
	case name := <-started:
		t.Fatalf("a new operation began (%s) while a switch waited for the boundary", name)
	case <-time.After(50 * time.Millisecond):
	}
	assert.Equal(t, profile.PermissionAutonomous, r.Profile().Name())
	op.End()
	op.End() // idempotent
	assert.Equal(t, profile.PermissionSupervised, <-started, "the next operation runs under the new profile")
	assert.Equal(t, profile.PermissionSupervised, r.Profile().Name())
	assert.Zero(t, r.InFlight())

	// Begin respects its context while it waits.
	op, err = r.Begin(ctx)
	require.NoError(t, err)
	_, err = r.SwitchTo(ctx, profile.PermissionReadOnly)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = r.Begin(short)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	op.End()
	assert.Equal(t, profile.PermissionReadOnly, r.Profile().Name())
}

func TestConcurrencyLimitAndTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newFakeClock()
	f := newPlain(t, builtin(profile.ProfileSafe), func(o *reins.Options) { o.Clock = clock }) // 1 operation at a time, 2 minutes each
	r := f.r
	op, err := r.Begin(ctx)
	require.NoError(t, err)
	// Changed: the profile's timeout runs on the run's clock (a timer that cancels the
	// operation's context with context.DeadlineExceeded as its cause), not as a context deadline.
	clock.Advance(2*time.Minute - time.Second)
	assert.NoError(t, op.Context().Err(), "not yet")
	clock.Advance(time.Second)
	select {
	case <-op.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the operation's timeout did not end its context")
	}
	assert.ErrorIs(t, context.Cause(op.Context()), context.DeadlineExceeded)
	// A Do in a timed-out operation does not run.
	out, err := op.Do(op.Context(), readme, ok)
	require.Error(t, err)
	assert.False(t, out.Ran)

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = r.Begin(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "max 1")
	assert.Equal(t, 1, r.InFlight())
	op.End()
	require.NoError(t, inOp(ctx, r, func(ctx context.Context, op *reins.Op) error {
		assert.Equal(t, profile.ProfileSafe, op.Gate().Profile().Name())
		return nil
	}))
	boom := errors.New("boom")
	assert.ErrorIs(t, inOp(ctx, r, func(context.Context, *reins.Op) error { return boom }), boom)
	assert.Zero(t, r.InFlight())
	assert.Zero(t, clock.Pending(), "End stops the operation's timer")
}

func TestMaxFilesPerPlan(t *testing.T) {
	t.Parallel()
	f := newPlain(t, builtin(profile.ProfileFullAuto), nil) // 200 files per plan
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
	r, sink := newSwitchRun(t, profile.ProfileDev, nil)
	bad := builtin(profile.ProfileDev)
	bad.Rules = append(bad.Rules, policy.Rule{ID: "broken", Condition: policy.Condition{CommandPattern: "("}})
	_, err := r.Reload(ctx, bad)
	require.ErrorIs(t, err, reins.ErrSwitchRefused)
	assert.ErrorContains(t, err, `rule "broken"`)
	assert.Equal(t, builtin(profile.ProfileDev).Hash(), r.Profile().Profile().Hash(), "an invalid reload leaves the old profile active")

	looser := builtin(profile.ProfileDev)
	looser.ShellAllowlist = append(looser.ShellAllowlist, "terraform plan")
	sw, err := r.Reload(ctx, looser)
	require.NoError(t, err, "a reload is vouched for by the host")
	assert.True(t, sw.Applied)
	assert.Contains(t, r.Profile().Profile().ShellAllowlist, "terraform plan")
	recs := sink.Records()
	assert.Equal(t, audit.DecidedByHook, recs[len(recs)-1].DecidedBy)
}

// TestSwitchingUnderLoad: many goroutines run operations while profiles are switched. No
// operation sees two profiles between its begin and end, and the concurrency limit of its
// profile is never exceeded.
func TestSwitchingUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	confirm := func(context.Context, reins.SwitchRequest) (bool, error) { return true, nil }
	r, _ := newSwitchRun(t, profile.ProfileDev, confirm)
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
				err := inOp(ctx, r, func(ctx context.Context, op *reins.Op) error {
					n := active.Add(1)
					defer active.Add(-1)
					prof := op.Gate().Profile()
					if int64(prof.Limits().MaxConcurrentOps) < n {
						violations.Add(1)
					}
					for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
					}
					name := prof.Name()
					for range 1 + rng.IntN(3) {
						d, err := op.Check(ctx, policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}})
						if err != nil {
							return err
						}
						if d.Profile != name || r.Profile().Name() != name {
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
		_, err := r.SwitchTo(ctx, names[i%len(names)])
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, violations.Load(), "an operation saw two profiles or exceeded its limit")
	assert.LessOrEqual(t, maxSeen.Load(), int64(5))
	assert.Zero(t, r.InFlight())
}

// The gate's Profiles and ShowProfile: the run lists the profiles it can switch to; a host
// shows one with gate.LookupProfile and Profile.Describe (ShowProfile is gone).
func TestProfilesListAndShow(t *testing.T) {
	t.Parallel()
	custom := builtin(profile.ProfileDev)
	custom.Name, custom.Family, custom.Description = "team-dev", profile.FamilyCustom, "DEV with the team's lists"
	f := newPlain(t, builtin(profile.ProfileDev), func(o *reins.Options) { o.Profiles = []profile.Profile{custom} })
	list := f.r.Profiles()
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
	p, err := gate.LookupProfile([]profile.Profile{custom}, "PROFILE-SAFE")
	require.NoError(t, err)
	assert.Contains(t, p.Describe(), "deny-shell")
	p, err = gate.LookupProfile([]profile.Profile{custom}, "TEAM-DEV")
	require.NoError(t, err, "names compare case-insensitively")
	assert.Equal(t, "team-dev", p.Name)
	_, err = gate.LookupProfile(nil, "nope")
	assert.Error(t, err)
	sw, err := f.r.SwitchTo(context.Background(), "team-dev")
	require.NoError(t, err, "a host profile at least as restrictive")
	assert.Equal(t, "team-dev", sw.To)
}
