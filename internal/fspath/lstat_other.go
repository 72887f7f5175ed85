//go:build !(linux && amd64)

package fspath

import (
	"io/fs"
	"os"
)

// lstatKind reports what path (NUL-terminated) names without following a final symbolic link.
func lstatKind(path []byte) (fileKind, error) {
	fi, err := os.Lstat(string(path[:len(path)-1]))
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			return kindMissing, pe.Err
		}
		return kindMissing, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return kindSymlink, nil
	case fi.IsDir():
		return kindDir, nil
	}
	return kindOther, nil
}
