//go:build !unix

package checkpoint

import (
	"io/fs"
	"os"
)

// createFile writes data into a new file, created exclusively with perm.
func createFile(name string, data []byte, perm uint32) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(perm))
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
