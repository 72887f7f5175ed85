package hardened_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
	"github.com/reins-go/reins/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	t.Run("local-hardened", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			// The kit's honest-failure branch runs on other systems.
			t.Logf("non-Linux: the kit checks the 127 contract only")
		}
		sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
			root := t.TempDir()
			return newSandbox(t, root, func(c *hardened.Config) { c.Policy = p }), root
		})
	})
	t.Run("worktree/local-hardened", func(t *testing.T) {
		testenv.RequireTool(t, "git", "the worktree backend runs git worktree; .ci/run installs it")
		sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
			repo := newRepo(t)
			requireHardened(t)
			cfg := sandbox.WorktreeConfig{Repo: repo, Parent: t.TempDir(), Branch: "agent/task-1", Policy: p,
				New: func(root string) (sandbox.Sandbox, error) {
					return hardened.New(testConfig(root, func(c *hardened.Config) { c.Policy = p }))
				}}
			w, err := sandbox.NewWorktree(context.Background(), cfg)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, w.Close()) })
			return w, w.Path()
		})
	})
}
