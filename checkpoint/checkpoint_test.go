package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

var kinds = []string{"git", "plain"}

func newWorkspace(t *testing.T, kind string) string {
	if kind == "git" {
		return newRepo(t)
	}
	return newPlainDir(t)
}

// Peer failure 1: "git stash create" misses untracked files. A checkpoint
// must hold them, and restoring must bring them back.
func TestPeerFailure_UntrackedFilesAreSnapshotted(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := newWorkspace(t, kind)
			writeFile(t, dir, "notes/untracked.txt", "only in the work tree\n", 0o644)
			writeFile(t, dir, "notes/deeper/nested/x.bin", "\x00\x01\r\n", 0o755)
			want := readTree(t, dir, isIgnoredByTestRules)
			if kind == "git" {
				// The peer approach, for contrast: the stash commit has no
				// trace of the untracked files.
				writeFile(t, dir, "README.md", "tracked change\n", 0o644)
				stash := strings.TrimSpace(runGit(t, dir, "stash", "create"))
				require.NotEmpty(t, stash)
				files := runGit(t, dir, "ls-tree", "-r", "--name-only", stash)
				assert.NotContains(t, files, "notes/untracked.txt", "stash create unexpectedly kept an untracked file")
				writeFile(t, dir, "README.md", "# project\n", 0o644)
			}
			c := newCheckpointer(t, dir, nil)
			cp, err := c.Create(ctx, "with untracked")
			require.NoError(t, err)
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "notes")))
			require.NoError(t, c.Restore(ctx, cp.ID))
			assert.Equal(t, want, readTree(t, dir, isIgnoredByTestRules))
		})
	}
}

// Peer failure 2: restoring with "git checkout <sha> -- ." leaves files
// created after the snapshot in place. A restore removes them (and the
// directories it empties) but leaves ignored files alone.
func TestPeerFailure_FilesCreatedLaterAreRemoved(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := newWorkspace(t, kind)
			c := newCheckpointer(t, dir, nil)
			want := readTree(t, dir, isIgnoredByTestRules)
			cp, err := c.Create(ctx, "clean")
			require.NoError(t, err)

			writeFile(t, dir, "later.txt", "created after\n", 0o644)
			writeFile(t, dir, "newdir/a/b/c.txt", "nested, created after\n", 0o644)
			writeFile(t, dir, "src/extra.go", "package main\n", 0o644)
			writeFile(t, dir, "debug.log", "ignored, must survive\n", 0o644)
			writeFile(t, dir, "build/out.bin", "ignored dir, must survive\n", 0o644)

			res, err := c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			assert.Equal(t, want, readTree(t, dir, isIgnoredByTestRules))
			assert.NoDirExists(t, filepath.Join(dir, "newdir"))
			assert.FileExists(t, filepath.Join(dir, "debug.log"))
			assert.FileExists(t, filepath.Join(dir, "build/out.bin"))
			assert.ElementsMatch(t, []checkpoint.Change{
				{Path: "later.txt", Kind: checkpoint.Deleted},
				{Path: "newdir/a/b/c.txt", Kind: checkpoint.Deleted},
				{Path: "src/extra.go", Kind: checkpoint.Deleted},
			}, res.Changes)
		})
	}
}

// Peer failure 3: snapshots stamped with the listing time. A checkpoint's
// time is its commit's own date, whenever it is listed.
func TestPeerFailure_TimeIsTheCommitsOwn(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	clk := &fakeClock{t: time.Date(2031, 5, 4, 3, 2, 1, 987, time.UTC)}
	c := newCheckpointer(t, dir, &checkpoint.Options{Clock: clk.Now})
	cp1, err := c.Create(ctx, "one")
	require.NoError(t, err)
	clk.Advance(90 * time.Minute)
	writeFile(t, dir, "x.txt", "x", 0o644)
	cp2, err := c.Create(ctx, "two")
	require.NoError(t, err)
	clk.Advance(1000 * time.Hour)

	list, err := c.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, cp2.ID, list[0].ID)
	assert.Equal(t, time.Date(2031, 5, 4, 4, 32, 1, 0, time.UTC), list[0].Time)
	assert.Equal(t, time.Date(2031, 5, 4, 3, 2, 1, 0, time.UTC), list[1].Time)
	assert.Equal(t, cp1.Time, list[1].Time)
	// And git agrees: it is the commit's committer date.
	date := runGit(t, dir, "log", "-1", "--format=%ct", checkpoint.RefPrefix+cp1.ID)
	assert.Equal(t, fmt.Sprintf("%d\n", time.Date(2031, 5, 4, 3, 2, 1, 0, time.UTC).Unix()), date)
}

