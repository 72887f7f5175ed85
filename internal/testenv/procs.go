package testenv

import (
	"testing"
	"time"
)

// WaitGone fails the test if a process whose command line contains marker is still alive
// within from now. The bound is generous on purpose: a loaded machine may take a while to tear
// a pid namespace down, and a process that survives for good fails all the same. Where there is
// no /proc to look in, it logs that it cannot check.
func WaitGone(t testing.TB, marker string, within time.Duration) {
	t.Helper()
	if !canList {
		t.Logf("no /proc on this platform: cannot check that %q is gone", marker)
		return
	}
	deadline := time.Now().Add(within)
	for len(Processes(t, marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes survived: %v", Processes(t, marker))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
