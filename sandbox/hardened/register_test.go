package hardened_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

func TestRegister(t *testing.T) {
	t.Parallel()
	var r sandbox.Registry
	require.NoError(t, hardened.Register(&r, hardened.Config{ReadOnlyPaths: append(hardened.DefaultReadOnlyPaths(), probeDir)}))
	assert.Equal(t, []string{"local-hardened"}, r.Names())
	require.Error(t, hardened.Register(&r, hardened.Config{}), "a second registration is refused")
	err := r.Probe(context.Background(), "local-hardened")
	if runtime.GOOS != "linux" {
		require.ErrorIs(t, err, sandbox.ErrUnavailable)
		return
	}
	requireHardened(t)
	require.NoError(t, err)
	root := t.TempDir()
	sb, err := r.Open(context.Background(), "local-hardened", root)
	require.NoError(t, err)
	res, err := runCmd(t, sb, sandbox.Command{Args: []string{"sh", "-c", "echo ok > f"}})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, "local-hardened", res.Confinement.Backend)
	assert.FileExists(t, filepath.Join(root, "f"))
}
