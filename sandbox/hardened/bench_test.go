package hardened_test

import (
	"context"
	"io"
	"os/exec"
	"runtime"
	"testing"

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
