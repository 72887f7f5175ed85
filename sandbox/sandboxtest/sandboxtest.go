// Package sandboxtest is the conformance kit for [sandbox.Sandbox]
// backends: every built-in backend passes it, and a third-party backend
// (a container, a remote host, a vendor CLI) can run it from its own
// tests with [Run].
//
// The kit checks the contract written on [sandbox.Sandbox]: argument
// vectors are not re-parsed by a shell, exit codes are honest (127 and
// [sandbox.ErrUnavailable] when something is missing, never a fabricated
// 0), timeouts and cancellation kill the command and what it started,
// output is capped, the environment is filtered by the allowlist, the
// working directory is confined to the root, and [sandbox.Command.Confine]
// is either enforced (only its Writable paths writable, a private
// temporary directory, no network when it says so) or, by a backend
// that is not [sandbox.Enforcing], refused with 127.
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
	"net"
	"os"
	"path/filepath"
	"strconv"
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
// sleep, touch, rm, mkdir and bash (for /dev/tcp) inside the sandbox. The root that newSandbox returns
// must be a directory on this host that the backend's commands see as
// their working root (a bind mount for a container backend), because the
// kit checks effects, such as files a killed process would have created,
// from the host side. Run sets [EnvSecret] in the process
// environment, so it must not be called from a parallel test; its cases
// run in parallel with each other.
func Run(t *testing.T, newSandbox NewFunc) {
	t.Helper()
	t.Setenv(EnvSecret, "host-secret-value")

	sb, root := newSandbox(t, Policy())
	if !sandbox.Enforcing(sb) {
		checkConfineRefused(t, sb, root)
	}
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
			p := Policy()
			if c.policy != nil {
				c.policy(&p)
			}
			sb, root := newSandbox(t, p)
			c.run(t, sb, root)
		})
	}
}

// checkConfineRefused checks that a backend that does not enforce
// [sandbox.Command.Confine] refuses a command that has one, honestly
// (127, [sandbox.ErrUnavailable], a reason) and without running it.
func checkConfineRefused(t *testing.T, sb sandbox.Sandbox, root string) {
	t.Helper()
	res, err := sb.Run(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "touch ran"}, Timeout: time.Minute, Confine: &sandbox.Confine{}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable, "a backend that does not enforce Confine must refuse a command that has one (Enforcing is false)")
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.NotEmpty(t, res.Stderr, "the refusal must say why on stderr")
	assert.NoFileExists(t, filepath.Join(root, "ran"), "the refused command ran")
}

// enforcing skips the rest of a Confine case for a backend that does not
// enforce Confine: its refusal is checked by Run for every backend.
func enforcing(t *testing.T, sb sandbox.Sandbox) bool {
	t.Helper()
	if !sandbox.Enforcing(sb) {
		t.Log("the backend does not enforce Confine: its refusal was checked instead")
		return false
	}
	return true
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func checkUnavailable(t *testing.T, res sandbox.Result, err error) {
	t.Helper()
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode, "an unavailable backend must report exit code 127")
	assert.NotEmpty(t, res.Stderr, "an unavailable backend must say what is missing on stderr")
	assert.NotEmpty(t, err.Error())
}

