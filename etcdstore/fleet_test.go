package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/etcdstore"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// fleetOf starts n runs under one prefix, each with its own client, store and reins.Run. Their
// calls may take up to 30 s: the tests that use it check what the fleet shares, not how an
// overloaded machine (50 runs and the cluster on two cores, under the race detector) meets the
// default timeout.
func fleetOf(t *testing.T, srv *server, prefix string, n int, tune func(*reins.Options)) []*reins.Run {
	t.Helper()
	runs := make([]*reins.Run, n)
	for i := range runs {
		st := srv.newStore(t, prefix, fmt.Sprintf("run-%02d", i), func(o *etcdstore.Options) { o.Timeout = 30 * time.Second })
		runs[i] = newRun(t, st, tune)
	}
	return runs
}

// eachRun calls fn for every run at once and waits.
func eachRun(runs []*reins.Run, fn func(i int, r *reins.Run)) {
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, r)
		}()
	}
	wg.Wait()
}

// 50 runs, each with its own client: after one halt by the operator, every run's next decision
// denies, naming the halt; after the operator's reset, they allow again.
func TestFleetHalt(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	runs := fleetOf(t, srv, prefix, 50, nil)
	verdicts := func() []gate.Decision {
		out := make([]gate.Decision, len(runs))
		eachRun(runs, func(i int, r *reins.Run) {
			d, err := r.Check(ctx, readme)
			assert.NoError(t, err)
			out[i] = d
		})
		return out
	}
	for _, d := range verdicts() {
		require.Equal(t, policy.Allow, d.Verdict, d.Reason)
	}

	log := audit.NewMemory(0)
	f := srv.newFleet(t, prefix, func(o *etcdstore.FleetOptions) { o.Audit = log })
	h, err := f.Halt(ctx, "incident 42")
	require.NoError(t, err)
	assert.Equal(t, gate.CauseManual, h.Cause)
	for i, d := range verdicts() {
		require.Equal(t, policy.Deny, d.Verdict, "run %d", i)
		assert.Equal(t, policy.LayerHalted, d.Layer)
		assert.Contains(t, d.Reason, "incident 42")
	}
	// A second halt keeps the first.
	h2, err := f.Halt(ctx, "another")
	require.NoError(t, err)
	assert.Equal(t, h.Reason, h2.Reason)

	// Each store writes its member key in the background, on its first heartbeat: wait for all.
	var st *etcdstore.Status
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err = f.Status(ctx)
		require.NoError(t, err)
		if len(st.Runs) == 50 || time.Now().After(deadline) {
			break
		}
	}
	require.NotNil(t, st.Halt)
	assert.Contains(t, st.Halt.Reason, "incident 42")
	assert.Len(t, st.Runs, 50)
	for _, r := range st.Runs {
		assert.True(t, r.Live, r.ID)
	}

	require.NoError(t, f.Reset(ctx, "incident closed"))
	for i, d := range verdicts() {
		require.Equal(t, policy.Allow, d.Verdict, "run %d: %s", i, d.Reason)
	}
	var kinds []audit.Kind
	for _, r := range log.Records() {
		kinds = append(kinds, r.Kind)
		assert.Equal(t, audit.DecidedByUser, r.DecidedBy)
		assert.Equal(t, "operator", r.Approver)
	}
	assert.Equal(t, []audit.Kind{audit.KindHalt, audit.KindReset}, kinds, "each command that changed the fleet is recorded")
}

