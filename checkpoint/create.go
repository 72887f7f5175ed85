package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// Create snapshots the whole workspace under a new checkpoint with the
// given label. It is CreateWith with only a label.
func (c *Checkpointer) Create(ctx context.Context, label string) (Checkpoint, error) {
	return c.CreateWith(ctx, CreateOptions{Label: label})
}

// CreateWith snapshots the workspace (or, with o.Paths, just those paths)
// and records the label and correlation id with it. The user's HEAD,
// index, branches, stash and working tree are not touched.
func (c *Checkpointer) CreateWith(ctx context.Context, o CreateOptions) (Checkpoint, error) {
	return c.createWith(ctx, o, ReasonCreate)
}

func (c *Checkpointer) createWith(ctx context.Context, o CreateOptions, reason string) (Checkpoint, error) {
	if err := checkText("CreateOptions.Label", o.Label, maxLabelLen); err != nil {
		return Checkpoint{}, err
	}
	if err := checkText("CreateOptions.CorrelationID", o.CorrelationID, maxCorrelationLen); err != nil {
		return Checkpoint{}, err
	}
	var paths []string
	if o.Paths != nil {
		var full bool
		var err error
		if paths, full, err = c.normalizePaths("CreateOptions.Paths", o.Paths); err != nil {
			return Checkpoint{}, err
		}
		if full {
			paths = nil // the workspace itself: a full snapshot
		}
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	cp, err := c.create(ctx, o.Label, o.CorrelationID, reason, paths)
	unlock()
	if err != nil {
		return Checkpoint{}, err
	}
	c.emit(Event{Kind: Created, Workspace: c.root, Checkpoint: cp})
	return cp, nil
}

// create stores a new snapshot; the caller holds the lock.
func (c *Checkpointer) create(ctx context.Context, label, corr, reason string, paths []string) (Checkpoint, error) {
	p, err := c.prepare(ctx, paths, true)
	if err != nil {
		return Checkpoint{}, err
	}
	return c.store(ctx, label, corr, reason, p.scope, p)
}

// prepared is a snapshot ready to be stored: the tree to build on, the
// paths to replace or remove in it, and what it leaves out.
type prepared struct {
	scope     []string // the covered paths of a path-scoped snapshot (nil: full)
	base      string
	entries   []importEntry
	skipped   []string
	uncovered []string // work-tree paths; directories end in "/"

	// deferIndex: the private index learns the snapshot once it is
	// stored (see recordIndex), and done is called once it knows;
	// holdIndex: a restore follows, which records it with its own changes.
	deferIndex, holdIndex bool
	done                  func()
}

// prepare looks at what a snapshot of paths (nil: the whole workspace)
// records. fresh says that the caller asked for it now (Create, not the
// checkpoint a restore takes of the current state with the target's
// scope): a path-scoped one then refuses a path through a link and covers
// the outermost missing directory of an absent path (see scopedEntries).
func (c *Checkpointer) prepare(ctx context.Context, paths []string, fresh bool) (prepared, error) {
	p := prepared{base: c.emptyTree}
	var err error
	if paths != nil {
		p.scope, p.entries, p.skipped, p.uncovered, err = c.scopedEntries(ctx, paths, fresh)
		return p, err
	}
	b := c.loadBase()
	if !c.opts.IncludeIgnored && (b.commit != "" || b.tree == c.emptyTree) {
		p, err := c.scan(ctx, b)
		if !errors.Is(err, errStatusFailed) || ctx.Err() != nil {
			return p, err
		}
		// The base commit may have been pruned and collected: the
		// index-based path below starts over from the empty tree if so.
	}
	if p.skipped, p.uncovered, err = c.refreshIndex(ctx); err != nil {
		return p, err
	}
	p.base = b.tree
	p.entries, err = c.diffIndex(ctx, p.base)
	if err != nil && p.base != c.emptyTree {
		// The base tree may have been pruned and collected: start over.
		p.base = c.emptyTree
		p.entries, err = c.diffIndex(ctx, p.base)
	}
	return p, err
}

func (c *Checkpointer) store(ctx context.Context, label, corr, reason string, paths []string, p prepared) (Checkpoint, error) {
	id, err := newID()
	if err != nil {
		return Checkpoint{}, err
	}
	now := c.opts.now()
	var record []byte
	skipped := p.skipped
	finish := func(moreSkipped, moreUncov []string) ([]byte, []byte, error) {
		skipped = append(skipped, moreSkipped...)
		rec, err := encodeUncovered(append(slices.Clip(p.uncovered), moreUncov...))
		if err != nil {
			return nil, nil, err
		}
		record = rec
		m := meta{V: metaVersion, ID: id, Label: label, Correlation: corr, Reason: reason, Scope: c.scope, Paths: paths, Uncovered: c.blobOID(rec)}
		msg, err := m.message()
		return rec, msg, err
	}
	spec := streamSpec{ref: RefPrefix + id, when: now.Unix(), base: p.base, finish: finish}
	var imp imported
	if paths != nil && c.loose {
		imp, err = c.looseCommit(ctx, spec, p.entries)
	} else {
		imp, err = c.importCommit(ctx, spec, p.entries)
	}
	if err != nil {
		return Checkpoint{}, err
	}
	if p.deferIndex {
		if err := c.recordIndex(ctx, p, imp); err != nil {
			return Checkpoint{}, err
		}
	}
	commit, tree, recordOID := imp.commit, imp.tree, imp.recordOID
	c.records.put(recordOID, record)
	cp := Checkpoint{
		ID:            id,
		Label:         label,
		CorrelationID: corr,
		Reason:        reason,
		Time:          time.Unix(now.Unix(), 0).UTC(),
		Paths:         paths,
		FilesChanged:  -1,
		Skipped:       skipped,
		Commit:        commit,
		Tree:          tree,
		record:        recordOID,
	}
	if paths == nil {
		c.setBase(cp)
	}
	if paths == nil || !c.loose {
		// Each fast-import adds a pack (a loose scoped snapshot looks at
		// its objects itself, see looseCommit).
		c.maybeRepack(ctx, 0)
	}
	return cp, nil
}

func (c *Checkpointer) privEnvCopy() []string {
	return append([]string(nil), c.privEnv...)
}

// refreshIndex brings the private index up to date with the work tree.
// Only paths git reports as changed since the last snapshot (stat data
// differs, deleted, or new) are hashed, and no object is written, so the
// cost of an incremental snapshot is one scan of the tree plus the changed
// files. It returns the files left out under OversizeSkip, and the record
// of everything the snapshot leaves out (work-tree paths, directories
// ending in "/"): ignored files and directories, nested repositories,
// protected files, and the skipped files.
func (c *Checkpointer) refreshIndex(ctx context.Context) (skipped, uncov []string, err error) {
	if err := c.purgeProtected(ctx); err != nil {
		return nil, nil, err
	}
	// The scans and the look at the user's index are independent; run
	// them side by side.
	side := c.startSide(ctx, true)
	type result struct {
		out []byte
		err error
	}
	excludes := c.excludeArgs()
	// What ignore rules leave out, with wholly ignored directories
	// collapsed to "dir/": recorded so that a restore to this snapshot
	// leaves them alone even after the rules change.
	ich := make(chan result, 1)
	if len(excludes) > 0 {
		go func() {
			args := append([]string{"ls-files", "-z", "--others", "--ignored", "--directory"}, excludes...)
			out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: append(args, c.pathspec()...)})
			ich <- result{out, err}
		}()
	} else {
		ich <- result{}
	}
	// One process lists both the tracked files whose stat data changed
	// (or that are gone) and the untracked ones, tagged: one index load
	// and one process instead of two.
	args := append([]string{"ls-files", "-z", "-t", "--modified", "--deleted", "--others"}, excludes...)
	listed, lerr := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: append(args, c.pathspec()...)})
	sd, serr := side()
	ir := <-ich
	if serr != nil {
		return nil, nil, serr
	}
	forced, done := sd.forced, sd.done
	if lerr != nil {
		return nil, nil, fmt.Errorf("checkpoint: scanning the work tree: %w", lerr)
	}
	if ir.err != nil {
		return nil, nil, fmt.Errorf("checkpoint: scanning ignored files: %w", ir.err)
	}
	changed, others, err := splitTagged(listed)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: ls-files: %w", err)
	}
	ignored, err := gitx.SplitNUL(ir.out)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: ls-files: %w", err)
	}

	uncov = ignored
	nested := sd.nested
	if len(nested) > 0 {
		// Files recorded before their directory became a repository of its
		// own: left out from now on, like the rest of that repository.
		inside, err := c.filesIn(ctx, nested)
		if err != nil {
			return nil, nil, err
		}
		changed = append(inside, changed...)
		for _, d := range nested {
			uncov = append(uncov, d+"/")
		}
	}
	cl := c.newClassifier(nested, len(changed)+len(others)+len(forced))
	var update, remove []string
	add := func(p string, tracked bool) error {
		switch act, err := cl.consider(p, tracked); {
		case err != nil:
			return err
		case act == actAdd:
			update = append(update, p)
		case act == actRemove:
			remove = append(remove, p)
		}
		return nil
	}
	for _, p := range changed {
		if err := add(p, true); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range others {
		if err := add(p, false); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range forced {
		if err := add(p, false); err != nil {
			return nil, nil, err
		}
	}
	skipped, uncov, becameDir := cl.skipped, append(uncov, cl.uncov...), cl.becameDir
	if len(remove) > 0 {
		if err := c.updateIndex(ctx, c.privEnv, []string{"--force-remove"}, remove); err != nil {
			return nil, nil, err
		}
	}
	if len(update) > 0 {
		if err := c.updateIndex(ctx, c.privEnv, []string{"--add", "--remove", "--replace", "--info-only"}, update); err != nil {
			return nil, nil, err
		}
		c.noteDirs(update)
	}
	if len(becameDir) > 0 && len(excludes) > 0 {
		// While the index still held a file where there is now a
		// directory, "--directory" hid what is ignored in it: list it again.
		more, err := c.ignoredIn(ctx, becameDir, false)
		if err != nil {
			return nil, nil, err
		}
		uncov = append(uncov, more...)
	}
	done()
	return skipped, uncov, nil
}

// recordIndex brings the private index up to date with a snapshot just
// stored: every stored file with the stat data of what was read and the
// object id fast-import gave it, every removed path dropped. Nothing is
// read or hashed again. Where the package cannot write the index (no stat
// data, or an index only git may rewrite), "git update-index" hashes the
// changed files into it instead.
func (c *Checkpointer) recordIndex(ctx context.Context, p prepared, imp imported) error {
	if p.holdIndex && goIndex && !c.portable {
		// A restore follows: it writes the index once, with its own
		// changes (see recordRestore and flushHeld).
		p.holdIndex = false
		c.held = &heldIndex{p: p, imp: imp}
		return nil
	}
	if goIndex && !c.portable {
		err := c.writeIndexOf(imp)
		if err == nil {
			paths := make([]string, len(imp.files))
			for i, f := range imp.files {
				paths[i] = f.path
			}
			c.noteDirs(paths)
			p.done()
			return nil
		}
		if !errors.Is(err, errIndexUnsupported) {
			return err
		}
	}
	if len(imp.gone) > 0 {
		if err := c.updateIndex(ctx, c.privEnv, []string{"--force-remove"}, imp.gone); err != nil {
			return err
		}
	}
	if len(imp.files) > 0 {
		paths := make([]string, len(imp.files))
		for i, f := range imp.files {
			paths[i] = f.path
		}
		if err := c.updateIndex(ctx, c.privEnv, []string{"--add", "--remove", "--replace", "--info-only"}, paths); err != nil {
			return err
		}
		c.noteDirs(paths)
	}
	p.done()
	return nil
}

func (c *Checkpointer) writeIndexOf(imp imported) error {
	u, err := c.updateOf(imp)
	if err != nil {
		return err
	}
	idx, err := c.readIndex()
	if err != nil {
		return err
	}
	return c.writeIndex(idx, u)
}

// updateOf is the index update that records a stored snapshot.
func (c *Checkpointer) updateOf(imp imported) (indexUpdate, error) {
	u := indexUpdate{remove: imp.gone, set: make([]indexEntry, 0, len(imp.files))}
	for _, f := range imp.files {
		if !f.sdOK {
			return u, fmt.Errorf("%w: no stat data for %s", errIndexUnsupported, truncate(f.path, 80))
		}
		e, err := c.newIndexEntry(f.path, f.mode, f.oid, f.sd)
		if err != nil {
			return u, err
		}
		u.set = append(u.set, e)
	}
	return u, nil
}

// heldIndex is the index update of a restore's safety snapshot, kept back
// so that the restore writes the index once with both.
type heldIndex struct {
	p   prepared
	imp imported
}

// flushHeld records a held snapshot in the index on its own.
func (c *Checkpointer) flushHeld(ctx context.Context) error {
	h := c.held
	if h == nil {
		return nil
	}
	c.held = nil
	return c.recordIndex(ctx, h.p, h.imp)
}

// sideResult is what a full snapshot learns besides the scan of the work
// tree: the files the user's repository tracks although they are ignored
// (with done, to call once they are recorded) and the directories that
// became repositories of their own.
type sideResult struct {
	forced []string
	done   func()
	nested []string
}

// startSide starts the look at the user's index and the search for nested
// repositories, side by side with the caller's scan; the returned function
// waits for both. c.dirs is used only by the search until it reports.
func (c *Checkpointer) startSide(ctx context.Context, withTracked bool) func() (sideResult, error) {
	type tracked struct {
		paths []string
		done  func()
		err   error
	}
	tch := make(chan tracked, 1)
	if withTracked {
		go func() {
			p, d, err := c.trackedIgnored(ctx)
			tch <- tracked{p, d, err}
		}()
	} else {
		tch <- tracked{done: func() {}}
	}
	type nestedResult struct {
		dirs []string
		err  error
	}
	nch := make(chan nestedResult, 1)
	go func() {
		d, err := c.nestedRepos(ctx)
		nch <- nestedResult{d, err}
	}()
	return func() (sideResult, error) {
		ti, nr := <-tch, <-nch
		if nr.err != nil {
			return sideResult{}, nr.err
		}
		if ti.err != nil {
			return sideResult{}, ti.err
		}
		return sideResult{forced: ti.paths, done: ti.done, nested: nr.dirs}, nil
	}
}

// action is what a full snapshot does with one path a scan reported.
type action uint8

const (
	actNone   action = iota // not recorded (left out, or nothing to do)
	actAdd                  // recorded as it is on disk (gone: removed)
	actRemove               // tracked but left out: removed from the index and the snapshot
)

// classifier decides, path by path, what a full snapshot records, and
// collects what it leaves out.
type classifier struct {
	c        *Checkpointer
	nested   []string // nested repositories (work-tree paths)
	limit    int64
	seen     map[string]bool
	realDirs map[string]bool

	skipped   []string // workspace-relative: oversized and special files
	uncov     []string // work-tree paths left out; directories end in "/"
	becameDir []string // recorded files that are directories now
}

func (c *Checkpointer) newClassifier(nested []string, n int) *classifier {
	return &classifier{c: c, nested: nested, limit: c.opts.maxFileSize(),
		seen: make(map[string]bool, n), realDirs: map[string]bool{".": true}}
}

func (cl *classifier) inNested(p string) bool {
	for _, d := range cl.nested {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// realDir reports whether d is a directory reached without following a
// symbolic link (memoized: most candidates share parents).
func (cl *classifier) realDir(d string) bool {
	if ok, seen := cl.realDirs[d]; seen {
		return ok
	}
	ok := cl.realDir(path.Dir(d))
	if ok {
		st, err := os.Lstat(filepath.Join(cl.c.workDir, filepath.FromSlash(d)))
		ok = err == nil && st.IsDir()
	}
	cl.realDirs[d] = ok
	return ok
}

// considerName is the part of consider that needs no system call, for an
// untracked path: actAdd when p may be recorded (what it is on disk is
// left to the caller), actNone when it is left out.
func (cl *classifier) considerName(p string) action {
	if cl.seen[p] {
		return actNone
	}
	cl.seen[p] = true
	if strings.HasSuffix(p, "/") {
		cl.uncov = append(cl.uncov, p) // a nested repository
		return actNone
	}
	if rel, ok := cl.c.wsPath(p); !ok || cl.c.protect.match(rel) || cl.inNested(p) {
		cl.uncov = append(cl.uncov, p) // protected, or in a nested repository
		return actNone
	}
	return actAdd
}

// consider classifies the work-tree path p; tracked says whether the
// private index holds it. A path seen before is actNone.
func (cl *classifier) consider(p string, tracked bool) (action, error) {
	c := cl.c
	if cl.seen[p] {
		return actNone, nil
	}
	cl.seen[p] = true
	leftOut := func() action {
		if tracked {
			return actRemove
		}
		return actNone
	}
	if strings.HasSuffix(p, "/") {
		// A nested repository (or submodule): never part of a snapshot.
		cl.uncov = append(cl.uncov, p)
		return actNone, nil
	}
	if rel, ok := c.wsPath(p); !ok || c.protect.match(rel) || cl.inNested(p) {
		// Protected (or in a nested repository): never stored, whether
		// ignored or not.
		cl.uncov = append(cl.uncov, p)
		return leftOut(), nil
	}
	if !cl.realDir(path.Dir(p)) {
		// A parent became a file or a symbolic link: the path is gone.
		return leftOut(), nil
	}
	st, err := os.Lstat(filepath.Join(c.workDir, filepath.FromSlash(p)))
	switch {
	case err != nil:
		// Gone (or a parent replaced by a file): update-index removes it.
		return actAdd, nil
	case st.Mode().IsRegular():
		if cl.limit >= 0 && st.Size() > cl.limit {
			rel, _ := c.wsPath(p)
			if c.opts.Oversize == OversizeFail {
				return actNone, &FileTooLargeError{Path: rel, Size: st.Size(), Limit: cl.limit}
			}
			cl.skipped = append(cl.skipped, rel)
			cl.uncov = append(cl.uncov, p)
			return leftOut(), nil
		}
	case st.IsDir():
		if tracked {
			cl.becameDir = append(cl.becameDir, p)
		}
	case st.Mode()&fs.ModeSymlink != 0:
	default:
		// FIFO, socket or device: git cannot store it.
		rel, _ := c.wsPath(p)
		cl.skipped = append(cl.skipped, rel)
		cl.uncov = append(cl.uncov, p)
		return leftOut(), nil
	}
	return actAdd, nil
}

// filesIn lists the files of the private index under the given
// directories (work-tree paths).
func (c *Checkpointer) filesIn(ctx context.Context, dirs []string) ([]string, error) {
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv,
		Args: append([]string{"ls-files", "-z", "--cached", "--"}, dirs...)})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: listing files in nested repositories: %w", err)
	}
	inside, err := gitx.SplitNUL(out)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: ls-files: %w", err)
	}
	return inside, nil
}

