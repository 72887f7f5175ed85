package etcdstore_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/policy"
)

// BenchmarkCheck measures one decision (Run.Check, recorded to audit.Discard) of a run whose
// state is in memory, and of one whose state is in the cluster: report etcd/memory as the
// ratio. A decision on etcd costs one linearizable read (a round trip with a quorum check).
func BenchmarkCheck(b *testing.B) {
	srv := startEtcd(b)
	for _, c := range []struct {
		name  string
		store func() reins.Store
	}{
		{"memory", func() reins.Store { return reins.NewMemoryStore() }},
		{"etcd", func() reins.Store { return srv.newStore(b, srv.prefix(), "bench", nil) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newRun(b, c.store(), nil)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				d, err := r.Check(ctx, readme)
				if err != nil || d.Verdict != policy.Allow {
					b.Fatalf("Check = %v, %v", d.Verdict, err)
				}
			}
		})
	}
}

// BenchmarkHaltToDeny measures, for 50 runs that each decide in a loop on their own client,
// the time from the operator's halt command to each run's first denied decision (per-run-p50,
// per-run-p99) and to the last run's (all-p50, all-p99: the time until every run denies), over
// b.N halts. Run it with -benchtime=20x or more.
func BenchmarkHaltToDeny(b *testing.B) {
	srv := startEtcd(b)
	ctx := context.Background()
	prefix := srv.prefix()
	const n = 50
	runs := make([]*reins.Run, n)
	for i := range runs {
		runs[i] = newRun(b, srv.newStore(b, prefix, "run-"+string(rune('a'+i/26))+string(rune('a'+i%26)), nil), nil)
	}
	f := srv.newFleet(b, prefix, nil)
	var perRun, all []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := f.Reset(ctx, "next trial"); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		denied := make([]time.Time, n)
		ready := make(chan struct{}, n)
		for i, r := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				first := true
				for {
					d, err := r.Check(ctx, readme)
					if err != nil {
						b.Error(err)
						return
					}
					if first {
						ready <- struct{}{}
						first = false
					}
					if d.Verdict == policy.Deny {
						denied[i] = time.Now()
						return
					}
				}
			}()
		}
		for range n {
			<-ready
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := f.Halt(ctx, "measure"); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
		var last time.Duration
		for _, t := range denied {
			d := t.Sub(t0)
			perRun = append(perRun, d)
			last = max(last, d)
		}
		all = append(all, last)
	}
	b.StopTimer()
	q := func(ds []time.Duration, p float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(perRun, 0.50), "per-run-p50-ms")
	b.ReportMetric(q(perRun, 0.99), "per-run-p99-ms")
	b.ReportMetric(q(all, 0.50), "all-p50-ms")
	b.ReportMetric(q(all, 0.99), "all-p99-ms")
}
