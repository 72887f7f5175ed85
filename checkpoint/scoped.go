package checkpoint

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// SnapshotPaths records only paths (absolute, or relative to the
// workspace; files or directories, existing or not) under a new
// checkpoint with a label and a correlation id, and returns its id. It is
// [Checkpointer.CreateWith] with [CreateOptions.Paths], in the shape the
// gate calls for a line confined to a known write set: what the sandbox
// lets the line write is all that can change, so a checkpoint of just
// that costs what the write set costs, not a snapshot of the workspace.
//
// A restore of the checkpoint ([Checkpointer.Restore]) puts back exactly
// those paths as they were: each file's content and executable bit, each
// link, and absence (a file created since is removed); below a directory
// path, what a full snapshot covers of that subtree (ignored files,
// nested repositories and protected paths are left alone). Nothing else
// is touched. An absent path whose parent directory is missing covers the
// outermost missing directory instead, so that a restore removes the
// directories created for it too. A path that is the workspace itself
// makes a full snapshot. A path outside the workspace, or with a symbolic
// link on its way, is an error naming it ([ErrInvalidPath]); protected
// paths are never stored (the [Created] event's [Checkpoint.Skipped] lists
// those named). The checkpoint is listed like any other;
// [Checkpoint.Paths] says what it covers and its commit's subject says it
// is scoped.
func (c *Checkpointer) SnapshotPaths(ctx context.Context, label, correlationID string, paths []string) (string, error) {
	if len(paths) == 0 {
		return "", fmt.Errorf("%w: SnapshotPaths: no paths (Snapshot takes the whole workspace)", ErrInvalidPath)
	}
	cp, err := c.CreateWith(ctx, CreateOptions{Label: label, CorrelationID: correlationID, Paths: paths})
	if err != nil {
		return "", err
	}
	return cp.ID, nil
}

// nestedCheck finds nested repositories above workspace-relative paths,
// looking each directory up once.
type nestedCheck struct {
	c    *Checkpointer
	seen map[string]bool // workspace-relative directory -> holds a .git entry
}

// is reports whether the workspace-relative directory d holds a .git entry.
func (n *nestedCheck) is(d string) bool {
	if ok, seen := n.seen[d]; seen {
		return ok
	}
	_, err := os.Lstat(filepath.Join(n.c.root, filepath.FromSlash(d), ".git"))
	n.seen[d] = err == nil
	return err == nil
}

// above returns the outermost directory strictly between the workspace
// root and p that is a nested repository, or "".
func (n *nestedCheck) above(p string) string {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && n.is(p[:i]) {
			return p[:i]
		}
	}
	return ""
}

// walkEnd says where the walk down to a scoped path stopped.
type walkEnd uint8

const (
	walkFound   walkEnd = iota // every parent is a real directory; st is the path's own Lstat (nil: absent)
	walkMissing                // the parent at is missing
	walkBlocked                // a parent is not a directory
	walkLink                   // the parent at is a symbolic link
	walkNested                 // the parent at is a nested repository
)

// walkScoped looks at the workspace-relative p and the directories above
// it, top down, with one Lstat each (and one for a .git entry in each
// directory): the first that is missing, not a directory, a link or a
// nested repository ends the walk.
func (c *Checkpointer) walkScoped(p string, nested *nestedCheck) (st fs.FileInfo, end walkEnd, at string, err error) {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		d := p[:i]
		dst, err := os.Lstat(filepath.Join(c.root, filepath.FromSlash(d)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, walkMissing, d, nil
		case errors.Is(err, errNotDir):
			return nil, walkBlocked, d, nil
		case err != nil:
			return nil, 0, "", fmt.Errorf("checkpoint: %s: %w", d, err)
		case dst.Mode()&fs.ModeSymlink != 0:
			return nil, walkLink, d, nil
		case !dst.IsDir():
			return nil, walkBlocked, d, nil
		case nested.is(d):
			return nil, walkNested, d, nil
		}
	}
	st, err = os.Lstat(filepath.Join(c.root, filepath.FromSlash(p)))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return nil, walkFound, "", nil
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("checkpoint: %s: %w", p, err)
	}
	return st, walkFound, "", nil
}

