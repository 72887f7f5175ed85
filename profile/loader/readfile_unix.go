//go:build unix

package loader

import (
	"os"
	"syscall"
)

// openNonblocking opens path for reading without blocking: a named pipe with no writer, or a
// device that waits, returns at once instead of holding the caller. O_NOCTTY keeps a terminal
// from becoming the process's controlling terminal. Reads of a regular file ignore O_NONBLOCK.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
