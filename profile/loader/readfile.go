package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// readChunk is how much readProfileFile reads between two looks at the context.
const readChunk = 64 << 10

// readProfileFile is the one way the package reads a profile file: Load, Watch's fingerprint and
// TrustDigest all use it, so a hostile repository cannot make any of them hang or exhaust memory.
//
//   - It looks before it opens: the path (symbolic links followed, since a user's configuration
//     directory may be a link) must name a regular file of at most maxFileSize bytes. A named
//     pipe, a device such as /dev/zero, a directory or a socket is refused without being opened,
//     and so is a sparse file that claims gigabytes.
//   - It opens without blocking (O_NONBLOCK on Unix), so a pipe swapped in after the look cannot
//     hold the open, then checks the opened descriptor (fstat): still a regular file, the same
//     file it looked at, still small enough.
//   - It reads at most maxFileSize+1 bytes, in chunks, looking at ctx between them, and fails
//     if there is more.
//
// A missing file (nothing at the path, and no dangling symbolic link on the way to it) returns an
// error that satisfies errors.Is(err, fs.ErrNotExist) and is not a *Error: callers treat it
// as "no file". Every other failure is a *Error naming the file and the reason.
func readProfileFile(ctx context.Context, path string) ([]byte, error) {
	fail := func(err error, format string, args ...any) error {
		return &Error{File: path, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err, "not read: %v", err)
	}
	before, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if link := danglingLink(path); link != "" {
				return nil, fail(err, "%s is a symbolic link to something that does not exist", link)
			}
			return nil, err
		}
		return nil, fail(err, "%v", unwrapPath(err))
	}
	if why := unsuitable(before); why != "" {
		return nil, fail(nil, "%s", why)
	}
	f, err := openNonblocking(path)
	if err != nil {
		return nil, fail(err, "%v", unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fail(err, "%v", unwrapPath(err))
	}
	if why := unsuitable(st); why != "" {
		return nil, fail(nil, "%s", why)
	}
	if !os.SameFile(before, st) {
		return nil, fail(nil, "the file was replaced while it was being opened")
	}
	data := make([]byte, 0, min(st.Size(), maxFileSize)+1)
	r := io.LimitReader(f, maxFileSize+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fail(err, "not read: %v", err)
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, readChunk)
		}
		n, err := r.Read(data[len(data):min(cap(data), len(data)+readChunk)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fail(err, "%v", unwrapPath(err))
		}
	}
	if len(data) > maxFileSize {
		return nil, fail(nil, "the file is larger than %d bytes", maxFileSize)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err, "not read: %v", err)
	}
	return data, nil
}

// unsuitable says why a file with this information cannot be a profile file, or "".
func unsuitable(st fs.FileInfo) string {
	if !st.Mode().IsRegular() {
		return fmt.Sprintf("not a regular file (%s)", st.Mode().Type())
	}
	if st.Size() > maxFileSize {
		return fmt.Sprintf("the file is larger than %d bytes", maxFileSize)
	}
	return ""
}

// danglingLink returns the deepest existing entry on the way to path when it is a symbolic link
// whose target does not exist (path itself, or a directory link above it), or "".
func danglingLink(path string) string {
	for p := filepath.Clean(path); ; {
		if st, err := os.Lstat(p); err == nil {
			if st.Mode()&fs.ModeSymlink == 0 {
				return ""
			}
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
				return p
			}
			return ""
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
}

// unwrapPath drops the *fs.PathError wrapper (the Error names the file already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
