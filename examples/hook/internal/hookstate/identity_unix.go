//go:build unix

package hookstate

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Identity identifies a file's version: device, inode, size, modification and change
// times (the change time moves on every write and cannot be set back); "absent" when there is
// none, "-" for no path.
func Identity(path string) string {
	if path == "" {
		return "-"
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "absent:" + err.Error()
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
