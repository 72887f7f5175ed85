//go:build !unix

package hookstate

import (
	"fmt"
	"os"
)

// Identity identifies a file's version by size and modification time where there are no
// inodes; "absent" when there is none, "-" for no path.
func Identity(path string) string {
	if path == "" {
		return "-"
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "absent:" + err.Error()
	}
	return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
}
