package reins_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

// BenchmarkDo measures Do's overhead over Check in one run: an allowed action with no
// obligations, a no-op function, a no-op audit sink, the default MemoryStore. Compare the two
// sub-benchmarks of one invocation (the ratio is what counts, at most 1.8x; absolute times vary
// with the machine).
func BenchmarkDo(b *testing.B) {
	ctx := context.Background()
	r, err := reins.New(ctx, profile.MustBuiltin(profile.PermissionTrusted), &reins.Options{Workspace: []string{workspace(b)}, Audit: audit.Discard})
	require.NoError(b, err)
	defer r.Close()
	a := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}}
	d, err := r.Check(ctx, a)
	require.NoError(b, err)
	require.Equal(b, policy.Allow, d.Verdict)
	require.Zero(b, d.Obligations)
	noop := func(context.Context, gate.Decision) error { return nil }
	b.Run("Check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = r.Check(ctx, a)
		}
	})
	b.Run("Do", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = r.Do(ctx, a, noop)
		}
	})
}

// BenchmarkExecCheckpoint reports what profile.ExecCheckpoints costs: the same allowed command
// ("./noop.sh", a script the analysis cannot prove read-only, in the local sandbox, autonomous
// band, a real checkpointer over a workspace of 1,000 files that the command does not change)
// with exec checkpoints off and on. The ratio on/off is the price of making every exec
// reversible; with a bigger workspace it grows like "git status".
func BenchmarkExecCheckpoint(b *testing.B) {
	ctx := context.Background()
	ws := gitWorkspace(b)
	for i := range 1000 {
		p := filepath.Join(ws, "src", fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%04d.go", i))
		require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(b, os.WriteFile(p, []byte(fmt.Sprintf("package d\n\nconst C%d = %d\n", i, i)), 0o644))
	}
	require.NoError(b, os.WriteFile(filepath.Join(ws, "noop.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	cp, err := checkpoint.New(ctx, ws, nil)
	require.NoError(b, err)
	sb, err := sandbox.NewLocal(sandbox.LocalConfig{Root: ws})
	require.NoError(b, err)
	for _, exec := range []profile.ExecCheckpoints{profile.ExecCheckpointsOff, profile.ExecCheckpointsOn} {
		p := profile.MustBuiltin(profile.PermissionAutonomous)
		p.ExecCheckpoints = exec
		r, err := reins.New(ctx, p, &reins.Options{Workspace: []string{ws}, Audit: audit.Discard, Checkpointer: cp, Sandbox: sb})
		require.NoError(b, err)
		a := policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "./noop.sh"}
		b.Run("exec_checkpoints="+exec.String(), func(b *testing.B) {
			for b.Loop() {
				out, res, err := r.DoCommand(ctx, a, sandbox.Command{Args: []string{"./noop.sh"}})
				if err != nil || res.ExitCode != 0 || (out.CheckpointID != "") != (exec == profile.ExecCheckpointsOn) {
					b.Fatalf("DoCommand: %v (exit %d, checkpoint %q)", err, res.ExitCode, out.CheckpointID)
				}
			}
		})
		_ = r.Close()
	}
}
