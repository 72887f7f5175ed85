package checkpoint_test

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fsOps applies random file operations to a workspace. Names come from a
// small alphabet (including spaces, unicode and leading dashes) so that
// operations collide: files replace directories, directories replace
// files, renames overwrite.
type fsOps struct {
	t    *testing.T
	rng  *rand.Rand
	root string
	gen  int
}

var randomSeeds = flag.Int("checkpoint.seeds", 3, "number of fixed seeds per workspace kind in TestRandomized")

var (
	opNames = []string{"a", "b", "c d", "-dash", "ünï", "x.txt", "é é.go", "--", "z"}
	opDirs  = []string{"", "a", "b", "c d", "-dash", "ünï", "a/b", "b/ünï", "c d/-dash", "deep/er/est"}
)

func (o *fsOps) pick() string {
	d := opDirs[o.rng.IntN(len(opDirs))]
	n := opNames[o.rng.IntN(len(opNames))]
	return path.Join(d, n)
}

// existing returns the non-ignored files and symlinks and the directories
// (not .git) currently in the workspace.
func (o *fsOps) existing() (files, dirs []string) {
	_ = filepath.WalkDir(o.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(o.root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			dirs = append(dirs, rel)
			return nil
		}
		if !isIgnoredByTestRules(rel) && rel != ".gitignore" {
			files = append(files, rel)
		}
		return nil
	})
	return files, dirs
}

func (o *fsOps) abs(rel string) string { return filepath.Join(o.root, filepath.FromSlash(rel)) }

// clear removes whatever is at rel or in the way of creating it as a file.
func (o *fsOps) clear(rel string) {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if st, err := os.Lstat(o.abs(d)); err == nil && !st.IsDir() {
			require.NoError(o.t, os.Remove(o.abs(d)))
		}
	}
	require.NoError(o.t, os.RemoveAll(o.abs(rel)))
}

func (o *fsOps) content() string {
	o.gen++
	n := o.rng.IntN(300)
	var b strings.Builder
	fmt.Fprintf(&b, "gen %d\n", o.gen)
	for i := 0; i < n; i++ {
		b.WriteByte(byte(o.rng.IntN(256))) // binary, CR, LF, NUL
	}
	return b.String()
}

// step applies one random operation and returns its description.
func (o *fsOps) step() string {
	files, dirs := o.existing()
	switch k := o.rng.IntN(11); {
	case k <= 2 || len(files) == 0: // create or overwrite
		p := o.pick()
		o.clear(p)
		perm := os.FileMode(0o644)
		if o.rng.IntN(3) == 0 {
			perm = 0o755
		}
		writeFile(o.t, o.root, p, o.content(), perm)
		return "create " + p
	case k == 3: // modify in place
		p := files[o.rng.IntN(len(files))]
		if st, err := os.Lstat(o.abs(p)); err == nil && st.Mode().IsRegular() {
			require.NoError(o.t, os.WriteFile(o.abs(p), []byte(o.content()), 0))
		}
		return "modify " + p
	case k == 4: // delete
		p := files[o.rng.IntN(len(files))]
		require.NoError(o.t, os.Remove(o.abs(p)))
		return "delete " + p
	case k == 5: // chmod
		p := files[o.rng.IntN(len(files))]
		if st, err := os.Lstat(o.abs(p)); err == nil && st.Mode().IsRegular() {
			perm := os.FileMode(0o755)
			if st.Mode().Perm()&0o100 != 0 {
				perm = 0o644
			}
			require.NoError(o.t, os.Chmod(o.abs(p), perm))
		}
		return "chmod " + p
	case k == 6: // symlink (sometimes dangling, sometimes to a directory)
		p := o.pick()
		o.clear(p)
		require.NoError(o.t, os.MkdirAll(path.Dir(o.abs(p)), 0o755))
		targets := []string{"a", "../outside", "x.txt", "deep/er", "missing/target", "ünï"}
		require.NoError(o.t, os.Symlink(targets[o.rng.IntN(len(targets))], o.abs(p)))
		return "symlink " + p
	case k == 7: // rename a file
		src := files[o.rng.IntN(len(files))]
		dst := o.pick()
		if dst == src || strings.HasPrefix(dst, src+"/") || strings.HasPrefix(src, dst+"/") {
			return "rename skipped"
		}
		o.clear(dst)
		require.NoError(o.t, os.MkdirAll(path.Dir(o.abs(dst)), 0o755))
		require.NoError(o.t, os.Rename(o.abs(src), o.abs(dst)))
		return "rename " + src + " -> " + dst
	case k == 8: // mkdir, with nested untracked content
		d := opDirs[1+o.rng.IntN(len(opDirs)-1)] + "/n" + fmt.Sprint(o.rng.IntN(3))
		o.clear(d)
		require.NoError(o.t, os.MkdirAll(o.abs(d), 0o755))
		if o.rng.IntN(2) == 0 {
			writeFile(o.t, o.root, d+"/inner/leaf", o.content(), 0o644)
		}
		return "mkdir " + d
	case k == 9 && len(dirs) > 0: // rmdir (recursively)
		d := dirs[o.rng.IntN(len(dirs))]
		if d == "ignored" || strings.HasPrefix(d, "build") {
			return "rmdir skipped"
		}
		require.NoError(o.t, os.RemoveAll(o.abs(d)))
		return "rmdir " + d
	default: // ignored files appear and change; they must survive restores
		p := fmt.Sprintf("i%d.log", o.rng.IntN(3))
		writeFile(o.t, o.root, p, o.content(), 0o644)
		return "ignored " + p
	}
}

