package checkpoint

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"

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
// and removes only the files created since; ignored files, files above
// the size cap, nested repositories, HEAD, branches and the user's index
// are left alone. If something the snapshot does not cover is in the way,
// it fails with a [*ConflictError] before changing anything.
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
		if ev.Kind == CheckpointRestored {
			ev.Cause = cause
		}
		c.emit(ev)
	}
	return res, err
}

func (c *Checkpointer) rewindLocked(ctx context.Context, resolve func(context.Context) (Checkpoint, error)) (RewindResult, []Event, error) {
	target, err := resolve(ctx)
	if err != nil {
		return RewindResult{}, nil, err
	}
	label := "before rewind to " + target.ID
	if target.Label != "" {
		label += " (" + truncate(target.Label, 200) + ")"
	}
	p, err := c.prepare(ctx, target.Paths)
	if err != nil {
		return RewindResult{}, nil, fmt.Errorf("checkpoint: rewind to %s: checkpointing the current state: %w", target.ID, err)
	}
	// For a full restore, the changes to make are the difference between
	// the just-refreshed private index (the current state) and the target;
	// compute them, and check the target's objects, while the current
	// state is being stored. Nothing is written before that store succeeds.
	type plan struct {
		entries []gitx.RawEntry
		err     error
	}
	pc := make(chan plan, 1)
	if target.Paths == nil {
		go func() {
			entries, err := c.indexToTree(ctx, target.Tree)
			if err == nil {
				err = c.checkObjects(ctx, writesOf(entries))
			}
			pc <- plan{entries, err}
		}()
	}
	undo, err := c.store(ctx, label, target.CorrelationID, ReasonBeforeRestore, target.Paths, p)
	var pl plan
	if target.Paths == nil {
		pl = <-pc
	}
	if err != nil {
		return RewindResult{}, nil, fmt.Errorf("checkpoint: rewind to %s: checkpointing the current state: %w", target.ID, err)
	}
	events := []Event{{Kind: CheckpointCreated, Workspace: c.root, Checkpoint: undo}}
	var changes []Change
	if target.Paths == nil {
		if err = pl.err; err == nil {
			changes, err = c.applyEntries(ctx, pl.entries, target.Tree, true, true)
		}
	} else {
		changes, err = c.apply(ctx, undo.Tree, target.Tree)
	}
	if err != nil {
		return RewindResult{}, events, fmt.Errorf("checkpoint: rewind to %s (the prior state is checkpoint %s): %w", target.ID, undo.ID, err)
	}
	events = append(events, Event{Kind: CheckpointRestored, Workspace: c.root, Checkpoint: target, Undo: undo.ID, Changes: len(changes)})
	return RewindResult{Restored: target, Undo: undo, Changes: changes}, events, nil
}

// lookup reads one checkpoint of this workspace.
func (c *Checkpointer) lookup(ctx context.Context, id string) (Checkpoint, error) {
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
	mode uint32
	oid  string
}

// apply turns the work tree from tree cur (just snapshotted, so the files
// on disk are exactly cur) into tree target, for a path-scoped restore.
func (c *Checkpointer) apply(ctx context.Context, cur, target string) ([]Change, error) {
	if cur == target {
		return nil, nil
	}
	entries, err := c.diffTrees(ctx, cur, target, nil)
	if err != nil {
		return nil, err
	}
	return c.applyEntries(ctx, entries, target, false, false)
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

// writesOf lists the blobs a restore with these entries writes.
func writesOf(entries []gitx.RawEntry) []writeOp {
	var w []writeOp
	for _, e := range entries {
		switch e.NewMode {
		case gitx.ModeFile, gitx.ModeExec, gitx.ModeSymlink:
			if e.OldMode != gitx.ModeGitlink {
				w = append(w, writeOp{path: e.Path, mode: e.NewMode, oid: e.NewOID})
			}
		}
	}
	return w
}

// applyEntries carries out a restore: it checks everything first, then
// removes, then writes; only differing paths are touched.
func (c *Checkpointer) applyEntries(ctx context.Context, entries []gitx.RawEntry, target string, full, objectsChecked bool) ([]Change, error) {
	if len(entries) == 0 {
		if full {
			c.setBase(target)
		}
		return nil, nil
	}
	// Reported from the current state's side: Added = the restore creates it.
	changes, err := c.changesOf(entries)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(c.workDir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer root.Close()

	var (
		deletes []string
		writes  []writeOp
		inCur   = make(map[string]bool)
		delSet  = make(map[string]bool)
	)
	for _, e := range entries {
		if e.OldMode == gitx.ModeGitlink || e.NewMode == gitx.ModeGitlink {
			continue
		}
		if e.OldMode != gitx.ModeNone {
			inCur[e.Path] = true
		}
		switch e.NewMode {
		case gitx.ModeNone:
			deletes = append(deletes, e.Path)
			delSet[e.Path] = true
		case gitx.ModeFile, gitx.ModeExec, gitx.ModeSymlink:
			writes = append(writes, writeOp{path: e.Path, mode: e.NewMode, oid: e.NewOID})
		default:
			return nil, fmt.Errorf("checkpoint: snapshot holds %s with unsupported mode %o", e.Path, e.NewMode)
		}
	}

	// 1. Check: nothing the snapshots do not cover may be in the way.
	for _, w := range writes {
		if err := c.checkWritable(root, w.path, inCur[w.path], delSet); err != nil {
			return nil, err
		}
	}
	if !objectsChecked {
		if err := c.checkObjects(ctx, writes); err != nil {
			return nil, err
		}
	}

	// 2. Remove what the target does not have, then directories emptied.
	dirs := make(map[string]bool)
	for _, p := range deletes {
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint: removing %s: %w", p, err)
		}
		for d := path.Dir(p); d != "." && d != c.prefix; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	// Deepest first, so that parents are empty by the time they are tried.
	slices.SortFunc(sorted, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range sorted {
		_ = root.Remove(d) // fails harmlessly when not empty
	}

	// 3. Write what differs.
	if err := c.writeBlobs(ctx, root, writes); err != nil {
		return nil, err
	}

	// 4. Record the files the restore created in the private index: a
	// created file that ignore rules now match would otherwise drop out of
	// later snapshots. Rewritten and removed files need nothing: the next
	// scan sees their stat data change. Path-scoped restores skip this to
	// keep their cost independent of the workspace size.
	if full {
		var created []string
		for _, w := range writes {
			if !inCur[w.path] {
				created = append(created, w.path)
			}
		}
		if len(created) > 0 {
			if err := c.updateIndex(ctx, c.privEnv, []string{"--add", "--remove", "--replace", "--info-only"}, created); err != nil {
				return nil, err
			}
		}
		c.setBase(target)
	}
	return changes, nil
}

// checkWritable verifies that writing p (work-tree relative) will only
// replace things the current snapshot covers.
func (c *Checkpointer) checkWritable(root *os.Root, p string, tracked bool, delSet map[string]bool) error {
	rel, _ := c.wsPath(p)
	var parents []string
	for d := path.Dir(p); d != "." && d != c.prefix; d = path.Dir(d) {
		parents = append(parents, d)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		d := parents[i]
		st, err := root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			break
		}
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", d, err)
		}
		if st.IsDir() {
			continue
		}
		if delSet[d] {
			break // removed first
		}
		drel, _ := c.wsPath(d)
		return &ConflictError{Path: drel, Reason: "a file the snapshot does not cover is where " + rel + " needs a directory"}
	}
	st, err := root.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil
	case err != nil:
		return fmt.Errorf("checkpoint: %s: %w", rel, err)
	case st.IsDir():
		// Every file below must be one the restore removes.
		return fs.WalkDir(root.FS(), p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("checkpoint: %s: %w", q, err)
			}
			if !d.IsDir() && !delSet[q] {
				qrel, _ := c.wsPath(q)
				return &ConflictError{Path: rel, Reason: "directory holds " + qrel + ", which the snapshot does not cover"}
			}
			return nil
		})
	case !tracked:
		return &ConflictError{Path: rel, Reason: "an ignored, oversized or unsupported file the snapshot does not cover would be overwritten"}
	}
	return nil
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

