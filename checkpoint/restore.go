package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// ChangeKind classifies a [Change].
type ChangeKind uint8

// Change kinds; the zero value is not valid.
const (
	Added    ChangeKind = iota + 1 // the path exists on the newer side only
	Modified                       // content, executable bit or file type differs
	Deleted                        // the path exists on the older side only
)

// String returns "added", "modified" or "deleted".
func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	}
	return "ChangeKind(" + strconv.Itoa(int(k)) + ")"
}

// Change is one file that differs between two states of the workspace.
type Change struct {
	Path string // workspace-relative, slash-separated
	Kind ChangeKind
}

// RewindResult reports a restore.
type RewindResult struct {
	// Restored is the checkpoint the workspace now matches.
	Restored Checkpoint
	// Undo is the checkpoint of the state the restore replaced (taken
	// first); rewinding to it undoes the restore.
	Undo Checkpoint
	// Changes are the files written or removed, from the replaced state's
	// point of view: Added were created, Deleted were removed.
	Changes []Change
}

// Restore makes the workspace exactly the checkpoint with this id (or, for
// a path-scoped checkpoint, makes those paths exactly as recorded). It is
// Rewind without the report; its signature is what the gate calls.
func (c *Checkpointer) Restore(ctx context.Context, id string) error {
	_, err := c.Rewind(ctx, id)
	return err
}

// Rewind restores the checkpoint with this id. It first checkpoints the
// current state (same scope as the target, [ReasonBeforeRestore]) so the
// rewind can itself be rewound, then writes only the files that differ
// and removes only the files created since that the target covered;
// what the target did not cover (ignored, protected, skipped or in a
// nested repository when it was taken, see the package documentation),
// HEAD, branches and the user's index are left alone, and no symbolic
// link is followed. A restore that cannot be carried out returns a
// [*RestoreError] saying why: before changing anything when the plan
// fails (something the snapshots do not cover is in the way: a
// [*ConflictError]), or after returning the workspace to the checkpoint
// it took first when writing fails midway.
func (c *Checkpointer) Rewind(ctx context.Context, id string) (RewindResult, error) {
	if err := checkID(id); err != nil {
		return RewindResult{}, err
	}
	return c.rewind(ctx, func(ctx context.Context) (Checkpoint, error) { return c.lookup(ctx, id) }, nil)
}

// RewindN restores the n-th most recent checkpoint (n = 1 is the newest),
// the "rewind n" of the timeline. The position is resolved under the
// workspace lock, so a concurrent Create cannot shift it.
func (c *Checkpointer) RewindN(ctx context.Context, n int) (RewindResult, error) {
	if n < 1 {
		return RewindResult{}, fmt.Errorf("checkpoint: RewindN: n = %d, want 1 or more", n)
	}
	return c.rewind(ctx, func(ctx context.Context) (Checkpoint, error) {
		list, err := c.list(ctx, false)
		if err != nil {
			return Checkpoint{}, err
		}
		if n > len(list) {
			return Checkpoint{}, fmt.Errorf("%w: RewindN(%d): the workspace has %d checkpoints", ErrNotFound, n, len(list))
		}
		return list[n-1], nil
	}, nil)
}

func (c *Checkpointer) rewind(ctx context.Context, resolve func(context.Context) (Checkpoint, error), cause error) (RewindResult, error) {
	unlock, err := c.lock(ctx)
	if err != nil {
		return RewindResult{}, err
	}
	res, events, err := c.rewindLocked(ctx, resolve)
	unlock()
	for _, ev := range events {
		if ev.Kind == Restored {
			ev.Cause = cause
		}
		c.emit(ev)
	}
	return res, err
}

