package sandbox_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/reins-go/reins/sandbox"
)

// BenchmarkExecDirect is the baseline: /bin/true through os/exec, with no
// sandbox at all. Compare the other benchmarks against it (package
// sandbox/hardened has the same pair for local-hardened).
func BenchmarkExecDirect(b *testing.B) {
	before := cpuTime()
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkRunLocal measures the local backend on /bin/true.
func BenchmarkRunLocal(b *testing.B) {
	l, err := sandbox.NewLocal(sandbox.LocalConfig{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, l)
}

// benchRun runs /bin/true through sb. Besides wall time it reports the
// CPU time of the whole run (this process plus every child it waited
// for), which a loaded machine inflates far less than wall time.
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
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
}
