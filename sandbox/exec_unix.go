//go:build unix

package sandbox

import "golang.org/x/sys/unix"

// isExecutable reports whether p is a regular file this process may
// execute.
func isExecutable(p string) bool {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	return unix.Access(p, unix.X_OK) == nil
}
