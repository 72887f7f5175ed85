//go:build !(linux && (amd64 || arm64))

package gitcfg

import "os"

// StatID returns the identity of the file at path, which must end in a NUL byte (see CPath).
// It follows symbolic links, as git does when it opens the file. On this platform the identity
// is the size and modification time (device and inode stay zero).
func StatID(path []byte) FileID {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return FileID{}
	}
	fi, err := os.Stat(string(path[:len(path)-1]))
	if err != nil {
		return FileID{}
	}
	return FileID{Exists: true, Dir: fi.IsDir(), Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
}

const (
	modeTypeMask = uint32(os.ModeType)
	modeRegular  = 0
)

// searchable approximates access(path, X_OK): the path is a directory or an executable file.
func searchable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && (fi.IsDir() || fi.Mode()&0o111 != 0)
}
