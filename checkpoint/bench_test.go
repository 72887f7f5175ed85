package checkpoint_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

var benchSmall = flag.Bool("checkpoint.benchsmall", false, "run the checkpoint benchmarks on 10,000 files only (skip 50,000)")

// benchSizes are the workspace sizes of BenchmarkCreate and BenchmarkRestore.
func benchSizes() []int {
	if *benchSmall {
		return []int{10000}
	}
	return []int{10000, 50000}
}

// benchWS is a generated git workspace: n files of 0.5-2 KiB, 20 per
// directory, two directory levels, all committed.
type benchWS struct {
	dir string
	n   int
	gen int
	env []string
}

// Fixtures are built once per size and process (50,000 files take a while
// to generate) and shared by the benchmarks; TestMain removes them.
var (
	fixturesMu sync.Mutex
	fixtures   = map[int]*benchWS{}
	fixtureDir []string
)

func cleanupBenchFixtures() {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	for _, d := range fixtureDir {
		_ = os.RemoveAll(d)
	}
}

// sharedBenchWS returns the workspace of n files, building it on first use.
// Benchmarks sharing it leave it in a state their successors accept: any
// committed-then-edited tree.
func sharedBenchWS(b *testing.B, n int) *benchWS {
	b.Helper()
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if w, ok := fixtures[n]; ok {
		return w
	}
	dir, err := os.MkdirTemp("", "reins-bench-")
	require.NoError(b, err)
	fixtureDir = append(fixtureDir, dir)
	w := buildBenchWS(b, dir, n)
	fixtures[n] = w
	return w
}

func newBenchWS(b *testing.B, n int) *benchWS {
	b.Helper()
	return buildBenchWS(b, b.TempDir(), n)
}

func buildBenchWS(b testing.TB, dir string, n int) *benchWS {
	b.Helper()
	for i := 0; i < n; i++ {
		rel := benchFile(i)
		writeFile(b, dir, rel, strings.Repeat(fmt.Sprintf("line %d of file %d\n", i%7, i), 25+i%75), 0o644)
	}
	runGit(b, dir, "init", "-q", "-b", "main")
	runGit(b, dir, "add", "-A")
	// No automatic maintenance: "git commit" would start a background
	// gc of the new loose objects that competes with the measurements
	// for seconds. The objects are packed once, as in a cloned repository.
	runGit(b, dir, "-c", "gc.auto=0", "-c", "maintenance.auto=false", "commit", "-q", "-m", "generated")
	runGit(b, dir, "repack", "-a", "-d", "-q")
	return &benchWS{dir: dir, n: n, env: append(gitEnv(), "GIT_CONFIG_COUNT=0")}
}

func benchFile(i int) string {
	return fmt.Sprintf("d%03d/s%02d/file%05d.txt", i/400, (i/20)%20, i)
}