func (c *Checkpointer) rewindLocked(ctx context.Context, resolve func(context.Context) (Checkpoint, error)) (RewindResult, []Event, error) {
	// One cat-file process answers the look-up, the record, the trees and
	// the blobs; without it each starts a process of its own.
	if o, err := c.openObjects(ctx); err == nil {
		c.sess = o
		defer func() { o.close(); c.sess = nil }()
	}
	target, err := resolve(ctx)
	if err != nil {
		return RewindResult{}, nil, err
	}
	fail := func(kind RestoreFailure, undo string, err error) error {
		if re, ok := err.(*RestoreError); ok {
			re.ID, re.Undo = target.ID, undo
			return re
		}
		return &RestoreError{ID: target.ID, Undo: undo, Failure: kind, Err: err}
	}
	label := "before rewind to " + target.ID
	if target.Label != "" {
		label += " (" + truncate(target.Label, 200) + ")"
	}
	p, err := c.prepare(ctx, target.Paths, false)
	if err != nil {
		return RewindResult{}, nil, fail(RestoreSnapshotFailed, "", err)
	}
	// The safety snapshot's index update waits for the restore's, so the
	// index is written once; whatever happens, it is written before the
	// lock is released.
	p.holdIndex = target.Paths == nil
	defer func() { _ = c.flushHeld(ctx) }()
	// The target's record of what it does not cover is read while the
	// current state is stored. Nothing is written before that store
	// succeeds.
	type prep struct {
		unc uncovered
		err error
	}
	pc := make(chan prep, 1)
	go func() {
		var r prep
		r.unc, r.err = c.loadUncovered(ctx, target.record)
		pc <- r
	}()
	undo, err := c.store(ctx, label, target.CorrelationID, ReasonBeforeRestore, target.Paths, p)
	pr := <-pc
	if err != nil {
		return RewindResult{}, nil, fail(RestoreSnapshotFailed, "", err)
	}
	events := []Event{{Kind: Created, Workspace: c.root, Checkpoint: undo}}
	if pr.err != nil {
		return RewindResult{}, events, fail(RestoreUnreadable, undo.ID, pr.err)
	}
	// The changes to make are the difference between the state just
	// stored and the target: two trees that share every directory the
	// work since did not touch, which diff-tree skips without reading.
	var entries []gitx.RawEntry
	if undo.Tree != target.Tree {
		if o := c.sess; o.usable() {
			entries, err = c.diffTreesIn(o, undo.Tree, target.Tree)
		} else {
			entries, err = c.diffTrees(ctx, undo.Tree, target.Tree, nil)
		}
		if err != nil {
			return RewindResult{}, events, fail(RestoreUnreadable, undo.ID, err)
		}
	}
	full := target.Paths == nil
	changes, err := c.restoreEntries(ctx, entries, target, pr.unc, full)
	if err != nil {
		var re *RestoreError
		if errors.As(err, &re) && re.Failure == RestoreInterrupted {
			// Applying failed midway: put back the state just stored.
			unc, lerr := c.loadUncovered(ctx, undo.record)
			if lerr == nil {
				lerr = c.returnTo(ctx, undo, unc)
			}
			re.RolledBack, re.RollbackErr = lerr == nil, lerr
		}
		return RewindResult{}, events, fail(RestoreUnreadable, undo.ID, err)
	}
	events = append(events, Event{Kind: Restored, Workspace: c.root, Checkpoint: target, Undo: undo.ID, Changes: len(changes)})
	return RewindResult{Restored: target, Undo: undo, Changes: changes}, events, nil
}

// returnTo puts the workspace back into checkpoint cp after a restore
// failed midway (the state is whatever the failed restore left).
func (c *Checkpointer) returnTo(ctx context.Context, cp Checkpoint, unc uncovered) error {
	// The scan below starts from the index on disk and looks at every
	// file git reports; what the failed restore held back is moot.
	c.held = nil
	var entries []gitx.RawEntry
	var err error
	if cp.Paths == nil {
		if _, _, err = c.refreshIndex(ctx); err != nil {
			return err
		}
		entries, err = c.indexToTree(ctx, cp.Tree)
	} else {
		var cur string
		if cur, err = c.scopedTree(ctx, cp.Paths); err == nil {
			entries, err = c.diffTrees(ctx, cur, cp.Tree, nil)
		}
	}
	if err != nil {
		return err
	}
	_, err = c.restoreEntries(ctx, entries, cp, unc, cp.Paths == nil)
	return err
}

// lookup reads one checkpoint of this workspace.
func (c *Checkpointer) lookup(ctx context.Context, id string) (Checkpoint, error) {
	if o := c.sess; o.usable() {
		return c.lookupIn(o, id)
	}
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv,
		Args: []string{"for-each-ref", "--format=" + gitx.RefFormat, RefPrefix + id}})
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: reading %s: %w", id, err)
	}
	refs, err := gitx.ParseRefs(out)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: reading %s: %w", id, err)
	}
	for _, r := range refs {
		if r.Name != RefPrefix+id {
			continue
		}
		cp, m, err := fromRef(r)
		if err != nil {
			return Checkpoint{}, err
		}
		if m.Scope != c.scope {
			return Checkpoint{}, fmt.Errorf("%w: %s belongs to another workspace of this repository", ErrNotFound, id)
		}
		return cp, nil
	}
	return Checkpoint{}, fmt.Errorf("%w: %s", ErrNotFound, id)
}

