//go:build !unix

package audit

import (
	"context"
	"errors"
	"os"
	"time"
)

var errNoFlock = errors.New("audit: file locking is not supported on this platform, so a JSONL log cannot be opened")

func tryLock(*os.File) (bool, error)                      { return false, errNoFlock }
func lock(context.Context, *os.File, time.Duration) error { return errNoFlock }
func unlock(*os.File) error                               { return errNoFlock }
