//go:build unix

package checkpoint_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

// TestHelperProcess is not a test: the lock tests re-execute the test
// binary with helperEnv set to run it as a second process.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	require.NotEmpty(t, mode, "TestHelperProcess runs only when the lock tests re-execute the binary (TestMain skips it otherwise)")
	dir, shadow := os.Getenv("REINS_DIR"), os.Getenv("REINS_SHADOW")
	switch mode {
	case "hold":
		// Take the workspace lock the way a Checkpointer does, report, and
		// hold it until stdin closes.
		c, err := checkpoint.New(context.Background(), dir, &checkpoint.Options{ShadowRoot: shadow})
		require.NoError(t, err)
		_ = c
		matches, _ := filepath.Glob(filepath.Join(shadow, "*", "lock"))
		require.Len(t, matches, 1)
		f, err := os.OpenFile(matches[0], os.O_RDWR, 0)
		require.NoError(t, err)
		require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
		fmt.Println("locked")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	case "work":
		n, _ := strconv.Atoi(os.Getenv("REINS_N"))
		c, err := checkpoint.New(context.Background(), dir, &checkpoint.Options{ShadowRoot: shadow})
		require.NoError(t, err)
		for i := 0; i < n; i++ {
			writeFile(t, dir, fmt.Sprintf("helper/%d.txt", i), "from the helper", 0o644)
			cp, err := c.Create(context.Background(), "helper")
			require.NoError(t, err)
			fmt.Println(cp.ID)
		}
	}
}

func helperCmd(t *testing.T, mode, dir, shadow string, extra ...string) *exec.Cmd {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "REINS_DIR="+dir, "REINS_SHADOW="+shadow)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

// A second process holding the lock makes operations wait, then fail with
// ErrLocked after LockTimeout; once it lets go they succeed.
func TestLockHeldByAnotherProcess(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	shadow := t.TempDir()
	c := newCheckpointer(t, dir, &checkpoint.Options{ShadowRoot: shadow, LockTimeout: 300 * time.Millisecond})

	cmd := helperCmd(t, "hold", dir, shadow)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	start := time.Now()
	_, err = c.Create(ctx, "blocked")
	require.ErrorIs(t, err, checkpoint.ErrLocked)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = c.Create(cctx, "cancelled")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	_, err = c.Create(ctx, "free again")
	require.NoError(t, err)
}

// Two processes and several goroutines checkpointing the same workspace
// at once: every operation succeeds (git would fail on a contended
// index.lock if they were not serialized) and every checkpoint is kept.
func TestConcurrentProcesses(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	shadow := t.TempDir()
	c := newCheckpointer(t, dir, &checkpoint.Options{ShadowRoot: shadow})
	const n = 8
	cmd := helperCmd(t, "work", dir, shadow, "REINS_N="+strconv.Itoa(n))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	errs := make(chan error, 2*n)
	for g := 0; g < 2; g++ {
		go func() {
			for i := 0; i < n; i++ {
				p := filepath.Join(dir, fmt.Sprintf("main%d", g), fmt.Sprintf("%d.txt", i))
				err := os.MkdirAll(filepath.Dir(p), 0o755)
				if err == nil {
					err = os.WriteFile(p, []byte("from the test"), 0o644)
				}
				if err == nil {
					_, err = c.Create(ctx, "main")
				}
				errs <- err
			}
		}()
	}
	var helperIDs []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if checkpoint.ValidID(sc.Text()) {
			helperIDs = append(helperIDs, sc.Text())
		}
	}
	require.NoError(t, cmd.Wait())
	for i := 0; i < 2*n; i++ {
		require.NoError(t, <-errs)
	}
	require.Len(t, helperIDs, n)
	list, err := c.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 3*n)
	// The history is usable: the oldest checkpoint restores.
	oldest := list[len(list)-1]
	require.NoError(t, c.Restore(ctx, oldest.ID))
}
