package reins_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestStress: 64 goroutines run 10,000 mixed actions through one run, with approvals and
// grants, profile switches and an emergency stop (then a reset) in the middle. No decision is
// made under a mixed profile, the concurrency limit holds, no goroutine leaks, and every
// action has exactly one decision record and one outcome record.
func TestStress(t *testing.T) {
	const workers, total, limit = 64, 10_000, 6
	ctx := context.Background()
	ws := gitWorkspace(t)
	before := runtime.NumGoroutine()

	profA := profile.MustBuiltin(profile.PermissionTrusted)
	profA.Name, profA.Limits.MaxConcurrentOps = "stress-trusted", limit
	profB := profile.MustBuiltin(profile.PermissionAutonomous)
	profB.Name, profB.Limits.MaxConcurrentOps = "stress-autonomous", limit
	hashes := map[string]string{profA.Name: profA.Hash(), profB.Name: profB.Hash()}

	sink := audit.NewMemory(0)
	var approvals atomic.Int64
	ap := reins.ApproverFunc(func(_ context.Context, req reins.Request) (reins.Answer, error) {
		n := approvals.Add(1)
		switch n % 4 {
		case 0:
			return reins.Answer{Verdict: policy.Deny, By: "stress"}, nil
		case 1:
			return reins.Answer{Verdict: policy.Allow, Scope: reins.ForSession, By: "stress", MaxUses: 50}, nil
		}
		return reins.Answer{Verdict: policy.Allow, By: "stress"}, nil
	})
	s, err := reins.New(ctx, profA, &reins.Options{Workspace: []string{ws}, Audit: sink, MaxConsecutiveFailures: 1 << 30,
		Approver: ap, Checkpointer: &nopCheckpointer{},
		Notifier: reins.NotifierFunc(func(context.Context, reins.Notice) error { return nil })})
	require.NoError(t, err)

	actions := []policy.Action{
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}},
		writeAction("main.go"),
		writeAction("docs/a.md"),
		{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"docs/b.md"}},
		shellAction("rm -rf build"),
		shellAction("ls -la"),
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{".env"}},
		{Tool: "fetch", Operation: policy.OpNetwork, Host: "example.com"},
	}

	var running, maxRunning atomic.Int64
	var next atomic.Int64
	var mu sync.Mutex
	ids := map[uuid.UUID]bool{}
	boom := errors.New("boom")
	stopOnce, resetOnce := sync.Once{}, sync.Once{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				n := next.Add(1)
				if n > total {
					return
				}
				switch {
				case n == total/2:
					stopOnce.Do(func() { s.EmergencyStop(ctx, "stress: stop in the middle") })
				case n == total/2+total/10:
					resetOnce.Do(func() { require.NoError(t, s.Reset(ctx, "stress: resume")) })
				case n%500 == 0:
					p := profA
					if n%1000 == 0 {
						p = profB
					}
					_, err := s.Reload(ctx, p)
					require.NoError(t, err)
				}
				a := actions[r.IntN(len(actions))]
				fail := r.IntN(10) == 0
				out, err := s.Do(ctx, a, func(context.Context, gate.Decision) error {
					cur := running.Add(1)
					for {
						m := maxRunning.Load()
						if cur <= m || maxRunning.CompareAndSwap(m, cur) {
							break
						}
					}
					runtime.Gosched()
					running.Add(-1)
					if fail {
						return boom
					}
					return nil
				})
				if err != nil && !errors.Is(err, gate.ErrDenied) && !errors.Is(err, boom) {
					t.Errorf("unexpected error: %v", err)
				}
				mu.Lock()
				if ids[out.Decision.DecisionID] {
					t.Errorf("decision id %s seen twice", out.Decision.DecisionID)
				}
				ids[out.Decision.DecisionID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	assert.LessOrEqual(t, maxRunning.Load(), int64(limit), "the concurrency limit holds")
	require.Len(t, ids, total)
	decisions, outcomes := map[uuid.UUID]audit.Record{}, map[uuid.UUID]int{}
	for _, r := range sink.Records() {
		switch r.Kind {
		case audit.KindDecision:
			_, dup := decisions[r.DecisionID]
			assert.False(t, dup, "one decision record per action")
			decisions[r.DecisionID] = r
			assert.Equal(t, hashes[r.Profile], r.ProfileHash, "decision under a mixed profile: %s %s", r.Profile, r.ProfileHash)
		case audit.KindOutcome:
			outcomes[r.DecisionID]++
			d, ok := decisions[r.DecisionID]
			if assert.True(t, ok, "an outcome follows its decision") {
				assert.Equal(t, d.ProfileHash, r.ProfileHash, "the profile changed during an operation")
			}
		}
	}
	for id := range ids {
		_, ok := decisions[id]
		assert.True(t, ok, "a decision record for every action")
		assert.Equal(t, 1, outcomes[id], "one outcome record per action")
	}
	assert.Len(t, decisions, total)
	_, halted := s.Halted(ctx)
	assert.False(t, halted)
	assert.Equal(t, 0, s.InFlight())

	require.NoError(t, s.Close())
	// No goroutine outlives the run (approvers here answer at once).
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines leaked")
}
