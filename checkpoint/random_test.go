package checkpoint_test

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
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
		if !isIgnoredByTestRules(rel) && rel != ".gitignore" && !isTestSecret(rel) {
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
				runRandomized(t, kind, seed, false)
			})
		}
	}
}

// TestRandomizedPortable is TestRandomized with files read and the
// private index maintained as on platforms without git's stat data.
func TestRandomizedPortable(t *testing.T) {
	for _, kind := range []string{"git", "plain"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			runRandomized(t, kind, 101, true)
		})
	}
}

// TestRandomizedSeeded is TestRandomized in a repository whose files are
// older than its index, so that the first checkpoint starts from the
// user's index.
func TestRandomizedSeeded(t *testing.T) {
	for seed := uint64(201); seed <= 202; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			runRandomized(t, "git-old", seed, false)
		})
	}
}

func runRandomized(t *testing.T, kind string, seed uint64, portable bool) {
	ctx := context.Background()
	dir := newPlainDir(t)
	switch kind {
	case "git":
		dir = newRepo(t)
	case "git-old":
		dir = newRepo(t)
		backdate(t, dir)
		kind = "git"
	}
	var user userState
	if kind == "git" {
		user = readUserState(t, dir)
	}
	c := newCheckpointer(t, dir, nil)
	if portable {
		checkpoint.SetPortable(c)
	}
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

// isTestSecret matches the read-protected names the boundary test writes.
func isTestSecret(rel string) bool {
	for _, el := range strings.Split(strings.ToLower(rel), "/") {
		switch {
		case el == ".env", el == ".ssh", el == "id_rsa", el == "id_ed25519", strings.HasPrefix(el, ".env."):
			return true
		}
	}
	return false
}

var (
	secretSpots = []string{".env", "a/.env.local", ".ssh/id_rsa", "b/ID_ED25519", "c d/.Env.prod", "deep/er/.env"}
	ignoreLines = []string{"*.log", "/build/", ".env", "ign/", "*.tmp", "nest/", "a/"}
	ignoredish  = []string{"i0.log", "build/x", "build/sub/q", "ign/y", "z.tmp", "a/w.tmp"}
)

// boundaryStep changes what the snapshots cover: the ignore rules,
// ignored files, secrets (their contents are added to secrets) and a
// nested repository.
func (o *fsOps) boundaryStep(secrets *[]string) string {
	switch o.rng.IntN(7) {
	case 0: // rewrite or delete .gitignore
		if o.rng.IntN(4) == 0 {
			o.clear(".gitignore")
			return "delete .gitignore"
		}
		var lines []string
		for _, l := range ignoreLines {
			if o.rng.IntN(2) == 0 {
				lines = append(lines, l)
			}
		}
		o.clear(".gitignore")
		writeFile(o.t, o.root, ".gitignore", strings.Join(lines, "\n")+"\n", 0o644)
		return "gitignore " + strings.Join(lines, ",")
	case 1: // a secret appears or changes
		p := secretSpots[o.rng.IntN(len(secretSpots))]
		o.gen++
		content := fmt.Sprintf("SECRET-%d-%d-%x", o.gen, o.rng.IntN(1000), o.rng.Uint64())
		*secrets = append(*secrets, content)
		o.clear(p)
		writeFile(o.t, o.root, p, content, 0o600)
		return "secret " + p
	case 2: // a file that some rules ignore
		p := ignoredish[o.rng.IntN(len(ignoredish))]
		o.clear(p)
		writeFile(o.t, o.root, p, o.content(), 0o644)
		return "ignoredish " + p
	case 3: // a nested repository appears
		o.clear("nest/r/f.txt")
		writeFile(o.t, o.root, "nest/r/f.txt", o.content(), 0o644)
		if _, err := os.Lstat(o.abs("nest/r/.git")); err != nil {
			runGit(o.t, o.abs("nest/r"), "init", "-q")
		}
		return "nested repo"
	case 4: // its .git goes away
		require.NoError(o.t, os.RemoveAll(o.abs("nest/r/.git")))
		return "rm nest/r/.git"
	case 5: // files inside it change
		if st, err := os.Lstat(o.abs("nest/r")); err == nil && st.IsDir() {
			writeFile(o.t, o.root, fmt.Sprintf("nest/r/g%d.txt", o.rng.IntN(2)), o.content(), 0o644)
			return "nested edit"
		}
		return "nested edit skipped"
	default:
		return o.step()
	}
}

// TestRandomizedBoundaries mutates ignored files, .gitignore, secrets and
// a nested repository between snapshots and restores, and checks after
// every restore that: every covered file is as snapshotted; nothing the
// target did not cover (ignored, secret or nested when it was taken) was
// deleted or changed; everything else the restore changed or removed is
// in the checkpoint it took first; and, at the end, that no secret ever
// reached the object store.
func TestRandomizedBoundaries(t *testing.T) {
	for _, kind := range []string{"git", "plain"} {
		for seed := uint64(1); seed <= uint64(*randomSeeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", kind, seed), func(t *testing.T) {
				t.Parallel()
				runRandomizedBoundaries(t, kind, seed, false)
			})
		}
	}
}

