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
