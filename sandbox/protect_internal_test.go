package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocalRefusesHomeEntries: with DeniedPaths ["~/.private"], local refuses a command that
// names the expanded path, written with ~, $HOME or in full (issue 12: the entry used to protect
// nothing).
func TestLocalRefusesHomeEntries(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the commands are Unix ones")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".private"), 0o700))
	root := t.TempDir()
	l, err := NewLocal(LocalConfig{Root: root, Policy: FsNetPolicy{DeniedPaths: []string{"~/.private"}}})
	require.NoError(t, err)
	for _, args := range [][]string{
		{"ls", filepath.Join(home, ".private")},
		{"sh", "-c", "ls ~/.private"},
		{"sh", "-c", `ls "$HOME/.private"`},
		{"ls", filepath.Join(home, ".aws")}, // a default credential store
	} {
		res, err := l.Run(context.Background(), Command{Args: args})
		require.ErrorIs(t, err, ErrRefused, "%q", args)
		assert.Equal(t, ExitDenied, res.ExitCode, "%q", args)
	}
}
