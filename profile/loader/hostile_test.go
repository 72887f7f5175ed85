package loader_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/profile/loader"
)

// hostile is a thing a cloned repository (or a broken configuration) can put where a profile
// file is expected.
type hostile struct {
	name   string
	make   func(t *testing.T, path string) // creates it at path (which does not exist yet)
	reason string                          // a part of the *Error's reason
}

// portableHostile are the cases every platform can build.
var portableHostile = []hostile{
	{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) }, "not a regular file"},
	{"a file one byte too large", func(t *testing.T, path string) {
		require.NoError(t, os.WriteFile(path, make([]byte, 1<<20+1), 0o644))
	}, "larger than 1048576 bytes"},
}

// bounded runs fn in a goroutine and fails the test if it has not returned after 5 s (the
// readers return in well under 100 ms; the limit only keeps a regression from hanging the test
// binary) or if it allocated more than 8 MiB. It must not run in parallel with other tests: it
// reads the process's allocation counter.
func bounded(t *testing.T, what string, fn func() error) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan error, 1)
	go func() { done <- fn() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still running after 5s", what)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "%s: allocated %d bytes", what, after.TotalAlloc-before.TotalAlloc)
	return err
}

// requireLoadError checks that err holds a *Error for file whose reason mentions reason.
func requireLoadError(t *testing.T, err error, file, reason string) {
	t.Helper()
	require.Error(t, err)
	var le *loader.Error
	require.True(t, errors.As(err, &le), "%T %v is not a *Error", err, err)
	assert.Equal(t, file, le.File)
	assert.Contains(t, le.Reason, reason)
}

// checkHostile runs every reader of profile files against h placed at the project file's
// path and at the user file's path: Load, Watch (the file turns hostile while it is watched) and
// TrustDigest. Each returns a *Error naming the file, promptly and in bounded memory.
func checkHostile(t *testing.T, h hostile) {
	t.Run("Load/project", func(t *testing.T) {
		f := newFiles(t)
		h.make(t, f.projFile)
		err := bounded(t, "Load", func() error { _, err := f.load(); return err })
		requireLoadError(t, err, f.projFile, h.reason)
	})
	t.Run("Load/user", func(t *testing.T) {
		f := newFiles(t)
		h.make(t, f.userFile)
		err := bounded(t, "Load", func() error { _, err := f.load(); return err })
		requireLoadError(t, err, f.userFile, h.reason)
	})
	t.Run("TrustDigest", func(t *testing.T) {
		f := newFiles(t)
		h.make(t, f.projFile)
		err := bounded(t, "TrustDigest", func() error { _, err := loader.TrustDigest(context.Background(), f.projFile); return err })
		requireLoadError(t, err, f.projFile, h.reason)
	})
	t.Run("Watch", func(t *testing.T) {
		f := newFiles(t)
		f.writeProject(`{"shell_blocklist": ["make deploy"]}`)
		l, err := loader.New(f.opts())
		require.NoError(t, err)
		_, err = l.Load(context.Background())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := make(chan error, 8)
		done := make(chan error, 1)
		go func() {
			done <- l.Watch(ctx, 5*time.Millisecond, func(_ *loader.Loaded, err error) { got <- err })
		}()
		require.NoError(t, os.Remove(f.projFile))
		err = bounded(t, "Watch", func() error {
			// Built beside the file and renamed into place, so Watch never sees it half made.
			tmp := f.projFile + ".new"
			h.make(t, tmp)
			require.NoError(t, os.Rename(tmp, f.projFile))
			for {
				select {
				case err := <-got:
					if err != nil {
						return err
					}
					// A reload between the removal and the new file: the file was missing.
				case <-time.After(4 * time.Second):
					return errors.New("Watch reported nothing")
				}
			}
		})
		requireLoadError(t, err, f.projFile, h.reason)
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("Watch did not return after its context was cancelled")
		}
	})
}

// TestHostileProfileFiles: a directory or a file just over the limit where a profile file
// should be is a *Error for Load, Watch and TrustDigest, found before anything is read.
// (Unix adds /dev/zero, a named pipe, a sparse 3 GB file and dangling symbolic links; a 3 GB
// file is not sparse on every Windows filesystem.) Not parallel: it measures allocations.
func TestHostileProfileFiles(t *testing.T) {
	for _, h := range portableHostile {
		t.Run(h.name, func(t *testing.T) { checkHostile(t, h) })
	}
}

// TestReadHonoursContext: a done context stops every reader with a *Error that wraps the
// context's error.
func TestReadHonoursContext(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	f.writeProject(`{}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := loader.Load(ctx, f.opts())
	errs := loader.Errors(err)
	require.Len(t, errs, 2, "%v", err)
	for i, file := range []string{f.userFile, f.projFile} {
		assert.Equal(t, file, errs[i].File)
		assert.Equal(t, "not read: context canceled", errs[i].Reason)
		assert.ErrorIs(t, errs[i], context.Canceled)
	}
	_, err = loader.TrustDigest(ctx, f.projFile)
	requireLoadError(t, err, f.projFile, "not read: context canceled")
	assert.ErrorIs(t, err, context.Canceled)

	l, err := loader.New(f.opts())
	require.NoError(t, err)
	assert.ErrorIs(t, l.Watch(ctx, time.Millisecond, func(*loader.Loaded, error) { t.Error("no reload after the context is done") }), context.Canceled)
}

// TestTrustDigest: the digest is the SHA-256 the loader reports and trusted_projects records; a
// missing file is a *Error.
func TestTrustDigest(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	f.writeProject(`{"autonomy": 1}`)
	sum, err := loader.TrustDigest(context.Background(), f.projFile)
	require.NoError(t, err)
	assert.Equal(t, `{"path": "`+f.project+`", "sha256": "`+sum+`"}`, f.trustEntry())
	l := f.mustLoad()
	require.Len(t, l.Files, 2)
	assert.Equal(t, sum, l.Files[1].SHA256)

	f.writeUser(`{"trusted_projects": [{"path": "` + f.project + `", "sha256": "` + sum + `"}]}`)
	l = f.mustLoad()
	assert.Equal(t, loader.TrustedByUser, l.Trust)
	assert.Equal(t, 1.0, l.Profile.Autonomy)

	missing := filepath.Join(f.project, "nothing.json")
	_, err = loader.TrustDigest(context.Background(), missing)
	requireLoadError(t, err, missing, "no such file")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