// mutate modifies 20 tracked files and adds 5 new ones.
func (w *benchWS) mutate(b testing.TB) {
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

// paired accumulates durations measured in the same iterations, so that
// ratios stay meaningful on a loaded machine. It records wall time and CPU
// time (this process plus the git processes it waited for); CPU time is
// what stays stable when other work competes for the cores.
type paired struct {
	wall, cpu map[string]time.Duration
}

// newPaired starts a set of paired measurements. It collects the garbage
// earlier benchmarks left first, so that a collection they made necessary
// is not charged to these.
func newPaired() paired {
	runtime.GC()
	return paired{wall: map[string]time.Duration{}, cpu: map[string]time.Duration{}}
}

func (p paired) time(name string, fn func()) {
	start, cstart := time.Now(), cpuNow()
	fn()
	p.wall[name] += time.Since(start)
	p.cpu[name] += cpuNow() - cstart
}

// report adds each measurement as ms/op (wall) and cpu-ms/op, and the
// ratios of name to every other one: "x-<other>" (wall) and
// "cpu-x-<other>".
func (p paired) report(b *testing.B, name string) {
	n := float64(b.N)
	for k, v := range p.wall {
		b.ReportMetric(float64(v.Microseconds())/1000/n, k+"-ms/op")
		b.ReportMetric(float64(p.cpu[k].Microseconds())/1000/n, k+"-cpu-ms/op")
		if k != name && v > 0 {
			b.ReportMetric(float64(p.wall[name])/float64(v), "x-"+k)
		}
		if k != name && p.cpu[k] > 0 {
			b.ReportMetric(float64(p.cpu[name])/float64(p.cpu[k]), "cpu-x-"+k)
		}
	}
}

// freshPlumbing is the first-checkpoint baseline: "git add -A" and
// "git write-tree" into an index file that does not exist yet.
func (w *benchWS) freshPlumbing(b *testing.B, index string) {
	if err := os.Remove(index); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	w.git(b, env, "add", "-A")
	w.git(b, env, "write-tree")
}

// baselines runs the baselines alone, as sub-benchmarks of their own.
func baselines(b *testing.B, w *benchWS, pidx string) {
	b.Run("baseline=status", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			w.mutate(b)
			b.StartTimer()
			w.status(b)
		}
	})
	b.Run("baseline=plumbing", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			w.mutate(b)
			b.StartTimer()
			w.plumbing(b, pidx)
		}
	})
}

// BenchmarkCreate measures the first checkpoint (no private index yet) and
// the incremental one after 20 modified and 5 new files, each paired with
// the baselines on the same change: "git status --porcelain -uall", the
// persistent-index plumbing (add -A, write-tree, commit-tree, update-ref)
// and, for the first checkpoint, "git add -A" plus "git write-tree" into a
// fresh index. The paired metrics (x-status, cpu-x-status...) are ratios
// over the same iterations; the baseline=... sub-benchmarks (status,
// plumbing, addwrite) time the baselines alone. Sizes: 10,000 and 50,000
// files (-checkpoint.benchsmall for 10,000 only); each workspace is
// generated once per process.
func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			w := sharedBenchWS(b, n)
			c, err := checkpoint.New(ctx, w.dir, nil)
			require.NoError(b, err)
			pidx := filepath.Join(b.TempDir(), "baseline-index")
			w.plumbing(b, pidx) // the baseline's index persists, like ours
			_, err = c.Create(ctx, "prime")
			require.NoError(b, err)
			b.Run("incremental", func(b *testing.B) {
				p := newPaired()
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					p.time("status", func() { w.status(b) })
					p.time("plumbing", func() { w.plumbing(b, pidx) })
					b.StartTimer()
					p.time("create", func() {
						_, err := c.Create(ctx, "incremental")
						require.NoError(b, err)
					})
				}
				p.report(b, "create")
			})
			b.Run("first", func(b *testing.B) {
				p := newPaired()
				fidx := filepath.Join(b.TempDir(), "fresh-index")
				for b.Loop() {
					b.StopTimer()
					resetPrivateState(b, w.dir)
					fresh, err := checkpoint.New(ctx, w.dir, nil)
					require.NoError(b, err)
					p.time("addwrite", func() { w.freshPlumbing(b, fidx) })
					p.time("status", func() { w.status(b) })
					b.StartTimer()
					p.time("first", func() {
						_, err := fresh.Create(ctx, "first")
						require.NoError(b, err)
					})
					b.StopTimer()
					w.mutate(b)
					p.time("incremental", func() {
						_, err := fresh.Create(ctx, "incremental")
						require.NoError(b, err)
					})
					b.StartTimer()
				}
				p.report(b, "first")
			})
			baselines(b, w, pidx)
			b.Run("baseline=addwrite", func(b *testing.B) {
				fidx := filepath.Join(b.TempDir(), "fresh-index")
				for b.Loop() {
					w.freshPlumbing(b, fidx)
				}
			})
		})
	}
}

