//go:build !unix

package checkpoint

import (
	"errors"
	"io/fs"
)

const oNoFollow = 0

var errNotDir = errors.New("not a directory")

func linkCount(fs.FileInfo) uint64 { return 0 }

// fileID is 0 where there are no inode numbers: size and time alone
// make the signature.
func fileID(fs.FileInfo) uint64 { return 0 }
