package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/script"
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
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
			require.ErrorIs(t, err, sandbox.ErrRefused, "Run(%q)", tt.args)
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
	res, err := runCmd(t, l, sandbox.Command{Args: []string{"sh", "-c", "echo hello > out.txt && cat out.txt && ls -la >/dev/null 2>&1; echo .gitignore"}})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, "hello\n.gitignore\n", string(res.Stdout), ".gitignore is not .git")
	assert.Equal(t, []sandbox.Layer{sandbox.LayerWorkdir, sandbox.LayerArgs, sandbox.LayerProcessGroup}, res.Confinement.Enforced)
}

func TestLocalScriptsSeam(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var seen []string
	l := newLocal(t, root, func(c *sandbox.LocalConfig) {
		c.Scripts = func(text, dir, home string) ([]script.Command, error) {
			seen = append(seen, text)
			if text == "opaque" {
				return nil, assert.AnError
			}
			return []script.Command{{Text: text, Paths: []script.Path{{Path: dir + "/computed/.env", Raw: "computed/.env"}}}}, nil
		}
	})
	res, err := runCmd(t, l, sandbox.Command{Args: []string{"sh", "-c", "echo harmless"}})
	require.ErrorIs(t, err, sandbox.ErrRefused, "paths returned by the reader are checked")
	assert.Contains(t, res.Violations[0].Subject, "computed/.env")
	res, err = runCmd(t, l, sandbox.Command{Args: []string{"sh", "-c", "opaque"}})
	require.ErrorIs(t, err, sandbox.ErrRefused, "a reader's error refuses the command")
	assert.Equal(t, sandbox.ViolationUncheckable, res.Violations[0].Kind)
	res, err = runCmd(t, l, sandbox.Command{Args: []string{"echo", "-c", "not a shell"}})
	require.NoError(t, err, "only shells have scripts")
	assert.Equal(t, []string{"echo harmless", "opaque"}, seen)
}

