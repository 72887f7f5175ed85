//go:build unix

package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// openNonblocking opens path for reading without blocking: a named pipe with no writer, or a
// device that waits, returns at once instead of holding the caller. O_NOCTTY keeps a terminal
// from becoming the process's controlling terminal. Reads of a regular file ignore O_NONBLOCK.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// unsafeOwner says why the managed file at path could have been written by someone other than
// the administrator or the user running the host, or "": the file (symbolic links resolved) and
// every directory above it must belong to root or to this user, and none may be writable by
// its group or by others, except a directory with the sticky bit that belongs to root (such as
// /tmp: nobody else can replace what is in it). A managed file planted by another local user
// would set the settings of everyone who loads it; this is the check OpenSSH makes of its
// configuration (StrictModes).
func unsafeOwner(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "" // the read that follows reports it
	}
	uid := uint32(os.Geteuid())
	for p, file := real, true; ; file = false {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Sprintf("%s cannot be checked: %v", p, unwrapPath(err))
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		if sys.Uid != 0 && sys.Uid != uid {
			return fmt.Sprintf("%s belongs to user %d, neither root nor the user running reins", p, sys.Uid)
		}
		if st.Mode().Perm()&0o022 != 0 && (file || st.Mode()&os.ModeSticky == 0 || sys.Uid != 0) {
			return fmt.Sprintf("%s is writable by its group or by others (mode %04o)", p, st.Mode().Perm())
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
}
