//go:build linux

package seccomp

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Install loads prog into the calling thread with seccomp(2). The caller
// must have set no_new_privs (or hold CAP_SYS_ADMIN) and must run on a
// locked OS thread, since the filter applies to that thread and to what
// it executes.
func Install(prog []unix.SockFilter) error {
	if len(prog) == 0 {
		return fmt.Errorf("seccomp: empty program")
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	return nil
}

// InstallListener loads prog like [Install] and returns the descriptor
// of its user-notification listener (SECCOMP_FILTER_FLAG_NEW_LISTENER),
// for a program built with Options.Notify.
func InstallListener(prog []unix.SockFilter) (int, error) {
	if len(prog) == 0 {
		return -1, fmt.Errorf("seccomp: empty program")
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// Once the supervisor has received a notification, the caller waits
	// for the answer ignoring signals but fatal ones
	// (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19): a signal can
	// no longer withdraw a refusal already reported and have the
	// restarted call reported again. Older kernels refuse the flag
	// (EINVAL) and get the listener without it.
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if errno == unix.EINVAL {
		fd, _, errno = unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	}
	if errno != 0 {
		return -1, fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER): %w", errno)
	}
	return int(fd), nil
}

// Supervise answers the notifications of listener until it fails or
// every process that used its filter is gone: report is called with the pid
// of the caller and the description, and then the refused call gets the
// error [Refusal] gives. It must run on a thread the filter does not
// apply to.
func Supervise(arch Arch, listener int, report func(pid uint32, nr uint32, what string)) {
	for {
		// Wait for a notification; the listener hangs up once every
		// process that used the filter is gone (a receive would block
		// for ever then).
		fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP, POLLERR or POLLNVAL
		}
		var req notif
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req)))
		if errno == unix.EINTR || errno == unix.ENOENT {
			// ENOENT: the notification this receive was woken for was
			// withdrawn, its caller interrupted by a signal before the
			// answer (a Go program's preemption signal, say); the call
			// restarts and notifies again. Stopping here would leave
			// every later refused call waiting forever.
			continue
		}
		if errno != 0 {
			return
		}
		e, what := Refusal(arch, uint32(req.data.nr), req.data.args)
		// Report before answering: the caller stays blocked until the
		// answer, so a supervisor that sees the command end has seen
		// every refusal of it.
		if report != nil {
			report(req.pid, uint32(req.data.nr), what)
		}
		resp := notifResp{id: req.id, error: -int32(e)}
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}

// struct seccomp_notif and struct seccomp_notif_resp (linux/seccomp.h).
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	data  struct {
		nr   int32
		arch uint32
		ip   uint64
		args [6]uint64
	}
}

type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}
