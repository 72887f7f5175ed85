package checkpoint_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

var bench50k = flag.Bool("checkpoint.bench50k", false, "also run the benchmarks on a 50,000-file workspace")

func benchSizes() []int {
	if *bench50k {
		return []int{1000, 10000, 50000}
	}
	return []int{1000, 10000}
}

// benchWS is a generated git workspace: n files of 0.5-2 KiB, 20 per
// directory, two directory levels, all committed.
type benchWS struct {
	dir string
	n   int
	gen int
	env []string
}

func newBenchWS(b *testing.B, n int) *benchWS {
	b.Helper()
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		rel := benchFile(i)
		writeFile(b, dir, rel, strings.Repeat(fmt.Sprintf("line %d of file %d\n", i%7, i), 25+i%75), 0o644)
	}
	runGit(b, dir, "init", "-q", "-b", "main")
	runGit(b, dir, "add", "-A")
	runGit(b, dir, "commit", "-q", "-m", "generated")
	return &benchWS{dir: dir, n: n, env: append(gitEnv(), "GIT_CONFIG_COUNT=0")}
}

func benchFile(i int) string {
	return fmt.Sprintf("d%03d/s%02d/file%05d.txt", i/400, (i/20)%20, i)
}

// mutate modifies 20 tracked files and adds 5 new ones.
func (w *benchWS) mutate(b *testing.B) {
	w.gen++
	for i := 0; i < 20; i++ {
		idx := (w.gen*37 + i*(w.n/20)) % w.n
		writeFile(b, w.dir, benchFile(idx), fmt.Sprintf("generation %d edit %d\n", w.gen, i), 0o644)
	}
	for i := 0; i < 5; i++ {
		writeFile(b, w.dir, fmt.Sprintf("new/g%05d/n%d.txt", w.gen, i), fmt.Sprintf("new %d %d\n", w.gen, i), 0o644)
	}
}

func (w *benchWS) git(b *testing.B, env []string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = w.dir
	cmd.Env = append(append([]string(nil), w.env...), env...)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// plumbing is the persistent-index baseline: a private GIT_INDEX_FILE kept
// between runs, add -A, write-tree, commit-tree, update-ref.
func (w *benchWS) plumbing(b *testing.B, index string) {
	env := []string{"GIT_INDEX_FILE=" + index}
	w.git(b, env, "add", "-A")
	tree := w.git(b, env, "write-tree")
	commit := w.git(b, env, "commit-tree", tree, "-m", "baseline")
	w.git(b, env, "update-ref", "refs/bench/baseline", commit)
}

// status is the floor for "what changed" without a file watcher.
func (w *benchWS) status(b *testing.B) {
	w.git(b, nil, "status", "--porcelain", "-uall")
}

type timings map[string]float64

func (t timings) record(b *testing.B, name string) {
	if b.N > 0 {
		t[name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	}
}

func (t timings) ratio(b *testing.B, name, base string) {
	if t[base] > 0 && t[name] > 0 {
		b.ReportMetric(t[name]/t[base], "x-"+base)
	}
}

func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			w := newBenchWS(b, n)
			c, err := checkpoint.New(ctx, w.dir, &checkpoint.Options{ShadowRoot: b.TempDir()})
			require.NoError(b, err)
			t := timings{}
			pidx := filepath.Join(b.TempDir(), "baseline-index")
			w.plumbing(b, pidx) // prime the persistent index
			b.Run("baseline=status", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					b.StartTimer()
					w.status(b)
				}
				t.record(b, "status")
			})
			b.Run("baseline=plumbing", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					b.StartTimer()
					w.plumbing(b, pidx)
				}
				t.record(b, "plumbing")
			})
			b.Run("first", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					resetPrivateIndex(b, w.dir)
					b.StartTimer()
					_, err := c.Create(ctx, "first")
					require.NoError(b, err)
				}
				t.record(b, "first")
				t.ratio(b, "first", "plumbing")
				t.ratio(b, "first", "status")
			})
			b.Run("incremental", func(b *testing.B) {
				_, err := c.Create(ctx, "prime")
				require.NoError(b, err)
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					b.StartTimer()
					_, err := c.Create(ctx, "incremental")
					require.NoError(b, err)
				}
				t.record(b, "incremental")
				t.ratio(b, "incremental", "plumbing")
				t.ratio(b, "incremental", "status")
				t.ratio(b, "incremental", "first")
			})
		})
	}
}

func BenchmarkRestore(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			w := newBenchWS(b, n)
			c, err := checkpoint.New(ctx, w.dir, &checkpoint.Options{ShadowRoot: b.TempDir()})
			require.NoError(b, err)
			t := timings{}
			pidx := filepath.Join(b.TempDir(), "baseline-index")
			w.plumbing(b, pidx)
			b.Run("baseline=status", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					b.StartTimer()
					w.status(b)
				}
				t.record(b, "status")
			})
			b.Run("baseline=plumbing", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					b.StartTimer()
					w.plumbing(b, pidx)
				}
				t.record(b, "plumbing")
			})
			b.Run("restore", func(b *testing.B) {
				cp, err := c.Create(ctx, "target")
				require.NoError(b, err)
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					b.StartTimer()
					res, err := c.Rewind(ctx, cp.ID)
					require.NoError(b, err)
					if len(res.Changes) != 25 {
						b.Fatalf("restore changed %d files, want 25", len(res.Changes))
					}
				}
				t.record(b, "restore")
				t.ratio(b, "restore", "plumbing")
				t.ratio(b, "restore", "status")
			})
		})
	}
}

// BenchmarkCreatePaths shows that a path-scoped snapshot costs the same
// whatever the size of the workspace.
func BenchmarkCreatePaths(b *testing.B) {
	ctx := context.Background()
	var small float64
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			w := newBenchWS(b, n)
			c, err := checkpoint.New(ctx, w.dir, &checkpoint.Options{ShadowRoot: b.TempDir()})
			require.NoError(b, err)
			paths := []string{benchFile(1), benchFile(2), benchFile(n - 1), "new/edit.txt", "new/other.txt"}
			for b.Loop() {
				b.StopTimer()
				writeFile(b, w.dir, benchFile(1), fmt.Sprintf("edit %d", w.gen), 0o644)
				w.gen++
				b.StartTimer()
				_, err := c.CreateWith(ctx, checkpoint.CreateOptions{Label: "edit", Paths: paths})
				require.NoError(b, err)
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if n == 1000 {
				small = per
			} else if small > 0 {
				b.ReportMetric(per/small, "x-files=1000")
			}
		})
	}
}

func resetPrivateIndex(b *testing.B, dir string) {
	matches, err := filepath.Glob(filepath.Join(dir, ".git", "reins", "ws-*"))
	require.NoError(b, err)
	require.NotEmpty(b, matches)
	for _, m := range matches {
		for _, f := range []string{"index", "user-index"} {
			if err := os.Remove(filepath.Join(m, f)); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
	}
}
