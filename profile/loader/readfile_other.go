//go:build !unix

package loader

import "os"

// openNonblocking opens path for reading. Outside Unix there is no O_NONBLOCK; the protection is
// the look before the open (readProfileFile refuses anything but a regular file, a named pipe
// reached through a link included) and the check of the opened file after it.
func openNonblocking(path string) (*os.File, error) {
	return os.Open(path)
}

// unsafeOwner checks nothing outside Unix: on Windows the managed file's access control list is
// not read (see the package documentation: %ProgramData% is writable by every user unless the
// administrator restricts the reins directory).
func unsafeOwner(string) string { return "" }
