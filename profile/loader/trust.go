package loader

import (
	"context"
	"errors"
	"io/fs"
)

// TrustDigest returns the hex SHA-256 of the profile file at path: the value a user file's
// trusted_projects entry records to trust a project file with this content, and the one
// [TrustRequest.SHA256] and [FileStatus.SHA256] report. It reads the file the way [Loader.Load]
// does: only a regular file of at most 1 MiB, opened without blocking (a named pipe, a device
// such as /dev/zero, a directory or a huge sparse file is refused before anything is read), with
// a bounded read that stops when ctx is done. Every failure, a missing file included, is a
// *Error that names the file and the reason.
func TrustDigest(ctx context.Context, path string) (string, error) {
	data, err := readProfileFile(ctx, path)
	if err != nil {
		if !isLoadError(err) && errors.Is(err, fs.ErrNotExist) {
			err = &Error{File: path, Reason: "no such file", Err: err}
		}
		return "", err
	}
	return digestOf(data), nil
}
