//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"errors"
	"os"
	"time"
)

// lockFile takes a lock by creating a marker file beside f, waiting up to 10 s for it: where
// flock is missing, concurrent hook processes still take turns. A marker left by a crash older
// than a minute is taken over.
func lockFile(f *os.File) error {
	marker := f.Name() + ".held"
	for deadline := time.Now().Add(10 * time.Second); ; {
		m, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			return m.Close()
		}
		if st, serr := os.Stat(marker); serr == nil && time.Since(st.ModTime()) > time.Minute {
			_ = os.Remove(marker)
			continue
		}
		if time.Now().After(deadline) {
			return errors.New("another hook process holds the session's state")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func unlockFile(f *os.File) error { return os.Remove(f.Name() + ".held") }
