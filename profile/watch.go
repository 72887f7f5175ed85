package profile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"time"
)

// Watch re-reads the profile files whenever their content changes from what the last Load read
// (or, if Load was never called, from what they hold when Watch starts), checking every interval
// (zero means one second), until ctx is done. Each time, onChange gets the newly loaded profile,
// or the load error; a host hands the profile to gate.Reload, which applies it at the next
// operation boundary, and on an error keeps the profile it has. Watch polls the files' contents
// (a SHA-256 of each) rather than relying on file-system notifications, so it works on every
// platform and filesystem; a file that appears, disappears or changes counts. It returns
// ctx.Err() when ctx is done.
func (l *Loader) Watch(ctx context.Context, interval time.Duration, onChange func(*Loaded, error)) error {
	if interval <= 0 {
		interval = time.Second
	}
	l.mu.Lock()
	last := l.seen
	l.mu.Unlock()
	if last == nil {
		last = l.fingerprint()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now := l.fingerprint()
		if bytes.Equal(now, last) {
			continue
		}
		ld, err := l.Load(ctx)
		l.mu.Lock()
		last = l.seen
		l.mu.Unlock()
		onChange(ld, err)
	}
}

// fingerprint hashes the watched files' contents (a missing file hashes as absent).
func (l *Loader) fingerprint() []byte {
	h := sha256.New()
	for _, p := range []string{l.userPath, l.projectPath} {
		if p == "" {
			h.Write([]byte{0})
			continue
		}
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			h.Write([]byte{1})
		case err != nil:
			h.Write([]byte("error:" + err.Error()))
		default:
			h.Write([]byte{2})
			h.Write(b)
		}
	}
	return h.Sum(nil)
}
