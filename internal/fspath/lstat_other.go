//go:build !(linux && amd64)

package gate

import (
	"io/fs"
	"os"
)

// lstatKind reports whether path (NUL-terminated) exists and whether it is a symbolic link.
func lstatKind(path []byte) (fileKind, error) {
	fi, err := os.Lstat(string(path[:len(path)-1]))
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			return kindMissing, pe.Err
		}
		return kindMissing, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return kindSymlink, nil
	}
	return kindOther, nil
}