// lookupIn reads one checkpoint through an object session: the ref
// resolves to its commit, whose fields are those ParseRefs reads.
func (c *Checkpointer) lookupIn(o *objectSession, id string) (Checkpoint, error) {
	objs, err := o.read([]string{RefPrefix + id}, "commit", maxCommitBytes, maxCommitBytes)
	if errors.Is(err, errMissing) {
		return Checkpoint{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: reading %s: %w", id, err)
	}
	r, err := parseCommit(RefPrefix+id, objs[0].oid, objs[0].data)
	if err != nil {
		return Checkpoint{}, err
	}
	cp, m, err := fromRef(r)
	if err != nil {
		return Checkpoint{}, err
	}
	if m.Scope != c.scope {
		return Checkpoint{}, fmt.Errorf("%w: %s belongs to another workspace of this repository", ErrNotFound, id)
	}
	return cp, nil
}

// diffTrees returns the raw differences between two trees.
func (c *Checkpointer) diffTrees(ctx context.Context, from, to string, pathspec []string) ([]gitx.RawEntry, error) {
	args := []string{"diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", from, to}
	if len(pathspec) > 0 {
		args = append(append(args, "--"), pathspec...)
	}
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: args})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: comparing snapshots: %w", err)
	}
	pairs, err := gitx.ParseRaw(out, false)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: comparing snapshots: %w", err)
	}
	return pairs[0].Entries, nil
}

// changesOf converts raw entries to workspace-relative changes, checking
// every path (a tree under refs/reins could have been forged by anyone
// with write access to the repository; a path with "..", a .git
// component or outside the workspace is refused, never written).
func (c *Checkpointer) changesOf(entries []gitx.RawEntry) ([]Change, error) {
	out := make([]Change, 0, len(entries))
	for _, e := range entries {
		if e.OldMode == gitx.ModeGitlink || e.NewMode == gitx.ModeGitlink {
			continue
		}
		rel, ok := c.wsPath(e.Path)
		if !ok {
			return nil, fmt.Errorf("checkpoint: snapshot holds %q, outside the workspace", truncate(e.Path, 200))
		}
		if err := checkTreePath(rel); err != nil {
			return nil, fmt.Errorf("checkpoint: snapshot holds an unsafe path: %w", err)
		}
		k := Modified
		switch e.Status {
		case gitx.Added:
			k = Added
		case gitx.Deleted:
			k = Deleted
		}
		out = append(out, Change{Path: rel, Kind: k})
	}
	return out, nil
}

type writeOp struct {
	path string // work-tree relative
	rel  string // workspace-relative
	mode uint32
	oid  string
}

// indexToTree lists the differences from the private index (the current
// state, just refreshed) to tree target, oriented like diffTrees(cur,
// target).
func (c *Checkpointer) indexToTree(ctx context.Context, target string) ([]gitx.RawEntry, error) {
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv,
		Args: []string{"diff-index", "--cached", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", target}})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: comparing with the target: %w", err)
	}
	pairs, err := gitx.ParseRaw(out, false)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: comparing with the target: %w", err)
	}
	entries := pairs[0].Entries
	// diff-index goes from the tree to the index; turn it around.
	for i := range entries {
		e := &entries[i]
		e.OldMode, e.NewMode = e.NewMode, e.OldMode
		e.OldOID, e.NewOID = e.NewOID, e.OldOID
		switch e.Status {
		case gitx.Added:
			e.Status = gitx.Deleted
		case gitx.Deleted:
			e.Status = gitx.Added
		}
	}
	return entries, nil
}

// restorePlan is a restore checked and ready to apply.
type restorePlan struct {
	deletes []string // workspace-relative files and links to remove
	dirs    []string // workspace-relative directories the removals may empty, deepest first
	writes  []writeOp
	created []string // work-tree paths of the files the restore creates
	changes []Change
	full    bool     // a full restore (the private index follows it)
	blobs   [][]byte // the content of writes, when read in advance
}

