// Package sandboxtest is the conformance kit for [sandbox.Sandbox]
// backends: every built-in backend passes it, and a third-party backend
// (a container, a remote host, a vendor CLI) can run it from its own
// tests with [Run].
//
// The kit checks the contract written on [sandbox.Sandbox]: argument
// vectors are not re-parsed by a shell, exit codes are honest (127 and
// [sandbox.ErrUnavailable] when something is missing, never a fabricated
// 0), timeouts and cancellation kill the command and what it started,
// output is capped, the environment is filtered by the allowlist, and the
// working directory is confined to the root.
//
// A backend that reports [sandbox.ErrUnavailable] on this host is checked
// for the honest-failure contract only (exit code 127, a reason on
// stderr, the error); the test passes on that and logs why the other
// cases did not run. A test that needs the whole kit to run checks its
// prerequisites (the CLI, the daemon, the kernel) before calling [Run].
//
// A backend's test looks like this:
//
//	func TestConformance(t *testing.T) {
//		sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
//			root := t.TempDir()
//			sb, err := mybackend.New(mybackend.Config{Root: root, Policy: p})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return sb, root
//		})
//	}
package sandboxtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
)

// NewFunc builds the backend under test with policy, rooted at a fresh
// directory it returns. It is called once per case; it should register
// cleanups on t.
type NewFunc func(t *testing.T, policy sandbox.FsNetPolicy) (sb sandbox.Sandbox, root string)

// Env names the kit uses for the env-filtering case.
const (
	EnvAllowed = "REINS_SANDBOXTEST_ALLOWED"
	EnvSecret  = "REINS_SANDBOXTEST_SECRET"
)

// Policy is the policy the kit asks for: the default denied paths and an
// allowlist of PATH and [EnvAllowed].
func Policy() sandbox.FsNetPolicy {
	return sandbox.FsNetPolicy{EnvAllowlist: []string{"PATH", EnvAllowed}}
}

// Run runs every conformance case against the backend newSandbox builds.
// The commands it runs need a POSIX sh, printf, cat, head, env, tr, pwd,
// sleep and touch inside the sandbox. The root that newSandbox returns
// must be a directory on this host that the backend's commands see as
// their working root (a bind mount for a container backend), because the
// kit checks effects, such as files a killed process would have created,
// from the host side. Run sets [EnvSecret] in the process
// environment, so it must not be called from a parallel test; its cases
// run in parallel with each other.
func Run(t *testing.T, newSandbox NewFunc) {
	t.Helper()
	t.Setenv(EnvSecret, "host-secret-value")

	sb, _ := newSandbox(t, Policy())
	res, err := sb.Run(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "exit 0"}, Timeout: time.Minute})
	if errors.Is(err, sandbox.ErrUnavailable) {
		checkUnavailable(t, res, err)
		t.Logf("backend unavailable on this host, only the honest-failure contract was checked: %v", err)
		return
	}
	require.NoError(t, err, "a trivial command failed: %s", res.Stderr)

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sb, root := newSandbox(t, Policy())
			c.run(t, sb, root)
		})
	}
}

func checkUnavailable(t *testing.T, res sandbox.Result, err error) {
	t.Helper()
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode, "an unavailable backend must report exit code 127")
	assert.NotEmpty(t, res.Stderr, "an unavailable backend must say what is missing on stderr")
	assert.NotEmpty(t, err.Error())
}

type kitCase struct {
	name string
	run  func(t *testing.T, sb sandbox.Sandbox, root string)
}

func run(t *testing.T, sb sandbox.Sandbox, cmd sandbox.Command) (sandbox.Result, error) {
	t.Helper()
	if cmd.Timeout == 0 {
		cmd.Timeout = time.Minute
	}
	res, err := sb.Run(context.Background(), cmd)
	if err != nil {
		assert.NotZero(t, res.ExitCode, "Run returned error %v with exit code 0", err)
	}
	return res, err
}

