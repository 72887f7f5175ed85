package sandbox_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/testenv"
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
	// The CLI backends run the kit too. Where their CLI, daemon or
	// credentials are missing (docker has no engine here; the vendor CLIs
	// are not installed) the kit checks the honest 127, which is then the
	// whole test, and says so in the log. ssh runs the whole kit in TestSSH, against
	// a real sshd.
	cli := map[string]func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error){
		"docker": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return sandbox.NewDocker(sandbox.DockerConfig{Root: root, Image: "debian:stable-slim", Policy: p})
		},
		"singularity": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return sandbox.NewSingularity(sandbox.SingularityConfig{Root: root, Image: "docker://debian:stable-slim", Policy: p})
		},
		"apptainer": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return sandbox.NewApptainer(sandbox.SingularityConfig{Root: root, Image: "docker://debian:stable-slim", Policy: p})
		},
		"modal": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return sandbox.NewModal(sandbox.ModalConfig{Root: root, Policy: p})
		},
		"daytona": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return sandbox.NewDaytona(sandbox.DaytonaConfig{Sandbox: "reins-conformance", RemoteDir: root, Policy: p})
		},
		"vercel-sandbox": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return sandbox.NewVercelSandbox(sandbox.VercelSandboxConfig{RemoteDir: root, Policy: p})
		},
	}
	for _, name := range []string{"docker", "singularity", "apptainer", "modal", "daytona", "vercel-sandbox"} {
		t.Run(name, func(t *testing.T) {
			sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
				root := t.TempDir()
				sb, err := cli[name](root, p)
				require.NoError(t, err)
				return sb, root
			})
		})
	}
}
