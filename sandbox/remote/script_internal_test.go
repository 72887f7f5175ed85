//go:build unix

package remote

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// argvRecorder writes a script to dir that records its arguments,
// NUL-terminated, to the file named by its first argument.
func argvRecorder(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "record-argv")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nout=$1; shift\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$out\"\n"), 0o755))
	return p
}

// runScriptLocally runs a remote script with a local shell, as sshd
// runs a command with the user's login shell.
func runScriptLocally(t *testing.T, shellPath string, s remoteScript, stdin string, timeout time.Duration) (sandbox.Result, error) {
	t.Helper()
	var err error
	s.nonce, err = newNonce()
	require.NoError(t, err)
	if s.maxOutput == 0 {
		s.maxOutput = sandbox.DefaultMaxOutput
	}
	script, err := s.build()
	require.NoError(t, err)
	r := scriptRun{
		conf: sandbox.Confinement{Backend: "test"}, cli: shellPath, path: shellPath,
		argv: []string{shellPath, "-c", script}, env: os.Environ(), stdin: strings.NewReader(stdin),
		timeout: timeout, maxOutput: s.maxOutput, nonce: s.nonce, files: s.files,
	}
	return r.run(context.Background())
}

func TestRemoteScriptArgvArrivesVerbatim(t *testing.T) {
	t.Parallel()
	for _, files := range []bool{false, true} {
		root := t.TempDir()
		rec := argvRecorder(t, root)
		out := filepath.Join(root, "argv")
		res, err := runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, args: append([]string{rec, out}, hostileArgs...), files: files}, "", time.Minute)
		require.NoError(t, err, "files=%v: %s", files, res.Stderr)
		require.Equal(t, 0, res.ExitCode, "files=%v: %s", files, res.Stderr)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, hostileArgs, splitNUL(got), "files=%v", files)
	}
}

func TestRemoteScriptOutputAndStatus(t *testing.T) {
	t.Parallel()
	for _, files := range []bool{false, true} {
		root := t.TempDir()
		res, err := runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, files: files,
			args: []string{"sh", "-c", "printf out; printf err >&2; exit 7"}}, "", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, 7, res.ExitCode, "files=%v", files)
		assert.Equal(t, "out", string(res.Stdout), "output without a final newline keeps its last byte")
		assert.Equal(t, "err", string(res.Stderr))

		res, err = runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, files: files, maxOutput: 100,
			args: []string{"sh", "-c", "head -c 5000 /dev/zero; head -c 100 /dev/zero >&2"}}, "", time.Minute)
		require.NoError(t, err)
		assert.Len(t, res.Stdout, 100)
		assert.True(t, res.StdoutTruncated, "files=%v", files)
		assert.Len(t, res.Stderr, 100)
		assert.False(t, res.StderrTruncated, "exactly the cap is not truncated (files=%v)", files)

		res, err = runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, files: files,
			args: []string{"reins-no-such-program"}}, "", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
		assert.Contains(t, string(res.Stderr), "reins-no-such-program")
	}
}

func TestRemoteScriptStdinAndEnv(t *testing.T) {
	t.Setenv("REINS_KEEP_ME", "kept")
	t.Setenv("REINS_DROP_ME", "dropped")
	root := t.TempDir()
	res, err := runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, args: []string{"cat"}}, "from stdin", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "from stdin", string(res.Stdout))

	clear, keep, set := remoteEnv([]string{"PATH", "REINS_KEEP_ME", "REINS_SET", "NOT-AN-IDENT"}, []string{"REINS_SET=a b'c", "REINS_OTHER=x", "NOT-AN-IDENT=y"})
	res, err = runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, clearEnv: clear, keep: keep, set: set, args: []string{"env"}}, "", time.Minute)
	require.NoError(t, err)
	env := string(res.Stdout)
	assert.Contains(t, env, "REINS_KEEP_ME=kept\n")
	assert.Contains(t, env, "REINS_SET=a b'c\n")
	assert.Contains(t, env, "NOT-AN-IDENT=y\n")
	assert.NotContains(t, env, "dropped")
	assert.Contains(t, env, "REINS_OTHER=x\n", "Command.Env is honoured, allowlisted or not")
	assert.NotContains(t, env, "__reins", "the script's own variables are not exported")
}

