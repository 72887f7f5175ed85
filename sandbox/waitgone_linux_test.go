//go:build linux

package sandbox_test

import (
	"testing"
	"time"
)

// waitGone fails the test if a process whose command line contains
// marker is still alive a few seconds from now.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(processesWith(t, marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes survived: %v", processesWith(t, marker))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