// Rewinding a rewind brings back the state the first rewind replaced,
// both by id and as "rewind 1".
func TestRewindOfARewind(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := newWorkspace(t, kind)
			c := newCheckpointer(t, dir, nil)
			stateA := readTree(t, dir, isIgnoredByTestRules)
			cpA, err := c.Create(ctx, "A")
			require.NoError(t, err)

			writeFile(t, dir, "src/main.go", "package main // B\n", 0o755)
			writeFile(t, dir, "b-only.txt", "B\n", 0o644)
			require.NoError(t, os.Remove(filepath.Join(dir, "README.md")))
			stateB := readTree(t, dir, isIgnoredByTestRules)

			r1, err := c.Rewind(ctx, cpA.ID)
			require.NoError(t, err)
			require.Equal(t, stateA, readTree(t, dir, isIgnoredByTestRules))
			assert.Equal(t, checkpoint.ReasonBeforeRestore, r1.Undo.Reason)

			r2, err := c.Rewind(ctx, r1.Undo.ID) // undo the rewind
			require.NoError(t, err)
			require.Equal(t, stateB, readTree(t, dir, isIgnoredByTestRules))

			_, err = c.Rewind(ctx, r2.Undo.ID) // and undo that
			require.NoError(t, err)
			require.Equal(t, stateA, readTree(t, dir, isIgnoredByTestRules))

			_, err = c.RewindN(ctx, 1) // "rewind 1": the newest, the state just replaced
			require.NoError(t, err)
			require.Equal(t, stateB, readTree(t, dir, isIgnoredByTestRules))
		})
	}
}

func TestRestoreModesSymlinksAndContent(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	c := newCheckpointer(t, dir, nil)
	writeFile(t, dir, "crlf.txt", "a\r\nb\n", 0o644)
	writeFile(t, dir, ".gitattributes", "* text=auto eol=crlf\n", 0o644)
	writeFile(t, dir, "exec.sh", "#!/bin/sh\n", 0o755)
	require.NoError(t, os.Symlink("src/main.go", filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink("does/not/exist", filepath.Join(dir, "dangling")))
	want := readTree(t, dir, isIgnoredByTestRules)
	cp, err := c.Create(ctx, "modes")
	require.NoError(t, err)

	require.NoError(t, os.Chmod(filepath.Join(dir, "exec.sh"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(dir, "src/main.go"), 0o755))
	require.NoError(t, os.Remove(filepath.Join(dir, "link")))
	writeFile(t, dir, "link", "now a file", 0o644)
	require.NoError(t, os.Remove(filepath.Join(dir, "dangling")))
	require.NoError(t, os.Symlink("elsewhere", filepath.Join(dir, "dangling")))
	writeFile(t, dir, "crlf.txt", "a\nb\n", 0o644)

	require.NoError(t, c.Restore(ctx, cp.ID))
	assert.Equal(t, want, readTree(t, dir, isIgnoredByTestRules))
}

func TestUserRepositoryUntouched(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	runGit(t, dir, "add", "README.md") // something staged, too
	writeFile(t, dir, "staged.txt", "staged\n", 0o644)
	runGit(t, dir, "add", "staged.txt")
	before := readUserState(t, dir)
	c := newCheckpointer(t, dir, nil)
	cp, err := c.Create(ctx, "one")
	require.NoError(t, err)
	writeFile(t, dir, "README.md", "edited\n", 0o644)
	require.NoError(t, c.Restore(ctx, cp.ID))
	_, err = c.List(ctx)
	require.NoError(t, err)
	_, err = c.Diff(ctx, cp.ID)
	require.NoError(t, err)
	_, err = c.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1})
	require.NoError(t, err)
	assert.Equal(t, before, readUserState(t, dir))
	assert.Equal(t, "A  staged.txt\n", runGit(t, dir, "status", "--porcelain", "--untracked-files=no"))
}

