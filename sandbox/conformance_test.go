package sandbox_test

import (
	"context"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
			root := t.TempDir()
			sb, err := sandbox.NewLocal(sandbox.LocalConfig{Root: root, Policy: p})
			require.NoError(t, err)
			return sb, root
		})
	})
	t.Run("local-hardened", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			// The kit's honest-failure branch runs on other systems.
			t.Logf("non-Linux: the kit checks the 127 contract only")
		}
		sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
			root := t.TempDir()
			return newHardened(t, root, func(c *sandbox.HardenedConfig) { c.Policy = p }), root
		})
	})
	for _, inner := range []string{"local", "local-hardened"} {
		t.Run("worktree/"+inner, func(t *testing.T) {
			if _, err := exec.LookPath("git"); err != nil {
				t.Skip("git is not installed; .ci/run installs it")
			}
			sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
				repo := newRepo(t)
				cfg := sandbox.WorktreeConfig{Repo: repo, Parent: t.TempDir(), Branch: "agent/task-1", Policy: p}
				if inner == "local-hardened" {
					cfg.New = func(root string) (sandbox.Sandbox, error) {
						return sandbox.NewHardened(hardenedConfig(root, func(c *sandbox.HardenedConfig) { c.Policy = p }))
					}
				}
				w, err := sandbox.NewWorktree(context.Background(), cfg)
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, w.Close()) })
				return w, w.Path()
			})
		})
	}
}