func TestRemoteScriptWorkdirChecks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", ".Git"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "escape")))
	require.NoError(t, os.Symlink(filepath.Join(root, "sub", ".Git"), filepath.Join(root, "innocent")))
	m, err := pathmatch.New(nil, nil)
	require.NoError(t, err)
	denied, err := deniedCasePatterns(m)
	require.NoError(t, err)
	tests := []struct {
		dir  string
		kind sandbox.ViolationKind
	}{
		{"escape", sandbox.ViolationOutsideRoot},
		{"innocent", sandbox.ViolationDeniedPath},
		{"missing", sandbox.ViolationUncheckable},
	}
	for _, tt := range tests {
		res, err := runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: filepath.Join(root, tt.dir), denied: denied, args: []string{"touch", "ran"}}, "", time.Minute)
		require.ErrorIs(t, err, sandbox.ErrRefused, "dir %s", tt.dir)
		assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
		require.Len(t, res.Violations, 1)
		assert.Equal(t, tt.kind, res.Violations[0].Kind, "dir %s", tt.dir)
	}
	assert.NoFileExists(t, filepath.Join(outside, "ran"))
	res, err := runScriptLocally(t, "/bin/bash", remoteScript{root: filepath.Join(root, "nope"), dir: filepath.Join(root, "nope"), args: []string{"true"}}, "", time.Minute)
	require.ErrorIs(t, err, sandbox.ErrUnavailable, "a missing root is a misconfigured backend")
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
}

func TestRemoteScriptUnderPOSIXShells(t *testing.T) {
	t.Parallel()
	// Printable arguments need no $'...': any POSIX shell runs the script.
	for _, sh := range []string{"/bin/sh", "/bin/dash"} {
		if _, err := os.Stat(sh); err != nil {
			continue
		}
		root := t.TempDir()
		res, err := runScriptLocally(t, sh, remoteScript{root: root, dir: root, args: []string{"printf", "%s|", "a b", "$HOME", "it's"}}, "", time.Minute)
		require.NoError(t, err, "%s: %s", sh, res.Stderr)
		assert.Equal(t, "a b|$HOME|it's|", string(res.Stdout), sh)
	}
}

func TestFrameChatterAndSplitWrites(t *testing.T) {
	t.Parallel()
	nonce := "reinsabc"
	f := newFrame(nonce, 10)
	stream := "cli banner\n" + nonce + ":start:42\n" + "hello world, more than ten" + nonce + ":exit:3\ncli goodbye\n"
	for i := 0; i < len(stream); i += 3 {
		_, _ = f.Write([]byte(stream[i:min(i+3, len(stream))]))
	}
	r := f.result()
	assert.True(t, r.started)
	assert.True(t, r.ended)
	assert.Equal(t, "exit:3", r.kind)
	assert.Equal(t, "hello worl", string(r.out))
	assert.True(t, r.truncated)
	assert.Equal(t, "cli banner\ncli goodbye\n", string(r.chatter))
	arg, ok := f.startArgNow()
	assert.True(t, ok)
	assert.Equal(t, "42", arg)

	g := newFrame(nonce, 100)
	_, _ = g.Write([]byte("ssh: connect to host x port 22: Connection refused\n"))
	r = g.result()
	assert.False(t, r.started)
	assert.False(t, r.ended)
	assert.Contains(t, string(r.chatter), "Connection refused")
}

func TestDeniedCasePatterns(t *testing.T) {
	t.Parallel()
	m, err := pathmatch.New([]string{"secrets/prod json", "/etc/shadow", "a*b"}, nil)
	require.NoError(t, err)
	pats, err := deniedCasePatterns(m)
	require.NoError(t, err)
	script := "case \"$1/\" in " + strings.Join(pats, "|") + ") echo denied;; *) echo ok;; esac"
	for dir, want := range map[string]string{
		"/w/.git": "denied", "/w/x/.GIT/y": "denied", "/w/.gitx": "ok", "/w/secrets/PROD JSON": "denied",
		"/etc/shadow": "denied", "/w/etc/shadow": "ok", "/w/a*b": "denied", "/w/axb": "ok", "/w/ID_RSA": "denied",
	} {
		out, err := exec.Command("/bin/sh", "-c", script, "sh", dir).Output()
		require.NoError(t, err)
		assert.Equal(t, want, string(bytes.TrimSpace(out)), "dir %q", dir)
	}
	_, err = pathmatch.New([]string{"bad\nname"}, nil)
	require.NoError(t, err)
	m2, _ := pathmatch.New([]string{"bad\nname"}, nil)
	_, err = deniedCasePatterns(m2)
	assert.Error(t, err, "control characters cannot be matched portably")
}