// Files the repository tracks although an ignore rule matches them are
// part of a snapshot, as they are part of the repository.
func TestTrackedIgnoredFilesAreSnapshotted(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	writeFile(t, dir, "build/keep.txt", "force-added\n", 0o644)
	runGit(t, dir, "add", "-f", "build/keep.txt")
	c := newCheckpointer(t, dir, nil)
	cp, err := c.Create(ctx, "tracked ignored")
	require.NoError(t, err)
	writeFile(t, dir, "build/keep.txt", "edited by the agent\n", 0o644)
	writeFile(t, dir, "build/other.txt", "ignored and untracked\n", 0o644)
	require.NoError(t, c.Restore(ctx, cp.ID))
	b, err := os.ReadFile(filepath.Join(dir, "build/keep.txt"))
	require.NoError(t, err)
	assert.Equal(t, "force-added\n", string(b))
	assert.FileExists(t, filepath.Join(dir, "build/other.txt"))
}

func TestIncludeIgnoredAndExclude(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	writeFile(t, dir, "debug.log", "ignored by .gitignore\n", 0o644)
	writeFile(t, dir, "node_modules/x/index.js", "excluded\n", 0o644)
	c := newCheckpointer(t, dir, &checkpoint.Options{IncludeIgnored: true, Exclude: []string{"node_modules/"}})
	cp, err := c.Create(ctx, "all")
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, "debug.log")))
	writeFile(t, dir, "fresh.log", "new ignored file\n", 0o644)
	writeFile(t, dir, "node_modules/y.js", "still excluded\n", 0o644)
	require.NoError(t, c.Restore(ctx, cp.ID))
	assert.FileExists(t, filepath.Join(dir, "debug.log"))
	assert.NoFileExists(t, filepath.Join(dir, "fresh.log"), "IncludeIgnored: ignored files are managed too")
	assert.FileExists(t, filepath.Join(dir, "node_modules/y.js"), "Exclude: left alone")
}

func TestOversize(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		policy  checkpoint.OversizePolicy
		wantErr error
	}{
		{"fail", checkpoint.OversizeFail, checkpoint.ErrFileTooLarge},
		{"skip", checkpoint.OversizeSkip, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newPlainDir(t)
			writeFile(t, dir, "big.bin", strings.Repeat("x", 2048), 0o644)
			c := newCheckpointer(t, dir, &checkpoint.Options{MaxFileSize: 1024, Oversize: tt.policy})
			cp, err := c.Create(ctx, "cap")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var tl *checkpoint.FileTooLargeError
				require.ErrorAs(t, err, &tl)
				assert.Equal(t, "big.bin", tl.Path)
				assert.Equal(t, int64(2048), tl.Size)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"big.bin"}, cp.Skipped)
			writeFile(t, dir, "big.bin", strings.Repeat("y", 4096), 0o644)
			writeFile(t, dir, "README.md", "changed\n", 0o644)
			require.NoError(t, c.Restore(ctx, cp.ID))
			b, err := os.ReadFile(filepath.Join(dir, "big.bin"))
			require.NoError(t, err)
			assert.Equal(t, strings.Repeat("y", 4096), string(b), "a skipped file is left alone")
			b, err = os.ReadFile(filepath.Join(dir, "README.md"))
			require.NoError(t, err)
			assert.Equal(t, "# plain\n", string(b))
		})
	}
}

func TestRestoreConflictChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	c := newCheckpointer(t, dir, nil)
	writeFile(t, dir, "out", "a file named out\n", 0o644)
	cp, err := c.Create(ctx, "file out")
	require.NoError(t, err)
	// "out" becomes a directory holding an ignored file, and other edits.
	require.NoError(t, os.Remove(filepath.Join(dir, "out")))
	writeFile(t, dir, "out/trace.log", "ignored content in the way\n", 0o644)
	writeFile(t, dir, "README.md", "edited\n", 0o644)
	before := readTree(t, dir, nil)
	_, err = c.Rewind(ctx, cp.ID)
	require.ErrorIs(t, err, checkpoint.ErrConflict)
	var ce *checkpoint.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "out", ce.Path)
	assert.Equal(t, before, readTree(t, dir, nil), "a refused restore changes nothing")
}

