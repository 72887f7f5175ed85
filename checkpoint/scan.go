package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// errStatusFailed reports that "git status" on the private index failed;
// prepare falls back to the index-based scan.
var errStatusFailed = errors.New("checkpoint: scanning the work tree with git status failed")

// scan prepares a full snapshot built on base with a single pass over the
// work tree: "git status" on the private index, with the private HEAD
// detached at the base commit, reports in one walk what differs from the
// base (the index against HEAD), the files whose stat data no longer
// matches the index (refreshed in memory, so unchanged files are never
// read), the untracked files and the ignored ones. The snapshot replaces
// or removes just the reported paths in the base tree; the files are read
// once, by the stream to fast-import, and the index learns them from it
// (recordIndex). A first snapshot starts from the user's index (seedIndex)
// and takes the files that still match it as the objects it names.
//
// The ignored paths are recorded the way "--ignored=matching" lists them:
// a directory that an ignore pattern matches as "dir/", other ignored
// files one by one.
func (c *Checkpointer) scan(ctx context.Context, b baseState) (prepared, error) {
	p := prepared{base: b.tree}
	if err := c.purgeProtected(ctx); err != nil {
		return p, err
	}
	if err := c.syncHead(b); err != nil {
		return p, err
	}
	if err := c.syncExcludes(); err != nil {
		return p, err
	}
	side := c.startSide(ctx, false)
	var seeded map[string]seedRef
	if b.tree == c.emptyTree {
		seeded = c.seedIndex(ctx)
	}
	args := []string{"status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored=matching",
		"--no-renames", "--ignore-submodules=all"}
	out, serr := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: append(args, c.pathspec()...)})
	sd, err := side()
	if err != nil {
		return p, err
	}
	if serr != nil {
		return p, fmt.Errorf("%w: %w", errStatusFailed, serr)
	}
	records, err := gitx.ParseStatusV2(out)
	if err != nil {
		return p, fmt.Errorf("checkpoint: %w", err)
	}

	var (
		changed  []string               // in the index, stat data changed or gone
		indexNew []string               // in the index and as on disk, but not as in the base
		refs     = map[string]seedRef{} // indexNew paths seeded from the user's index, as status saw them
		dropped  []string               // in the base, not in the index
		others   []string               // untracked
		ignored  []string
	)
	for _, r := range records {
		switch {
		case r.Kind == '?':
			others = append(others, r.Path)
		case r.Kind == '!':
			ignored = append(ignored, r.Path)
		case r.X == 'D':
			dropped = append(dropped, r.Path)
		case r.Y != '.':
			changed = append(changed, r.Path)
		default:
			indexNew = append(indexNew, r.Path)
			if ref, ok := seeded[r.Path]; ok && ref.oid == r.IndexOID && ref.mode == r.IndexMode {
				refs[r.Path] = ref
			}
		}
	}
	var uncov []string
	if len(sd.nested) > 0 {
		// Files recorded before their directory became a repository of its
		// own: left out from now on, like the rest of that repository.
		inside, err := c.filesIn(ctx, sd.nested)
		if err != nil {
			return p, err
		}
		changed = append(inside, changed...)
		for _, d := range sd.nested {
			uncov = append(uncov, d+"/")
		}
	}

	cl := c.newClassifier(sd.nested, len(records))
	// Path -> what the snapshot does with it: recorded from disk, or
	// removed from the base tree.
	const (
		record   = 1
		classify = 2 // recorded, unless the stream finds a special or oversized file
		drop     = 3
		object   = 4 // recorded as the object the index names (seeded, unchanged)
	)
	entries := make(map[string]int, len(records))
	visit := func(paths []string, tracked bool) error {
		for _, q := range paths {
			if _, ok := refs[q]; ok && tracked {
				entries[q] = drop
				if cl.considerName(q) == actAdd {
					entries[q] = object
				}
				continue
			}
			act, err := cl.consider(q, tracked)
			switch {
			case err != nil:
				return err
			case act == actAdd:
				entries[q] = record
			case act == actRemove:
				entries[q] = drop
			}
		}
		return nil
	}
	if err := visit(changed, true); err != nil {
		return p, err
	}
	// The index holds these as they are on disk, but not as the base does.
	if err := visit(indexNew, true); err != nil {
		return p, err
	}
	// Untracked files are not looked at here: the stream reads their
	// directories anyway and sorts out special and oversized files (the
	// first snapshot of a large tree is mostly these).
	for _, q := range others {
		if cl.considerName(q) == actAdd {
			entries[q] = classify
		}
	}
	if len(cl.becameDir) > 0 {
		// Where the index holds a file and there is now a directory,
		// status does not look for ignored files.
		more, err := c.ignoredIn(ctx, cl.becameDir, true)
		if err != nil {
			return p, err
		}
		ignored = append(ignored, more...)
	}
	// Files the user's repository tracks although they are ignored: among
	// the ignored paths, if any.
	forced, done, err := c.trackedAmong(ctx, ignored, false)
	if err != nil {
		return p, err
	}
	if err := visit(forced, false); err != nil {
		return p, err
	}
	for _, q := range dropped {
		if _, ok := entries[q]; !ok {
			entries[q] = drop
		}
	}
	p.deferIndex, p.done = true, done

	// What is recorded is not left out (a file the user's repository
	// tracks although it is ignored is listed as ignored too).
	for _, q := range ignored {
		if a, ok := entries[q]; !ok || a == drop {
			uncov = append(uncov, q)
		}
	}
	p.skipped, p.uncovered = cl.skipped, append(uncov, cl.uncov...)
	p.entries = make([]importEntry, 0, len(entries))
	for q, a := range entries {
		e := importEntry{path: q, delete: a == drop, classify: a == classify}
		if a == object {
			e.oid, e.mode = refs[q].oid, refs[q].mode
		}
		p.entries = append(p.entries, e)
	}
	slices.SortFunc(p.entries, func(a, b importEntry) int { return strings.Compare(a.path, b.path) })
	return p, nil
}

// syncExcludes makes Options.Exclude the private repository's
// info/exclude, which "git status" reads after core.excludesFile (the
// user's .git/info/exclude) and so with higher precedence, as
// --exclude-from has for ls-files.
func (c *Checkpointer) syncExcludes() error {
	name := filepath.Join(c.private, "repo", "info", "exclude")
	if len(c.opts.Exclude) == 0 {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoint: %w", err)
		}
		return nil
	}
	return writeIfChanged(name, []byte(strings.Join(c.opts.Exclude, "\n")+"\n"))
}