// TestRandomizedBoundariesPortable is TestRandomizedBoundaries with files
// read and the private index maintained as on platforms without git's
// stat data.
func TestRandomizedBoundariesPortable(t *testing.T) {
	for _, kind := range []string{"git", "plain"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			runRandomizedBoundaries(t, kind, 101, true)
		})
	}
}

func runRandomizedBoundaries(t *testing.T, kind string, seed uint64, portable bool) {
	ctx := context.Background()
	w := newBoundaryWS(t, kind, nil)
	if portable {
		checkpoint.SetPortable(w.c)
	}
	o := &fsOps{t: t, rng: rand.New(rand.NewPCG(seed, 0xb0dd)), root: w.dir}
	var secrets, log []string
	gitDir := ""
	treePaths := func(commit string) map[string]bool {
		if gitDir == "" {
			gitDir = w.gitDir(t)
		}
		cmd := exec.Command("git", "--git-dir="+gitDir, "ls-tree", "-r", "-z", "--name-only", commit)
		cmd.Env = gitEnv()
		out, err := cmd.Output()
		require.NoError(t, err)
		set := map[string]bool{}
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				set[p] = true
			}
		}
		return set
	}
	type snap struct {
		id        string
		commit    string
		all       map[string]entry // every file at snapshot time
		tree      map[string]bool  // what the snapshot holds
		uncovDirs []string         // nested repositories then
	}
	snapDirs := func() []string {
		if _, err := os.Lstat(o.abs("nest/r/.git")); err == nil {
			return []string{"nest/r"}
		}
		return nil
	}
	under := func(p string, dirs []string) bool {
		for _, d := range dirs {
			if strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	step := func() {
		if o.rng.IntN(2) == 0 {
			log = append(log, o.boundaryStep(&secrets))
		} else {
			log = append(log, o.step())
		}
	}
	var snaps []snap
	for round := 0; round < 10; round++ {
		for i := 0; i < 1+o.rng.IntN(8); i++ {
			step()
		}
		s := snap{all: readTree(t, w.dir, nil), uncovDirs: snapDirs()}
		cp, err := w.c.Create(ctx, fmt.Sprintf("round %d", round))
		require.NoError(t, err, "ops: %v", log)
		s.id, s.tree, s.commit = cp.ID, treePaths(cp.Commit), cp.Commit
		for p := range s.tree {
			require.False(t, isTestSecret(p), "secret %s in a snapshot; ops: %v", p, log)
		}
		snaps = append(snaps, s)
		for i := 0; i < 1+o.rng.IntN(8); i++ {
			step()
		}
		if o.rng.IntN(3) == 0 {
			continue
		}
		target := snaps[o.rng.IntN(len(snaps))]
		before := readTree(t, w.dir, nil)
		res, err := w.c.Rewind(ctx, target.id)
		log = append(log, "restore "+target.id)
		after := readTree(t, w.dir, nil)
		if err != nil {
			var re *checkpoint.RestoreError
			require.ErrorAs(t, err, &re, "ops: %v", log)
			require.Equal(t, checkpoint.RestoreConflict, re.Failure, "%v; ops: %v", err, log)
			require.Equal(t, before, after, "a refused restore changed the workspace; ops: %v", log)
			continue
		}
		undo := treePaths(res.Undo.Commit)
		for p := range target.tree {
			assert.Equal(t, target.all[p], after[p], "covered file %s not restored; ops: %v", p, log)
		}
		for p, e := range before {
			// Not covered: a secret, in a nested repository then, or a
			// file that existed then and was left out (ignored, skipped).
			_, existed := target.all[p]
			uncovered := !target.tree[p] && (isTestSecret(p) || under(p, target.uncovDirs) || existed)
			if uncovered {
				if !assert.Equal(t, e, after[p], "%s, not covered by the target, was changed; ops: %v", p, log) {
					out, _ := exec.Command("git", "--git-dir="+gitDir, "cat-file", "-p", target.commit+"^:uncovered").CombinedOutput()
					t.Logf("the target's record of uncovered paths: %q; it holds %v; files then: %v",
						out, slices.Sorted(maps.Keys(target.tree)), slices.Sorted(maps.Keys(target.all)))
				}
				continue
			}
			if a, ok := after[p]; !ok || a != e {
				assert.True(t, undo[p], "%s was changed or removed but is not in the undo checkpoint; ops: %v", p, log)
			}
		}
		for p, e := range after {
			if !target.tree[p] {
				assert.Equal(t, before[p], e, "%s appeared or changed although the target does not hold it; ops: %v", p, log)
			}
		}
	}
	w.requireNoSecret(t, secrets...)
}

// backdate makes every file of the repository's work tree an hour old and
// refreshes the user's index, as in a repository not edited this second.
func backdate(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			return os.Chtimes(p, old, old)
		}
		return nil
	}))
	cmd := exec.Command("git", "update-index", "-q", "--refresh")
	cmd.Dir, cmd.Env = dir, gitEnv()
	_ = cmd.Run() // exits 1 when a file needs updating
}

