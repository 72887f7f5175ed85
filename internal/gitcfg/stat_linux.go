//go:build linux && (amd64 || arm64)

package gitcfg

import (
	"syscall"
	"unsafe"
)

// StatID returns the identity of the file at path, which must end in a NUL byte (see CPath).
// It follows symbolic links, as git does when it opens the file, and allocates nothing.
func StatID(path []byte) FileID {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return FileID{}
	}
	var st syscall.Stat_t
	_, _, e := syscall.Syscall6(sysFstatat, atFDCWD, uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&st)), 0, 0, 0)
	if e != 0 {
		return FileID{}
	}
	return FileID{Exists: true, Dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR, Dev: uint64(st.Dev), Ino: st.Ino,
		Size: st.Size, Mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Mode: st.Mode}
}

const (
	modeTypeMask = syscall.S_IFMT
	modeRegular  = syscall.S_IFREG
)

// searchable reports what access(path, X_OK) does: the path exists and may be searched (a
// directory) or executed.
func searchable(path string) bool { return syscall.Access(path, 1) == nil }

const atFDCWD = ^uintptr(99) // AT_FDCWD (-100)