// scopedEntries lists what a path-scoped snapshot of paths (workspace-
// relative, normalized) records, sorted: each existing file or link, and
// below each directory what a full snapshot would record there (listed
// by git with the workspace's ignore rules). Absent paths are simply not
// in the snapshot (built on the empty tree), so restoring removes what is
// there then.
//
// A fresh snapshot (one asked for now) refuses a path with a symbolic
// link on its way ([ErrInvalidPath]: it is not a path of the workspace
// tree), and covers, for an absent path whose parent is missing, the
// outermost missing directory instead, so that restoring that absence
// removes the directories created for the path too; scope is the covered
// paths then. The checkpoint a restore takes of the current state keeps
// the target's scope and takes a path behind a link (put there by the
// work since) as absent: the restore then finds the link in its way and
// refuses rather than write through it.
//
// Protected paths, paths in nested repositories, files above the size cap
// and special files are left out; those the caller named are reported as
// skipped, and all are recorded as uncovered, so that a restore leaves
// them alone.
func (c *Checkpointer) scopedEntries(ctx context.Context, paths []string, fresh bool) (scope []string, entries []importEntry, skipped, uncov []string, err error) {
	limit := c.opts.maxFileSize()
	nested := &nestedCheck{c: c, seen: map[string]bool{}}
	leaveOut := func(p string, dir bool) {
		skipped = append(skipped, p)
		rp := c.repoPath(p)
		if dir {
			rp += "/"
		}
		uncov = append(uncov, rp)
	}
	scope = paths
	widened := false
	var dirs []string
	for i, p := range paths {
		st, end, at, err := c.walkScoped(p, nested)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		switch end {
		case walkMissing:
			if fresh {
				if !widened {
					scope = slices.Clone(paths)
					widened = true
				}
				scope[i], p = at, at
			}
		case walkLink:
			if fresh {
				return nil, nil, nil, nil, fmt.Errorf("%w: %s: parent %s is a symbolic link", ErrInvalidPath, p, at)
			}
		case walkNested:
			skipped = append(skipped, p)
			uncov = append(uncov, c.repoPath(at)+"/")
			continue
		}
		isDir := st != nil && st.IsDir()
		if c.protect.match(p) {
			leaveOut(p, isDir)
			continue
		}
		switch {
		case st == nil:
			continue // absent: restoring removes what is there then
		case isDir:
			if nested.is(p) {
				leaveOut(p, true)
				continue
			}
			dirs = append(dirs, p)
			continue
		case st.Mode().IsRegular():
			if limit >= 0 && st.Size() > limit {
				if c.opts.Oversize == OversizeFail {
					return nil, nil, nil, nil, &FileTooLargeError{Path: p, Size: st.Size(), Limit: limit}
				}
				leaveOut(p, false)
				continue
			}
		case st.Mode()&fs.ModeSymlink != 0:
		default:
			leaveOut(p, false)
			continue
		}
		entries = append(entries, importEntry{path: c.repoPath(p)})
	}
	if widened {
		scope = collapse(scope)
	}
	if len(dirs) > 0 {
		more, unc, err := c.listDirs(ctx, dirs, nested)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		entries = append(entries, more...)
		uncov = append(uncov, unc...)
	}
	slices.SortFunc(entries, func(a, b importEntry) int { return strings.Compare(a.path, b.path) })
	entries = slices.CompactFunc(entries, func(a, b importEntry) bool { return a.path == b.path })
	return scope, entries, skipped, uncov, nil
}