// restoreEntries carries out a restore whose differences from the current
// state (every covered path as it is on disk) are entries: it plans and
// checks everything first and returns a *RestoreError without changing
// anything when the plan cannot be carried out; then it removes and
// writes. When applying fails midway the error's Failure is
// RestoreInterrupted and the caller puts the prior state back.
func (c *Checkpointer) restoreEntries(ctx context.Context, entries []gitx.RawEntry, target Checkpoint, unc uncovered, full bool) ([]Change, error) {
	if len(entries) == 0 {
		if full {
			c.setBase(target)
		}
		return nil, nil
	}
	root, err := os.OpenRoot(c.root)
	if err != nil {
		return nil, &RestoreError{Failure: RestoreConflict, Err: fmt.Errorf("checkpoint: %w", err)}
	}
	defer root.Close()
	pl, err := c.plan(ctx, root, entries, unc)
	if err != nil {
		return nil, err
	}
	pl.full = full
	if target.Paths != nil {
		// A path-scoped restore touches nothing outside its paths: a
		// directory its removals leave empty is removed only when the
		// checkpoint covers it.
		scope := make(map[string]bool, len(target.Paths))
		for _, p := range target.Paths {
			scope[p] = true
		}
		pl.dirs = slices.DeleteFunc(pl.dirs, func(d string) bool { return !coveredBy(d, scope) })
	}
	if err := c.applyPlan(ctx, root, pl); err != nil {
		return nil, &RestoreError{Failure: RestoreInterrupted, Err: err}
	}
	if full {
		c.setBase(target)
	}
	return pl.changes, nil
}

// plan decides what a restore does and checks that it can be done: every
// path is safe, nothing the target does not cover is deleted, nothing the
// current state does not cover is overwritten, no symbolic link is
// followed, and every object exists.
func (c *Checkpointer) plan(ctx context.Context, root *os.Root, entries []gitx.RawEntry, unc uncovered) (restorePlan, error) {
	var (
		pl     restorePlan
		inCur  = make(map[string]bool) // workspace-relative paths of the current state
		delSet = make(map[string]bool) // workspace-relative paths removed
		dirs   = make(map[string]bool)
	)
	for _, e := range entries {
		if e.OldMode == gitx.ModeGitlink || e.NewMode == gitx.ModeGitlink {
			continue
		}
		// A tree under refs/reins could have been forged by anyone with
		// write access to the repository: a path with "..", a .git
		// component or outside the workspace is refused, never written.
		rel, ok := c.wsPath(e.Path)
		if !ok {
			return pl, &RestoreError{Failure: RestoreUnreadable, Path: truncate(e.Path, 200),
				Err: fmt.Errorf("checkpoint: snapshot holds %q, outside the workspace", truncate(e.Path, 200))}
		}
		if err := checkTreePath(rel); err != nil {
			return pl, &RestoreError{Failure: RestoreUnreadable, Path: truncate(rel, 200),
				Err: fmt.Errorf("checkpoint: snapshot holds an unsafe path: %w", err)}
		}
		if c.protect.match(rel) {
			continue // protected: never deleted, never overwritten
		}
		if e.OldMode != gitx.ModeNone {
			inCur[rel] = true
		}
		switch e.NewMode {
		case gitx.ModeNone:
			if unc.excludes(e.Path) {
				// Not covered by the target (ignored, protected or in a
				// nested repository when it was taken): left alone.
				continue
			}
			pl.deletes = append(pl.deletes, rel)
			delSet[rel] = true
			for d := path.Dir(rel); d != "."; d = path.Dir(d) {
				dirs[d] = true
			}
			pl.changes = append(pl.changes, Change{Path: rel, Kind: Deleted})
		case gitx.ModeFile, gitx.ModeExec, gitx.ModeSymlink:
			pl.writes = append(pl.writes, writeOp{path: e.Path, rel: rel, mode: e.NewMode, oid: e.NewOID})
			k := Modified
			if e.OldMode == gitx.ModeNone {
				k = Added
				pl.created = append(pl.created, e.Path)
			}
			pl.changes = append(pl.changes, Change{Path: rel, Kind: k})
		default:
			return pl, &RestoreError{Failure: RestoreUnreadable, Path: rel,
				Err: fmt.Errorf("checkpoint: snapshot holds %s with unsupported mode %o", rel, e.NewMode)}
		}
	}
	for d := range dirs {
		pl.dirs = append(pl.dirs, d)
	}
	// Deepest first, so that parents are empty by the time they are tried.
	slices.SortFunc(pl.dirs, func(a, b string) int {
		if n := strings.Count(b, "/") - strings.Count(a, "/"); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})

	// Nothing the snapshots do not cover may be in the way.
	v := &view{root: root, real: map[string]bool{}}
	for _, w := range pl.writes {
		if err := c.checkWritable(v, w.rel, inCur[w.rel], delSet); err != nil {
			return pl, &RestoreError{Failure: RestoreConflict, Path: w.rel, Err: err}
		}
	}
	if len(pl.writes) > 0 {
		blobs, ok, err := c.fetchBlobs(ctx, pl.writes)
		if err == nil && !ok {
			err = c.checkObjects(ctx, pl.writes)
		}
		if err != nil {
			return pl, &RestoreError{Failure: RestoreUnreadable, Err: err}
		}
		pl.blobs = blobs
	}
	return pl, nil
}

