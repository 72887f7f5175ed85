//go:build unix

package envlist

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"bin", "other", "rel"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	write := func(rel string, mode os.FileMode) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte("#!/bin/sh\n"), mode))
	}
	write("bin/tool", 0o755)
	write("other/tool", 0o755)
	write("other/plain", 0o644) // not executable: skipped
	write("rel/mine", 0o755)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin", "adir"), 0o755)) // a directory: skipped

	env := []string{"PATH=/nonexistent", "PATH=" + filepath.Join(dir, "bin") + ":" + filepath.Join(dir, "other") + ":rel"}
	p, err := LookPath("tool", dir, env)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "bin", "tool"), p, "the first PATH entry wins; the last PATH of env counts")
	p, err = LookPath("mine", dir, env)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "rel", "mine"), p, "a relative PATH entry is taken against dir")
	for _, name := range []string{"plain", "adir", "missing"} {
		_, err = LookPath(name, dir, env)
		assert.True(t, errors.Is(err, exec.ErrNotFound), "%s: %v", name, err)
	}
	p, err = LookPath("./x/y", dir, nil)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "x", "y"), p, "a name with a slash is not looked up")
	p, err = LookPath("/abs/prog", dir, nil)
	require.NoError(t, err)
	assert.Equal(t, "/abs/prog", p)
	p, err = LookPath("sh", dir, nil)
	require.NoError(t, err, "no PATH: the default directories")
	assert.Contains(t, []string{"/usr/local/bin/sh", "/usr/bin/sh", "/bin/sh"}, p)
}
