//go:build unix

package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lock serializes operations on the workspace: first among the goroutines
// of this Checkpointer (a channel, so waiting honours the context), then
// among Checkpointers and processes (flock on the lock file, which also
// excludes other open file descriptions in this process).
func (c *Checkpointer) lock(ctx context.Context) (func(), error) {
	timeout := c.opts.lockTimeout()
	deadline := time.Now().Add(timeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case c.sem <- struct{}{}:
	default:
		select {
		case c.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("checkpoint: waiting for the workspace lock: %w", ctx.Err())
		case <-timer.C:
			return nil, fmt.Errorf("%w: %s is busy in this process (waited %s)", ErrLocked, c.root, timeout)
		}
	}
	release := func() { <-c.sem }
	f, err := os.OpenFile(c.lockf, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		release()
		return nil, fmt.Errorf("checkpoint: opening lock file: %w", err)
	}
	backoff := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			release()
			return nil, fmt.Errorf("checkpoint: locking %s: %w", c.lockf, err)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			f.Close()
			release()
			return nil, fmt.Errorf("%w: %s is locked by another process (lock file %s, waited %s)", ErrLocked, c.root, c.lockf, timeout)
		}
		wait = min(wait, backoff)
		backoff = min(2*backoff, 50*time.Millisecond)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			release()
			return nil, fmt.Errorf("checkpoint: waiting for the workspace lock: %w", ctx.Err())
		case <-t.C:
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
		release()
	}, nil
}