func TestRemoteScriptHandshake(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	nonce, err := newNonce()
	require.NoError(t, err)
	script, err := remoteScript{nonce: nonce, root: root, dir: root, handshake: true, maxOutput: 100,
		args: []string{"touch", "ran"}}.build()
	require.NoError(t, err)
	run := func(stdin string) (sandbox.Result, error) {
		r := scriptRun{conf: sandbox.Confinement{Backend: "test"}, cli: "bash", path: "/bin/bash",
			argv: []string{"/bin/bash", "-c", script}, stdin: strings.NewReader(stdin),
			timeout: time.Minute, maxOutput: 100, nonce: nonce}
		return r.run(context.Background())
	}
	for _, stdin := range []string{"", "stop\n", "go x 1\n", "go 1;rm 1\n"} {
		res, err := run(stdin)
		require.ErrorIs(t, err, sandbox.ErrUnavailable, "stdin %q", stdin)
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
		assert.NoFileExists(t, filepath.Join(root, "ran"), "without a go line the command never starts (stdin %q)", stdin)
	}
	res, err := run("go 30.000 30\n")
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, 0, res.ExitCode)
	assert.FileExists(t, filepath.Join(root, "ran"))

	// The real sender: the go line follows the opening line, then stdin.
	nonce2, err := newNonce()
	require.NoError(t, err)
	script2, err := remoteScript{nonce: nonce2, root: root, dir: root, handshake: true, maxOutput: 100, args: []string{"cat"}}.build()
	require.NoError(t, err)
	r := scriptRun{conf: sandbox.Confinement{Backend: "test"}, cli: "bash", path: "/bin/bash", argv: []string{"/bin/bash", "-c", script2},
		stdin: strings.NewReader("payload"), timeout: time.Minute, maxOutput: 100, nonce: nonce2, handshake: true}
	res, err = r.run(context.Background())
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, "payload", string(res.Stdout))
}

func TestRemoteScriptWatchdog(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	start := time.Now()
	res, err := runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, watchdog: 500 * time.Millisecond,
		args: []string{"sh", "-c", "(sleep 2; touch late) & sleep 30"}}, "", time.Minute)
	require.ErrorIs(t, err, sandbox.ErrUnavailable, "a command killed by the watchdog reports no status")
	assert.NotZero(t, res.ExitCode)
	assert.Less(t, time.Since(start), 10*time.Second)
	time.Sleep(2 * time.Second)
	assert.NoFileExists(t, filepath.Join(root, "late"))
}

func TestRemoteScriptShellNoticesStayOut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	res, err := runScriptLocally(t, "/bin/bash", remoteScript{root: root, dir: root, args: []string{"sh", "-c", "kill -TERM $$"}}, "", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 143, res.ExitCode)
	assert.Empty(t, res.Stderr, "the wrapper's own job notices are not the command's stderr")
}

// TestRemoteScriptWatchdogStops checks that a command that ends in time
// leaves no watchdog (nor its sleep) behind. The script runs in a session
// of its own (setsid), out of reach of the test's own process-group kill.
func TestRemoteScriptWatchdogStops(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("needs setsid and /proc (Linux)")
	}
	setsid := testenv.RequireTool(t, "setsid", "the watchdog test runs its script in a session of its own (util-linux); .ci/run installs it")
	root := t.TempDir()
	nonce, err := newNonce()
	require.NoError(t, err)
	// 93.217 seconds marks this test's watchdog sleep in the process list.
	script, err := remoteScript{nonce: nonce, root: root, dir: root, watchdog: 93217 * time.Millisecond, files: true,
		maxOutput: 100, args: []string{"true"}}.build()
	require.NoError(t, err)
	r := scriptRun{conf: sandbox.Confinement{Backend: "test"}, cli: "sh", path: setsid, argv: []string{setsid, "-w", "/bin/sh", "-c", script},
		timeout: time.Minute, maxOutput: 100, nonce: nonce, files: true}
	res, err := r.run(context.Background())
	require.NoError(t, err, "%s", res.Stderr)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if !processRunning(t, "sleep\x0093.217") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watchdog's sleep outlived the command")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processRunning reports whether a process's command line (NUL-separated
// arguments) contains s.
func processRunning(t *testing.T, s string) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