var cases = []kitCase{
	{"ArgvIsNotReparsed", func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{Args: []string{"printf", "%s|", "a b", "$HOME", ";echo no", "`id`"}})
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode)
		assert.Equal(t, "a b|$HOME|;echo no|`id`|", string(res.Stdout))
		assert.NotEmpty(t, res.Confinement.Backend, "Confinement.Backend must name the backend")
	}},
	{"ExitCodeIsReported", func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{Args: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
		require.NoError(t, err)
		assert.Equal(t, 3, res.ExitCode)
		assert.Equal(t, "out\n", string(res.Stdout))
		assert.Equal(t, "err\n", string(res.Stderr))
		assert.False(t, res.TimedOut)
		assert.Positive(t, res.Duration)
	}},
	{"MissingProgramIsHonest", func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, _ := run(t, sb, sandbox.Command{Args: []string{"reins-sandboxtest-no-such-program"}})
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode, "a missing program must give exit code 127")
		assert.NotEmpty(t, res.Stderr, "a missing program must be explained on stderr")
	}},
	{"InvalidCommandIsAnError", func(t *testing.T, sb sandbox.Sandbox, root string) {
		for _, cmd := range []sandbox.Command{{}, {Args: []string{""}}, {Args: []string{"true"}, MaxOutput: -1}, {Args: []string{"true"}, Env: []string{"NOEQUALS"}}} {
			res, err := sb.Run(context.Background(), cmd)
			require.ErrorIs(t, err, sandbox.ErrInvalidCommand, "Run(%+v)", cmd)
			assert.NotZero(t, res.ExitCode)
		}
	}},
	{"StdinIsPassed", func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{Args: []string{"cat"}, Stdin: strings.NewReader("from stdin")})
		require.NoError(t, err)
		assert.Equal(t, "from stdin", string(res.Stdout))
	}},
	{"TimeoutKillsTheGroup", func(t *testing.T, sb sandbox.Sandbox, root string) {
		start := time.Now()
		res, _ := run(t, sb, sandbox.Command{
			Args:    []string{"sh", "-c", "(sleep 1; touch late) & sleep 30"},
			Timeout: 300 * time.Millisecond,
		})
		assert.True(t, res.TimedOut, "TimedOut")
		assert.NotZero(t, res.ExitCode)
		assert.Less(t, time.Since(start), 20*time.Second, "Run returned long after the timeout")
		time.Sleep(1500 * time.Millisecond)
		assert.NoFileExists(t, filepath.Join(root, "late"), "a background process outlived the timeout")
	}},
	{"CancelKillsTheGroup", func(t *testing.T, sb sandbox.Sandbox, root string) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		res, _ := sb.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "(sleep 1; touch late) & sleep 30"}, Timeout: time.Minute})
		assert.True(t, res.TimedOut, "TimedOut after cancel")
		assert.NotZero(t, res.ExitCode)
		time.Sleep(1500 * time.Millisecond)
		assert.NoFileExists(t, filepath.Join(root, "late"), "a background process outlived the cancel")
	}},
	{"OutputIsCapped", func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{
			Args:      []string{"sh", "-c", "head -c 200000 /dev/zero; head -c 5000 /dev/zero >&2; echo done >&2"},
			MaxOutput: 1000,
		})
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode, "the command must run to completion while its output is discarded")
		assert.Len(t, res.Stdout, 1000)
		assert.Len(t, res.Stderr, 1000)
		assert.True(t, res.StdoutTruncated)
		assert.True(t, res.StderrTruncated)
		res, err = run(t, sb, sandbox.Command{Args: []string{"printf", "short"}, MaxOutput: 1000})
		require.NoError(t, err)
		assert.False(t, res.StdoutTruncated)
	}},
	{"EnvIsFiltered", func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{
			// A plain argument vector: a shell script that prints the
			// environment is opaque to local's script analysis.
			Args: []string{"env"},
			Env:  []string{EnvAllowed + "=passed", "REINS_SANDBOXTEST_NOT_LISTED=given"},
		})
		require.NoError(t, err, "%s", res.Stderr)
		out := string(res.Stdout)
		assert.Contains(t, out, EnvAllowed+"=passed")
		assert.NotContains(t, out, "host-secret-value", "a host variable outside the allowlist reached the command")
		assert.Contains(t, out, "REINS_SANDBOXTEST_NOT_LISTED=given", "a Command.Env variable must reach the command, allowlisted or not (never dropped silently)")
	}},
	{"WorkdirInsideRoot", func(t *testing.T, sb sandbox.Sandbox, root string) {
		require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
		res, err := run(t, sb, sandbox.Command{Args: []string{"pwd", "-P"}, Dir: "sub"})
		require.NoError(t, err, "%s", res.Stderr)
		resolvedRoot, err := filepath.EvalSymlinks(root)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(resolvedRoot, "sub"), strings.TrimSpace(string(res.Stdout)))
	}},
	{"WorkdirOutsideRootIsDenied", func(t *testing.T, sb sandbox.Sandbox, root string) {
		outside := t.TempDir()
		require.NoError(t, os.Symlink(outside, filepath.Join(root, "escape")))
		for _, dir := range []string{"..", "/", outside, "escape", "escape/.", "sub/../.."} {
			res, err := run(t, sb, sandbox.Command{Args: []string{"sh", "-c", "touch ran"}, Dir: dir})
			require.ErrorIs(t, err, sandbox.ErrRefused, "Dir %q", dir)
			assert.Equal(t, sandbox.ExitDenied, res.ExitCode, "Dir %q", dir)
			assert.True(t, res.Escaped(), "Dir %q: the refusal must be reported as a violation", dir)
		}
		assert.NoFileExists(t, filepath.Join(outside, "ran"))
		assert.NoFileExists(t, filepath.Join(filepath.Dir(root), "ran"))
	}},
	{"WorkdirInDeniedPathIsDenied", func(t *testing.T, sb sandbox.Sandbox, root string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", ".ssh"), 0o755))
		for _, dir := range []string{"sub/.ssh", "sub/.SSH", filepath.Join(root, "sub", ".ssh")} {
			res, err := run(t, sb, sandbox.Command{Args: []string{"sh", "-c", "touch ran"}, Dir: dir})
			require.ErrorIs(t, err, sandbox.ErrRefused, "Dir %q: denied paths match components case-insensitively", dir)
			assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
		}
		assert.NoFileExists(t, filepath.Join(root, "sub", ".ssh", "ran"))
	}},
	{"ConcurrentRuns", func(t *testing.T, sb sandbox.Sandbox, root string) {
		errs := make(chan error, 4)
		outs := make(chan []byte, 4)
		for i := 0; i < 4; i++ {
			go func(i int) {
				res, err := sb.Run(context.Background(), sandbox.Command{Args: []string{"printf", "%d", string(rune('0' + i))}, Timeout: time.Minute})
				errs <- err
				outs <- res.Stdout
			}(i)
		}
		var all [][]byte
		for i := 0; i < 4; i++ {
			require.NoError(t, <-errs)
			all = append(all, <-outs)
		}
		joined := string(bytes.Join(all, nil))
		for _, d := range []string{"0", "1", "2", "3"} {
			assert.Contains(t, joined, d)
		}
	}},
}