// listDirs lists what a full snapshot would record below the given
// workspace-relative directories: the files that ignore rules do not
// leave out and, in a repository, the files the user's index tracks
// although they are ignored ("ls-files --cached --others" on the user's
// index); and what it would record as uncovered there (ignored files and
// wholly ignored directories, nested repositories, protected paths).
func (c *Checkpointer) listDirs(ctx context.Context, dirs []string, nested *nestedCheck) (entries []importEntry, uncov []string, err error) {
	spec := make([]string, len(dirs))
	for i, d := range dirs {
		spec[i] = c.repoPath(d)
	}
	env := c.userEnv
	if !c.isGit {
		env = append(c.privEnvCopy(), "GIT_INDEX_FILE="+filepath.Join(c.private, "no-index"))
	}
	excludes := c.excludeArgs()
	type result struct {
		out []byte
		err error
	}
	ich := make(chan result, 1)
	if len(excludes) > 0 {
		go func() {
			args := append([]string{"ls-files", "-z", "--others", "--ignored", "--directory"}, excludes...)
			out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: env, Args: append(append(args, "--"), spec...)})
			ich <- result{out, err}
		}()
	} else {
		ich <- result{}
	}
	args := append([]string{"ls-files", "-z", "--cached", "--others"}, excludes...)
	out, lerr := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: env, Args: append(append(args, "--"), spec...)})
	ir := <-ich
	if lerr != nil {
		return nil, nil, fmt.Errorf("checkpoint: listing %s: %w", truncate(strings.Join(dirs, ", "), 200), lerr)
	}
	if ir.err != nil {
		return nil, nil, fmt.Errorf("checkpoint: listing ignored files in %s: %w", truncate(strings.Join(dirs, ", "), 200), ir.err)
	}
	listed, err := gitx.SplitNUL(out)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: ls-files: %w", err)
	}
	ignored, err := gitx.SplitNUL(ir.out)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: ls-files: %w", err)
	}
	uncov = ignored
	for _, p := range listed {
		if strings.HasSuffix(p, "/") {
			uncov = append(uncov, p) // a nested repository
			continue
		}
		rel, ok := c.wsPath(p)
		if !ok || checkTreePath(rel) != nil {
			continue
		}
		if c.protect.match(rel) {
			uncov = append(uncov, p)
			continue
		}
		if n := nested.above(rel); n != "" {
			uncov = append(uncov, c.repoPath(n)+"/")
			continue
		}
		entries = append(entries, importEntry{path: p, classify: true})
	}
	return entries, uncov, nil
}

// recordMsg is the message of the commit that keeps a snapshot's record
// of uncovered paths.
const recordMsg = "reins checkpoint: record of the paths the snapshot does not cover\n"

// looseFiles stores the files of a path-scoped snapshot as loose objects
// and returns their index entries, sorted, with what it left out: an
// entry that is not looked at yet (classify) is left out when it is a
// special file or above the size cap (failing under OversizeFail), and a
// path that is gone or a directory now is not recorded.
func (c *Checkpointer) looseFiles(w *looseWriter, entries []importEntry, res *imported) (idx []indexEntry, skipped, uncov []string, err error) {
	var src fileSource
	if c.portable {
		src, err = newRootSource(c.workDir)
	} else {
		src, err = newFileSource(c.workDir)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer src.close()
	limit := c.opts.maxFileSize()
	for _, e := range entries {
		sf, err := src.open(e.path, e.classify)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("checkpoint: %s: %w", e.path, err)
		}
		if e.classify && (sf.kind == 's' || sf.kind == 'f' && limit >= 0 && sf.size > limit) {
			sf.release()
			rel, _ := c.wsPath(e.path)
			if sf.kind == 'f' && c.opts.Oversize == OversizeFail {
				return nil, nil, nil, &FileTooLargeError{Path: rel, Size: sf.size, Limit: limit}
			}
			skipped = append(skipped, rel)
			uncov = append(uncov, e.path)
			continue
		}
		var oid []byte
		var mode uint32
		switch sf.kind {
		case 'l':
			oid, err = w.put("blob", []byte(sf.target))
			mode = gitx.ModeSymlink
		case 'f':
			oid, err = w.putStream(sf.size, sf.r)
			sf.release()
			mode = gitx.ModeFile
			if sf.exec {
				mode = gitx.ModeExec
			}
		default:
			sf.release()
			res.gone = append(res.gone, e.path) // vanished, or a directory or a special file now
			continue
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("checkpoint: storing %s: %w", e.path, err)
		}
		idx = append(idx, indexEntry{path: e.path, mode: mode, oid: oid})
		res.files = append(res.files, importedFile{path: e.path, mode: mode, oid: hex.EncodeToString(oid), sd: sf.sd, sdOK: sf.sdOK})
	}
	// A path and one below it cannot both be files of one tree: the work
	// tree changed while it was read.
	set := make(map[string]bool, len(idx))
	for _, e := range idx {
		set[e.path] = true
	}
	for _, e := range idx {
		for d := path.Dir(e.path); d != "."; d = path.Dir(d) {
			if set[d] {
				return nil, nil, nil, fmt.Errorf("checkpoint: %s and %s changed while being read", d, e.path)
			}
		}
	}
	return idx, skipped, uncov, nil
}

