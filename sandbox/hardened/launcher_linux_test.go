//go:build linux

package hardened_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

// runOK runs script with sh in sb and requires it to succeed.
func runOK(t *testing.T, sb sandbox.Sandbox, script string) sandbox.Result {
	t.Helper()
	res, err := runCmd(t, sb, sandbox.Command{Args: sh(script), Timeout: time.Minute})
	require.NoError(t, err, "%s", res.Stderr)
	require.Equal(t, 0, res.ExitCode, "stdout: %s\nstderr: %s", res.Stdout, res.Stderr)
	return res
}

// TestLauncherServesRunAfterRun: consecutive runs share one launcher, and
// none sees what the one before left in /tmp, HOME, /dev/shm or System V
// IPC.
func TestLauncherServesRunAfterRun(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "ipcmk", "the test leaves a shared memory segment behind (util-linux)")
	sb := newSandbox(t, t.TempDir())
	runOK(t, sb, `echo a > /tmp/left && echo b > "$HOME/left" && mkdir -p /tmp/d/e "$HOME/.cache/go-build" && echo c > /dev/shm/left && chmod 0 /tmp/d && ipcmk -M 4096 >/dev/null`)
	res := runOK(t, sb, `for f in /tmp/left "$HOME/left" /tmp/d /dev/shm/left; do test -e "$f" && echo "left: $f"; done; test -d "$HOME/.cache" || echo "no cache dir"; ipcs -m | grep '^0x' | grep -v '^0x00000000 ' && echo "left: shm"; echo checked`)
	assert.Equal(t, "checked\n", string(res.Stdout))
	// chmod 0 on a directory of the private /tmp may leave it impossible
	// to empty for an unprivileged launcher: then a new one serves.
	if os.Geteuid() == 0 {
		assert.EqualValues(t, 1, hardened.LauncherStarts(sb), "the runs share a launcher")
	}
	assert.True(t, res.Confinement.Has(sandbox.LayerLandlock) && res.Confinement.Has(sandbox.LayerSeccomp) && res.Confinement.Has(sandbox.LayerPIDNS))
}

// TestNoPOSIXMessageQueues: a POSIX message queue would live in the IPC
// namespace the runs of one launcher share, outside everything a run
// resets, so the sandbox has none: mq_open fails with ENOSYS, as on a
// kernel without them, and that is not a violation.
func TestNoPOSIXMessageQueues(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "python3", "the test calls mq_open through ctypes")
	sb := newSandbox(t, t.TempDir())
	script := `python3 -c 'import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.mq_open(b"/reins-left", os.O_CREAT | os.O_RDWR, 0o600, None)
print(fd, errno.errorcode.get(ctypes.get_errno()))'`
	for range 2 {
		res := runOK(t, sb, script)
		assert.Equal(t, "-1 ENOSYS\n", string(res.Stdout))
		assert.Empty(t, res.Violations)
	}
}

// TestLauncherEndsWhatARunLeft: a command that exits normally and leaves
// daemons behind (setsid, double fork) does not leave them running.
func TestLauncherEndsWhatARunLeft(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, t.TempDir())
	marker := uniqueMarker("41")
	runOK(t, sb, "setsid sleep "+marker+" & (sleep "+marker+" &) ; nohup sleep "+marker+" >/dev/null 2>&1 & echo started")
	testenv.WaitGone(t, marker, 30*time.Second)
	runOK(t, sb, "true")
	assert.EqualValues(t, 1, hardened.LauncherStarts(sb))
}

// TestLauncherMasksWhatAppearsLater: a secret that appears in the
// workspace between runs, or replaces a masked one, is masked in the
// next run; a run that creates one reports it and the next one cannot
// read it either.
func TestLauncherMasksWhatAppearsLater(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("OLD-SECRET"), 0o600))
	sb := newSandbox(t, root)
	res := runOK(t, sb, "cat .env; echo end")
	assert.Equal(t, "end\n", string(res.Stdout))

	// The host replaces the masked file.
	require.NoError(t, os.Remove(filepath.Join(root, ".env")))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("NEW-SECRET"), 0o600))
	// The host adds another secret.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", ".env.production"), []byte("PROD-SECRET"), 0o600))
	res = runOK(t, sb, "cat .env sub/.env.production; echo end")
	assert.Equal(t, "end\n", string(res.Stdout))

	// The command creates one: reported, and masked for the next run.
	res = runOK(t, sb, "printf RUN-SECRET > .env.local")
	assert.True(t, hasViolation(res, sandbox.ViolationProtectedCreated, ".env.local"), "violations: %v", res.Violations)
	res = runOK(t, sb, "cat .env.local; echo end")
	assert.Equal(t, "end\n", string(res.Stdout))
	assert.Empty(t, res.Violations)
	assert.EqualValues(t, 3, hardened.LauncherStarts(sb), "a launcher for the first run, one after the host's changes, one after the command's")
}

// TestLauncherRunsInParallel: overlapping runs each get a launcher.
func TestLauncherRunsInParallel(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sb := newSandbox(t, root)
	var wg sync.WaitGroup
	results := make([]sandbox.Result, 3)
	errs := make([]error, 3)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = runCmd(t, sb, sandbox.Command{Args: sh(fmt.Sprintf("echo %d > f%d; cat f%d", i, i, i)), Timeout: time.Minute})
		}()
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i], "%s", results[i].Stderr)
		assert.Equal(t, fmt.Sprintf("%d\n", i), string(results[i].Stdout))
	}
	assert.LessOrEqual(t, hardened.LauncherStarts(sb), int64(3))
}