// excludeArgs are the ls-files options that apply the ignore rules.
func (c *Checkpointer) excludeArgs() []string {
	var excludes []string
	if !c.opts.IncludeIgnored {
		excludes = append(excludes, "--exclude-standard")
	}
	if c.exclude != "" {
		excludes = append(excludes, "--exclude-from="+c.exclude)
	}
	return excludes
}

// ignoredIn lists what ignore rules leave out below the given work-tree
// directories, wholly ignored directories as "dir/".
// With noIndex, an index file that does not exist stands in for the
// private index, for directories that the private index still holds as
// files (with those, "--directory" hides what is ignored inside).
func (c *Checkpointer) ignoredIn(ctx context.Context, dirs []string, noIndex bool) ([]string, error) {
	args := append([]string{"ls-files", "-z", "--others", "--ignored", "--directory"}, c.excludeArgs()...)
	env := c.privEnv
	if noIndex {
		env = append(c.privEnvCopy(), "GIT_INDEX_FILE="+filepath.Join(c.private, "no-index"))
	}
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: env, Args: append(append(args, "--"), dirs...)})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: scanning ignored files: %w", err)
	}
	more, err := gitx.SplitNUL(out)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: ls-files: %w", err)
	}
	return more, nil
}

// splitTagged splits the output of "ls-files -z -t --modified --deleted
// --others" into tracked paths (tags C and R: changed or removed) and
// untracked ones (tag ?). Any other tag fails closed.
func splitTagged(out []byte) (tracked, others []string, err error) {
	recs, err := gitx.SplitNUL(out)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range recs {
		if len(r) < 3 || r[1] != ' ' {
			return nil, nil, fmt.Errorf("unexpected record %q", truncate(r, 120))
		}
		switch r[0] {
		case 'C', 'R':
			tracked = append(tracked, r[2:])
		case '?':
			others = append(others, r[2:])
		default:
			return nil, nil, fmt.Errorf("unexpected tag in %q", truncate(r, 120))
		}
	}
	return tracked, others, nil
}

