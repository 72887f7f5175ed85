package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// objectSession reads objects through one "cat-file --batch" process for
// the length of an operation: a restore looks up its target, reads its
// record of uncovered paths, compares trees and reads the blobs it writes
// without starting a process for each.
type objectSession struct {
	mu   sync.Mutex
	s    *gitx.Stream
	w    *bufio.Writer
	r    *bufio.Reader
	dead error // set once the process failed; the session is unusable
}

// errMissing is an object or name cat-file does not know.
var errMissing = errors.New("no such object")

func (c *Checkpointer) openObjects(ctx context.Context) (*objectSession, error) {
	s, err := c.git.Start(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv, Args: []string{"cat-file", "--batch"}})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading objects: %w", err)
	}
	return &objectSession{s: s, w: bufio.NewWriter(s.Stdin), r: bufio.NewReaderSize(s.Stdout, 64<<10)}, nil
}

// close ends the process.
func (o *objectSession) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead == nil {
		o.dead = errors.New("session closed")
		_ = o.s.Wait()
		return
	}
	_ = o.s.Kill()
	_ = o.s.Wait()
}

// fail makes the session unusable after an error that may have left the
// stream out of step.
func (o *objectSession) fail(err error) error {
	if o.dead == nil {
		o.dead = err
		_ = o.s.Kill()
	}
	return err
}

// object is one object read through the session.
type object struct {
	oid  string
	data []byte
}

// errOverBudget: the objects asked for are larger in total than allowed.
var errOverBudget = errors.New("objects larger than the budget")

// read returns the objects named (object ids or full ref names), each of
// type typ and at most limit bytes, and together at most total bytes, in
// one round trip. A missing object or one of another type is an error
// that leaves the session usable; an object above a bound ends it
// (errOverBudget for the total).
func (o *objectSession) read(names []string, typ string, limit, total int64) ([]object, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead != nil {
		return nil, o.dead
	}
	for _, n := range names {
		o.w.WriteString(n)
		o.w.WriteByte('\n')
	}
	if err := o.w.Flush(); err != nil {
		return nil, o.fail(fmt.Errorf("checkpoint: reading objects: %w", err))
	}
	out := make([]object, len(names))
	var first error
	var sum int64
	for i, n := range names {
		header, err := o.r.ReadString('\n')
		if err != nil {
			return nil, o.fail(fmt.Errorf("checkpoint: reading object %s: %w", truncate(n, 80), err))
		}
		f := strings.Fields(header)
		if len(f) == 2 && (f[1] == "missing" || f[1] == "ambiguous") {
			if first == nil {
				first = fmt.Errorf("%w: %s", errMissing, truncate(n, 80))
			}
			continue
		}
		if len(f) != 3 || !gitx.IsOID(f[0]) {
			return nil, o.fail(fmt.Errorf("checkpoint: unexpected cat-file answer %q", truncate(header, 120)))
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 || size > limit {
			return nil, o.fail(fmt.Errorf("checkpoint: object %s: size %q out of bounds (at most %d bytes)", truncate(n, 80), f[2], limit))
		}
		if sum += size; sum > total {
			_ = o.fail(errOverBudget)
			return nil, errOverBudget
		}
		b := make([]byte, size+1)
		if _, err := io.ReadFull(o.r, b); err != nil || b[size] != '\n' {
			return nil, o.fail(fmt.Errorf("checkpoint: reading object %s: malformed cat-file stream", truncate(n, 80)))
		}
		if f[1] != typ && first == nil {
			first = fmt.Errorf("checkpoint: object %s is a %s, not a %s", truncate(n, 80), f[1], typ)
		}
		out[i] = object{oid: f[0], data: b[:size]}
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

// usable reports whether the session can still answer.
func (o *objectSession) usable() bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dead == nil
}

// Bounds on what a restore reads as metadata.
const (
	maxCommitBytes = 1 << 20
	maxTreeBytes   = 64 << 20
)

// parseCommit turns a raw commit object into the fields ParseRefs gives:
// its tree, its committer date and its message body (the message after
// the first paragraph and the blank lines that follow it).
func parseCommit(name, commit string, raw []byte) (gitx.Ref, error) {
	r := gitx.Ref{Name: name, Commit: commit}
	bad := func(what string) (gitx.Ref, error) {
		return gitx.Ref{}, fmt.Errorf("checkpoint: %s: malformed commit: %s", truncate(name, 120), what)
	}
	header, msg, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		header, msg = bytes.TrimSuffix(raw, []byte("\n")), nil
	}
	for _, line := range strings.Split(string(header), "\n") {
		switch {
		case strings.HasPrefix(line, "tree ") && r.Tree == "":
			r.Tree = line[len("tree "):]
			if !gitx.IsOID(r.Tree) {
				return bad("tree")
			}
		case strings.HasPrefix(line, "committer ") && r.Committed == 0:
			i := strings.LastIndexByte(line, '>')
			f := strings.Fields(line[i+1:])
			if i < 0 || len(f) != 2 {
				return bad("committer")
			}
			t, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return bad("committer date")
			}
			r.Committed = t
		}
	}
	if r.Tree == "" {
		return bad("no tree")
	}
	if _, body, ok := bytes.Cut(msg, []byte("\n\n")); ok {
		r.Body = string(bytes.TrimLeft(body, "\n"))
	}
	return r, nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode uint32
	name string
	oid  string
}

