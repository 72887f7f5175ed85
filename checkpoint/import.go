package checkpoint

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

var errFastImportExited = errors.New("fast-import exited before reading the whole stream")

// importEntry is one path of a snapshot built by fast-import.
type importEntry struct {
	path   string // work-tree relative
	delete bool   // remove from the base tree
}

// imported is what importCommit stored.
type imported struct {
	commit, tree string
	files        []importedFile // paths stored from disk, in stream order
	gone         []string       // paths removed from the base tree
}

// importedFile is one file a snapshot stored, with the stat data of what
// was read when the source had them.
type importedFile struct {
	path string
	mode uint32
	oid  string
	sd   statData
	sdOK bool
}

// importCommit stores a snapshot with one "git fast-import" run: the
// content of each listed path is read from disk, the tree is the base tree
// with those paths replaced or removed, and the commit is recorded under
// ref. Everything new lands in a single pack, instead of one file per
// object; on a file system where creating a file
// costs a millisecond this is most of the cost of a checkpoint.
//
// A path whose type changed since it was listed is recorded as it is now
// (a file that vanished is removed), so the tree is always a state the
// disk was in.
//
// The record of uncovered paths is stored first, as the only file of a
// parent commit (so it lives exactly as long as the checkpoint), and its
// id is checked against recordOID, which the metadata in msg names.
func (c *Checkpointer) importCommit(ctx context.Context, ref string, msg []byte, when int64, base string, entries []importEntry, record []byte, recordOID string) (imported, error) {
	var res imported
	var src fileSource
	var err error
	if c.portable {
		src, err = newRootSource(c.workDir)
	} else {
		src, err = newFileSource(c.workDir)
	}
	if err != nil {
		return res, fmt.Errorf("checkpoint: %w", err)
	}
	defer src.close()

	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		err := c.writeStream(w, src, ref, msg, when, base, entries, record, &res)
		if err == nil {
			err = w.Flush()
		}
		pw.CloseWithError(err)
		errc <- err
	}()
	// Level-1 compression and no deltas between unrelated consecutive
	// blobs keep the CPU cost near that of hashing ("git repack"
	// deltifies later); fastimport.unpackLimit=1 keeps even a small
	// import in one pack instead of one loose file per object.
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv, Stdin: pr,
		Args: []string{"-c", "pack.compression=1", "-c", "fastimport.unpackLimit=1", "fast-import", "--quiet", "--done", "--date-format=raw", "--depth=0"}})
	pr.CloseWithError(errFastImportExited)
	streamErr := <-errc
	if streamErr != nil && !errors.Is(streamErr, errFastImportExited) {
		return res, fmt.Errorf("checkpoint: storing snapshot: %w", streamErr)
	}
	if err != nil {
		return res, fmt.Errorf("checkpoint: storing snapshot: %w", err)
	}
	// Answers to "ls :1 \"\"", "get-mark :1", "get-mark :2", then one
	// "get-mark" per stored file.
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3+len(res.files) {
		return res, fmt.Errorf("checkpoint: unexpected fast-import output %q", truncate(string(out), 200))
	}
	f := strings.Fields(lines[0])
	if len(f) != 3 || f[0] != "040000" || f[1] != "tree" || !gitx.IsOID(f[2]) || !gitx.IsOID(lines[1]) {
		return res, fmt.Errorf("checkpoint: unexpected fast-import output %q", truncate(string(out), 200))
	}
	if lines[2] != recordOID {
		return res, fmt.Errorf("checkpoint: the record of uncovered paths was stored as %q, expected %s", truncate(lines[2], 80), recordOID)
	}
	for i, l := range lines[3:] {
		if !c.isOID(l) {
			return res, fmt.Errorf("checkpoint: fast-import printed %q for the mark of %s", truncate(l, 80), truncate(res.files[i].path, 80))
		}
		res.files[i].oid = l
	}
	res.commit, res.tree = lines[1], f[2]
	return res, nil
}