// applyPlan removes, then writes. It follows no symbolic link: every
// directory above a path is checked to be a real directory right before
// the path is touched.
func (c *Checkpointer) applyPlan(ctx context.Context, root *os.Root, pl restorePlan) error {
	for _, p := range pl.deletes {
		if err := c.restoreHook("remove", p); err != nil {
			return err
		}
		if ok, err := realParents(root, p); err != nil {
			return fmt.Errorf("checkpoint: removing %s: %w", p, err)
		} else if !ok {
			continue // a parent is gone or not a directory: so is p
		}
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoint: removing %s: %w", p, err)
		}
	}
	for _, d := range pl.dirs {
		if ok, _ := realParents(root, d); !ok {
			continue
		}
		if st, err := root.Lstat(d); err == nil && st.IsDir() {
			_ = root.Remove(d) // fails harmlessly when not empty
		}
	}
	if pl.blobs != nil {
		for i, op := range pl.writes {
			if err := c.writeContent(root, op, int64(len(pl.blobs[i])), bytes.NewReader(pl.blobs[i])); err != nil {
				return err
			}
		}
	} else if err := c.writeBlobs(ctx, root, pl.writes); err != nil {
		return err
	}
	// Record the files the restore created in the private index: a
	// created file that ignore rules now match would otherwise drop out of
	// later snapshots. Where the package writes the index itself, every
	// file written or removed is recorded as well, with the object id it
	// was written from, so that the next scan does not read them again.
	// Path-scoped restores skip this to keep their cost independent of
	// the workspace size.
	if !pl.full || len(pl.writes)+len(pl.deletes) == 0 {
		return nil
	}
	if goIndex && !c.portable && c.recordRestore(pl) == nil {
		return nil
	}
	if err := c.flushHeld(ctx); err != nil {
		return err
	}
	if len(pl.created) > 0 {
		if err := c.updateIndex(ctx, c.privEnv, []string{"--add", "--remove", "--replace", "--info-only"}, pl.created); err != nil {
			return err
		}
		c.noteDirs(pl.created)
	}
	return nil
}

// recordRestore writes the files a restore wrote and removed into the
// private index.
func (c *Checkpointer) recordRestore(pl restorePlan) error {
	var updates []indexUpdate
	h := c.held
	if h != nil {
		hu, err := c.updateOf(h.imp)
		if err != nil {
			return err
		}
		updates = append(updates, hu)
	}
	u := indexUpdate{set: make([]indexEntry, 0, len(pl.writes))}
	for _, p := range pl.deletes {
		u.remove = append(u.remove, c.repoPath(p))
	}
	for _, w := range pl.writes {
		sd, mode, ok := lstatData(filepath.Join(c.workDir, filepath.FromSlash(w.path)))
		if !ok || (mode == gitx.ModeSymlink) != (w.mode == gitx.ModeSymlink) {
			return fmt.Errorf("%w: %s is not as written", errIndexUnsupported, truncate(w.rel, 80))
		}
		// The executable bit is recorded as the umask left it: if it is
		// not the snapshot's, the next scan records the file as it is.
		e, err := c.newIndexEntry(w.path, mode, w.oid, sd)
		if err != nil {
			return err
		}
		u.set = append(u.set, e)
	}
	idx, err := c.readIndex()
	if err != nil {
		return err
	}
	if err := c.writeIndex(idx, append(updates, u)...); err != nil {
		return err
	}
	if h != nil {
		c.held = nil
		paths := make([]string, len(h.imp.files))
		for i, f := range h.imp.files {
			paths[i] = f.path
		}
		c.noteDirs(paths)
		h.p.done()
	}
	c.noteDirs(pl.created)
	return nil
}

