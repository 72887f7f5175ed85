//go:build unix

package checkpoint

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// createFile writes data into a new file, created exclusively with perm,
// with plain system calls (an os.File costs a few more per file: the
// descriptor's flags and the poller, for a file written once).
func createFile(name string, data []byte, perm uint32) error {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, perm)
	for errors.Is(err, unix.EINTR) {
		fd, err = unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, perm)
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: name, Err: err}
	}
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return &os.PathError{Op: "write", Path: name, Err: err}
		}
		data = data[n:]
	}
	if err := unix.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: name, Err: err}
	}
	return nil
}
