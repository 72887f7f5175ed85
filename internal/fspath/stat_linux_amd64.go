package fspath

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	atFDCWD           = ^uintptr(99) // AT_FDCWD (-100)
	atSymlinkNoFollow = 0x100        // AT_SYMLINK_NOFOLLOW
)

// identityKnown: stat results carry a device and an inode.
const identityKnown = true

// statPath stats path (NUL-terminated in the caller's buffer), following a final symbolic link
// when follow is set, without allocating: the buffer is handed to fstatat(2) directly.
func statPath(path []byte, follow bool) (fileStat, error) {
	var st syscall.Stat_t
	flags := uintptr(atSymlinkNoFollow)
	if follow {
		flags = 0
	}
	_, _, e := syscall.Syscall6(syscall.SYS_NEWFSTATAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&st)), flags, 0, 0)
	if e != 0 {
		return fileStat{}, e
	}
	return fileStat{
		kind: kindOf(st.Mode), dev: st.Dev, ino: st.Ino, nlink: st.Nlink,
		ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano(),
	}, nil
}

func kindOf(mode uint32) fileKind {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return kindSymlink
	case syscall.S_IFDIR:
		return kindDir
	case syscall.S_IFREG:
		return kindFile
	}
	return kindOther
}

// accessX checks search (execute) permission on path with the process's real credentials.
func accessX(path string) error { return unix.Access(path, unix.X_OK) }
