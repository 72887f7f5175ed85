//go:build unix

package checkpoint

import (
	"io/fs"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

var errNotDir error = syscall.ENOTDIR

func linkCount(st fs.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 0
}

// fileID is the file's inode number, part of the signature that tells
// whether the user's index file changed.
func fileID(st fs.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