func TestPathScoped(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := newWorkspace(t, kind)
			c := newCheckpointer(t, dir, nil)
			paths := []string{"src/main.go", "docs/new page.md", filepath.Join(dir, "-lead.txt")}
			cp, err := c.CreateWith(ctx, checkpoint.CreateOptions{Label: "edit", CorrelationID: "corr-1", Paths: paths})
			require.NoError(t, err)
			// docs does not exist: the snapshot covers its absence, so that
			// a restore removes the directory created for the new page too.
			assert.Equal(t, []string{"-lead.txt", "docs", "src/main.go"}, cp.Paths)
			assert.True(t, cp.Scoped())

			writeFile(t, dir, "src/main.go", "package main // edited\n", 0o755)
			writeFile(t, dir, "docs/new page.md", "created by the edit\n", 0o644)
			writeFile(t, dir, "-lead.txt", "created too\n", 0o644)
			writeFile(t, dir, "unrelated.txt", "outside the scope\n", 0o644)

			changes, err := c.Diff(ctx, cp.ID)
			require.NoError(t, err)
			assert.ElementsMatch(t, []checkpoint.Change{
				{Path: "-lead.txt", Kind: checkpoint.Added},
				{Path: "docs/new page.md", Kind: checkpoint.Added},
				{Path: "src/main.go", Kind: checkpoint.Modified},
			}, changes)

			require.NoError(t, c.Restore(ctx, cp.ID))
			b, err := os.ReadFile(filepath.Join(dir, "src/main.go"))
			require.NoError(t, err)
			assert.Equal(t, "package main\n", string(b))
			st, err := os.Stat(filepath.Join(dir, "src/main.go"))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
			assert.NoFileExists(t, filepath.Join(dir, "docs/new page.md"))
			assert.NoDirExists(t, filepath.Join(dir, "docs"))
			assert.NoFileExists(t, filepath.Join(dir, "-lead.txt"))
			assert.FileExists(t, filepath.Join(dir, "unrelated.txt"), "outside the scope: untouched")

			list, err := c.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 2)
			assert.Equal(t, "corr-1", list[1].CorrelationID)
			assert.Equal(t, cp.Paths, list[0].Paths, "the undo checkpoint has the same scope")
		})
	}
}

func TestPathScopedRejectsBadPaths(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	require.NoError(t, os.Symlink("src", filepath.Join(dir, "via-link")))
	c := newCheckpointer(t, dir, nil)
	tests := []struct {
		name  string
		paths []string
	}{
		{"empty list", []string{}},
		{"escape", []string{"../outside.txt"}},
		{"absolute outside", []string{"/etc/passwd"}},
		{"git dir", []string{".git/config"}},
		{"git dir any case", []string{"sub/.GIT/hooks/x"}},
		{"beyond symlink", []string{"via-link/main.go"}},
		{"nul", []string{"a\x00b"}},
		{"empty path", []string{""}},
		{"absolute escape", []string{filepath.Join(dir, "..", "x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CreateWith(ctx, checkpoint.CreateOptions{Label: "bad", Paths: tt.paths})
			require.ErrorIs(t, err, checkpoint.ErrInvalidPath)
			_, err = c.SnapshotPaths(ctx, "bad", "", tt.paths)
			require.ErrorIs(t, err, checkpoint.ErrInvalidPath)
		})
	}
	// A path outside the workspace is named in the error.
	_, err := c.SnapshotPaths(ctx, "bad", "", []string{"src/main.go", "/etc/passwd"})
	require.ErrorContains(t, err, `"/etc/passwd" is outside the workspace`)
	require.ErrorContains(t, err, "[1]")
}

func TestListCountsAndOrder(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	c := newCheckpointer(t, dir, &checkpoint.Options{Clock: clk.Now})
	cp1, err := c.Create(ctx, "first") // 3 files against the empty workspace
	require.NoError(t, err)
	writeFile(t, dir, "a.txt", "a", 0o644)
	writeFile(t, dir, "README.md", "changed", 0o644)
	cp2, err := c.Create(ctx, "second") // same second: order falls back to the id
	require.NoError(t, err)
	clk.Advance(time.Second)
	writeFile(t, dir, "a.txt", "a2", 0o644)
	cp3, err := c.CreateWith(ctx, checkpoint.CreateOptions{Label: "scoped", Paths: []string{"a.txt", "b.txt"}})
	require.NoError(t, err)

	list, err := c.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, []string{cp3.ID, cp2.ID, cp1.ID}, []string{list[0].ID, list[1].ID, list[2].ID})
	assert.Equal(t, []int{1, 2, 3}, []int{list[0].FilesChanged, list[1].FilesChanged, list[2].FilesChanged})
	assert.Equal(t, -1, cp1.FilesChanged, "only List counts")
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	var mu sync.Mutex
	var pruned []string
	c := newCheckpointer(t, dir, &checkpoint.Options{Clock: clk.Now, OnEvent: func(ev checkpoint.Event) {
		if ev.Kind == checkpoint.Pruned {
			mu.Lock()
			pruned = append(pruned, ev.Checkpoint.ID)
			mu.Unlock()
		}
	}})
	var ids []string // oldest first, one hour apart
	for i := 0; i < 5; i++ {
		cp, err := c.Create(ctx, "n")
		require.NoError(t, err)
		ids = append(ids, cp.ID)
		clk.Advance(time.Hour)
	}
	// now = +5h; ages 5h,4h,3h,2h,1h
	tests := []struct {
		name    string
		opts    checkpoint.PruneOptions
		wantErr bool
		want    []string // pruned, newest first
	}{
		{"nothing set", checkpoint.PruneOptions{}, true, nil},
		{"negative", checkpoint.PruneOptions{KeepLast: -1}, true, nil},
		{"keep 4", checkpoint.PruneOptions{KeepLast: 4}, false, []string{ids[0]}},
		{"keep 1 but young ones", checkpoint.PruneOptions{KeepLast: 1, OlderThan: 150 * time.Minute}, false, []string{ids[2], ids[1]}},
		{"older than 90m", checkpoint.PruneOptions{OlderThan: 90 * time.Minute}, false, []string{ids[3]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pruned = nil
			got, err := c.Prune(ctx, tt.opts)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			var gotIDs []string
			for _, cp := range got {
				gotIDs = append(gotIDs, cp.ID)
			}
			assert.Equal(t, tt.want, gotIDs)
			assert.Equal(t, tt.want, pruned)
		})
	}
	list, err := c.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, ids[4], list[0].ID)
	err = c.Restore(ctx, ids[0])
	require.ErrorIs(t, err, checkpoint.ErrNotFound)
}