// An emergency stop, by the operator or by any run, cancels the operations in flight of every
// run (through their watch), and every later decision denies.
func TestEmergencyStopCancelsInFlight(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	runs := fleetOf(t, srv, prefix, 5, nil)
	f := srv.newFleet(t, prefix, nil)
	for _, stop := range []struct {
		name string
		stop func()
	}{
		{"by the operator", func() { _, err := f.EmergencyStop(ctx, "runaway agents"); require.NoError(t, err) }},
		{"by a run", func() { runs[0].EmergencyStop(ctx, "runaway agents") }},
	} {
		t.Run(stop.name, func(t *testing.T) {
			started := make(chan struct{}, len(runs))
			causes := make([]error, len(runs))
			var wg sync.WaitGroup
			for i, r := range runs {
				if stop.name == "by a run" && i == 0 {
					continue // its own operations are cancelled by EmergencyStop itself
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := r.Do(ctx, readme, func(ctx context.Context, _ gate.Decision) error {
						started <- struct{}{}
						select {
						case <-ctx.Done():
							causes[i] = context.Cause(ctx)
						case <-time.After(time.Minute):
							causes[i] = errors.New("not cancelled within a minute")
						}
						return ctx.Err()
					})
					_ = err
				}()
			}
			want := len(runs)
			if stop.name == "by a run" {
				want--
			}
			for range want {
				select {
				case <-started:
				case <-time.After(time.Minute):
					t.Fatal("a run's operation did not start within a minute (its decision denied?)")
				}
			}
			stop.stop()
			waitGroupWithin(t, &wg, 2*time.Minute, "the operations in flight")
			for i, c := range causes {
				if stop.name == "by a run" && i == 0 {
					continue
				}
				assert.ErrorIs(t, c, reins.ErrEmergencyStop, "run %d", i)
			}
			for i, r := range runs {
				d, err := r.Check(ctx, readme)
				require.NoError(t, err)
				assert.Equal(t, policy.Deny, d.Verdict, "run %d", i)
				assert.Contains(t, d.Reason, "runaway agents")
			}
			require.NoError(t, f.Reset(ctx, "contained"))
		})
	}
}

// A budget shared by the fleet is never exceeded, however many runs race for it: over many
// seeds, runs, limits and numbers of attempts, the actions that ran are exactly the smaller of
// the limit and the attempts, and the meter counts exactly them.
func TestSharedBudgetNeverExceeded(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	const seeds = 16
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			n, limit := 2+rng.IntN(7), 1+rng.IntN(25)
			attempts := make([]int, n)
			total := 0
			for i := range attempts {
				attempts[i] = rng.IntN(12)
				total += attempts[i]
			}
			runs := fleetOf(t, srv, srv.prefix(), n, func(o *reins.Options) {
				o.Meters = []reins.Meter{{Name: reins.MeterActions, Limit: float64(limit)}}
			})
			var ran atomic.Int64
			eachRun(runs, func(i int, r *reins.Run) {
				for range attempts[i] {
					_, err := r.Do(ctx, readme, func(context.Context, gate.Decision) error { ran.Add(1); return nil })
					if err != nil {
						assert.ErrorIs(t, err, gate.ErrDenied)
					}
				}
			})
			assert.LessOrEqual(t, ran.Load(), int64(limit), "the budget is never exceeded")
			assert.Equal(t, int64(min(limit, total)), ran.Load(), "and no admitted action is lost (limit %d, %d attempts by %d runs)", limit, total, n)
			ms, err := runs[0].Meters(ctx)
			require.NoError(t, err)
			require.Len(t, ms, 1)
			assert.Equal(t, float64(ran.Load()), ms[0].Used, "the meter counts what ran")
		})
	}
}

