package fspath

import (
	"syscall"
	"unsafe"
)

const (
	atFDCWD           = ^uintptr(99) // AT_FDCWD (-100)
	atSymlinkNoFollow = 0x100        // AT_SYMLINK_NOFOLLOW
)

// lstatKind reports what path names without following a final symbolic link, without
// allocating: path is NUL-terminated in the caller's buffer and handed to fstatat(2) directly.
func lstatKind(path []byte) (kind fileKind, err error) {
	var st syscall.Stat_t
	_, _, e := syscall.Syscall6(syscall.SYS_NEWFSTATAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&st)), atSymlinkNoFollow, 0, 0)
	if e != 0 {
		return kindMissing, e
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return kindSymlink, nil
	case syscall.S_IFDIR:
		return kindDir, nil
	}
	return kindOther, nil
}
