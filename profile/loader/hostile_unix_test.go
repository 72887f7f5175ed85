//go:build unix

package loader_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostileProfileFilesUnix: /dev/zero (through a symbolic link), a named pipe with no writer,
// a sparse 3 GB file and a dangling symbolic link where a profile file should be are each a *Error for Load,
// Watch and TrustDigest: nothing blocks on the pipe and nothing reads the endless device. Not
// parallel: it measures allocations.
func TestHostileProfileFilesUnix(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		if os.Getenv("REINS_TEST_STRICT") == "1" {
			t.Fatalf("no /dev/zero: %v", err)
		}
		t.Skipf("no /dev/zero: %v", err)
	}
	for _, h := range []hostile{
		{"a link to /dev/zero", func(t *testing.T, path string) { require.NoError(t, os.Symlink("/dev/zero", path)) }, "not a regular file (Dc"},
		{"a named pipe", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o644)) }, "not a regular file (p"},
		{"a link to a named pipe", func(t *testing.T, path string) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o644))
			require.NoError(t, os.Symlink(fifo, path))
		}, "not a regular file (p"},
		{"a dangling link", func(t *testing.T, path string) {
			require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "gone"), path))
		}, "is a symbolic link to something that does not exist"},
		{"a sparse 3 GB file", func(t *testing.T, path string) {
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(3<<30))
			require.NoError(t, f.Close())
		}, "larger than 1048576 bytes"},
		{"a link to a sparse 3 GB file", func(t *testing.T, path string) {
			big := filepath.Join(t.TempDir(), "big")
			f, err := os.Create(big)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(3<<30))
			require.NoError(t, f.Close())
			require.NoError(t, os.Symlink(big, path))
		}, "larger than 1048576 bytes"},
	} {
		t.Run(h.name, func(t *testing.T) { checkHostile(t, h) })
	}
}

// TestDanglingConfigDirectory: a project whose configuration directory is a dangling link is a
// *Error, not "no project file" (the link could point to a file that appears later, or
// say something the user did not expect).
func TestDanglingConfigDirectory(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	dir := filepath.Dir(f.projFile)
	require.NoError(t, os.Remove(dir))
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "gone"), dir))
	_, err := f.load()
	requireLoadError(t, err, f.projFile, dir+" is a symbolic link to something that does not exist")
}

// TestLinkedConfigDirectory: a configuration directory that is a symbolic link to a real
// directory is followed (dotfile managers link ~/.config/reins).
func TestLinkedConfigDirectory(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	real := filepath.Join(t.TempDir(), "dotfiles")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "profile.json"), []byte(`{"active_profile": "PROFILE-DEV"}`), 0o644))
	require.NoError(t, os.RemoveAll(f.userDir))
	require.NoError(t, os.Symlink(real, f.userDir))
	l := f.mustLoad()
	require.Equal(t, "PROFILE-DEV", l.Profile.Name)
}
