package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
)

// TestLocalWriteProtectedPaths: local refuses an argument or working
// directory that names a WriteProtectedPaths entry, as it refuses .git,
// runs what names neither, and rejects an entry it cannot honour naming
// the field and index.
func TestLocalWriteProtectedPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the commands below are POSIX tools")
	}
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "config"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "config", "deploy.yaml"), []byte("deploy"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "config", "other.yaml"), []byte("other"), 0o644))
	l := newLocal(t, root, func(c *sandbox.LocalConfig) {
		c.Policy.WriteProtectedPaths = []string{"config/deploy.yaml", "config/sub"}
	})
	require.NoError(t, os.MkdirAll(filepath.Join(root, "config", "sub"), 0o755))
	ctx := context.Background()
	for _, cmd := range []sandbox.Command{
		{Args: []string{"cat", "config/deploy.yaml"}},
		{Args: []string{"cat", "CONFIG/Deploy.yaml"}},
		{Args: []string{"/bin/sh", "-c", "echo x >> config/deploy.yaml"}},
		{Args: []string{"ls"}, Dir: "config/sub"},
	} {
		res, err := l.Run(ctx, cmd)
		require.ErrorIs(t, err, sandbox.ErrRefused, "%q in %q ran", cmd.Args, cmd.Dir)
		require.NotEmpty(t, res.Violations)
		assert.Equal(t, sandbox.ViolationDeniedPath, res.Violations[0].Kind)
	}
	res, err := l.Run(ctx, sandbox.Command{Args: []string{"cat", "config/other.yaml"}})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, "other", string(res.Stdout))
	b, err := os.ReadFile(filepath.Join(root, "config", "deploy.yaml"))
	require.NoError(t, err)
	assert.Equal(t, "deploy", string(b))

	_, err = sandbox.NewLocal(sandbox.LocalConfig{Root: root, Policy: sandbox.FsNetPolicy{WriteProtectedPaths: []string{"ok", "", "x"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FsNetPolicy.WriteProtectedPaths[1]")
}