func TestBatch(t *testing.T) {
	ctx := context.Background()
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		fn        func(dir string) func(context.Context) error
		wantErr   error
		wantPanic any
		rolled    bool
	}{
		{"success keeps changes", func(dir string) func(context.Context) error {
			return func(context.Context) error { writeFile(t, dir, "kept.txt", "k", 0o644); return nil }
		}, nil, nil, false},
		{"error rolls back", func(dir string) func(context.Context) error {
			return func(context.Context) error { writeFile(t, dir, "README.md", "half-done", 0o644); return errBoom }
		}, errBoom, nil, true},
		{"panic rolls back and re-panics", func(dir string) func(context.Context) error {
			return func(context.Context) error { writeFile(t, dir, "README.md", "half-done", 0o644); panic("kaboom") }
		}, nil, "kaboom", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newPlainDir(t)
			var events []checkpoint.Event
			c := newCheckpointer(t, dir, &checkpoint.Options{OnEvent: func(ev checkpoint.Event) { events = append(events, ev) }})
			before := readTree(t, dir, nil)
			var res checkpoint.BatchResult
			var err error
			run := func() { res, err = c.Batch(ctx, "batch", tt.fn(dir)) }
			if tt.wantPanic != nil {
				assert.PanicsWithValue(t, tt.wantPanic, run)
			} else {
				run()
			}
			if tt.rolled {
				assert.Equal(t, before, readTree(t, dir, nil))
				last := events[len(events)-1]
				require.Equal(t, checkpoint.Restored, last.Kind)
				require.Error(t, last.Cause)
			} else {
				assert.FileExists(t, filepath.Join(dir, "kept.txt"))
				require.NoError(t, err)
				require.Len(t, events, 1)
				assert.Equal(t, checkpoint.Created, events[0].Kind)
				assert.Equal(t, checkpoint.ReasonBatch, events[0].Checkpoint.Reason)
			}
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var be *checkpoint.BatchError
				require.ErrorAs(t, err, &be)
				assert.True(t, be.RolledBack)
				assert.NoError(t, be.RollbackErr)
				assert.True(t, res.RolledBack)
				assert.Equal(t, be.Undo, res.Rollback.Undo.ID)
				assert.Equal(t, res.Checkpoint.ID, res.Rollback.Restored.ID)
				// The failed state is itself kept: it can be inspected or restored.
				_, err := c.Rewind(ctx, be.Undo)
				require.NoError(t, err)
				b, _ := os.ReadFile(filepath.Join(dir, "README.md"))
				assert.Equal(t, "half-done", string(b))
			}
			if tt.wantPanic != nil {
				var pe *checkpoint.PanicError
				require.ErrorAs(t, events[len(events)-1].Cause, &pe)
				assert.Equal(t, tt.wantPanic, pe.Value)
			}
		})
	}
}

