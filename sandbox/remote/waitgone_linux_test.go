//go:build linux

package remote_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// processesWith lists the processes whose command line contains s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []string
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, d.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return pids
}
