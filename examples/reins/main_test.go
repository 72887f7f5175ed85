package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func reins(t *testing.T, stdin string, args ...string) (int, string, error) {
	t.Helper()
	var out bytes.Buffer
	code, err := run(context.Background(), args, strings.NewReader(stdin), &out)
	return code, out.String(), err
}

func TestCLI(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // an empty user configuration
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("hi\n"), 0o644))

	code, out, err := reins(t, "", "-C", ws, "check", "-op", "read", "-target", "README.md")
	require.NoError(t, err)
	assert.Equal(t, 0, code, out)
	code, out, _ = reins(t, "", "-C", ws, "check", "--", "cat", ".env")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "protected")
	code, out, _ = reins(t, "", "-C", ws, "explain", "--", "go test ./... && rm -rf ~")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "hard_stop")

	_, out, err = reins(t, "", "-C", ws, "profile", "current")
	require.NoError(t, err)
	assert.Contains(t, out, "PROFILE-SAFE", "the default profile fails closed")
	_, _, err = reins(t, "n\n", "-C", ws, "profile", "set", "PROFILE-FULL-AUTO")
	assert.ErrorContains(t, err, "not confirmed", "loosening needs confirmation")
	_, out, err = reins(t, "y\n", "-C", ws, "profile", "set", "PROFILE-DEV")
	require.NoError(t, err, out)
	_, out, err = reins(t, "", "-C", ws, "profile", "current")
	require.NoError(t, err)
	assert.Contains(t, out, "PROFILE-DEV")
	_, out, err = reins(t, "", "-C", ws, "profile", "set", "PROFILE-SAFE")
	require.NoError(t, err, "tightening needs no confirmation: %s", out)

	// Checkpoints on a real repository.
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
	}
	git("init", "-q")
	_, _, err = reins(t, "", "-C", ws, "rewind")
	assert.Error(t, err, "nothing to rewind yet")

	_, _, err = reins(t, "", "bogus")
	assert.Error(t, err)
}