func TestBatchRollsBackAfterCancel(t *testing.T) {
	dir := newPlainDir(t)
	c := newCheckpointer(t, dir, nil)
	before := readTree(t, dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.Batch(ctx, "cancelled", func(ctx context.Context) error {
		writeFile(t, dir, "partial.txt", "p", 0o644)
		cancel()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, before, readTree(t, dir, nil))
}

func TestEvents(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	var events []checkpoint.Event
	var c *checkpoint.Checkpointer
	c = newCheckpointer(t, dir, &checkpoint.Options{OnEvent: func(ev checkpoint.Event) {
		events = append(events, ev)
		_, err := c.List(ctx) // no lock is held during the callback
		require.NoError(t, err)
	}})
	cp, err := c.CreateWith(ctx, checkpoint.CreateOptions{Label: "e", CorrelationID: "decision-42"})
	require.NoError(t, err)
	writeFile(t, dir, "x", "x", 0o644)
	res, err := c.Rewind(ctx, cp.ID)
	require.NoError(t, err)
	_, err = c.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1})
	require.NoError(t, err)

	kinds := make([]string, len(events))
	for i, ev := range events {
		kinds[i] = ev.Kind.String()
		assert.Equal(t, c.Workspace(), ev.Workspace)
	}
	assert.Equal(t, []string{"checkpoint_created", "checkpoint_created", "checkpoint_restored", "checkpoint_pruned"}, kinds)
	assert.Equal(t, "decision-42", events[0].Checkpoint.CorrelationID)
	assert.Equal(t, res.Undo.ID, events[2].Undo)
	assert.Equal(t, 1, events[2].Changes)
	assert.Equal(t, cp.ID, events[3].Checkpoint.ID)
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	c := newCheckpointer(t, dir, nil)
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"restore bad id", func() error { return c.Restore(ctx, "../../heads/main") }, checkpoint.ErrInvalidID},
		{"restore uppercase id", func() error { return c.Restore(ctx, "01A20484-BA5B-7B32-8968-47D1A901831F") }, checkpoint.ErrInvalidID},
		{"restore unknown id", func() error { return c.Restore(ctx, "01a20484-ba5b-7b32-8968-47d1a901831f") }, checkpoint.ErrNotFound},
		{"rewind n too far", func() error { _, err := c.RewindN(ctx, 3); return err }, checkpoint.ErrNotFound},
		{"diff bad id", func() error { _, err := c.Diff(ctx, "x"); return err }, checkpoint.ErrInvalidID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.call(), tt.want)
		})
	}
	_, err := c.RewindN(ctx, 0)
	require.ErrorContains(t, err, "n = 0")
	_, err = c.CreateWith(ctx, checkpoint.CreateOptions{Label: "bad\xffutf8"})
	require.ErrorContains(t, err, "CreateOptions.Label")
	_, err = c.Batch(ctx, "nil", nil)
	require.Error(t, err)
}

func TestNewErrors(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	file := filepath.Join(dir, "README.md")
	tests := []struct {
		name    string
		dir     string
		opts    *checkpoint.Options
		wantIs  error
		wantMsg string
	}{
		{"missing git", dir, &checkpoint.Options{GitPath: "/nonexistent/git"}, checkpoint.ErrGitNotFound, ""},
		{"git not in PATH", dir, &checkpoint.Options{GitPath: "reins-no-such-git"}, checkpoint.ErrGitNotFound, ""},
		{"not a directory", file, nil, nil, "not a directory"},
		{"missing workspace", filepath.Join(dir, "nope"), nil, nil, "no such file"},
		{"bad oversize policy", dir, &checkpoint.Options{Oversize: 7}, nil, "Options.Oversize"},
		{"bad exclude", dir, &checkpoint.Options{Exclude: []string{"a\nb"}}, nil, "Options.Exclude[0]"},
		{"shadow inside workspace", dir, &checkpoint.Options{ShadowRoot: filepath.Join(dir, "shadow")}, nil, "inside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkpoint.New(ctx, tt.dir, tt.opts)
			require.Error(t, err)
			if tt.wantIs != nil {
				require.ErrorIs(t, err, tt.wantIs)
			}
			if tt.wantMsg != "" {
				require.ErrorContains(t, err, tt.wantMsg)
			}
		})
	}
}

