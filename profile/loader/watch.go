package loader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"time"
)

// Watch re-reads the profile files whenever their content changes from what the last Load read
// (or, if Load was never called, from what they hold when Watch starts), checking every interval
// (zero means one second), until ctx is done. Each time, onChange gets the newly loaded profile,
// or the load error; a host hands the profile to Run.Reload, which applies it at the next
// operation boundary, and on an error keeps the profile it has. Watch polls the files' contents
// (a SHA-256 of each) rather than relying on file-system notifications, so it works on every
// platform and filesystem; a file that appears, disappears or changes counts, the managed file
// and the policy bundle included. The policy bundle in use expiring counts too: the load then
// refuses it (see BundleOptions.OnRefusal). It returns ctx.Err() when ctx is done.
func (l *Loader) Watch(ctx context.Context, interval time.Duration, onChange func(*Loaded, error)) error {
	if interval <= 0 {
		interval = time.Second
	}
	l.mu.Lock()
	last := l.seen
	l.mu.Unlock()
	if last == nil {
		last = fingerprint(l.readFiles(ctx))
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now := fingerprint(l.readFiles(ctx))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if bytes.Equal(now, last) && !l.expired() {
			continue
		}
		ld, err := l.Load(ctx)
		if ctx.Err() != nil {
			return ctx.Err() // the load stopped because Watch is asked to stop: nothing to report
		}
		l.mu.Lock()
		last = l.seen
		l.mu.Unlock()
		onChange(ld, err)
	}
}

// expired reports whether the bundle in use has expired; it is then forgotten, so its expiry
// triggers one reload.
func (l *Loader) expired() bool {
	if l.bundle == nil {
		return false
	}
	now := l.bundle.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.expires.IsZero() || now.Before(l.expires) {
		return false
	}
	l.expires = time.Time{}
	return true
}

// fingerprint hashes what readFiles found: for each file, absent, the reason it could not be
// read, or its content. The files are read the way Load reads them (readProfileFile), so a
// named pipe, a device or a huge file is refused before it is read, and a watched file that
// becomes one is reported by the reload it triggers.
func fingerprint(reads [3]fileRead) []byte {
	h := sha256.New()
	for _, r := range reads {
		switch {
		case r.path == "":
			h.Write([]byte{0})
		case r.err != nil && errors.Is(r.err, fs.ErrNotExist) && !isLoadError(r.err):
			h.Write([]byte{1})
		case r.err != nil:
			h.Write([]byte("error:" + r.err.Error() + "\x00"))
		default:
			h.Write(binary.BigEndian.AppendUint64([]byte{2}, uint64(len(r.data))))
			h.Write(r.data)
		}
	}
	return h.Sum(nil)
}