type kitCase struct {
	name string
	// policy, if set, changes the kit's policy for this case.
	policy func(*sandbox.FsNetPolicy)
	run    func(t *testing.T, sb sandbox.Sandbox, root string)
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
	{name: "ConfineReadOnly", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		if !enforcing(t, sb) {
			return
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, "existing"), []byte("original"), 0o644))
		res, err := run(t, sb, sandbox.Command{Confine: &sandbox.Confine{}, Args: []string{"sh", "-c",
			`echo pwned > existing; rm -f existing; touch new; mkdir newdir; t="${TMPDIR:-/tmp}/kit"; echo scratch > "$t" && cat "$t"; exit 0`}})
		require.NoError(t, err, "%s", res.Stderr)
		assert.Equal(t, "scratch\n", string(res.Stdout), "a confined command gets a writable private temporary directory")
		assert.Equal(t, "original", readFile(t, filepath.Join(root, "existing")), "a read-only Confine let the command write the workspace")
		assert.NoFileExists(t, filepath.Join(root, "new"))
		assert.NoDirExists(t, filepath.Join(root, "newdir"))
		assert.True(t, res.Confinement.Has(sandbox.LayerConfine), "Confinement must say Confine was enforced: %v", res.Confinement.Enforced)
	}},
	{name: "ConfineWriteOutsideWritableFails", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		if !enforcing(t, sb) {
			return
		}
		// w is a writable directory, file a writable file, new/made a
		// file to create in new, whose existing entry old stays
		// read-only; everything else in the root is read-only.
		for _, d := range []string{"w", "new"} {
			require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
		}
		for _, f := range []string{"file", "other", "new/old"} {
			require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("original"), 0o644))
		}
		res, err := run(t, sb, sandbox.Command{
			Confine: &sandbox.Confine{Writable: []string{filepath.Join(root, "w"), filepath.Join(root, "file"), filepath.Join(root, "new", "made")}},
			Args: []string{"sh", "-c", `echo in > w/in; echo written > file; echo made > new/made; ` +
				`echo pwned > other; echo pwned > new/old; rm -f new/old; echo pwned > outside; mkdir w2; exit 0`}})
		require.NoError(t, err, "%s", res.Stderr)
		assert.Equal(t, "in\n", readFile(t, filepath.Join(root, "w", "in")), "a Writable directory must be writable")
		assert.Equal(t, "written\n", readFile(t, filepath.Join(root, "file")), "a Writable file must be writable")
		assert.Equal(t, "made\n", readFile(t, filepath.Join(root, "new", "made")), "a Writable file that does not exist must be creatable")
		assert.Equal(t, "original", readFile(t, filepath.Join(root, "other")), "a file outside Writable was written")
		assert.Equal(t, "original", readFile(t, filepath.Join(root, "new", "old")), "an existing file next to a Writable one was written or replaced")
		assert.NoFileExists(t, filepath.Join(root, "outside"), "a file outside Writable was created")
		assert.NoDirExists(t, filepath.Join(root, "w2"), "a directory outside Writable was created")
	}},
	{name: "ConfineNetworkOff", policy: func(p *sandbox.FsNetPolicy) { p.AllowNetwork = true }, run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		if !enforcing(t, sb) {
			return
		}
		// A listener on this host's loopback: a backend that shares the
		// host's network (the policy allows it) must cut the command
		// off when Confine.Network is false.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		accepted := make(chan struct{}, 1)
		go func() {
			if c, err := l.Accept(); err == nil {
				accepted <- struct{}{}
				c.Close()
			}
		}()
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		res, err := run(t, sb, sandbox.Command{Confine: &sandbox.Confine{},
			Args: []string{"bash", "-c", "echo tried; exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected; exit 0"}})
		if err != nil {
			// A backend may refuse the attempt (a seccomp refusal), but
			// never fabricate anything.
			assert.NotZero(t, res.ExitCode)
		}
		assert.Contains(t, string(res.Stdout), "tried", "the command must run (the kit needs bash in the sandbox): %s", res.Stderr)
		assert.NotContains(t, string(res.Stdout), "connected", "Confine.Network false let the command connect")
		select {
		case <-accepted:
			t.Error("the host's listener accepted a connection from a command whose Confine denies the network")
		default:
		}
	}},
	{name: "ArgvIsNotReparsed", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{Args: []string{"printf", "%s|", "a b", "$HOME", ";echo no", "`id`"}})
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode)
		assert.Equal(t, "a b|$HOME|;echo no|`id`|", string(res.Stdout))
		assert.NotEmpty(t, res.Confinement.Backend, "Confinement.Backend must name the backend")
	}},
	{name: "ExitCodeIsReported", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{Args: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
		require.NoError(t, err)
		assert.Equal(t, 3, res.ExitCode)
		assert.Equal(t, "out\n", string(res.Stdout))
		assert.Equal(t, "err\n", string(res.Stderr))
		assert.False(t, res.TimedOut)
		assert.Positive(t, res.Duration)
	}},
	{name: "MissingProgramIsHonest", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, _ := run(t, sb, sandbox.Command{Args: []string{"reins-sandboxtest-no-such-program"}})
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode, "a missing program must give exit code 127")
		assert.NotEmpty(t, res.Stderr, "a missing program must be explained on stderr")
	}},
	{name: "InvalidCommandIsAnError", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		for _, cmd := range []sandbox.Command{{}, {Args: []string{""}}, {Args: []string{"true"}, MaxOutput: -1}, {Args: []string{"true"}, Env: []string{"NOEQUALS"}}} {
			res, err := sb.Run(context.Background(), cmd)
			require.ErrorIs(t, err, sandbox.ErrInvalidCommand, "Run(%+v)", cmd)
			assert.NotZero(t, res.ExitCode)
		}
	}},
	{name: "StdinIsPassed", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		res, err := run(t, sb, sandbox.Command{Args: []string{"cat"}, Stdin: strings.NewReader("from stdin")})
		require.NoError(t, err)
		assert.Equal(t, "from stdin", string(res.Stdout))
	}},
	{name: "TimeoutKillsTheGroup", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
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
	{name: "CancelKillsTheGroup", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		res, _ := sb.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "(sleep 1; touch late) & sleep 30"}, Timeout: time.Minute})
		assert.True(t, res.TimedOut, "TimedOut after cancel")
		assert.NotZero(t, res.ExitCode)
		time.Sleep(1500 * time.Millisecond)
		assert.NoFileExists(t, filepath.Join(root, "late"), "a background process outlived the cancel")
	}},
	{name: "OutputIsCapped", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
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
	{name: "EnvIsFiltered", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
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
	{name: "WorkdirInsideRoot", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
		res, err := run(t, sb, sandbox.Command{Args: []string{"pwd", "-P"}, Dir: "sub"})
		require.NoError(t, err, "%s", res.Stderr)
		resolvedRoot, err := filepath.EvalSymlinks(root)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(resolvedRoot, "sub"), strings.TrimSpace(string(res.Stdout)))
	}},
	{name: "WorkdirOutsideRootIsDenied", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
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
	{name: "WorkdirInDeniedPathIsDenied", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", ".ssh"), 0o755))
		for _, dir := range []string{"sub/.ssh", "sub/.SSH", filepath.Join(root, "sub", ".ssh")} {
			res, err := run(t, sb, sandbox.Command{Args: []string{"sh", "-c", "touch ran"}, Dir: dir})
			require.ErrorIs(t, err, sandbox.ErrRefused, "Dir %q: denied paths match components case-insensitively", dir)
			assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
		}
		assert.NoFileExists(t, filepath.Join(root, "sub", ".ssh", "ran"))
	}},
	{name: "ConcurrentRuns", run: func(t *testing.T, sb sandbox.Sandbox, root string) {
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