func (c *Checkpointer) writeStream(w *bufio.Writer, src fileSource, ref string, msg []byte, when int64, base string, entries []importEntry, record []byte, res *imported) error {
	// :1 is the checkpoint commit, :2 the record blob, :3 its commit; the
	// stored files are :4 onwards, in the order of res.files.
	fmt.Fprintf(w, "blob\nmark :2\ndata %d\n", len(record))
	w.Write(record)
	const recordMsg = "reins checkpoint: record of the paths the snapshot does not cover\n"
	fmt.Fprintf(w, "\ncommit %s\nmark :3\ncommitter %s <%s> %d +0000\ndata %d\n%s\nM 100644 :2 %s\n\n",
		ref, gitx.IdentityName, gitx.IdentityEmail, when, len(recordMsg), recordMsg, uncoveredName)
	for _, e := range entries {
		if e.delete {
			res.gone = append(res.gone, e.path)
			continue
		}
		sf, err := src.open(e.path)
		if err != nil {
			return fmt.Errorf("%s: %w", e.path, err)
		}
		mark := 4 + len(res.files)
		var mode uint32
		switch sf.kind {
		case 'l':
			fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", mark, len(sf.target), sf.target)
			mode = gitx.ModeSymlink
		case 'f':
			fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n", mark, sf.size)
			n, err := io.CopyN(w, sf.r, sf.size)
			sf.release()
			if err != nil {
				return fmt.Errorf("%s: read %d of %d bytes: %w", e.path, n, sf.size, err)
			}
			w.WriteByte('\n')
			mode = gitx.ModeFile
			if sf.exec {
				mode = gitx.ModeExec
			}
		default:
			res.gone = append(res.gone, e.path) // vanished, or a directory or a special file now
			continue
		}
		res.files = append(res.files, importedFile{path: e.path, mode: mode, sd: sf.sd, sdOK: sf.sdOK})
	}
	fmt.Fprintf(w, "commit %s\nmark :1\ncommitter %s <%s> %d +0000\ndata %d\n", ref, gitx.IdentityName, gitx.IdentityEmail, when, len(msg))
	w.Write(msg)
	fmt.Fprintf(w, "\nfrom :3\nM 040000 %s \"\"\n", base)
	for _, p := range res.gone {
		fmt.Fprintf(w, "D %s\n", quotePath(p))
	}
	for i, f := range res.files {
		fmt.Fprintf(w, "M %06o :%d %s\n", f.mode, 4+i, quotePath(f.path))
	}
	w.WriteString("\nls :1 \"\"\nget-mark :1\nget-mark :2\n")
	for i := range res.files {
		fmt.Fprintf(w, "get-mark :%d\n", 4+i)
	}
	w.WriteString("done\n")
	return nil
}

// quotePath renders a path as a C-style quoted string for fast-import,
// which takes any byte sequence that way.
func quotePath(p string) string {
	var b strings.Builder
	b.Grow(len(p) + 2)
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '"' || ch == '\\':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == '\n':
			b.WriteString(`\n`)
		case ch < 0x20 || ch == 0x7f:
			b.WriteByte('\\')
			b.WriteString(fmt.Sprintf("%03o", ch))
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// diffIndex lists the paths whose private-index entry differs from tree
// base: what a snapshot built on base must replace or remove.
func (c *Checkpointer) diffIndex(ctx context.Context, base string) ([]importEntry, error) {
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv,
		Args: []string{"diff-index", "--cached", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", base}})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: comparing the private index: %w", err)
	}
	pairs, err := gitx.ParseRaw(out, false)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: comparing the private index: %w", err)
	}
	entries := make([]importEntry, 0, len(pairs[0].Entries))
	for _, e := range pairs[0].Entries {
		if e.NewMode == gitx.ModeGitlink {
			continue
		}
		entries = append(entries, importEntry{path: e.Path, delete: e.NewMode == gitx.ModeNone})
	}
	return entries, nil
}

// baseState is the last full snapshot, the reference the next one is built
// on: its tree and the commit holding it ("" when unknown, for a state
// written by an older version). Any existing tree gives a correct snapshot
// (the difference is computed against it); a close one makes it cheap. It
// is kept in the private directory, read under the workspace lock each
// time (another process may have moved it), and the private repository's
// HEAD is detached at the commit so that "git status" compares the private
// index with it.
type baseState struct {
	tree, commit string
}