// view looks at the workspace without following symbolic links,
// remembering which directories are real (for planning, when nothing
// changes).
type view struct {
	root *os.Root
	real map[string]bool
}

// realDir reports whether the workspace-relative d is a directory reached
// through directories only.
func (v *view) realDir(d string) (bool, error) {
	if d == "." {
		return true, nil
	}
	if ok, seen := v.real[d]; seen {
		return ok, nil
	}
	ok, err := v.realDir(path.Dir(d))
	if err != nil {
		return false, err
	}
	if ok {
		st, err := v.root.Lstat(d)
		switch {
		case err == nil:
			ok = st.IsDir()
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir):
			ok = false
		default:
			return false, err
		}
	}
	v.real[d] = ok
	return ok, nil
}

// lstat is Lstat of the workspace-relative p, or fs.ErrNotExist when a
// directory above it is missing, a file or a symbolic link.
func (v *view) lstat(p string) (fs.FileInfo, error) {
	ok, err := v.realDir(path.Dir(p))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fs.ErrNotExist
	}
	return v.root.Lstat(p)
}

// realParents reports, without memory, whether every directory above the
// workspace-relative p is a real directory.
func realParents(root *os.Root, p string) (bool, error) {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		st, err := root.Lstat(p[:i])
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir):
			return false, nil
		case err != nil:
			return false, err
		case !st.IsDir():
			return false, nil
		}
	}
	return true, nil
}

// mkdirAll creates the workspace-relative directory d and its parents,
// refusing to pass through anything that is not a real directory.
func mkdirAll(root *os.Root, d string) error {
	if d == "." {
		return nil
	}
	for i := 0; i <= len(d); i++ {
		if i < len(d) && d[i] != '/' {
			continue
		}
		sub := d[:i]
		st, err := root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			if err = root.Mkdir(sub, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if st, err = root.Lstat(sub); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("%s is not a directory (it changed during the restore)", sub)
		}
	}
	return nil
}

// checkWritable verifies that writing the workspace-relative p will only
// replace things the current snapshot covers.
func (c *Checkpointer) checkWritable(v *view, p string, tracked bool, delSet map[string]bool) error {
	var parents []string
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		parents = append(parents, d)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		d := parents[i]
		st, err := v.root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
			return nil // created from here down
		}
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", d, err)
		}
		if st.IsDir() {
			continue
		}
		if delSet[d] {
			return nil // removed first; nothing below it is followed
		}
		return &ConflictError{Path: d, Reason: "a file the snapshot does not cover is where " + p + " needs a directory"}
	}
	st, err := v.lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir):
		return nil
	case err != nil:
		return fmt.Errorf("checkpoint: %s: %w", p, err)
	case st.IsDir():
		// Every file below must be one the restore removes.
		return fs.WalkDir(v.root.FS(), p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("checkpoint: %s: %w", q, err)
			}
			if !d.IsDir() && !delSet[q] {
				return &ConflictError{Path: p, Reason: "directory holds " + q + ", which the snapshot does not cover"}
			}
			return nil
		})
	case !tracked:
		return &ConflictError{Path: p, Reason: "an ignored, protected, oversized or unsupported file the snapshot does not cover would be overwritten"}
	}
	return nil
}

// fetchBudget bounds the blobs a restore holds in memory (see fetchBlobs).
const fetchBudget = 32 << 20

func (c *Checkpointer) fetchLimit() int64 {
	if c.fetchBudget != 0 {
		return c.fetchBudget
	}
	return fetchBudget
}