// nestedRepos returns the directories (work-tree paths, below the
// workspace root) that hold a .git entry among those that hold or held
// snapshotted files. A repository created in a directory whose files are
// already recorded is invisible to "ls-files --others" (git descends into
// it as into any directory with tracked files), so it is looked for here:
// one Lstat per directory. The directory set is read from the base tree
// once, then grows with every path added to the private index.
func (c *Checkpointer) nestedRepos(ctx context.Context) ([]string, error) {
	if c.dirs == nil {
		c.dirs = make(map[string]bool)
		base := c.loadBase().tree
		if base != c.emptyTree {
			out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv,
				Args: []string{"ls-tree", "-r", "-d", "-z", "--name-only", base}})
			if err == nil { // a collected base tree: the index scan still finds new directories
				dirs, err := gitx.SplitNUL(out)
				if err != nil {
					return nil, fmt.Errorf("checkpoint: ls-tree: %w", err)
				}
				for _, d := range dirs {
					if _, ok := c.wsPath(d); ok {
						c.dirs[d] = true
					}
				}
			}
		}
	}
	var nested []string
	for d := range c.dirs {
		if _, err := os.Lstat(filepath.Join(c.workDir, filepath.FromSlash(d), ".git")); err == nil {
			nested = append(nested, d)
		}
	}
	slices.Sort(nested)
	return nested, nil
}