// TestRandomized applies random operation sequences to real git
// repositories and plain directories, checkpointing and restoring along
// the way. After every restore the tree must equal the snapshot byte for
// byte and mode for mode (ignored files: as they were just before the
// restore), and the user's HEAD, index, branches and stash never move.
func TestRandomized(t *testing.T) {
	for _, kind := range []string{"git", "plain"} {
		for seed := uint64(1); seed <= uint64(*randomSeeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", kind, seed), func(t *testing.T) {
				t.Parallel()
				runRandomized(t, kind, seed)
			})
		}
	}
}

func runRandomized(t *testing.T, kind string, seed uint64) {
	ctx := context.Background()
	dir := newPlainDir(t)
	if kind == "git" {
		dir = newRepo(t)
	}
	var user userState
	if kind == "git" {
		user = readUserState(t, dir)
	}
	c := newCheckpointer(t, dir, nil)
	o := &fsOps{t: t, rng: rand.New(rand.NewPCG(seed, 0x5eed)), root: dir}
	notIgnored := func(rel string) bool { return isIgnoredByTestRules(rel) }
	onlyIgnored := func(rel string) bool { return !isIgnoredByTestRules(rel) }

	type snap struct {
		id   string
		tree map[string]entry
	}
	var snaps []snap
	var log []string
	for round := 0; round < 10; round++ {
		for i := 0; i < 1+o.rng.IntN(8); i++ {
			log = append(log, o.step())
		}
		cp, err := c.Create(ctx, fmt.Sprintf("round %d", round))
		require.NoError(t, err, "ops: %v", log)
		snaps = append(snaps, snap{cp.ID, readTree(t, dir, notIgnored)})
		for i := 0; i < 1+o.rng.IntN(8); i++ {
			log = append(log, o.step())
		}
		if o.rng.IntN(2) == 0 {
			target := snaps[o.rng.IntN(len(snaps))]
			ignoredBefore := readTree(t, dir, onlyIgnored)
			_, err := c.Rewind(ctx, target.id)
			require.NoError(t, err, "ops: %v", log)
			log = append(log, "restore "+target.id)
			assert.Equal(t, target.tree, readTree(t, dir, notIgnored), "tree after restore; ops: %v", log)
			assert.Equal(t, ignoredBefore, readTree(t, dir, onlyIgnored), "ignored files must be left alone")
		}
		if kind == "git" {
			require.Equal(t, user, readUserState(t, dir), "user repository state moved; ops: %v", log)
		}
	}
	// Older checkpoints are still restorable after all that.
	for i := len(snaps) - 1; i >= 0; i -= 4 {
		_, err := c.Rewind(ctx, snaps[i].id)
		require.NoError(t, err)
		require.Equal(t, snaps[i].tree, readTree(t, dir, notIgnored))
	}
	list, err := c.List(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(list), len(snaps))
	ids := make([]string, len(list))
	for i, cp := range list {
		ids[i] = cp.ID
	}
	for _, s := range snaps {
		require.True(t, slices.Contains(ids, s.id))
	}
	if kind == "git" {
		require.Equal(t, user, readUserState(t, dir))
	}
}