// BenchmarkCreateOutsideRepo measures the first checkpoint of a workspace
// that is not a git repository (10,000 files): every file is read, hashed
// and stored. The baseline, in the same iterations, is "git add -A" plus
// "git write-tree" into a fresh index of a fresh bare repository, which
// must store every file too (as loose objects; the checkpoint writes one
// pack through fast-import). Each iteration starts from an empty shadow
// root and an empty baseline repository.
func BenchmarkCreateOutsideRepo(b *testing.B) {
	ctx := context.Background()
	const n = 10000
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		writeFile(b, dir, benchFile(i), strings.Repeat(fmt.Sprintf("line %d of file %d\n", i%7, i), 25+i%75), 0o644)
	}
	w := &benchWS{dir: dir, n: n}
	p := newPaired()
	for b.Loop() {
		b.StopTimer()
		gd := filepath.Join(b.TempDir(), "baseline.git")
		runGit(b, dir, "init", "-q", "--bare", gd)
		w.env = append(gitEnv(), "GIT_CONFIG_COUNT=0", "GIT_DIR="+gd, "GIT_WORK_TREE="+dir)
		p.time("addwrite", func() { w.freshPlumbing(b, filepath.Join(gd, "fresh-index")) })
		c, err := checkpoint.New(ctx, dir, &checkpoint.Options{ShadowRoot: b.TempDir()})
		require.NoError(b, err)
		b.StartTimer()
		p.time("first", func() {
			_, err := c.Create(ctx, "first")
			require.NoError(b, err)
		})
	}
	p.report(b, "first")
}

// BenchmarkRestore undoes 20 modified and 5 added files (including the
// checkpoint of the replaced state), paired with the baselines on the same
// change.
func BenchmarkRestore(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			w := sharedBenchWS(b, n)
			c, err := checkpoint.New(ctx, w.dir, nil)
			require.NoError(b, err)
			pidx := filepath.Join(b.TempDir(), "baseline-index")
			w.plumbing(b, pidx)
			cp, err := c.Create(ctx, "target")
			require.NoError(b, err)
			b.Run("rewind", func(b *testing.B) {
				p := newPaired()
				for b.Loop() {
					b.StopTimer()
					w.mutate(b)
					p.time("status", func() { w.status(b) })
					p.time("plumbing", func() { w.plumbing(b, pidx) })
					b.StartTimer()
					p.time("restore", func() {
						res, err := c.Rewind(ctx, cp.ID)
						require.NoError(b, err)
						if len(res.Changes) != 25 {
							b.Fatalf("restore changed %d files, want 25", len(res.Changes))
						}
					})
				}
				p.report(b, "restore")
			})
			baselines(b, w, pidx)
		})
	}
}

// BenchmarkCreatePaths shows that a path-scoped snapshot costs the same
// whatever the size of the workspace: the workspaces are measured in the
// same iterations and compared with the smallest.
func BenchmarkCreatePaths(b *testing.B) {
	ctx := context.Background()
	type ws struct {
		w     *benchWS
		c     *checkpoint.Checkpointer
		paths []string
		name  string
	}
	var all []ws
	for _, n := range []int{1000, 10000} {
		w := newBenchWS(b, n)
		c, err := checkpoint.New(ctx, w.dir, &checkpoint.Options{ShadowRoot: b.TempDir()})
		require.NoError(b, err)
		all = append(all, ws{w, c, []string{benchFile(1), benchFile(2), benchFile(n - 1), "new/edit.txt", "new/other.txt"}, fmt.Sprintf("files=%d", n)})
	}
	p := newPaired()
	b.ResetTimer()
	for b.Loop() {
		for _, x := range all {
			b.StopTimer()
			writeFile(b, x.w.dir, benchFile(1), fmt.Sprintf("edit %d", x.w.gen), 0o644)
			x.w.gen++
			b.StartTimer()
			p.time(x.name, func() {
				_, err := x.c.CreateWith(ctx, checkpoint.CreateOptions{Label: "edit", Paths: x.paths})
				require.NoError(b, err)
			})
		}
	}
	n := float64(b.N)
	for _, x := range all {
		b.ReportMetric(float64(p.wall[x.name].Microseconds())/1000/n, x.name+"-ms/op")
		b.ReportMetric(float64(p.cpu[x.name].Microseconds())/1000/n, x.name+"-cpu-ms/op")
		if x.name != all[0].name {
			b.ReportMetric(float64(p.wall[x.name])/float64(p.wall[all[0].name]), x.name+"-x-"+all[0].name)
			b.ReportMetric(float64(p.cpu[x.name])/float64(p.cpu[all[0].name]), x.name+"-cpu-x-"+all[0].name)
		}
	}
}

