package reinstest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// TestStore runs the conformance cases of reins.Store (see its documentation for the rules)
// against stores that newStore makes: each call returns a fresh, empty store. reopen, when not
// nil, returns a second handle on the same state as its argument (another process's view of a
// file, another client of a shared database): the cases that check that two handles share
// updates and that a state survives a round trip run only then.
//
// Every built-in store runs it (reins.MemoryStore, reins.FileStore), and so should a third
// party's, as testing/slogtest is for slog handlers.
func TestStore(t *testing.T, newStore func(t *testing.T) reins.Store, reopen func(t *testing.T, s reins.Store) reins.Store) {
	t.Helper()
	ctx := context.Background()
	cases := []struct {
		name   string
		shared bool // needs reopen
		run    func(t *testing.T, s reins.Store, other reins.Store)
	}{
		{"EmptyState", false, func(t *testing.T, s, _ reins.Store) {
			st, err := s.Load(ctx)
			require.NoError(t, err)
			require.NotNil(t, st, "Load of an empty store returns an empty state, not nil")
			assert.Zero(t, st.Rev)
			assert.Nil(t, st.Halt)
			assert.Empty(t, st.Grants)
		}},
		{"UpdateIsStoredAndCounted", false, func(t *testing.T, s, _ reins.Store) {
			h := gate.Halt{Cause: gate.CauseManual, Reason: "conformance", Time: time.Unix(1700000000, 0).UTC()}
			got, err := s.Update(ctx, func(st *reins.RunState) error { st.Halt = &h; return nil })
			require.NoError(t, err)
			require.NotNil(t, got.Halt)
			assert.Equal(t, uint64(1), got.Rev, "Update sets Rev to the previous Rev plus one")
			st, err := s.Load(ctx)
			require.NoError(t, err)
			require.NotNil(t, st.Halt, "Load sees the update")
			assert.Equal(t, h.Reason, st.Halt.Reason)
			assert.True(t, h.Time.Equal(st.Halt.Time))
			assert.Equal(t, uint64(1), st.Rev)
		}},
		{"FailedUpdateStoresNothing", false, func(t *testing.T, s, _ reins.Store) {
			_, err := s.Update(ctx, func(st *reins.RunState) error { st.Seq = 7; return nil })
			require.NoError(t, err)
			boom := errors.New("boom")
			_, err = s.Update(ctx, func(st *reins.RunState) error {
				st.Seq = 99
				if st.Failures == nil {
					st.Failures = map[string]int{}
				}
				st.Failures["x"] = 5
				return fmt.Errorf("wrapped: %w", boom)
			})
			require.ErrorIs(t, err, boom, "Update returns fn's error")
			st, err := s.Load(ctx)
			require.NoError(t, err)
			assert.Equal(t, uint64(7), st.Seq, "nothing of a failed update is stored")
			assert.Zero(t, st.Failures["x"], "fn changed a copy")
			assert.Equal(t, uint64(1), st.Rev)
		}},
		{"ConcurrentUpdatesAddUp", false, func(t *testing.T, s, _ reins.Store) {
			concurrentCount(t, s, s)
		}},
		{"CheckAndUpdateUseCount", false, func(t *testing.T, s, _ reins.Store) {
			raceForUses(t, s, s)
		}},
		{"BudgetNeverOverspent", false, func(t *testing.T, s, _ reins.Store) {
			_, err := s.Update(ctx, func(st *reins.RunState) error {
				st.Meters = map[string]reins.MeterStatus{"cost": {Meter: reins.Meter{Name: "cost", Limit: 10, WarnAt: 0.8}}}
				return nil
			})
			require.NoError(t, err)
			spent := errors.New("over budget")
			var ok atomic.Int64
			var wg sync.WaitGroup
			for range 30 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.Update(ctx, func(st *reins.RunState) error {
						m := st.Meters["cost"]
						if m.Used+1 > m.Limit {
							return spent
						}
						runtime.Gosched()
						m.Used++
						st.Meters["cost"] = m
						return nil
					})
					if err == nil {
						ok.Add(1)
					} else if !errors.Is(err, spent) {
						t.Errorf("Update: %v", err)
					}
				}()
			}
			wg.Wait()
			assert.Equal(t, int64(10), ok.Load(), "exactly the budget is spent")
			st, err := s.Load(ctx)
			require.NoError(t, err)
			assert.Equal(t, 10.0, st.Meters["cost"].Used)
		}},
		{"DoneContext", false, func(t *testing.T, s, _ reins.Store) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := s.Load(cctx)
			assert.ErrorIs(t, err, context.Canceled)
			called := false
			_, err = s.Update(cctx, func(st *reins.RunState) error { called = true; st.Seq = 1; return nil })
			assert.ErrorIs(t, err, context.Canceled)
			assert.False(t, called, "a done context changes nothing")
			st, err := s.Load(ctx)
			require.NoError(t, err)
			assert.Zero(t, st.Seq)
		}},
		{"RefusesBroadGrant", false, func(t *testing.T, s, _ reins.Store) {
			g := sampleGrant("g-broad")
			g.Rules[0].Condition.Commands = []string{"git"}
			g.Rules[0].Condition.CommandPattern = ""
			_, err := s.Update(ctx, func(st *reins.RunState) error { st.Grants = append(st.Grants, g); return nil })
			require.ErrorIs(t, err, reins.ErrBroadGrant)
			st, err := s.Load(ctx)
			require.NoError(t, err)
			assert.Empty(t, st.Grants)
		}},
		{"RefusesTooLarge", false, func(t *testing.T, s, _ reins.Store) {
			_, err := s.Update(ctx, func(st *reins.RunState) error {
				st.Failures = map[string]int{}
				for i := range 5000 {
					st.Failures[fmt.Sprint("tool", i)] = 1
				}
				return nil
			})
			require.ErrorIs(t, err, reins.ErrStateTooLarge)
		}},
		{"EveryFieldRoundTrips", true, func(t *testing.T, s, other reins.Store) {
			want := sampleState()
			_, err := s.Update(ctx, func(st *reins.RunState) error {
				rev := st.Rev
				*st = *want.Clone()
				st.Rev = rev
				return nil
			})
			require.NoError(t, err)
			got, err := other.Load(ctx)
			require.NoError(t, err)
			require.NotNil(t, got.Halt)
			assert.Equal(t, want.Halt.Reason, got.Halt.Reason)
			assert.True(t, want.Halt.Time.Equal(got.Halt.Time))
			assert.Equal(t, want.Failures, got.Failures)
			assert.Equal(t, want.Seq, got.Seq)
			require.Len(t, got.Meters, 1)
			assert.Equal(t, want.Meters["cost"].Used, got.Meters["cost"].Used)
			assert.Equal(t, want.Meters["cost"].Exhausted, got.Meters["cost"].Exhausted)
			require.Len(t, got.Grants, 1)
			g, w := got.Grants[0], want.Grants[0]
			assert.Equal(t, w.ID, g.ID)
			assert.Equal(t, w.Line, g.Line)
			assert.Equal(t, w.Dir, g.Dir)
			assert.Equal(t, w.Env, g.Env)
			assert.Equal(t, w.Used, g.Used)
			assert.Equal(t, w.MaxUses, g.MaxUses)
			assert.Equal(t, w.ProfileHash, g.ProfileHash)
			assert.Equal(t, w.Profile.Hash(), g.Profile.Hash(), "the grant's profile round-trips")
			require.Len(t, g.Rules, 1)
			assert.Equal(t, w.Rules[0].Condition.CommandPattern, g.Rules[0].Condition.CommandPattern)
			assert.Equal(t, w.Rules[0].Condition.Risk, g.Rules[0].Condition.Risk)
			require.Len(t, got.Parked, 1)
			assert.Equal(t, want.Parked[0].Action.Command, got.Parked[0].Action.Command)
			assert.Equal(t, want.Parked[0].Decision.Verdict, got.Parked[0].Decision.Verdict)
		}},
		{"HandlesShareUpdates", true, func(t *testing.T, s, other reins.Store) {
			concurrentCount(t, s, other)
		}},
		{"HandlesShareUseCounts", true, func(t *testing.T, s, other reins.Store) {
			raceForUses(t, s, other)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.shared && reopen == nil {
				t.Skip("the store has no second handle (reopen is nil): nothing to share")
			}
			s := newStore(t)
			var other reins.Store
			if reopen != nil {
				other = reopen(t, s)
			}
			c.run(t, s, other)
		})
	}
}

