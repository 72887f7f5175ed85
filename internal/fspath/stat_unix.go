//go:build unix && !(linux && amd64)

package fspath

import (
	"golang.org/x/sys/unix"
)

// identityKnown: stat results carry a device and an inode.
const identityKnown = true

// statPath stats path (NUL-terminated), following a final symbolic link when follow is set.
func statPath(path []byte, follow bool) (fileStat, error) {
	var st unix.Stat_t
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	if err := unix.Fstatat(unix.AT_FDCWD, string(path[:len(path)-1]), &st, flags); err != nil {
		return fileStat{}, err
	}
	return fileStat{
		kind: kindOf(uint32(st.Mode)), dev: uint64(st.Dev), ino: uint64(st.Ino), nlink: uint64(st.Nlink),
		ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano(),
	}, nil
}

func kindOf(mode uint32) fileKind {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return kindSymlink
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFREG:
		return kindFile
	}
	return kindOther
}

// accessX checks search (execute) permission on path with the process's real credentials.
func accessX(path string) error { return unix.Access(path, unix.X_OK) }
