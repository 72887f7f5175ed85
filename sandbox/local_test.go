package sandbox_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
)

func newLocal(t *testing.T, root string, mods ...func(*sandbox.LocalConfig)) *sandbox.Local {
	t.Helper()
	cfg := sandbox.LocalConfig{Root: root}
	for _, m := range mods {
		m(&cfg)
	}
	l, err := sandbox.NewLocal(cfg)
	require.NoError(t, err)
	return l
}

// TestLocalRefusesDeniedPaths covers the seed's argument checks and
// their extensions: path arguments, --opt=value, sh -c scripts with
// redirections, symlinks resolved, case-insensitive components.
func TestLocalRefusesDeniedPaths(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("local needs a Unix system")
	}
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "config"), []byte("original"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("SECRET=1"), 0o644))
	require.NoError(t, os.Symlink(".git", filepath.Join(root, "innocent")))
	require.NoError(t, os.Symlink(filepath.Join(outside, ".ssh"), filepath.Join(root, "keys")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	l := newLocal(t, root, func(c *sandbox.LocalConfig) { c.Policy.DeniedPaths = []string{"secrets/prod.json", outside + "/vault"} })

	tests := []struct {
		name string
		args []string
		dir  string
	}{
		{"argument .git/config", []string{"cat", ".git/config"}, ""},
		{"argument ./.git/hooks/../config", []string{"touch", "./.git/hooks/../config"}, ""},
		{"argument from a subdirectory", []string{"cat", "../.git/config"}, "sub"},
		{"upper-case component", []string{"cat", ".GIT/config"}, ""},
		{"absolute argument", []string{"cat", filepath.Join(root, ".env")}, ""},
		{"option value", []string{"git", "--git-dir=.git", "status"}, ""},
		{"symlink to .git", []string{"cat", "innocent/config"}, ""},
		{"symlink to an outside .ssh", []string{"ls", "keys"}, ""},
		{"configured relative entry", []string{"cat", "config/secrets/prod.json"}, ""},
		{"configured absolute entry", []string{"cat", outside + "/vault/key"}, ""},
		{"sh -c argument", []string{"sh", "-c", "cat .env"}, ""},
		{"sh -c redirection", []string{"sh", "-c", "echo pwned >.git/config"}, ""},
		{"sh -c appending redirection", []string{"bash", "-ec", "echo pwned >>.git/hooks/pre-commit"}, ""},
		{"sh -c quoted path", []string{"/bin/sh", "-c", `cat "$HOME/.ssh/id_rsa"`}, ""},
		{"sh -c input redirection", []string{"sh", "-c", "wc -c <.env"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := runCmd(t, l, sandbox.Command{Args: tt.args, Dir: tt.dir})
			require.ErrorIs(t, err, sandbox.ErrDenied, "Run(%q)", tt.args)
			assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
			require.True(t, res.Escaped())
			assert.Equal(t, sandbox.ViolationDeniedPath, res.Violations[0].Kind)
			assert.Empty(t, res.Stdout, "the command must not have run")
		})
	}
	assert.Equal(t, "original", fileContent(t, filepath.Join(root, ".git", "config")))
	assert.NoFileExists(t, filepath.Join(root, ".git", "hooks", "pre-commit"))
}

func TestLocalAllowsOrdinaryCommands(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	l := newLocal(t, root)
	res, err := runCmd(t, l, sandbox.Command{Args: []string{"sh", "-c", "echo hello > out.txt && cat out.txt && git --version >/dev/null 2>&1; echo .gitignore"}})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, "hello\n.gitignore\n", string(res.Stdout), ".gitignore is not .git")
	assert.Equal(t, []sandbox.Layer{sandbox.LayerWorkdir, sandbox.LayerArgs, sandbox.LayerProcessGroup}, res.Confinement.Enforced)
}

func TestLocalScriptPathsSeam(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var seen []string
	l := newLocal(t, root, func(c *sandbox.LocalConfig) {
		c.ScriptPaths = func(script string) ([]string, error) {
			seen = append(seen, script)
			if script == "opaque" {
				return nil, assert.AnError
			}
			return []string{"computed/.env"}, nil
		}
	})
	res, err := runCmd(t, l, sandbox.Command{Args: []string{"sh", "-c", "echo harmless"}})
	require.ErrorIs(t, err, sandbox.ErrDenied, "paths returned by ScriptPaths are checked")
	assert.Contains(t, res.Violations[0].Subject, "computed/.env")
	res, err = runCmd(t, l, sandbox.Command{Args: []string{"sh", "-c", "opaque"}})
	require.ErrorIs(t, err, sandbox.ErrDenied, "an analyser error refuses the command")
	assert.Equal(t, sandbox.ViolationUncheckable, res.Violations[0].Kind)
	res, err = runCmd(t, l, sandbox.Command{Args: []string{"echo", "-c", "not a shell"}})
	require.NoError(t, err, "only shells have scripts")
	assert.Equal(t, []string{"echo harmless", "opaque"}, seen)
}

func TestLocalEnvAllowlist(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-host-secret")
	root := t.TempDir()
	res, err := runCmd(t, newLocal(t, root), sandbox.Command{Args: []string{"env"}})
	require.NoError(t, err)
	assert.Contains(t, string(res.Stdout), "sk-host-secret", "without an allowlist local passes the environment through (seed behaviour)")
	l := newLocal(t, root, func(c *sandbox.LocalConfig) { c.Policy.EnvAllowlist = []string{"PATH", "FOO"} })
	res, err = runCmd(t, l, sandbox.Command{Args: []string{"env"}, Env: []string{"FOO=bar", "BAR=baz"}})
	require.NoError(t, err)
	assert.NotContains(t, string(res.Stdout), "sk-host-secret")
	assert.NotContains(t, string(res.Stdout), "BAR=baz")
	assert.Contains(t, string(res.Stdout), "FOO=bar")
	assert.True(t, res.Confinement.Has(sandbox.LayerEnv))
}

func TestLocalKillsItsProcessGroup(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	marker := "32." + time.Now().Format("150405000")
	res, err := runCmd(t, newLocal(t, root), sandbox.Command{
		Args:    []string{"sh", "-c", "sleep " + marker + " & sleep " + marker + " & echo started; sleep 60"},
		Timeout: time.Second,
	})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	waitGone(t, marker)
	// A normal exit also takes the leftover background processes along.
	res, err = runCmd(t, newLocal(t, root), sandbox.Command{Args: []string{"sh", "-c", "sleep " + marker + "1 & exit 0"}})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	waitGone(t, marker+"1")
}

func TestNewLocalErrors(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, cfg := range []sandbox.LocalConfig{
		{},
		{Root: "/does/not/exist"},
		{Root: file},
		{Root: t.TempDir(), Policy: sandbox.FsNetPolicy{DeniedPaths: []string{""}}},
		{Root: t.TempDir(), Policy: sandbox.FsNetPolicy{DeniedPaths: []string{"a/../.."}}},
		{Root: t.TempDir(), Policy: sandbox.FsNetPolicy{DeniedPaths: []string{"."}}},
	} {
		_, err := sandbox.NewLocal(cfg)
		assert.Error(t, err, "NewLocal(%+v)", cfg)
	}
}