func (c *Checkpointer) writeOne(root *os.Root, r *bufio.Reader, op writeOp) error {
	header, err := r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("checkpoint: reading blob for %s: %w", op.path, err)
	}
	f := strings.Fields(header)
	if len(f) != 3 || f[0] != op.oid || f[1] != "blob" {
		return fmt.Errorf("checkpoint: unexpected cat-file answer %q for %s", truncate(header, 120), op.path)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return fmt.Errorf("checkpoint: unexpected cat-file size %q for %s", f[2], op.path)
	}
	dir := path.Dir(op.path)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o777); err != nil {
			return fmt.Errorf("checkpoint: creating %s: %w", dir, err)
		}
	}
	if st, err := root.Lstat(op.path); err == nil && st.IsDir() {
		// Checked empty of uncovered files; its covered files were removed.
		if err := root.RemoveAll(op.path); err != nil {
			return fmt.Errorf("checkpoint: replacing directory %s: %w", op.path, err)
		}
	}
	if op.mode != gitx.ModeSymlink {
		// A regular file replaced by a regular file is rewritten in place
		// (one metadata operation instead of create and rename).
		done, err := overwrite(root, r, op, size)
		if err != nil {
			return err
		}
		if done {
			if b, err := r.ReadByte(); err != nil || b != '\n' {
				return fmt.Errorf("checkpoint: malformed cat-file stream after %s", op.path)
			}
			return nil
		}
	}
	tmp := path.Join(dir, ".reins-restore-"+randHex())
	if op.mode == gitx.ModeSymlink {
		target := make([]byte, size)
		if _, err := io.ReadFull(r, target); err != nil {
			return fmt.Errorf("checkpoint: reading link %s: %w", op.path, err)
		}
		if err := root.Symlink(string(target), tmp); err != nil {
			return fmt.Errorf("checkpoint: creating link %s: %w", op.path, err)
		}
	} else {
		perm := os.FileMode(0o666)
		if op.mode == gitx.ModeExec {
			perm = 0o777
		}
		out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return fmt.Errorf("checkpoint: writing %s: %w", op.path, err)
		}
		_, err = io.CopyN(out, r, size)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = root.Remove(tmp)
			return fmt.Errorf("checkpoint: writing %s: %w", op.path, err)
		}
	}
	if err := root.Rename(tmp, op.path); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("checkpoint: writing %s: %w", op.path, err)
	}
	if b, err := r.ReadByte(); err != nil || b != '\n' {
		return fmt.Errorf("checkpoint: malformed cat-file stream after %s", op.path)
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
func overwrite(root *os.Root, r *bufio.Reader, op writeOp, size int64) (bool, error) {
	st, err := root.Lstat(op.path)
	if err != nil || !st.Mode().IsRegular() || linkCount(st) != 1 {
		// Not a regular file, or hard-linked elsewhere (possibly outside
		// the workspace): replace the directory entry instead of writing
		// through it.
		return false, nil
	}
	f, err := root.OpenFile(op.path, os.O_WRONLY|os.O_TRUNC|oNoFollow, 0)
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
		return true, fmt.Errorf("checkpoint: writing %s: %w", op.path, err)
	}
	return true, nil
}
