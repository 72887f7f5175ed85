package audit

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkJSONLWrite measures the JSONL sink per durability mode with 1, 8 and 64 concurrent
// writers, next to its parts (the append encoder, the encoder plus the hash chain) and to the
// baseline: encoding/json, alone and in a minimal chained, buffered sink. Each sub-benchmark
// reports records/s; compare the ns/op of the sub-benchmarks of one run.
func BenchmarkJSONLWrite(b *testing.B) {
	rec := sample(1)
	b.Run("encoder=encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&rec); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b)
	})
	b.Run("encoder=append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			var err error
			if buf, err = AppendJSON(buf[:0], &rec); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b)
	})
	b.Run("encoder=append+chain", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		r := rec
		for b.Loop() {
			var err error
			if buf, r.Prev, err = appendChained(buf[:0], &r); err != nil {
				b.Fatal(err)
			}
			r.Seq++
		}
		reportRate(b)
	})
	b.Run("baseline=encoding-json+chain+buffered", func(b *testing.B) {
		b.ReportAllocs()
		s := newJSONBaseline(b)
		for b.Loop() {
			if err := s.Write(context.Background(), rec); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		s.close(b)
		reportRate(b)
	})
	// The same buffered sink on tmpfs: the sink's own cost, without the page cache's writeback
	// to a disk that cannot absorb hundreds of MB/s for long (and may be shared).
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		b.Run("durability=buffered-tmpfs/writers=1", func(b *testing.B) {
			dir, err := os.MkdirTemp("/dev/shm", "reins-bench-")
			if err != nil {
				b.Skip("no tmpfs:", err)
			}
			defer os.RemoveAll(dir)
			s, err := OpenJSONL(filepath.Join(dir, "audit.jsonl"), &JSONLOptions{Durability: DurabilityBuffered})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			parallel(b, 1, func(ctx context.Context) error { return s.Write(ctx, rec) })
			b.StopTimer()
			if err := s.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			reportRate(b)
		})
	}
	// The floor of a buffered log: the same line, already encoded and hashed, copied into a
	// bufio.Writer of the sink's buffer size under a mutex, in a file of the same directory kind.
	// durability=buffered/writers=N divided by this is what the sink's own work costs.
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("baseline=bufio-floor/writers=%d", writers), func(b *testing.B) {
			line, _, err := appendChained(nil, &rec)
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			w := bufio.NewWriterSize(f, DefaultBufferSize)
			b.ReportAllocs()
			b.ResetTimer()
			parallel(b, writers, func(context.Context) error {
				mu.Lock()
				_, err := w.Write(line)
				mu.Unlock()
				return err
			})
			b.StopTimer()
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
			f.Close()
			reportRate(b)
		})
	}
	for _, d := range []Durability{DurabilityBuffered, DurabilityGroup, DurabilitySync} {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("durability=%s/writers=%d", d, writers), func(b *testing.B) {
				s, err := OpenJSONL(filepath.Join(b.TempDir(), "audit.jsonl"), &JSONLOptions{Durability: d})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				parallel(b, writers, func(ctx context.Context) error { return s.Write(ctx, rec) })
				b.StopTimer()
				if n := s.fsyncs.Load(); d == DurabilityGroup && n > 0 {
					b.ReportMetric(float64(b.N)/float64(n), "records/fsync")
				}
				if err := s.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				reportRate(b)
			})
		}
	}
}

