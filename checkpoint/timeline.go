package checkpoint

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// List returns the workspace's checkpoints, newest first (by creation
// time, then id), with [Checkpoint.FilesChanged] filled in. A stored
// checkpoint whose metadata cannot be read is an error, not silently
// skipped.
func (c *Checkpointer) List(ctx context.Context) ([]Checkpoint, error) {
	return c.list(ctx, true)
}

func (c *Checkpointer) list(ctx context.Context, counts bool) ([]Checkpoint, error) {
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv,
		Args: []string{"for-each-ref", "--format=" + gitx.RefFormat, RefPrefix}})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: listing: %w", err)
	}
	refs, err := gitx.ParseRefs(out)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: listing: %w", err)
	}
	list := make([]Checkpoint, 0, len(refs))
	for _, r := range refs {
		cp, m, err := fromRef(r)
		if err != nil {
			return nil, err
		}
		if m.Scope == c.scope {
			list = append(list, cp)
		}
	}
	slices.SortFunc(list, func(a, b Checkpoint) int {
		if n := b.Time.Compare(a.Time); n != 0 {
			return n
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if counts {
		if err := c.countChanges(ctx, list); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// countChanges fills FilesChanged: each checkpoint against the next older
// full checkpoint (the empty tree for the oldest), over its own paths when
// path-scoped. Full checkpoints are compared in one diff-tree --stdin run.
func (c *Checkpointer) countChanges(ctx context.Context, list []Checkpoint) error {
	prev := make([]string, len(list))
	base := c.emptyTree
	for i := len(list) - 1; i >= 0; i-- {
		prev[i] = base
		if !list[i].Scoped() {
			base = list[i].Tree
		}
	}
	var in strings.Builder
	pairs := make(map[string]int)
	for i, cp := range list {
		if cp.Scoped() {
			continue
		}
		h := prev[i] + " " + cp.Tree
		if _, ok := pairs[h]; !ok {
			pairs[h] = 0
			in.WriteString(h)
			in.WriteByte('\n')
		}
	}
	if in.Len() > 0 {
		out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Stdin: strings.NewReader(in.String()),
			Args: []string{"diff-tree", "--stdin", "-r", "-z", "--raw", "--no-renames", "--no-abbrev"}})
		if err != nil {
			return fmt.Errorf("checkpoint: counting changes: %w", err)
		}
		res, err := gitx.ParseRaw(out, true)
		if err != nil {
			return fmt.Errorf("checkpoint: counting changes: %w", err)
		}
		for _, p := range res {
			if _, ok := pairs[p.Header]; !ok {
				return fmt.Errorf("checkpoint: counting changes: unexpected pair %q", p.Header)
			}
			pairs[p.Header] = countFiles(p.Entries)
		}
	}
	for i := range list {
		cp := &list[i]
		if !cp.Scoped() {
			cp.FilesChanged = pairs[prev[i]+" "+cp.Tree]
			continue
		}
		spec := make([]string, len(cp.Paths))
		for j, p := range cp.Paths {
			spec[j] = c.repoPath(p)
		}
		entries, err := c.diffTrees(ctx, prev[i], cp.Tree, spec)
		if err != nil {
			return err
		}
		cp.FilesChanged = countFiles(entries)
	}
	return nil
}

func countFiles(entries []gitx.RawEntry) int {
	n := 0
	for _, e := range entries {
		if e.OldMode != gitx.ModeGitlink && e.NewMode != gitx.ModeGitlink {
			n++
		}
	}
	return n
}

// Diff returns the files that changed in the workspace since the
// checkpoint (over its paths, for a path-scoped one): Added were created
// since, Deleted were removed since. It refreshes the private index (so it
// may hash changed files) but stores no checkpoint.
func (c *Checkpointer) Diff(ctx context.Context, id string) ([]Change, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cp, err := c.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	var entries []gitx.RawEntry
	if cp.Scoped() {
		cur, err := c.scopedTree(ctx, cp.Paths)
		if err != nil {
			return nil, err
		}
		if entries, err = c.diffTrees(ctx, cp.Tree, cur, nil); err != nil {
			return nil, err
		}
	} else {
		if _, _, err := c.refreshIndex(ctx); err != nil {
			return nil, err
		}
		out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv,
			Args: []string{"diff-index", "--cached", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", cp.Tree}})
		if err != nil {
			return nil, fmt.Errorf("checkpoint: comparing with %s: %w", id, err)
		}
		pairs, err := gitx.ParseRaw(out, false)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: comparing with %s: %w", id, err)
		}
		entries = pairs[0].Entries
	}
	return c.changesOf(entries)
}

// PruneOptions says which checkpoints [Checkpointer.Prune] keeps. A
// checkpoint is removed only if every rule that is set lets it go: it is
// not among the KeepLast newest (when KeepLast > 0) and it is older than
// OlderThan (when OlderThan > 0).
type PruneOptions struct {
	KeepLast  int
	OlderThan time.Duration
}

// Prune deletes checkpoint refs according to o and returns the removed
// checkpoints, newest first. With both fields zero it returns an error
// instead of deleting everything. The refs are deleted in one atomic
// transaction; git reclaims the objects at its next garbage collection.
func (c *Checkpointer) Prune(ctx context.Context, o PruneOptions) ([]Checkpoint, error) {
	if o.KeepLast < 0 || o.OlderThan < 0 {
		return nil, fmt.Errorf("checkpoint: PruneOptions: negative KeepLast (%d) or OlderThan (%s)", o.KeepLast, o.OlderThan)
	}
	if o.KeepLast == 0 && o.OlderThan == 0 {
		return nil, fmt.Errorf("checkpoint: PruneOptions: set KeepLast or OlderThan (refusing to delete every checkpoint)")
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	list, err := c.list(ctx, false)
	if err != nil {
		unlock()
		return nil, err
	}
	now := c.opts.now()
	var pruned []Checkpoint
	var in strings.Builder
	for i, cp := range list {
		keep := (o.KeepLast > 0 && i < o.KeepLast) || (o.OlderThan > 0 && now.Sub(cp.Time) <= o.OlderThan)
		if keep {
			continue
		}
		pruned = append(pruned, cp)
		fmt.Fprintf(&in, "delete %s%s %s\n", RefPrefix, cp.ID, cp.Commit)
	}
	if len(pruned) > 0 {
		_, err = c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv, Stdin: strings.NewReader(in.String()),
			Args: []string{"update-ref", "--stdin"}})
	}
	unlock()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: pruning: %w", err)
	}
	for _, cp := range pruned {
		c.emit(Event{Kind: Pruned, Workspace: c.root, Checkpoint: cp})
	}
	return pruned, nil
}