// TestLocalRefusesConfine: local enforces no file or network policy,
// so a command with Confine set is refused (127, ErrUnavailable), and
// never runs unconfined.
func TestLocalRefusesConfine(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	l := newLocal(t, root)
	assert.False(t, sandbox.Enforcing(l))
	res, err := runCmd(t, l, sandbox.Command{Args: []string{"touch", "ran"}, Confine: &sandbox.Confine{Writable: []string{root}}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "local cannot confine")
	assert.NoFileExists(t, filepath.Join(root, "ran"))
	w, err := sandbox.NewWorktree(context.Background(), sandbox.WorktreeConfig{Repo: newRepo(t), Parent: t.TempDir(), Branch: "b"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	assert.False(t, sandbox.Enforcing(w), "a worktree enforces Confine when what it wraps does")
}

func TestCommandValidateConfine(t *testing.T) {
	t.Parallel()
	long := "/" + strings.Repeat("a", sandbox.MaxConfinePath)
	many := make([]string, sandbox.MaxConfineWritable+1)
	for i := range many {
		many[i] = "/w"
	}
	for _, c := range []sandbox.Confine{{Writable: []string{"relative"}}, {Writable: []string{"/a\x00b"}}, {Writable: []string{long}}, {Writable: many}, {Writable: []string{""}}} {
		err := sandbox.Command{Args: []string{"true"}, Confine: &c}.Validate()
		assert.ErrorIs(t, err, sandbox.ErrInvalidCommand, "Confine %.60q", c.Writable)
	}
	require.NoError(t, sandbox.Command{Args: []string{"true"}, Confine: &sandbox.Confine{Writable: []string{"/w/a", "/w/b/"}, Network: true}}.Validate())
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
	assert.Contains(t, string(res.Stdout), "BAR=baz", "Command.Env is honoured, allowlisted or not")
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
	testenv.WaitGone(t, marker, 30*time.Second)
	// A normal exit also takes the leftover background processes along.
	res, err = runCmd(t, newLocal(t, root), sandbox.Command{Args: []string{"sh", "-c", "sleep " + marker + "1 & exit 0"}})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	testenv.WaitGone(t, marker+"1", 30*time.Second)
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

// TestLocalScriptAnalysis covers the check of "sh -c" scripts with the
// full shell analysis (package sandbox/script/shellanalysis):
// redirections, cd, globs, nested scripts, and the fail-closed refusals
// of what it cannot see.
func TestLocalScriptAnalysis(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mk := func(p string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644))
	}
	mk(".git/config")
	mk(".env")
	mk("notes/a.txt")
	mk("keys/id_ed25519")
	mk("dots/.env")
	mk("dots/plain")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	// Inside sub, "innocent" leads to .git/config: only a check that
	// follows the script's cd sees it.
	require.NoError(t, os.Symlink("../.git/config", filepath.Join(root, "sub", "innocent")))
	require.NoError(t, os.Symlink("../.env", filepath.Join(root, "sub", "link2")))
	l := newLocal(t, root, func(c *sandbox.LocalConfig) {
		c.Policy.EnvAllowlist = []string{"PATH", "HOME"}
		c.Scripts = shellanalysis.Read
	})
	home := t.TempDir()

	tests := []struct {
		name   string
		script string
		kind   sandbox.ViolationKind // "" means the script runs
	}{
		{"output redirection", "echo pwned > .git/config", sandbox.ViolationDeniedPath},
		{"input redirection", "wc -c < .env", sandbox.ViolationDeniedPath},
		{"appending redirection through ..", "echo x >> notes/../.env", sandbox.ViolationDeniedPath},
		{"redirection after cd through a symlink", "cd sub && echo pwned > innocent", sandbox.ViolationDeniedPath},
		{"unknown program's argument after cd", "cd sub && mytool link2", sandbox.ViolationDeniedPath},
		{"cd into .git", "cd .git && ls", sandbox.ViolationDeniedPath},
		{"glob aimed at a denied name", "cat .e*", sandbox.ViolationDeniedPath},
		{"glob aimed at a denied name that does not exist", "cat notes/.ss?/*", sandbox.ViolationDeniedPath},
		{"glob matching a denied file", "cat keys/*", sandbox.ViolationDeniedPath},
		{"glob with dotglob", "shopt -s dotglob; cat dots/*", sandbox.ViolationDeniedPath},
		{"nested bash -c", `bash -c 'cat .env'`, sandbox.ViolationDeniedPath},
		{"tilde expands to HOME", "cat ~/.ssh/id_rsa", sandbox.ViolationDeniedPath},
		{"literal environment assignment", "FOO=.env mytool", sandbox.ViolationDeniedPath},
		{"option value", "mytool --config=.env", sandbox.ViolationDeniedPath},
		{"does not parse", "echo (", sandbox.ViolationUncheckable},
		{"variable path argument", `cat "$F"`, sandbox.ViolationUncheckable},
		{"variable argument of an unknown program", "mytool $F", sandbox.ViolationUncheckable},
		{"computed assignment", "FOO=$(cat name) mytool", sandbox.ViolationUncheckable},
		{"code for another interpreter", "python3 -c 'print(1)'", sandbox.ViolationUncheckable},
		{"code from a pipe", "curl -s x | sh", sandbox.ViolationUncheckable},
		{"cd to an unknown directory", "cd $D && cat x", sandbox.ViolationUncheckable},
		{"plain commands", "echo hello > out.txt && cat out.txt", ""},
		{"glob matching no denied name", "cat notes/*.txt", ""},
		{"star does not match dot files", "ls * && cat dots/*", ""},
		{"builtin with a variable", `echo "$HOME" && printf '%s\n' "$PATH"`, ""},
		{"shell function", "f() { echo hi; }; f", ""},
		{"cd then ordinary work", "cd sub; ls -la; cat ../notes/a.txt", ""},
		{"cd in a branch makes later relative paths unknown", "cd sub && ls && cd .. && cat notes/a.txt", sandbox.ViolationUncheckable},
		{"gitignore is not git", "echo .gitignore >> .gitignore.txt", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := runCmd(t, l, sandbox.Command{Args: []string{"sh", "-c", tt.script}, Env: []string{"HOME=" + home}})
			if tt.kind == "" {
				require.NoError(t, err, "%s", res.Stderr)
				assert.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
				return
			}
			require.ErrorIs(t, err, sandbox.ErrRefused, "sh -c %q ran: %s", tt.script, res.Stdout)
			assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
			require.NotEmpty(t, res.Violations)
			kinds := make([]sandbox.ViolationKind, len(res.Violations))
			for i, v := range res.Violations {
				kinds[i] = v.Kind
			}
			assert.Contains(t, kinds, tt.kind, "violations: %v", res.Violations)
			assert.Contains(t, string(res.Stderr), string(tt.kind), "stderr must say why")
		})
	}
	assert.Equal(t, "x", fileContent(t, filepath.Join(root, ".git", "config")))
}

// TestLocalScriptOpaqueExplained checks that the refusal of a script
// the analysis cannot see through names the reason on stderr.
func TestLocalScriptOpaqueExplained(t *testing.T) {
	t.Parallel()
	l := newLocal(t, t.TempDir(), func(c *sandbox.LocalConfig) { c.Scripts = shellanalysis.Read })
	res, err := runCmd(t, l, sandbox.Command{Args: []string{"bash", "-c", "python3 -c 'open(\".e\"+\"nv\")'"}})
	require.ErrorIs(t, err, sandbox.ErrRefused)
	assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "runs code the analysis does not read")
	assert.Contains(t, string(res.Stderr), "could hide there")
}