func (c *Checkpointer) loadBase() baseState {
	empty := baseState{tree: c.emptyTree}
	b, err := os.ReadFile(filepath.Join(c.private, "base"))
	if err != nil {
		return empty
	}
	f := strings.Fields(string(b))
	if len(f) == 0 || len(f) > 2 || !c.isOID(f[0]) {
		return empty
	}
	st := baseState{tree: f[0]}
	if len(f) == 2 {
		if !c.isOID(f[1]) {
			return empty
		}
		st.commit = f[1]
	}
	return st
}

func (c *Checkpointer) isOID(s string) bool { return gitx.IsOID(s) && len(s) == len(c.zeroOID) }

// setBase records the checkpoint whose tree the next snapshot builds on.
func (c *Checkpointer) setBase(cp Checkpoint) {
	if c.loadBase() == (baseState{tree: cp.Tree, commit: cp.Commit}) {
		return
	}
	_ = writeFileAtomic(filepath.Join(c.private, "base"), []byte(cp.Tree+" "+cp.Commit+"\n"))
}

// syncHead detaches the private repository's HEAD at the base commit (or
// leaves it unborn, for the empty tree), so that "git status" run on the
// private index reports its differences from the base.
func (c *Checkpointer) syncHead(b baseState) error {
	name := filepath.Join(c.private, "repo", "HEAD")
	want := "ref: refs/heads/reins-unborn\n"
	if b.tree != c.emptyTree {
		want = b.commit + "\n"
	}
	if cur, err := os.ReadFile(name); err == nil && string(cur) == want {
		return nil
	}
	return writeFileAtomic(name, []byte(want))
}

// scopedEntries validates the paths of a path-scoped snapshot and lists
// the existing ones (built on the empty tree, an absent path is simply not
// in the snapshot).
//
// Read-protected paths are reported as skipped, like files above the size
// cap and special files; all three are recorded as uncovered, so that a
// restore leaves them alone.
func (c *Checkpointer) scopedEntries(paths []string) (entries []importEntry, skipped, uncov []string, err error) {
	limit := c.opts.maxFileSize()
	skip := func(p string) {
		skipped = append(skipped, p)
		uncov = append(uncov, c.repoPath(p))
	}
	for _, p := range paths {
		rp := c.repoPath(p)
		if err := c.checkNoSymlinkParent(p); err != nil {
			return nil, nil, nil, err
		}
		if c.secrets.match(p) {
			skip(p)
			continue
		}
		st, err := os.Lstat(filepath.Join(c.workDir, filepath.FromSlash(rp)))
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir):
			continue // absent: restoring removes it
		case err != nil:
			return nil, nil, nil, fmt.Errorf("checkpoint: %s: %w", p, err)
		case st.IsDir():
			return nil, nil, nil, fmt.Errorf("%w: %s is a directory; path-scoped snapshots take files", ErrInvalidPath, p)
		case st.Mode().IsRegular():
			if limit >= 0 && st.Size() > limit {
				if c.opts.Oversize == OversizeFail {
					return nil, nil, nil, &FileTooLargeError{Path: p, Size: st.Size(), Limit: limit}
				}
				skip(p)
				continue
			}
		case st.Mode()&fs.ModeSymlink != 0:
		default:
			skip(p)
			continue
		}
		entries = append(entries, importEntry{path: rp})
	}
	return entries, skipped, uncov, nil
}

// packLimit is the number of packs above which a checkpoint consolidates
// them: each checkpoint adds one pack, and git looks objects up pack by
// pack.
const packLimit = 32

// maybeRepack merges small packs geometrically ("git repack -d
// --geometric=2"), which rewrites only the small packs, when the object
// store holds more than packLimit of them. Failure is not an error of the
// checkpoint that triggered it: the next one tries again.
func (c *Checkpointer) maybeRepack(ctx context.Context) {
	entries, err := os.ReadDir(filepath.Join(c.objects, "pack"))
	if err != nil {
		return
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".pack") {
			n++
		}
	}
	if n <= packLimit {
		return
	}
	_, _ = c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv,
		Args: []string{"repack", "-d", "-q", "--geometric=2", "--no-write-bitmap-index"}})
}