// Stopping the cluster mid-run and starting it again loses no halt, grant or spend; the
// decisions in between deny, naming the cause. (One stop: etcd's clean stop waits about 7 s for
// the runs' watch streams.)
func TestRestartLosesNothing(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	quick := func(o *etcdstore.Options) { o.Timeout = 300 * time.Millisecond }
	r := newRun(t, srv.newStore(t, prefix, "a", quick), func(o *reins.Options) {
		o.Meters = []reins.Meter{{Name: reins.MeterCost, Limit: 1e6}}
	})
	other := newRun(t, srv.newStore(t, prefix, "b", quick), nil)
	g := grant("g-team", reins.Always)
	_, err := r.AddGrant(ctx, g)
	require.NoError(t, err)
	f := srv.newFleet(t, prefix, nil)
	_, err = f.Halt(ctx, "before the outage")
	require.NoError(t, err)

	// Spenders run across the restart; what they were told was kept must be kept.
	var acked, tried atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	stopSpenders := sync.OnceFunc(func() { close(stop); waitGroupWithin(t, &wg, time.Minute, "the spenders") })
	t.Cleanup(stopSpenders) // also when an assertion below ends the test early
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				tried.Add(1)
				if err := r.Use(ctx, reins.MeterCost, 1); err == nil {
					acked.Add(1)
				}
			}
		}()
	}
	waitFor(t, time.Minute, "20 acknowledged spends before the stop", func() bool { return acked.Load() >= 20 })
	srv.stop()
	d, err := other.Check(ctx, readme)
	require.ErrorIs(t, err, reins.ErrRunState)
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, reins.CheckRunState, d.RuleID)
	assert.Contains(t, d.Reason, "cannot be reached", "the decision names the cause")
	ackedDown := acked.Load()
	srv.restart()

	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err = other.Check(ctx, readme)
		if err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the run cannot read its state after the restart: %v", err)
	}
	assert.Equal(t, policy.Deny, d.Verdict, "the halt survived")
	assert.Contains(t, d.Reason, "before the outage")
	waitFor(t, time.Minute, "20 acknowledged spends after the restart", func() bool { return acked.Load() >= ackedDown+20 })
	stopSpenders()
	ms, err := r.Meters(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ms[0].Used, float64(acked.Load()), "no acknowledged spend is lost")
	assert.LessOrEqual(t, ms[0].Used, float64(tried.Load()), "none is counted twice")
	gs, err := other.Grants(ctx)
	require.NoError(t, err)
	require.Len(t, gs, 1, "the shared grant survived")
	assert.Equal(t, g.ID, gs[0].ID)
	require.NoError(t, f.Reset(ctx, "outage over"))
	waitAllowed(t, other)
}

// waitFor waits until cond holds, failing the test when it does not within d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waited %s for %s", d, what)
		time.Sleep(time.Millisecond)
	}
}

// waitGroupWithin waits for wg, failing the test when it is not done within d.
func waitGroupWithin(t *testing.T, wg *sync.WaitGroup, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not end within %s", what, d)
	}
}

// waitAllowed waits (up to 30 s) until the run's decisions are allowed again.
func waitAllowed(t *testing.T, r *reins.Run) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := r.Check(context.Background(), readme)
		if err == nil && d.Verdict == policy.Allow {
			return
		}
		require.True(t, time.Now().Before(deadline), "the run does not allow again after the restart: %v %s", err, d.Reason)
	}
}

// The operator's view: status, grants, revoke, forget.
func TestOperatorCommands(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	fast := func(o *etcdstore.Options) { o.TTL = 3 * time.Second } // liveness written every second
	sa := srv.newStore(t, prefix, "a", fast)
	a := newRun(t, sa, func(o *reins.Options) { o.Meters = []reins.Meter{{Name: reins.MeterCost, Limit: 10}} })
	b := newRun(t, srv.newStore(t, prefix, "b", fast), nil)
	_, err := a.AddGrant(ctx, grant("g-team", reins.Always))
	require.NoError(t, err)
	_, err = a.AddGrant(ctx, grant("g-mine", reins.ForSession))
	require.NoError(t, err)
	require.NoError(t, a.Use(ctx, reins.MeterCost, 4))
	require.NoError(t, b.RecordResult(ctx, readme, gate.Decision{Verdict: policy.Allow}, errors.New("tool failed")))

	log := audit.NewMemory(0)
	f := srv.newFleet(t, prefix, func(o *etcdstore.FleetOptions) { o.Audit = log })
	// The stores write their member keys in the background: wait for both.
	var st *etcdstore.Status
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err = f.Status(ctx)
		require.NoError(t, err)
		if len(st.Runs) == 2 && st.Runs[0].Live && st.Runs[1].Live && !st.Runs[0].LastActive.IsZero() || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Len(t, st.Runs, 2)
	assert.Equal(t, "a", st.Runs[0].ID)
	assert.True(t, st.Runs[0].Live)
	assert.NotEmpty(t, st.Runs[0].Host)
	assert.Equal(t, 1, st.Runs[0].Grants)
	assert.Equal(t, map[string]int{"read_file": 1}, st.Runs[1].Failures)
	require.Len(t, st.Meters, 1)
	assert.Equal(t, 4.0, st.Meters[0].Used)
	assert.Equal(t, 1, st.Grants)

	gs, err := f.Grants(ctx)
	require.NoError(t, err)
	require.Len(t, gs, 2)
	assert.Equal(t, "", gs[0].Run)
	assert.Equal(t, "g-team", gs[0].Grant.ID)
	assert.Equal(t, "a", gs[1].Run)
	assert.Equal(t, "g-mine", gs[1].Grant.ID)

	require.NoError(t, f.Revoke(ctx, "g-team", "too wide for the team"))
	require.NoError(t, f.Revoke(ctx, "g-mine", "not needed"))
	require.Error(t, f.Revoke(ctx, "g-none", ""))
	left, err := a.Grants(ctx)
	require.NoError(t, err)
	assert.Empty(t, left, "revoked in one place, gone for the run")

	require.NoError(t, f.ResetMeter(ctx, reins.MeterCost, 50, "more budget"))
	ms, err := a.Meters(ctx)
	require.NoError(t, err)
	assert.Equal(t, 50.0, ms[0].Limit)
	assert.Zero(t, ms[0].Used)

	err = f.Forget(ctx, "a", "done")
	require.Error(t, err, "a live run is not forgotten")
	require.NoError(t, sa.Close())
	require.NoError(t, f.Forget(ctx, "a", "done"))
	st, err = f.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Runs, 1)
	assert.Equal(t, "b", st.Runs[0].ID)

	var kinds []audit.Kind
	for _, r := range log.Records() {
		kinds = append(kinds, r.Kind)
	}
	assert.Equal(t, []audit.Kind{audit.KindGrantRevoked, audit.KindGrantRevoked, audit.KindBudget, audit.KindReset}, kinds)
}

