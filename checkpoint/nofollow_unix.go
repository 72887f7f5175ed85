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
