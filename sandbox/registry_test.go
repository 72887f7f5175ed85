package sandbox_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	var r sandbox.Registry
	newLocal := func(root string) (sandbox.Sandbox, error) { return sandbox.NewLocal(sandbox.LocalConfig{Root: root}) }
	unregister, err := r.Register("local", sandbox.Backend{New: newLocal})
	require.NoError(t, err)
	_, err = r.Register("local", sandbox.Backend{New: newLocal})
	require.Error(t, err, "duplicate names are an error, not a panic")
	_, err = r.Register("nil", sandbox.Backend{})
	require.Error(t, err)

	missing := &sandbox.UnavailableError{Backend: "vendor", Reason: "vendor CLI not installed"}
	r.RegisterForTest(t, "vendor", sandbox.Backend{New: newLocal, Probe: func(context.Context) error { return missing }})
	assert.Equal(t, []string{"local", "vendor"}, r.Names())

	sb, err := r.Open(context.Background(), "local", t.TempDir())
	require.NoError(t, err)
	require.NotNil(t, sb)
	_, err = r.Open(context.Background(), "vendor", t.TempDir())
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), "vendor CLI not installed")
	_, err = r.Open(context.Background(), "docker", t.TempDir())
	require.ErrorIs(t, err, sandbox.ErrUnknownBackend)
	require.ErrorIs(t, r.Probe(context.Background(), "nope"), sandbox.ErrUnknownBackend)
	require.NoError(t, r.Probe(context.Background(), "local"))

	unregister()
	assert.Equal(t, []string{"vendor"}, r.Names())
}

func TestBuiltinRegistry(t *testing.T) {
	t.Parallel()
	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{})
	assert.Equal(t, []string{"local"}, r.Names(), "the other backends are registered by their packages' Register")
	require.NoError(t, r.Probe(context.Background(), "local"))
}

func TestWorktree(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git", "the worktree backend runs git worktree; .ci/run installs it")
	repo := newRepo(t)
	parent := t.TempDir()
	w, err := sandbox.NewWorktree(context.Background(), sandbox.WorktreeConfig{Repo: repo, Parent: parent, Branch: "feature/x", Prefix: "agent", Scripts: shellanalysis.Read})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(parent, "agent-feature-x"), w.Path())
	assert.FileExists(t, filepath.Join(w.Path(), "README"))

	res, err := runCmd(t, w, sandbox.Command{Args: []string{"sh", "-c", "echo change >> README && git rev-parse --abbrev-ref HEAD"}})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, "feature/x\n", string(res.Stdout))
	assert.Equal(t, "worktree/local", res.Confinement.Backend)
	assert.Equal(t, "hello\n", fileContent(t, filepath.Join(repo, "README")), "the main checkout is untouched")

	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "Close is idempotent")
	assert.NoDirExists(t, w.Path(), "the worktree is removed when done")
	out, err := exec.Command("git", "-C", repo, "worktree", "list").CombinedOutput()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "agent-feature-x")
	out, err = exec.Command("git", "-C", repo, "branch", "--list", "feature/x").CombinedOutput()
	require.NoError(t, err)
	assert.Contains(t, string(out), "feature/x", "the branch stays")
}

func TestWorktreeErrors(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git", "the worktree backend runs git worktree; .ci/run installs it")
	notRepo := t.TempDir()
	_, err := sandbox.NewWorktree(context.Background(), sandbox.WorktreeConfig{Repo: notRepo, Parent: t.TempDir(), Branch: "b"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a git repository")

	repo := newRepo(t)
	for _, branch := range []string{"", "-x", "a..b", "bad name"} {
		_, err := sandbox.NewWorktree(context.Background(), sandbox.WorktreeConfig{Repo: repo, Parent: t.TempDir(), Branch: branch})
		assert.Error(t, err, "branch %q", branch)
	}
	parent := t.TempDir()
	_, err = sandbox.NewWorktree(context.Background(), sandbox.WorktreeConfig{Repo: repo, Parent: parent, Branch: "b",
		New: func(string) (sandbox.Sandbox, error) { return nil, errors.New("boom") }})
	require.ErrorContains(t, err, "boom")
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, entries, "a failed wrap removes the worktree")

	_, err = sandbox.NewWorktree(context.Background(), sandbox.WorktreeConfig{Repo: repo, Parent: t.TempDir(), Branch: "b", Git: "/nonexistent/git"})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
}
