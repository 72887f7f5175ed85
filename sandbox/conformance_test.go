package sandbox_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
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
	// local-hardened, alone and inside a worktree, runs the kit in
	// package sandbox/hardened.
	t.Run("worktree/local", func(t *testing.T) {
		testenv.RequireTool(t, "git", "the worktree backend runs git worktree; .ci/run installs it")
		sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
			repo := newRepo(t)
			cfg := sandbox.WorktreeConfig{Repo: repo, Parent: t.TempDir(), Branch: "agent/task-1", Policy: p}
			w, err := sandbox.NewWorktree(context.Background(), cfg)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, w.Close()) })
			return w, w.Path()
		})
	})
	// The container, remote and vendor backends run the kit in packages
	// sandbox/container and sandbox/remote.
}
