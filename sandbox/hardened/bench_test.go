package hardened_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

// BenchmarkExecDirect is the baseline: /bin/true through os/exec, with no
// sandbox at all. Compare BenchmarkRunHardened against it, in the same
// run: the difference is what a confined command costs more.
func BenchmarkExecDirect(b *testing.B) {
	before := cpuTime()
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkRunHardened measures local-hardened on /bin/true with every
// layer (user, mount, pid and network namespaces, Landlock, seccomp).
func BenchmarkRunHardened(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("local-hardened requires Linux")
	}
	benchRun(b, newSandbox(b, b.TempDir()))
}

// BenchmarkRunHardenedNoNamespaces measures local-hardened with only
// Landlock, seccomp, capabilities and no_new_privs (best effort, no
// namespaces), to separate the cost of the namespaces.
func BenchmarkRunHardenedNoNamespaces(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("local-hardened requires Linux")
	}
	benchRun(b, newSandbox(b, b.TempDir(), func(c *hardened.Config) {
		c.BestEffort = true
		c.SimulateMissing = []sandbox.Layer{sandbox.LayerUserNS, sandbox.LayerMountNS, sandbox.LayerPIDNS, sandbox.LayerNetNS}
	}))
}

// benchRun runs /bin/true through sb. Besides wall time it reports the
// CPU time of the whole run (this process plus every child it waited
// for, the launchers and through them the commands), which a loaded
// machine inflates far less than wall time.
func benchRun(b *testing.B, sb sandbox.Sandbox) {
	b.Helper()
	ctx := context.Background()
	cmd := sandbox.Command{Args: []string{"/bin/true"}}
	before := cpuTime()
	for b.Loop() {
		res, err := sb.Run(ctx, cmd)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run = %d, %v: %s", res.ExitCode, err, res.Stderr)
		}
	}
	// Closing ends the launchers, which this process then waits for: the
	// CPU time of the launchers and of the commands they reaped counts.
	if c, ok := sb.(io.Closer); ok {
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkConfinedLine measures what confinement costs a line the gate
// lets run without asking: each iteration runs the same line plainly
// (os/exec of the same argument vector, in the workspace, no sandbox)
// and confined (local-hardened with a Confine), in alternating order,
// and "ratio" is the confined time over the plain time of the same
// invocation. The lines: a read-only grep over the workspace through
// bash -c (the runners' form), /bin/true (the fixed cost alone), and a
// line that writes one new file (a create grant).
func BenchmarkConfinedLine(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("local-hardened requires Linux")
	}
	root := b.TempDir()
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf("package p\n\n// TODO: item %d\nfunc F%d() int { return %d }\n", i, i, i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d.go", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("b\na\nc\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	sb := newSandbox(b, root)
	for _, line := range []struct {
		name    string
		args    []string
		confine sandbox.Confine
	}{
		{"grep", []string{"bash", "-c", "grep -n TODO *.go"}, sandbox.Confine{}},
		{"true", []string{"/bin/true"}, sandbox.Confine{}},
		{"write", []string{"bash", "-c", "sort a.txt > out/sorted.txt"}, sandbox.Confine{Writable: []string{filepath.Join(root, "out", "sorted.txt")}}},
	} {
		b.Run(line.name, func(b *testing.B) {
			if err := os.MkdirAll(filepath.Join(root, "out"), 0o755); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			plain := func() time.Duration {
				start := time.Now()
				c := exec.Command(line.args[0], line.args[1:]...)
				c.Dir = root
				if out, err := c.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				return time.Since(start)
			}
			confined := func() time.Duration {
				start := time.Now()
				cmd := sandbox.Command{Args: line.args, Confine: &line.confine}
				res, err := sb.Run(ctx, cmd)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("Run = %d, %v: %s", res.ExitCode, err, res.Stderr)
				}
				return time.Since(start)
			}
			confined() // the launcher of this Confine, started once
			var p, c time.Duration
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					p += plain()
					c += confined()
				} else {
					c += confined()
					p += plain()
				}
				i++
			}
			b.ReportMetric(float64(c)/float64(p), "ratio")
			b.ReportMetric(float64(p.Microseconds())/float64(i), "plain-µs/op")
			b.ReportMetric(float64(c.Microseconds())/float64(i), "confined-µs/op")
		})
	}
}