// concurrentCount increments one counter from many goroutines through two handles: every
// increment counts, and Rev counts every update.
func concurrentCount(t *testing.T, a, b reins.Store) {
	ctx := context.Background()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := s.Update(ctx, func(st *reins.RunState) error {
					if st.Failures == nil {
						st.Failures = map[string]int{}
					}
					n := st.Failures["tool"]
					runtime.Gosched() // let another update interleave, if the store lets it
					st.Failures["tool"] = n + 1
					return nil
				}); err != nil {
					t.Errorf("Update: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st, err := a.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, workers*each, st.Failures["tool"], "no update is lost or applied twice")
	assert.Equal(t, uint64(workers*each), st.Rev)
}

// raceForUses has many goroutines race for the uses of one grant limited to five: exactly five
// win, through one handle or two.
func raceForUses(t *testing.T, a, b reins.Store) {
	ctx := context.Background()
	g := sampleGrant("g-race")
	g.MaxUses = 5
	_, err := a.Update(ctx, func(st *reins.RunState) error { st.Grants = append(st.Grants, g); return nil })
	require.NoError(t, err)
	usedUp := errors.New("used up")
	var won atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Update(ctx, func(st *reins.RunState) error {
				for j := range st.Grants {
					if st.Grants[j].ID == g.ID {
						if st.Grants[j].Used >= st.Grants[j].MaxUses {
							return usedUp
						}
						runtime.Gosched()
						st.Grants[j].Used++
						return nil
					}
				}
				return errors.New("grant gone")
			})
			if err == nil {
				won.Add(1)
			} else if !errors.Is(err, usedUp) {
				t.Errorf("Update: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(5), won.Load(), "exactly MaxUses uses are granted")
	st, err := a.Load(ctx)
	require.NoError(t, err)
	require.Len(t, st.Grants, 1)
	assert.Equal(t, 5, st.Grants[0].Used)
}

// sampleGrant is a grant as narrow as an approval: one command, in one directory.
func sampleGrant(id string) reins.Grant {
	p := profile.Trusted.Profile()
	return reins.Grant{ID: id, Scope: reins.ForSession, Line: "go test ./...", Dir: "/w", Env: []string{"GOFLAGS=-count=1"},
		Profile: p, ProfileHash: p.Hash(), Created: time.Unix(1700000000, 0).UTC(),
		Rules: []policy.Rule{{ID: gate.CheckGrantPrefix + id, Action: policy.Allow, Condition: policy.Condition{
			OperationType: []policy.Operation{policy.OpShell}, Tools: []string{"bash"},
			Commands: []string{"go test ./..."}, CommandPattern: "^" + regexp.QuoteMeta("go test ./...") + "$",
			Risk: policy.RiskMatch{Levels: risk.Of(risk.Exec)}}}}}
}

// sampleState fills every field of a run state.
func sampleState() *reins.RunState {
	g := sampleGrant("g-all")
	g.MaxUses, g.Used = 3, 1
	return &reins.RunState{
		Halt:     &gate.Halt{Cause: gate.CauseBudget, Reason: "budget exceeded", Time: time.Unix(1700000100, 0).UTC()},
		Failures: map[string]int{"bash": 2},
		Meters: map[string]reins.MeterStatus{"cost": {Meter: reins.Meter{Name: "cost", Limit: 10, WarnAt: 0.8},
			Used: 10, Warned: true, Exhausted: true, Reason: "budget exceeded"}},
		Grants: []reins.Grant{g},
		Parked: []reins.Parked{{ID: "parked-1", Time: time.Unix(1700000200, 0).UTC(),
			Action:   policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "rm -rf build"},
			Decision: gate.Decision{Verdict: policy.Confirm, Layer: policy.LayerRule, RuleID: "confirm-high-risk"}}},
		Seq: 1,
	}
}