// BenchmarkJSONLWriteRatio is the buffered sink against the bufio floor, interleaved for a
// loaded machine, with 1, 8 and 64 writers: each round writes a batch of records through the
// sink (hash chain and redaction on; the batch ends when the sink has chained and written every
// record, see settle) and one through the floor, and the fastest batch of each is kept. It reports records/s
// of both and the ratio of their per-record times (sink/floor), and, where the platform tells
// it, the mean CPU time per record of each over all rounds (every thread of the process). The
// sink's own goroutine hashes and writes while writers encode, so with a core to spare its
// records/s is bound by the larger of the two stages, not by its CPU time per record.
func BenchmarkJSONLWriteRatio(b *testing.B) {
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			rec := sample(1)
			dir := b.TempDir()
			s, err := OpenJSONL(filepath.Join(dir, "audit.jsonl"), &JSONLOptions{Durability: DurabilityBuffered, MaxFileSize: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			line, _, err := appendChained(nil, &rec)
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.OpenFile(filepath.Join(dir, "floor.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var mu sync.Mutex
			w := bufio.NewWriterSize(f, DefaultBufferSize)
			const batch = 512
			bestS, bestF := time.Duration(1<<62), time.Duration(1<<62)
			var cpuS, cpuF time.Duration // summed over the rounds
			rounds := 0
			b.ReportAllocs()
			for b.Loop() {
				c0, t0 := cpuTime(), time.Now()
				inParallel(b, writers, batch, func(ctx context.Context) error { return s.Write(ctx, rec) })
				settle(b, s)
				c1, t1 := cpuTime(), time.Now()
				inParallel(b, writers, batch, func(context.Context) error {
					mu.Lock()
					_, err := w.Write(line)
					mu.Unlock()
					return err
				})
				c2, t2 := cpuTime(), time.Now()
				bestS, bestF = min(bestS, t1.Sub(t0)), min(bestF, t2.Sub(t1))
				cpuS, cpuF, rounds = cpuS+c1-c0, cpuF+c2-c1, rounds+1
			}
			b.ReportMetric(batch/bestS.Seconds(), "sink-records/s")
			b.ReportMetric(batch/bestF.Seconds(), "floor-records/s")
			b.ReportMetric(float64(bestS)/float64(bestF), "sink/floor")
			if cpuS > 0 && cpuF > 0 { // the CPU time of the process (every thread), where known
				b.ReportMetric(float64(cpuS)/float64(rounds*batch), "sink-cpu-ns/record")
				b.ReportMetric(float64(cpuF)/float64(rounds*batch), "floor-cpu-ns/record")
			}
		})
	}
}

// settle returns once the buffered sink has chained and written every record written so far:
// it hands what the writers left in the buffer to the chainer and waits for it.
func settle(b *testing.B, s *JSONL) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.handOff(); err != nil {
		b.Fatal(err)
	}
	if err := s.waitChainer(); err != nil {
		b.Fatal(err)
	}
}

// inParallel makes n calls of write spread over the given number of goroutines.
func inParallel(b *testing.B, writers, n int, write func(context.Context) error) {
	ctx := context.Background()
	if writers == 1 {
		for range n {
			if err := write(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			for range n/writers + min(1, max(0, n%writers-i)) {
				if err := write(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// parallel runs b.N calls of write spread over the given number of goroutines.
func parallel(b *testing.B, writers int, write func(context.Context) error) {
	ctx := context.Background()
	if writers == 1 {
		for range b.N {
			if err := write(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := write(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "records/s")
	}
}

// jsonBaseline is the straightforward chained, buffered sink: encoding/json, SHA-256 over the
// encoding and the previous hash, a bufio.Writer. It is the baseline the JSONL sink is
// measured against.
type jsonBaseline struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	prev [32]byte
}

func newJSONBaseline(b *testing.B) *jsonBaseline {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "baseline.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	return &jsonBaseline{f: f, w: bufio.NewWriterSize(f, DefaultBufferSize)}
}

func (s *jsonBaseline) Write(_ context.Context, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Prev = s.prev
	line, err := json.Marshal(&r)
	if err != nil {
		return err
	}
	h := sha256.Sum256(line)
	s.prev = h
	s.w.Write(line[:len(line)-1])
	s.w.WriteString(`,"hash":"` + hex.EncodeToString(h[:]) + `"}` + "\n")
	return nil
}

func (s *jsonBaseline) close(b *testing.B) {
	if err := s.w.Flush(); err != nil {
		b.Fatal(err)
	}
	s.f.Close()
}

// BenchmarkRedactSecrets: the default redaction of a record without secrets (the common case)
// and of one with several.
func BenchmarkRedactSecrets(b *testing.B) {
	clean := sample(1)
	dirty := sample(1)
	dirty.Command = `curl -H "Authorization: Bearer abc.def" -u bob:pw https://x/?token=t GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a`
	for _, c := range []struct {
		name string
		r    Record
	}{{"clean", clean}, {"secrets", dirty}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := c.r
				RedactSecrets(&r)
			}
		})
	}
}