// parseTree parses a tree object whose object ids have hashLen bytes.
func parseTree(raw []byte, hashLen int) ([]treeEntry, error) {
	var out []treeEntry
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		if sp < 0 {
			return nil, errors.New("malformed tree entry")
		}
		mode, err := strconv.ParseUint(string(raw[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("malformed tree entry mode %q", truncate(string(raw[:sp]), 20))
		}
		raw = raw[sp+1:]
		nul := bytes.IndexByte(raw, 0)
		if nul <= 0 || len(raw) < nul+1+hashLen {
			return nil, errors.New("malformed tree entry name")
		}
		e := treeEntry{mode: uint32(mode), name: string(raw[:nul]), oid: hex.EncodeToString(raw[nul+1 : nul+1+hashLen])}
		switch e.mode {
		case gitx.ModeFile, gitx.ModeExec, gitx.ModeSymlink, gitx.ModeGitlink, gitx.ModeTree, 0o100664:
		default:
			return nil, fmt.Errorf("unsupported tree entry mode %o", e.mode)
		}
		if e.mode == 0o100664 {
			e.mode = gitx.ModeFile // as git reads the old group-writable mode
		}
		out = append(out, e)
		raw = raw[nul+1+hashLen:]
	}
	return out, nil
}

// diffTreesIn compares two trees as "diff-tree -r --no-renames" does,
// reading them through the session level by level: only directories
// whose object ids differ are read.
func (c *Checkpointer) diffTreesIn(o *objectSession, from, to string) ([]gitx.RawEntry, error) {
	hashLen := len(c.zeroOID) / 2
	var out []gitx.RawEntry
	level := []treePair{{"", from, to}}
	for len(level) > 0 {
		var names []string
		for _, p := range level {
			for _, t := range []string{p.from, p.to} {
				if t != "" {
					names = append(names, t)
				}
			}
		}
		objs, err := o.read(names, "tree", maxTreeBytes, 1<<62)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: comparing snapshots: %w", err)
		}
		var next []treePair
		k := 0
		for _, p := range level {
			var a, b []treeEntry
			if p.from != "" {
				if a, err = parseTree(objs[k].data, hashLen); err != nil {
					return nil, fmt.Errorf("checkpoint: tree %s: %w", p.from, err)
				}
				k++
			}
			if p.to != "" {
				if b, err = parseTree(objs[k].data, hashLen); err != nil {
					return nil, fmt.Errorf("checkpoint: tree %s: %w", p.to, err)
				}
				k++
			}
			out, next = c.diffLevel(p.prefix, a, b, out, next)
		}
		level = next
	}
	// diff-tree lists paths in tree order; the level walk found them in
	// another.
	sortRaw(out)
	return out, nil
}

// treePair is a directory to compare: its path prefix ("" or ending in
// "/") and its tree on each side ("" for a side without it).
type treePair struct {
	prefix   string
	from, to string
}

// diffLevel compares the entries of one directory on both sides: file
// differences go to out, subdirectories to look into go to next.
func (c *Checkpointer) diffLevel(prefix string, a, b []treeEntry, out []gitx.RawEntry, next []treePair) ([]gitx.RawEntry, []treePair) {
	type sub = treePair
	// Entries match by name whatever their kind: a file and a directory
	// of the same name are a deletion and an addition.
	byName := make(map[string]treeEntry, len(a))
	for _, e := range a {
		byName[e.name] = e
	}
	seen := make(map[string]bool, len(b))
	blob := func(e treeEntry) bool { return e.mode != gitx.ModeTree }
	add := func(p string, old, new treeEntry) {
		r := gitx.RawEntry{OldMode: old.mode, NewMode: new.mode, OldOID: old.oid, NewOID: new.oid, Path: p}
		if r.OldOID == "" {
			r.OldOID = c.zeroOID
		}
		if r.NewOID == "" {
			r.NewOID = c.zeroOID
		}
		switch {
		case old.mode == gitx.ModeNone:
			r.Status = gitx.Added
		case new.mode == gitx.ModeNone:
			r.Status = gitx.Deleted
		case (old.mode == gitx.ModeSymlink) != (new.mode == gitx.ModeSymlink) || (old.mode == gitx.ModeGitlink) != (new.mode == gitx.ModeGitlink):
			r.Status = gitx.TypeChanged
		default:
			r.Status = gitx.Modified
		}
		out = append(out, r)
	}
	for _, e := range b {
		seen[e.name] = true
		p := prefix + e.name
		old, ok := byName[e.name]
		switch {
		case !ok:
			if blob(e) {
				add(p, treeEntry{}, e)
			} else {
				next = append(next, sub{p + "/", "", e.oid})
			}
		case old.mode == e.mode && old.oid == e.oid:
		case blob(old) && blob(e):
			add(p, old, e)
		case !blob(old) && !blob(e):
			next = append(next, sub{p + "/", old.oid, e.oid})
		case blob(old):
			add(p, old, treeEntry{})
			next = append(next, sub{p + "/", "", e.oid})
		default:
			next = append(next, sub{p + "/", old.oid, ""})
			add(p, treeEntry{}, e)
		}
	}
	for _, e := range a {
		if seen[e.name] {
			continue
		}
		if blob(e) {
			add(prefix+e.name, e, treeEntry{})
		} else {
			next = append(next, sub{prefix + e.name + "/", e.oid, ""})
		}
	}
	return out, next
}

// sortRaw orders entries by path, as diff-tree lists them.
func sortRaw(entries []gitx.RawEntry) {
	slices.SortStableFunc(entries, func(x, y gitx.RawEntry) int { return strings.Compare(x.Path, y.Path) })
}
