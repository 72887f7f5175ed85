//go:build !unix

package reins

import (
	"context"
	"errors"
	"os"
)

var errNoFlock = errors.New("reins: FileStore needs file locking (flock), which this platform does not offer")

func statID(string) (fileID, error)            { return fileID{}, errNoFlock }
func fstatID(*os.File) (fileID, error)         { return fileID{}, errNoFlock }
func openNoFollow(string) (*os.File, error)    { return nil, errNoFlock }
func lockFile(context.Context, *os.File) error { return errNoFlock }
func unlockFile(*os.File)                      {}
func syncDir(string)                           {}