// noteDirs adds the directories above work-tree paths (inside the
// workspace) to the set nestedRepos checks.
func (c *Checkpointer) noteDirs(paths []string) {
	if c.dirs == nil {
		return // loaded from the base tree on first use
	}
	for _, p := range paths {
		for d := path.Dir(p); d != "." && d != c.prefix && !c.dirs[d]; d = path.Dir(d) {
			c.dirs[d] = true
		}
	}
}

// purgeProtected removes protected paths from the private index, once per
// Checkpointer and protection lists: an index written by an older version,
// or before the lists named them, may hold some, and an unchanged entry
// would otherwise be carried into every later snapshot. Removed from the
// index, they drop out of the next snapshot's tree as well.
func (c *Checkpointer) purgeProtected(ctx context.Context) error {
	if c.purged {
		return nil
	}
	sig := c.protect.sig
	marker := filepath.Join(c.private, "protected-purged")
	if b, err := os.ReadFile(marker); err == nil && string(b) == sig {
		c.purged = true
		return nil
	}
	if _, err := os.Stat(c.index); errors.Is(err, fs.ErrNotExist) {
		c.purged = true
		return writeFileAtomic(marker, []byte(sig))
	}
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: []string{"ls-files", "-z", "--cached"}})
	if err != nil {
		return fmt.Errorf("checkpoint: listing the private index: %w", err)
	}
	all, err := gitx.SplitNUL(out)
	if err != nil {
		return fmt.Errorf("checkpoint: ls-files: %w", err)
	}
	var remove []string
	for _, p := range all {
		if rel, ok := c.wsPath(p); !ok || c.protect.match(rel) {
			remove = append(remove, p)
		}
	}
	if len(remove) > 0 {
		if err := c.updateIndex(ctx, c.privEnv, []string{"--force-remove"}, remove); err != nil {
			return err
		}
		c.icache = nil
	}
	c.purged = true
	return writeFileAtomic(marker, []byte(sig))
}

