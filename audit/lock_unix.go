//go:build unix

package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock on f without waiting. It reports false if another open
// file description (another process, or another sink in this one) holds it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, unix.EINTR):
			return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

// lock takes an exclusive flock on f, waiting for it. With a context that can be cancelled it
// polls (flock cannot be interrupted), backing off from 20µs to 2ms, and gives up when ctx is
// done; otherwise it blocks in the kernel.
func lock(ctx context.Context, f *os.File) error {
	if ok, err := tryLock(f); ok || err != nil {
		return err
	}
	if ctx.Done() == nil {
		for {
			err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
			if err == nil {
				return nil
			}
			if !errors.Is(err, unix.EINTR) {
				return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
		}
	}
	backoff := 20 * time.Microsecond
	t := time.NewTimer(backoff)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("audit: waiting for the lock %s: %w", f.Name(), ctx.Err())
		case <-t.C:
		}
		if ok, err := tryLock(f); ok || err != nil {
			return err
		}
		backoff = min(2*backoff, 2*time.Millisecond)
		t.Reset(backoff)
	}
}

func unlock(f *os.File) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return nil
}
