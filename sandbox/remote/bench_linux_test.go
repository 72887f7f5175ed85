//go:build linux

package remote_test

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/reins-go/reins/sandbox"
)

// BenchmarkExecDirect is the baseline of BenchmarkRunSSH: /bin/true
// through os/exec, with no sandbox at all.
func BenchmarkExecDirect(b *testing.B) {
	before := cpuTime()
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
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

// cpuTime is the user and system time of this process and of every child
// it has waited for.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