// TestRandomizedScoped checks checkpoints scoped to random write sets
// (files, directories, absent paths, deep absent paths) against real git
// repositories and plain directories, in both ways of storing them. After
// every restore: each covered path that a full snapshot covers is exactly
// as snapshotted (content, mode, absence), everything else (outside the
// paths, ignored files, secrets) is exactly as it was just before the
// restore; a refused restore changed nothing; undoing a restore gives back
// the state it replaced; the user's repository never moves; no secret
// reaches the object store and git finds every object well formed.
func TestRandomizedScoped(t *testing.T) {
	for _, kind := range []string{"git", "plain"} {
		for _, mode := range writeModes {
			seeds := uint64(*randomSeeds)
			if mode == "git" {
				seeds = 1 // the same snapshots, stored by fast-import: one seed each
			}
			for seed := uint64(1); seed <= seeds; seed++ {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", kind, mode, seed), func(t *testing.T) {
					t.Parallel()
					runRandomizedScoped(t, kind, mode, seed)
				})
			}
		}
	}
}

func runRandomizedScoped(t *testing.T, kind, mode string, seed uint64) {
	ctx := context.Background()
	w := newBoundaryWS(t, kind, nil)
	checkpoint.SetLoose(w.c, mode == "loose")
	var user userState
	if kind == "git" {
		user = readUserState(t, w.dir)
	}
	o := &fsOps{t: t, rng: rand.New(rand.NewPCG(seed, 0x5c0e)), root: w.dir}
	var secrets, log []string
	step := func() {
		if o.rng.IntN(8) == 0 {
			p := secretSpots[o.rng.IntN(len(secretSpots))]
			o.gen++
			content := fmt.Sprintf("SCOPED-SECRET-%d-%x", o.gen, o.rng.Uint64())
			secrets = append(secrets, content)
			o.clear(p)
			writeFile(t, w.dir, p, content, 0o600)
			log = append(log, "secret "+p)
			return
		}
		log = append(log, o.step())
	}
	pickScope := func() []string {
		files, dirs := o.existing()
		var scope []string
		for i := 0; i < 1+o.rng.IntN(3); i++ {
			switch k := o.rng.IntN(5); {
			case k == 0 && len(files) > 0:
				scope = append(scope, files[o.rng.IntN(len(files))])
			case k == 1 && len(dirs) > 0:
				scope = append(scope, dirs[o.rng.IntN(len(dirs))])
			case k == 2:
				scope = append(scope, fmt.Sprintf("fresh%d/out/%d.txt", o.rng.IntN(2), o.rng.IntN(2)))
			case k == 3:
				scope = append(scope, filepath.Join(w.dir, o.pick())) // absolute
			default:
				scope = append(scope, o.pick())
			}
		}
		return scope
	}
	// inScope changes what the checkpoint covers: files at or below its
	// paths appear, change, lose their executable bit, become links or
	// directories, vanish; ignored files and secrets appear among them.
	inScope := func(scope []string) {
		s := scope[o.rng.IntN(len(scope))]
		if filepath.IsAbs(s) {
			s, _ = filepath.Rel(w.dir, s)
			s = filepath.ToSlash(s)
		}
		st, err := os.Lstat(o.abs(s))
		name := s + "/" + opNames[o.rng.IntN(len(opNames))]
		switch k := o.rng.IntN(8); {
		case err != nil || k == 0: // create the path itself (a file, or a directory with content)
			o.clear(s)
			if o.rng.IntN(2) == 0 {
				writeFile(t, w.dir, s, o.content(), 0o644)
			} else {
				writeFile(t, w.dir, s+"/inner/leaf", o.content(), 0o755)
			}
			log = append(log, "scope create "+s)
		case !st.IsDir():
			if k < 4 && st.Mode().IsRegular() {
				require.NoError(t, os.WriteFile(o.abs(s), []byte(o.content()), 0))
				log = append(log, "scope modify "+s)
			} else {
				require.NoError(t, os.Remove(o.abs(s)))
				log = append(log, "scope delete "+s)
			}
		case k == 1:
			o.clear(name)
			writeFile(t, w.dir, name, o.content(), 0o644)
			log = append(log, "scope create "+name)
		case k == 2:
			writeFile(t, w.dir, s+"/k.log", o.content(), 0o644) // ignored
			log = append(log, "scope ignored "+s+"/k.log")
		case k == 3:
			o.gen++
			content := fmt.Sprintf("SCOPED-SECRET-%d-%x", o.gen, o.rng.Uint64())
			secrets = append(secrets, content)
			o.clear(s + "/.env")
			writeFile(t, w.dir, s+"/.env", content, 0o600)
			log = append(log, "scope secret "+s+"/.env")
		case k == 4:
			require.NoError(t, os.RemoveAll(o.abs(s)))
			log = append(log, "scope rmdir "+s)
		default: // change, chmod or remove a file below it
			var below []string
			_ = filepath.WalkDir(o.abs(s), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					below = append(below, p)
				}
				return nil
			})
			if len(below) == 0 {
				return
			}
			p := below[o.rng.IntN(len(below))]
			switch o.rng.IntN(3) {
			case 0:
				if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
					require.NoError(t, os.WriteFile(p, []byte(o.content()), 0))
				}
			case 1:
				if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
					require.NoError(t, os.Chmod(p, st.Mode().Perm()^0o111))
				}
			default:
				require.NoError(t, os.Remove(p))
			}
			log = append(log, "scope edit "+p)
		}
	}
	leftAlone := func(p string) bool { return isIgnoredByTestRules(p) || isTestSecret(p) || p == ".gitignore" }
	restores, changes := 0, 0
	for round := 0; round < 12; round++ {
		for i := 0; i < 1+o.rng.IntN(6); i++ {
			step()
		}
		scope := pickScope()
		cp, err := w.c.CreateWith(ctx, checkpoint.CreateOptions{Label: fmt.Sprintf("round %d", round), Paths: scope})
		if err != nil {
			// Only a path through a symbolic link is refused.
			require.ErrorIs(t, err, checkpoint.ErrInvalidPath, "scope %q; ops: %v", scope, log)
			require.ErrorContains(t, err, "symbolic link", "scope %q; ops: %v", scope, log)
			continue
		}
		snap := readTree(t, w.dir, nil)
		for i := 0; i < 1+o.rng.IntN(6); i++ {
			if o.rng.IntN(2) == 0 {
				inScope(cp.Paths)
			} else {
				step()
			}
		}
		before := readTree(t, w.dir, nil)
		res, err := w.c.Rewind(ctx, cp.ID)
		log = append(log, fmt.Sprintf("restore %v", cp.Paths))
		after := readTree(t, w.dir, nil)
		if err != nil {
			var re *checkpoint.RestoreError
			require.ErrorAs(t, err, &re, "ops: %v", log)
			require.Equal(t, checkpoint.RestoreConflict, re.Failure, "%v; ops: %v", err, log)
			require.Equal(t, before, after, "a refused restore changed the workspace; ops: %v", log)
			continue
		}
		restores++
		changes += len(res.Changes)
		seen := map[string]bool{}
		for _, tree := range []map[string]entry{snap, before, after} {
			for p := range tree {
				if seen[p] {
					continue
				}
				seen[p] = true
				if covered(p, cp.Paths) && !leftAlone(p) {
					require.Equal(t, fmt.Sprint(snap[p]), fmt.Sprint(after[p]), "covered %s is not as snapshotted; scope %v; ops: %v", p, cp.Paths, log)
				} else {
					require.Equal(t, fmt.Sprint(before[p]), fmt.Sprint(after[p]), "%s (outside %v or left alone) changed; ops: %v", p, cp.Paths, log)
				}
			}
		}
		if o.rng.IntN(3) == 0 {
			_, err := w.c.Rewind(ctx, res.Undo.ID)
			require.NoError(t, err, "ops: %v", log)
			require.Equal(t, before, readTree(t, w.dir, nil), "undoing the restore; ops: %v", log)
			log = append(log, "undo")
		}
		if kind == "git" {
			require.Equal(t, user, readUserState(t, w.dir), "user repository state moved; ops: %v", log)
		}
	}
	require.NotZero(t, restores, "no restore was carried out; ops: %v", log)
	t.Logf("%d restores, %d files written or removed", restores, changes)
	w.requireNoSecret(t, secrets...)
	w.fsck(t)
}