func (c *Checkpointer) updateIndex(ctx context.Context, env, flags, paths []string) error {
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	args := append(append([]string{"update-index"}, flags...), "-z", "--stdin")
	if _, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: env, Args: args, Stdin: &in}); err != nil {
		return fmt.Errorf("checkpoint: updating the private index: %w", err)
	}
	return nil
}

func (c *Checkpointer) writeTree(ctx context.Context, env []string) (string, error) {
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: env, Args: []string{"write-tree"}})
	if err != nil {
		return "", fmt.Errorf("checkpoint: writing tree: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	if !gitx.IsOID(tree) {
		return "", fmt.Errorf("checkpoint: write-tree printed %q", truncate(tree, 80))
	}
	return tree, nil
}

// trackedIgnored returns the files the user's own index tracks although
// ignore rules match them (git keeps tracking such files, and so does a
// snapshot). The list is only recomputed when the user's index changed;
// done records that it was applied.
func (c *Checkpointer) trackedIgnored(ctx context.Context) (paths []string, done func(), err error) {
	return c.trackedAmong(ctx, nil, true)
}

// maxIgnoredPathspecs bounds the ignored paths handed to ls-files as
// pathspecs; above it, ls-files applies the ignore rules itself.
const maxIgnoredPathspecs = 4096

