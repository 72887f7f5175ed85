package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/sandbox"
)

// newRepo makes a git repository with one commit and returns its path.
func newRepo(t testing.TB) string {
	t.Helper()
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", repo}, args...)...)
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		out, err := c.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README"), []byte("hello\n"), 0o644))
	git("add", "README")
	git("commit", "-q", "-m", "init")
	return repo
}

func runCmd(t testing.TB, sb sandbox.Sandbox, cmd sandbox.Command) (sandbox.Result, error) {
	t.Helper()
	return sb.Run(context.Background(), cmd)
}

func fileContent(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// standIn writes an executable named name into dir: a /bin/sh script
// that appends its argument vector (NUL-terminated, one record per call)
// to a log and then runs body. calls reads the recorded invocations.
// Stand-ins only check how a backend calls a CLI; they never stand for
// what the CLI does.
func standIn(t *testing.T, dir, name, body string) (path string, calls func() [][]string) {
	t.Helper()
	log := filepath.Join(dir, name+".calls")
	path = filepath.Join(dir, name)
	script := "#!/bin/sh\n{ for a in \"$0\" \"$@\"; do printf '%s\\0' \"$a\"; done; printf '\\036'; } >> '" + log + "'\n" + body + "\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path, func() [][]string {
		b, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		var out [][]string
		for _, rec := range strings.Split(strings.TrimSuffix(string(b), "\x1e"), "\x1e") {
			out = append(out, strings.Split(strings.TrimSuffix(rec, "\x00"), "\x00"))
		}
		return out
	}
}

// writeArgvRecorder writes an executable named name into dir that
// records its arguments after the first, NUL-terminated, to the file
// named by its first argument.
func writeArgvRecorder(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nout=$1; shift\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$out\"\n"), 0o755))
	return p
}

// printableHostileArgs are the hostile arguments that need no $'...'
// quoting (no control characters, valid UTF-8): a plain POSIX shell such
// as dash reads them.
func printableHostileArgs() []string {
	var out []string
	for _, a := range sandbox.HostileArgs {
		if _, err := syntax.Quote(a, syntax.LangPOSIX); err == nil {
			out = append(out, a)
		}
	}
	return out
}