// A workspace that is a subdirectory of a repository snapshots just that
// subdirectory; checkpoints of sibling workspaces stay apart.
func TestSubdirectoryWorkspace(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	ws := filepath.Join(repo, "src")
	c := newCheckpointer(t, ws, nil)
	other := newCheckpointer(t, filepath.Join(repo, "bin"), nil)
	assert.False(t, c.Shadow())
	cp, err := c.Create(ctx, "src only")
	require.NoError(t, err)
	_, err = other.Create(ctx, "bin only")
	require.NoError(t, err)
	writeFile(t, repo, "src/new.go", "package main\n", 0o644)
	writeFile(t, repo, "README.md", "outside the workspace\n", 0o644)
	require.NoError(t, c.Restore(ctx, cp.ID))
	assert.NoFileExists(t, filepath.Join(repo, "src/new.go"))
	b, _ := os.ReadFile(filepath.Join(repo, "README.md"))
	assert.Equal(t, "outside the workspace\n", string(b))
	list, err := c.List(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 2) // its own and the undo; not bin's
	require.ErrorIs(t, other.Restore(ctx, cp.ID), checkpoint.ErrNotFound)
}

// The user's hooks and config must not run or change anything.
func TestUserConfigAndHooksIgnored(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\ntouch " + marker + "\n"
	for _, h := range []string{"reference-transaction", "post-checkout", "post-index-change", "pre-commit"} {
		writeFile(t, dir, ".git/hooks/"+h, hook, 0o755)
	}
	runGit(t, dir, "config", "core.fsmonitor", filepath.Join(dir, ".git/hooks/pre-commit"))
	runGit(t, dir, "config", "core.autocrlf", "true")
	runGit(t, dir, "config", "commit.gpgSign", "true")
	runGit(t, dir, "config", "core.fileMode", "false")
	c := newCheckpointer(t, dir, nil)
	writeFile(t, dir, "x.sh", "a\r\nb\n", 0o755)
	cp, err := c.Create(ctx, "with hostile config")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(filepath.Join(dir, "x.sh"), 0o644))
	writeFile(t, dir, "x.sh", "other", 0o644)
	require.NoError(t, c.Restore(ctx, cp.ID))
	b, _ := os.ReadFile(filepath.Join(dir, "x.sh"))
	assert.Equal(t, "a\r\nb\n", string(b))
	st, _ := os.Stat(filepath.Join(dir, "x.sh"))
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	assert.NoFileExists(t, marker, "a user hook ran")
}

func TestShadowRepositoryLocation(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	shadow := t.TempDir()
	c := newCheckpointer(t, dir, &checkpoint.Options{ShadowRoot: shadow})
	assert.True(t, c.Shadow())
	_, err := c.Create(ctx, "x")
	require.NoError(t, err)
	entries, err := os.ReadDir(shadow)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.True(t, strings.HasPrefix(entries[0].Name(), filepath.Base(dir)+"-"))
	assert.NoDirExists(t, filepath.Join(dir, ".git"), "a shadow repository lives outside the workspace")
	// A second Checkpointer on the same workspace finds the same history.
	c2 := newCheckpointer(t, dir, &checkpoint.Options{ShadowRoot: shadow})
	list, err := c2.List(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 1)
}

func TestMissingGitIsNotAPanic(t *testing.T) {
	dir := newPlainDir(t)
	t.Setenv("PATH", t.TempDir())
	_, err := exec.LookPath("git")
	require.Error(t, err)
	_, err = checkpoint.New(context.Background(), dir, nil)
	require.ErrorIs(t, err, checkpoint.ErrGitNotFound)
}