// looseTree stores the trees holding the entries (sorted by path) and
// returns the root tree's id.
func (c *Checkpointer) looseTree(w *looseWriter, idx []indexEntry) (string, error) {
	var werr error
	root := buildTreeEmit(idx, 0, c.newHash(), nil, nil, func(_, content []byte) {
		if werr == nil {
			_, werr = w.put("tree", content)
		}
	})
	if werr != nil {
		return "", fmt.Errorf("checkpoint: storing a tree: %w", werr)
	}
	return hex.EncodeToString(root.oid), nil
}

// looseCommit stores a path-scoped snapshot without starting a process:
// its files, trees, the record of uncovered paths, the record's commit
// and the checkpoint commit as loose objects, and the ref as a loose ref.
// It returns what importCommit returns for the same snapshot.
func (c *Checkpointer) looseCommit(ctx context.Context, spec streamSpec, entries []importEntry) (imported, error) {
	var res imported
	w := c.newLooseWriter()
	defer w.close()
	idx, skipped, uncov, err := c.looseFiles(w, entries, &res)
	if err != nil {
		return res, err
	}
	tree, err := c.looseTree(w, idx)
	if err != nil {
		return res, err
	}
	record, msg, err := spec.finish(skipped, uncov)
	if err != nil {
		return res, err
	}
	rec, err := w.put("blob", record)
	if err != nil {
		return res, fmt.Errorf("checkpoint: storing the record of uncovered paths: %w", err)
	}
	res.recordOID = hex.EncodeToString(rec)
	rtree, err := w.put("tree", append([]byte("100644 "+uncoveredName+"\x00"), rec...))
	if err != nil {
		return res, fmt.Errorf("checkpoint: storing the record of uncovered paths: %w", err)
	}
	// The record's commit has a fixed date: the same record (most often
	// the empty one) is then the same commit, already stored.
	rcommit, err := w.put("commit", commitObject(hex.EncodeToString(rtree), "", 0, []byte(recordMsg)))
	if err != nil {
		return res, fmt.Errorf("checkpoint: storing the record of uncovered paths: %w", err)
	}
	commit, err := w.put("commit", commitObject(tree, hex.EncodeToString(rcommit), spec.when, msg))
	if err != nil {
		return res, fmt.Errorf("checkpoint: storing the snapshot: %w", err)
	}
	res.commit, res.tree = hex.EncodeToString(commit), tree
	if err := c.createRef(spec.ref, res.commit); err != nil {
		return res, err
	}
	c.looseSince += w.n
	if c.looseSince >= looseCheckEvery {
		c.looseSince = 0
		c.maybeRepack(ctx, looseHardLimit)
	}
	return res, nil
}

// scopedTree stores the current state of scoped paths as a tree (files and
// trees, no commit) and returns its id, for comparing a path-scoped
// checkpoint with the workspace.
func (c *Checkpointer) scopedTree(ctx context.Context, paths []string) (string, error) {
	_, entries, _, _, err := c.scopedEntries(ctx, paths, false)
	if err != nil {
		return "", err
	}
	if c.loose {
		w := c.newLooseWriter()
		defer w.close()
		idx, _, _, err := c.looseFiles(w, entries, &imported{})
		if err != nil {
			return "", err
		}
		return c.looseTree(w, idx)
	}
	// Objects are git's to write: through a temporary index.
	var add []string
	limit := c.opts.maxFileSize()
	for _, e := range entries {
		st, err := os.Lstat(filepath.Join(c.workDir, filepath.FromSlash(e.path)))
		if err != nil || !(st.Mode().IsRegular() && (limit < 0 || st.Size() <= limit) || st.Mode()&fs.ModeSymlink != 0) {
			continue
		}
		add = append(add, e.path)
	}
	tmp := filepath.Join(c.private, "scoped-index-"+randHex())
	defer os.Remove(tmp)
	env := append(c.privEnvCopy(), "GIT_INDEX_FILE="+tmp)
	if len(add) > 0 {
		if err := c.updateIndex(ctx, env, []string{"--add"}, add); err != nil {
			return "", err
		}
	}
	return c.writeTree(ctx, env)
}