// resetPrivateState removes the private index and what a first
// checkpoint would not have (the base tree, the user-index signature).
func resetPrivateState(b *testing.B, dir string) {
	matches, err := filepath.Glob(filepath.Join(dir, ".git", "reins", "ws-*"))
	require.NoError(b, err)
	require.NotEmpty(b, matches)
	for _, m := range matches {
		for _, f := range []string{"index", "user-index", "base"} {
			if err := os.Remove(filepath.Join(m, f)); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkExecCheckpoint is issue 22's measure for a shell line confined
// to a known write set: a plain exec of a trivial command ("true" through
// os/exec, the line with no checkpoint) against the same exec preceded by
// a checkpoint scoped to the line's write set (SnapshotPaths of 1 to 3
// files, one of them new) and by a full snapshot, on a committed
// workspace of 1,000 files. Before each iteration the line's previous
// output is rewritten, outside the measurement, as the line would. All
// are measured in the same iterations: x-exec is the ratio of the scoped
// checkpoint plus the exec to the exec alone (goal: under 2), x-full the
// ratio to a full snapshot plus the exec, and x-fastimport the ratio to
// the same scoped checkpoint stored through git fast-import (as in a
// repository whose refs or objects are not plain files).
func BenchmarkExecCheckpoint(b *testing.B) {
	ctx := context.Background()
	if _, err := exec.LookPath("true"); err != nil {
		b.Skip("no true(1) to exec")
	}
	for _, kind := range []string{"git", "plain"} {
		for _, n := range []int{1, 3} {
			b.Run(fmt.Sprintf("%s/paths=%d", kind, n), func(b *testing.B) {
				w := newBenchWS(b, 1000)
				opts := &checkpoint.Options{}
				if kind == "plain" {
					require.NoError(b, os.RemoveAll(filepath.Join(w.dir, ".git")))
					opts.ShadowRoot = b.TempDir()
				}
				c, err := checkpoint.New(ctx, w.dir, opts)
				require.NoError(b, err)
				_, err = c.Create(ctx, "prime") // the full snapshot's private index exists, as in a session
				require.NoError(b, err)
				viaGit, err := checkpoint.New(ctx, w.dir, opts)
				require.NoError(b, err)
				checkpoint.SetLoose(viaGit, false)
				write := []string{benchFile(7), "out/report.txt", filepath.Join(w.dir, benchFile(500))}[:n]
				run := func() {
					if err := exec.Command("true").Run(); err != nil {
						b.Fatal(err)
					}
				}
				p := newPaired()
				for b.Loop() {
					b.StopTimer()
					w.gen++
					writeFile(b, w.dir, benchFile(7), fmt.Sprintf("edited by the line, generation %d\n", w.gen), 0o644)
					b.StartTimer()
					p.time("exec", run)
					p.time("scoped", func() {
						_, err := c.SnapshotPaths(ctx, "exec", "decision", write)
						require.NoError(b, err)
						run()
					})
					b.StopTimer()
					p.time("full", func() {
						_, err := c.Snapshot(ctx, "exec", "decision")
						require.NoError(b, err)
						run()
					})
					p.time("fastimport", func() {
						_, err := viaGit.SnapshotPaths(ctx, "exec", "decision", write)
						require.NoError(b, err)
						run()
					})
					b.StartTimer()
				}
				p.report(b, "scoped")
			})
		}
	}
}
