//go:build linux && (amd64 || arm64)

package seccomp

import (
	"os"
	"os/signal"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSuperviseOutlivesWithdrawnNotifications: a refused call that a
// signal interrupts before the supervisor received it is withdrawn by
// the kernel and made again when the call restarts, but the kernel still
// counts the withdrawn notification, so a later receive finds nothing
// and fails with ENOENT. The supervisor must go on: if it stopped there,
// every later refused call would wait forever for an answer. A Go
// command meets this whenever a refused call outlasts the runtime's
// 10 ms preemption tick (socket(2) is a raw system call, preempted with
// SIGURG), which a loaded machine makes likely.
func TestSuperviseOutlivesWithdrawnNotifications(t *testing.T) {
	type filtered struct {
		listener, tid int
		err           error
	}
	ready := make(chan filtered, 1)
	done := make(chan []unix.Errno, 1)
	// The filter goes on one locked thread, which is never unlocked: it
	// carries the filter, and ends with this goroutine.
	go func() {
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			ready <- filtered{err: err}
			return
		}
		prog, err := Build(Native, Options{DenyNetwork: true, Notify: true})
		if err != nil {
			ready <- filtered{err: err}
			return
		}
		fd, err := InstallListener(prog)
		ready <- filtered{listener: fd, tid: unix.Gettid(), err: err}
		if err != nil {
			return
		}
		var errs []unix.Errno
		for range 4 {
			s, _, e := unix.RawSyscall(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
			if e == 0 {
				unix.Close(int(s))
			}
			errs = append(errs, e)
		}
		done <- errs
	}()
	f := <-ready
	if f.err != nil {
		t.Skipf("no seccomp user notification on this kernel: %v", f.err)
	}

	// Wait until the first refusal is pending, then interrupt it with a
	// signal the test catches: once the handler ran, the kernel has
	// withdrawn the notification, and the restarted call notifies again.
	pending := func() {
		t.Helper()
		fds := []unix.PollFd{{Fd: int32(f.listener), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			require.NoError(t, err)
			require.Equal(t, 1, n)
			return
		}
	}
	pending()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGWINCH)
	defer signal.Stop(sigs)
	require.NoError(t, unix.Tgkill(os.Getpid(), f.tid, unix.SIGWINCH))
	<-sigs
	pending()

	var seen []string
	reported := make(chan string, 16)
	go Supervise(Native, f.listener, func(_, _ uint32, what string) { reported <- what })
	select {
	case errs := <-done:
		assert.Equal(t, []unix.Errno{unix.EAFNOSUPPORT, unix.EAFNOSUPPORT, unix.EAFNOSUPPORT, unix.EAFNOSUPPORT}, errs)
	case <-time.After(30 * time.Second):
		// Closing the listener answers the call that waits (ENOSYS) and
		// lets the thread end.
		unix.Close(f.listener)
		t.Fatal("a refused call was never answered: the supervisor stopped after a withdrawn notification")
	}
	for len(reported) > 0 {
		seen = append(seen, <-reported)
	}
	assert.Len(t, seen, 4, "every refusal that was answered is reported once: %v", seen)
	// The supervisor stays blocked on the listener, which the filtered
	// thread (gone now) no longer feeds; it ends with the test binary.
}
