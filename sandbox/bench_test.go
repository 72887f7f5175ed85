package sandbox_test

import (
	"context"
	"os/exec"
	"runtime"
	"testing"

	"github.com/reins-go/reins/sandbox"
)

// BenchmarkExecDirect is the baseline: /bin/true through os/exec, with no
// sandbox at all. Compare the other benchmarks against it.
func BenchmarkExecDirect(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunLocal measures the local backend on /bin/true.
func BenchmarkRunLocal(b *testing.B) {
	l, err := sandbox.NewLocal(sandbox.LocalConfig{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, l)
}

// BenchmarkRunHardened measures local-hardened on /bin/true with every
// layer (user, mount, pid and network namespaces, Landlock, seccomp).
func BenchmarkRunHardened(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("local-hardened requires Linux")
	}
	benchRun(b, newHardened(b, b.TempDir()))
}

// BenchmarkRunHardenedNoNamespaces measures local-hardened with only
// Landlock, seccomp, capabilities and no_new_privs (best effort, no
// namespaces), to separate the cost of the namespaces.
func BenchmarkRunHardenedNoNamespaces(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("local-hardened requires Linux")
	}
	benchRun(b, newHardened(b, b.TempDir(), func(c *sandbox.HardenedConfig) {
		c.BestEffort = true
		c.SimulateMissing = []sandbox.Layer{sandbox.LayerUserNS, sandbox.LayerMountNS, sandbox.LayerPIDNS, sandbox.LayerNetNS}
	}))
}

func benchRun(b *testing.B, sb sandbox.Sandbox) {
	b.Helper()
	ctx := context.Background()
	cmd := sandbox.Command{Args: []string{"/bin/true"}}
	for b.Loop() {
		res, err := sb.Run(ctx, cmd)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run = %d, %v: %s", res.ExitCode, err, res.Stderr)
		}
	}
}
