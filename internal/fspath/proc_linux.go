package fspath

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// onProcfs reports whether the directory dir (NUL-terminated in the caller's buffer) lies on a
// proc filesystem, wherever it is mounted: the symbolic links there name the state of the
// process that reads them. It does not allocate.
func onProcfs(dir []byte) bool {
	var st unix.Statfs_t
	_, _, e := syscall.Syscall(unix.SYS_STATFS, uintptr(unsafe.Pointer(&dir[0])), uintptr(unsafe.Pointer(&st)), 0)
	return e == 0 && st.Type == unix.PROC_SUPER_MAGIC
}