// fetchBlobs reads every blob a restore writes with one "cat-file
// --batch", which also checks that they all exist, and keeps them in
// memory: one process instead of a check and a second read. ok is false
// (and nothing is kept) when they do not fit fetchBudget; the restore then
// checks them first and streams them while writing.
func (c *Checkpointer) fetchBlobs(ctx context.Context, writes []writeOp) (blobs [][]byte, ok bool, err error) {
	if o := c.sess; o.usable() {
		oids := make([]string, len(writes))
		for i, w := range writes {
			oids[i] = w.oid
		}
		objs, err := o.read(oids, "blob", 1<<62, c.fetchLimit())
		if errors.Is(err, errOverBudget) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("checkpoint: checking snapshot objects: %w", err)
		}
		blobs = make([][]byte, len(objs))
		for i, x := range objs {
			if x.oid != writes[i].oid {
				return nil, false, fmt.Errorf("checkpoint: cat-file answered %s for %s", x.oid, writes[i].oid)
			}
			blobs[i] = x.data
		}
		return blobs, true, nil
	}
	var total int64
	s, err := c.git.Start(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: []string{"cat-file", "--batch"}})
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint: reading snapshot: %w", err)
	}
	go func() {
		w := bufio.NewWriter(s.Stdin)
		for _, op := range writes {
			w.WriteString(op.oid)
			w.WriteByte('\n')
		}
		w.Flush()
		s.Stdin.Close()
	}()
	r := bufio.NewReaderSize(s.Stdout, 64<<10)
	blobs = make([][]byte, 0, len(writes))
	for _, op := range writes {
		size, err := readHeader(r, op)
		if err == nil && total+size > c.fetchLimit() {
			_ = s.Kill()
			_ = s.Wait()
			return nil, false, nil
		}
		if err != nil {
			_ = s.Kill()
			_ = s.Wait()
			return nil, false, fmt.Errorf("checkpoint: checking snapshot objects: %w", err)
		}
		total += size
		b := make([]byte, size+1)
		if _, err := io.ReadFull(r, b); err != nil || b[size] != '\n' {
			_ = s.Kill()
			_ = s.Wait()
			return nil, false, fmt.Errorf("checkpoint: reading blob for %s: malformed cat-file stream", op.rel)
		}
		blobs = append(blobs, b[:size])
	}
	if err := s.Wait(); err != nil {
		return nil, false, fmt.Errorf("checkpoint: reading snapshot: %w", err)
	}
	return blobs, true, nil
}

// checkObjects makes sure every blob to write exists before anything is
// removed.
func (c *Checkpointer) checkObjects(ctx context.Context, writes []writeOp) error {
	if len(writes) == 0 {
		return nil
	}
	var in strings.Builder
	for _, w := range writes {
		in.WriteString(w.oid)
		in.WriteByte('\n')
	}
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv,
		Args: []string{"cat-file", "--batch-check=%(objectname) %(objecttype)"}, Stdin: strings.NewReader(in.String())})
	if err != nil {
		return fmt.Errorf("checkpoint: checking snapshot objects: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(writes) {
		return fmt.Errorf("checkpoint: checking snapshot objects: %d answers for %d objects", len(lines), len(writes))
	}
	for i, l := range lines {
		if l != writes[i].oid+" blob" {
			return fmt.Errorf("checkpoint: snapshot object %s for %s is unusable: %q", writes[i].oid, writes[i].path, truncate(l, 120))
		}
	}
	return nil
}

// writeBlobs streams the blobs from one cat-file process and writes each
// to a temporary file next to its destination, then renames it into place.
func (c *Checkpointer) writeBlobs(ctx context.Context, root *os.Root, writes []writeOp) error {
	if len(writes) == 0 {
		return nil
	}
	s, err := c.git.Start(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: []string{"cat-file", "--batch"}})
	if err != nil {
		return fmt.Errorf("checkpoint: reading snapshot: %w", err)
	}
	go func() {
		w := bufio.NewWriter(s.Stdin)
		for _, op := range writes {
			w.WriteString(op.oid)
			w.WriteByte('\n')
		}
		w.Flush()
		s.Stdin.Close()
	}()
	r := bufio.NewReaderSize(s.Stdout, 64<<10)
	var werr error
	for _, op := range writes {
		if werr = c.writeOne(root, r, op); werr != nil {
			break
		}
	}
	if err := s.Wait(); err != nil && werr == nil {
		werr = fmt.Errorf("checkpoint: reading snapshot: %w", err)
	}
	return werr
}

// readHeader reads one "cat-file --batch" header for op and returns the
// blob's size.
func readHeader(r *bufio.Reader, op writeOp) (int64, error) {
	header, err := r.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("checkpoint: reading blob for %s: %w", op.rel, err)
	}
	f := strings.Fields(header)
	if len(f) != 3 || f[0] != op.oid || f[1] != "blob" {
		return 0, fmt.Errorf("checkpoint: unexpected cat-file answer %q for %s", truncate(header, 120), op.rel)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return 0, fmt.Errorf("checkpoint: unexpected cat-file size %q for %s", f[2], op.rel)
	}
	return size, nil
}