// trackedAmong is trackedIgnored for a scan that found the ignored paths
// itself (work-tree paths, directories ending in "/"): a file the user's
// repository tracks although it is ignored, and that exists, is among
// them or below them, so only those are looked up, and nothing is when
// there are none (the user's index is then looked at again next time).
// With all set, ignored is not used: every ignored file the user's index
// tracks is listed.
func (c *Checkpointer) trackedAmong(ctx context.Context, ignored []string, all bool) (paths []string, done func(), err error) {
	noop := func() {}
	if !c.isGit || c.opts.IncludeIgnored || !all && len(ignored) == 0 {
		return nil, noop, nil
	}
	st, err := os.Stat(c.userIdx)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noop, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	sig := fmt.Sprintf("%d %d %d\n", st.Size(), st.ModTime().UnixNano(), fileID(st))
	stateFile := filepath.Join(c.private, "user-index")
	if b, err := os.ReadFile(stateFile); err == nil && string(b) == sig {
		return nil, noop, nil
	}
	var args []string
	if all || len(ignored) > maxIgnoredPathspecs {
		args = []string{"ls-files", "-z", "--cached", "--ignored", "--exclude-standard"}
		if c.exclude != "" {
			args = append(args, "--exclude-from="+c.exclude)
		}
		args = append(args, c.pathspec()...)
	} else {
		args = append([]string{"ls-files", "-z", "--cached", "--"}, ignored...)
	}
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.userEnv, Args: args})
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: listing files the repository tracks: %w", err)
	}
	if paths, err = gitx.SplitNUL(out); err != nil {
		return nil, nil, fmt.Errorf("checkpoint: ls-files: %w", err)
	}
	return paths, func() { _ = writeFileAtomic(stateFile, []byte(sig)) }, nil
}

// Snapshot takes a full checkpoint with a label and a correlation id and returns its id. It is
// CreateWith in the shape of the gate's Checkpointer interface, so a *Checkpointer can be handed
// to gate.Options.Checkpointer as it is.
func (c *Checkpointer) Snapshot(ctx context.Context, label, correlationID string) (string, error) {
	cp, err := c.CreateWith(ctx, CreateOptions{Label: label, CorrelationID: correlationID})
	if err != nil {
		return "", err
	}
	return cp.ID, nil
}