// Keys edited behind the store's back are refused, and the run denies naming them: a grant
// broader than an approval, a key outside the layout, a meter under another name. The operator
// sees and revokes the bad grant.
func TestEditedKeysFailClosed(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	r := newRun(t, srv.newStore(t, prefix, "a", nil), nil)
	c := srv.newClient(t)
	broad := grant("wide", reins.Always)
	broad.Rules[0].Condition.Commands = []string{"go"}
	broad.Rules[0].Condition.CommandPattern = ""
	b, err := jsonOf(broad)
	require.NoError(t, err)
	for _, tt := range []struct {
		key, value, want string
	}{
		{prefix + "/state/fleet/grants/wide", b, "broader than an approval"},
		{prefix + "/state/fleet/surprise", "1", "is not part of the run-state layout"},
		{prefix + "/state/fleet/meters/cost", `{"name":"tokens","limit":1,"warn_at":0.8,"used":0}`, `holds meter "tokens"`},
		{prefix + "/state/runs/a/failures", `{"bash": "many"}`, "cannot unmarshal"},
		{prefix + "/state/fleet/rev", "-1", "is not a count"},
	} {
		t.Run(tt.key, func(t *testing.T) {
			_, err := c.Put(ctx, tt.key, tt.value)
			require.NoError(t, err)
			_, err = c.Put(ctx, prefix+"/state/fleet/rev", "1000") // as if written through a store
			require.NoError(t, err)
			if strings.HasSuffix(tt.key, "/rev") {
				_, err = c.Put(ctx, tt.key, tt.value)
				require.NoError(t, err)
			}
			d, err := r.Check(ctx, readme)
			require.ErrorIs(t, err, reins.ErrRunState)
			assert.Equal(t, policy.Deny, d.Verdict)
			assert.Contains(t, d.Reason, tt.want)
			if tt.key == prefix+"/state/fleet/grants/wide" {
				f := srv.newFleet(t, prefix, nil)
				gs, err := f.Grants(ctx)
				require.NoError(t, err)
				require.Len(t, gs, 1)
				assert.Equal(t, "wide", gs[0].Grant.ID)
				assert.Contains(t, gs[0].Problem, "broader than an approval")
				require.NoError(t, f.Revoke(ctx, "wide", "edited by hand"))
			} else {
				_, err = c.Delete(ctx, tt.key)
				require.NoError(t, err)
				_, err = c.Put(ctx, prefix+"/state/fleet/rev", "1001")
				require.NoError(t, err)
			}
			d, err = r.Check(ctx, readme)
			require.NoError(t, err)
			assert.Equal(t, policy.Allow, d.Verdict, d.Reason)
		})
	}
}