// writeOne writes op from its cat-file answer in r (header, content and
// the newline after it).
func (c *Checkpointer) writeOne(root *os.Root, r *bufio.Reader, op writeOp) error {
	size, err := readHeader(r, op)
	if err != nil {
		return err
	}
	if err := c.writeContent(root, op, size, r); err != nil {
		return err
	}
	if b, err := r.ReadByte(); err != nil || b != '\n' {
		return fmt.Errorf("checkpoint: malformed cat-file stream after %s", op.rel)
	}
	return nil
}

// writeContent writes op's size bytes of content, read from r.
func (c *Checkpointer) writeContent(root *os.Root, op writeOp, size int64, r io.Reader) error {
	if err := c.restoreHook("write", op.rel); err != nil {
		return err
	}
	dir := path.Dir(op.rel)
	if err := mkdirAll(root, dir); err != nil {
		return fmt.Errorf("checkpoint: creating %s: %w", dir, err)
	}
	if st, err := root.Lstat(op.rel); err == nil && st.IsDir() {
		// Checked empty of uncovered files; its covered files were removed.
		if err := root.RemoveAll(op.rel); err != nil {
			return fmt.Errorf("checkpoint: replacing directory %s: %w", op.rel, err)
		}
	}
	if op.mode != gitx.ModeSymlink {
		// A regular file replaced by a regular file is rewritten in place
		// (one metadata operation instead of create and rename).
		done, err := overwrite(root, r, op, size)
		if err != nil || done {
			return err
		}
	}
	tmp := path.Join(dir, ".reins-restore-"+randHex())
	if op.mode == gitx.ModeSymlink {
		if size > 64<<10 {
			return fmt.Errorf("checkpoint: link %s: target of %d bytes", op.rel, size)
		}
		target := make([]byte, size)
		if _, err := io.ReadFull(r, target); err != nil {
			return fmt.Errorf("checkpoint: reading link %s: %w", op.rel, err)
		}
		if err := root.Symlink(string(target), tmp); err != nil {
			return fmt.Errorf("checkpoint: creating link %s: %w", op.rel, err)
		}
	} else {
		perm := os.FileMode(0o666)
		if op.mode == gitx.ModeExec {
			perm = 0o777
		}
		out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, perm)
		if err != nil {
			return fmt.Errorf("checkpoint: writing %s: %w", op.rel, err)
		}
		_, err = io.CopyN(out, r, size)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = root.Remove(tmp)
			return fmt.Errorf("checkpoint: writing %s: %w", op.rel, err)
		}
	}
	if err := root.Rename(tmp, op.rel); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("checkpoint: writing %s: %w", op.rel, err)
	}
	return nil
}

func randHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// overwrite writes the blob over an existing regular file, fixing the
// executable bit; it reports false (having consumed nothing) when the path
// is not an existing regular file.
func overwrite(root *os.Root, r io.Reader, op writeOp, size int64) (bool, error) {
	st, err := root.Lstat(op.rel)
	if err != nil || !st.Mode().IsRegular() || linkCount(st) != 1 {
		// Not a regular file, or hard-linked elsewhere (possibly outside
		// the workspace): replace the directory entry instead of writing
		// through it.
		return false, nil
	}
	f, err := root.OpenFile(op.rel, os.O_WRONLY|os.O_TRUNC|oNoFollow, 0)
	if err != nil {
		return false, nil
	}
	_, err = io.CopyN(f, r, size)
	if err == nil {
		perm := st.Mode().Perm()
		want := perm &^ 0o111
		if op.mode == gitx.ModeExec {
			// Executable where readable, like a fresh 0777 file under the umask.
			want = perm | (perm&0o444)>>2
		}
		if want != perm {
			err = f.Chmod(want)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return true, fmt.Errorf("checkpoint: writing %s: %w", op.rel, err)
	}
	return true, nil
}

// restoreHook runs the test hook, when one is set, before every removal
// and write of a restore; its error fails the restore at that point.
func (c *Checkpointer) restoreHook(op, path string) error {
	if c.hook != nil {
		return c.hook(op, path)
	}
	return nil
}