// TestLauncherExecErrors: a command that cannot be started is 127 (not
// found) or 126 (not executable), and the launcher serves the next run.
func TestLauncherExecErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "noexec"), []byte("#!/bin/sh\n"), 0o644))
	sb := newSandbox(t, root)
	res, err := runCmd(t, sb, sandbox.Command{Args: []string{"no-such-program-4711"}})
	require.NoError(t, err)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "no-such-program-4711")
	res, err = runCmd(t, sb, sandbox.Command{Args: []string{"./noexec"}})
	require.NoError(t, err)
	assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
	res = runOK(t, sb, "echo fine")
	assert.Equal(t, "fine\n", string(res.Stdout))
	assert.EqualValues(t, 1, hardened.LauncherStarts(sb))
}

// TestLauncherStdin: no stdin reads as empty; a reader and a file reach
// the command.
func TestLauncherStdin(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, t.TempDir())
	res, err := runCmd(t, sb, sandbox.Command{Args: []string{"cat"}})
	require.NoError(t, err)
	assert.Empty(t, res.Stdout)
	res, err = runCmd(t, sb, sandbox.Command{Args: []string{"cat"}, Stdin: strings.NewReader("from a reader")})
	require.NoError(t, err)
	assert.Equal(t, "from a reader", string(res.Stdout))
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	require.NoError(t, err)
	_, err = f.WriteString("from a file")
	require.NoError(t, err)
	_, err = f.Seek(0, 0)
	require.NoError(t, err)
	defer f.Close()
	res, err = runCmd(t, sb, sandbox.Command{Args: []string{"cat"}, Stdin: f})
	require.NoError(t, err)
	assert.Equal(t, "from a file", string(res.Stdout))
}

// TestCloseEndsLaunchers: after Close no launcher of the sandbox is
// left, and a later run still works.
func TestCloseEndsLaunchers(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, t.TempDir())
	runOK(t, sb, "true")
	pids := hardened.LauncherPIDs(sb)
	require.Len(t, pids, 1)
	require.NoError(t, sb.Close())
	require.NoError(t, sb.Close(), "Close twice")
	for _, pid := range pids {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		assert.True(t, os.IsNotExist(err), "launcher %d is still there", pid)
	}
	runOK(t, sb, "true")
	assert.Empty(t, hardened.LauncherPIDs(sb), "a closed sandbox keeps no launcher")
}

// TestPerRunChild runs the one-shot path that resource limits take (a
// child of its own per run): confinement, refusals, limits.
func TestPerRunChild(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	sb := e.sandbox(t, func(c *hardened.Config) { c.Limits = hardened.Limits{FileSize: 1024} })
	res, err := runCmd(t, sb, sandbox.Command{Args: sh("head -c 4096 /dev/zero > big; echo $? ; echo x > " + e.outside + "/target; unshare -U true; echo done")})
	require.NoError(t, err, "%s", res.Stderr)
	assertNotEscaped(t, res, err)
	assert.Contains(t, string(res.Stdout), "done")
	fi, err := os.Stat(filepath.Join(e.root, "big"))
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(1024), "RLIMIT_FSIZE")
	assert.Equal(t, "original", fileContent(t, filepath.Join(e.outside, "target")))
	assert.True(t, hasViolation(res, sandbox.ViolationRefusedSyscall, "unshare"), "violations: %v", res.Violations)
	assert.EqualValues(t, 0, hardened.LauncherStarts(sb), "limits take the per-run path")

	// The same path on request, without limits.
	sb2 := e.sandbox(t)
	hardened.SetPerRun(sb2)
	marker := uniqueMarker("43")
	res = runOK(t, sb2, "setsid sleep "+marker+" & echo x > /tmp/x; echo ok")
	assert.Equal(t, "ok\n", string(res.Stdout))
	testenv.WaitGone(t, marker, 30*time.Second)
	assert.EqualValues(t, 0, hardened.LauncherStarts(sb2))
}

// TestLauncherSurvivesSignals: a command cannot end its launcher (pid 1
// of the namespace) with a signal to suppress the report of its refused
// calls, and the commands start with the default signal dispositions.
func TestLauncherSurvivesSignals(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, t.TempDir())
	res := runOK(t, sb, "unshare -U true 2>/dev/null; for s in TERM INT QUIT HUP USR1 USR2 SEGV BUS ABRT PIPE ALRM SYS TRAP KILL STOP; do kill -$s 1 2>/dev/null; done; echo alive")
	assert.Equal(t, "alive\n", string(res.Stdout))
	assert.True(t, hasViolation(res, sandbox.ViolationRefusedSyscall, "unshare"), "violations: %v", res.Violations)
	res = runOK(t, sb, "grep -E '^Sig(Ign|Blk)' /proc/self/status; sleep 30 & kill -TERM $!; wait $!; echo status $?")
	assert.Equal(t, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\nstatus 143\n", string(res.Stdout))
	assert.EqualValues(t, 1, hardened.LauncherStarts(sb))
}

// uniqueMarker is a number, for sleep's argument, that names one test
// in one test process: whole, then this process's pid and the time, so
// that the root and the non-root runs never look for each other's
// processes.
func uniqueMarker(whole string) string {
	return fmt.Sprintf("%s.%d%05d", whole, os.Getpid(), time.Now().UnixNano()%100000)
}