// Each checkpoint is one pack; they are consolidated before lookups slow
// down, and every checkpoint stays restorable.
func TestPacksAreConsolidated(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	shadow := t.TempDir()
	c := newCheckpointer(t, dir, &checkpoint.Options{ShadowRoot: shadow})
	var ids []string
	for i := 0; i < 40; i++ {
		writeFile(t, dir, "counter.txt", fmt.Sprint(i), 0o644)
		cp, err := c.Create(ctx, "n")
		require.NoError(t, err)
		ids = append(ids, cp.ID)
	}
	packs, err := filepath.Glob(filepath.Join(shadow, "*", "repo", "objects", "pack", "*.pack"))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(packs), 33)
	require.NoError(t, c.Restore(ctx, ids[3]))
	b, err := os.ReadFile(filepath.Join(dir, "counter.txt"))
	require.NoError(t, err)
	assert.Equal(t, "3", string(b))
}

// A restore never writes through a hard link: a workspace file linked to a
// file outside the workspace gets a new inode, and the outside file keeps
// its content.
func TestRestoreDoesNotWriteThroughHardLinks(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	c := newCheckpointer(t, dir, nil)
	cp, err := c.Create(ctx, "before")
	require.NoError(t, err)
	outside := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(outside, []byte("outside content\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "README.md")))
	require.NoError(t, os.Link(outside, filepath.Join(dir, "README.md")))
	require.NoError(t, c.Restore(ctx, cp.ID))
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "outside content\n", string(b))
	b, err = os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "# plain\n", string(b))
}

// A ref under the checkpoint namespace whose metadata cannot be read makes
// List and Restore fail with an error naming it, rather than being
// skipped or trusted.
func TestForgedCheckpointFailsClosed(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	c := newCheckpointer(t, dir, nil)
	_, err := c.Create(ctx, "real")
	require.NoError(t, err)
	const forged = "01a20484-ba5b-7b32-8968-47d1a901831f"
	head := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	runGit(t, dir, "update-ref", checkpoint.RefPrefix+forged, head)
	_, err = c.List(ctx)
	require.ErrorContains(t, err, forged)
	err = c.Restore(ctx, forged)
	require.ErrorContains(t, err, "metadata")
	runGit(t, dir, "update-ref", "-d", checkpoint.RefPrefix+forged)
	_, err = c.List(ctx)
	require.NoError(t, err)
}

// File names are bytes: names that are not UTF-8, or that hold quotes,
// backslashes, tabs and newlines, snapshot and restore like any other.
func TestUnusualFileNames(t *testing.T) {
	ctx := context.Background()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			dir := newWorkspace(t, kind)
			c := newCheckpointer(t, dir, nil)
			names := []string{"latin1-\xe9.txt", "quote\"d", "back\\slash", "tab\tname", "new\nline", "-rf", "--", " lead space"}
			for _, n := range names {
				writeFile(t, dir, "odd/"+n, "content of "+n, 0o644)
			}
			want := readTree(t, dir, isIgnoredByTestRules)
			cp, err := c.Create(ctx, "odd names")
			require.NoError(t, err)
			for _, n := range names {
				writeFile(t, dir, "odd/"+n, "changed", 0o755)
			}
			writeFile(t, dir, "odd/new-\xff", "added", 0o644)
			require.NoError(t, c.Restore(ctx, cp.ID))
			assert.Equal(t, want, readTree(t, dir, isIgnoredByTestRules))

			// The same names below a directory of a scoped checkpoint
			// (its own tree objects, written by the package).
			id, err := c.SnapshotPaths(ctx, "odd names, scoped", "", []string{"odd"})
			require.NoError(t, err)
			for _, n := range names {
				writeFile(t, dir, "odd/"+n, "changed again", 0o755)
			}
			writeFile(t, dir, "odd/new-\xff", "added again", 0o644)
			require.NoError(t, c.Restore(ctx, id))
			assert.Equal(t, want, readTree(t, dir, isIgnoredByTestRules))
		})
	}
}

// A cancelled context stops an operation without leaving a checkpoint or
// changing the workspace.
func TestCancelledContext(t *testing.T) {
	dir := newPlainDir(t)
	c := newCheckpointer(t, dir, nil)
	cp, err := c.Create(context.Background(), "kept")
	require.NoError(t, err)
	writeFile(t, dir, "README.md", "edited\n", 0o644)
	before := readTree(t, dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Create(ctx, "cancelled")
	require.ErrorIs(t, err, context.Canceled)
	_, err = c.Rewind(ctx, cp.ID)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, before, readTree(t, dir, nil))
	list, err := c.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, cp.ID, list[0].ID)
}
