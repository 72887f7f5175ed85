package audit

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync flushes f's data (and the metadata needed to read it back, such as its size).
func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// renameNoReplace renames oldpath to newpath, failing if newpath exists.
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return linkRename(oldpath, newpath) // a filesystem without RENAME_NOREPLACE
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
