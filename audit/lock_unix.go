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

// lock takes an exclusive flock on f, waiting at most timeout for it. flock cannot be
// interrupted, so it polls, backing off from 20µs to 2ms, and gives up when ctx is done.
func lock(ctx context.Context, f *os.File, timeout time.Duration) error {
	if ok, err := tryLock(f); ok || err != nil {
		return err
	}
	backoff := 20 * time.Microsecond
	t := time.NewTimer(backoff)
	defer t.Stop()
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("audit: waiting for the lock %s: %w", f.Name(), ctx.Err())
		case <-t.C:
		}
		if ok, err := tryLock(f); ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: the lock %s was held for more than %v", ErrInUse, f.Name(), timeout)
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
