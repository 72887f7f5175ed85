package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/remote"
)

func runCmd(t testing.TB, sb sandbox.Sandbox, cmd sandbox.Command) (sandbox.Result, error) {
	t.Helper()
	return sb.Run(context.Background(), cmd)
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
	for _, a := range remote.HostileArgs {
		if _, err := syntax.Quote(a, syntax.LangPOSIX); err == nil {
			out = append(out, a)
		}
	}
	return out
}
