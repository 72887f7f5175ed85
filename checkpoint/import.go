package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// importEntry is one path of a snapshot built by fast-import.
type importEntry struct {
	path   string // work-tree relative
	delete bool   // remove from the base tree
	// classify: nothing has looked at the path yet; the stream leaves it
	// out if it is a special file or (under OversizeSkip) above the size
	// cap, and fails the snapshot if it is above the cap under
	// OversizeFail.
	classify bool
	// oid and mode, when set, record the path as this existing object
	// without reading it: the private index holds it so, and the file
	// matches the index entry's stat data.
	oid  string
	mode uint32
}

// streamSpec is what a snapshot's fast-import stream needs besides its
// entries.
type streamSpec struct {
	ref  string
	when int64 // committer date, Unix seconds
	base string
	// finish receives what the stream left out (skipped: workspace-
	// relative paths; uncov: work-tree paths) and returns the record of
	// uncovered paths and the commit message, which names the record.
	finish func(skipped, uncov []string) (record, msg []byte, err error)
}

// imported is what importCommit stored.
type imported struct {
	commit, tree string
	files        []importedFile // paths stored from disk, in stream order
	gone         []string       // paths removed from the base tree
	recordOID    string
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
// the ref. Everything new lands in a single pack, instead of one file per
// object; on a file system where creating a file
// costs a millisecond this is most of the cost of a checkpoint.
//
// A path whose type changed since it was listed is recorded as it is now
// (a file that vanished is removed), so the tree is always a state the
// disk was in.
//
// The record of uncovered paths is stored after the files, as the only
// file of a parent commit (so it lives exactly as long as the checkpoint),
// and its id is checked against the one the metadata names.
func (c *Checkpointer) importCommit(ctx context.Context, spec streamSpec, entries []importEntry) (imported, error) {
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
	marks := filepath.Join(c.private, "marks-"+randHex())
	defer os.Remove(marks)

	// Level-1 compression and no deltas between unrelated consecutive
	// blobs keep the CPU cost near that of hashing ("git repack"
	// deltifies later); fastimport.unpackLimit=1 keeps even a small
	// import in one pack instead of one loose file per object. The
	// files' object ids are read from the marks file, written once at
	// the end (a "get-mark" per file would cost a write per file).
	// The stream goes through a pipe of our own: fast-import reads its
	// end directly, and writes block (no poller round trip per 4 KiB
	// fast-import takes out of a full pipe).
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, fmt.Errorf("checkpoint: storing snapshot: %w", err)
	}
	growPipe(pw)
	s, err := c.git.Start(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv, Stdin: pr,
		Args: []string{"-c", "pack.compression=1", "-c", "fastimport.unpackLimit=1", "fast-import", "--quiet", "--done",
			"--date-format=raw", "--depth=0", "--export-marks=" + marks}})
	pr.Close()
	if err != nil {
		pw.Close()
		return res, fmt.Errorf("checkpoint: storing snapshot: %w", err)
	}
	outc := make(chan []byte, 1)
	go func() {
		out, _ := io.ReadAll(io.LimitReader(s.Stdout, 1<<20))
		outc <- out
	}()
	w := bufio.NewWriterSize(pw, 256<<10)
	streamErr := c.writeStream(w, src, spec, entries, &res)
	if streamErr == nil {
		streamErr = w.Flush()
	}
	_ = pw.Close()
	out := <-outc
	err = s.Wait()
	var ftl *FileTooLargeError
	if errors.As(streamErr, &ftl) {
		return res, streamErr
	}
	if err != nil {
		return res, fmt.Errorf("checkpoint: storing snapshot: %w", err)
	}
	if streamErr != nil {
		return res, fmt.Errorf("checkpoint: storing snapshot: %w", streamErr)
	}
	// Answers to "ls :1 \"\"", "get-mark :1" and "get-mark :2".
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		return res, fmt.Errorf("checkpoint: unexpected fast-import output %q", truncate(string(out), 200))
	}
	f := strings.Fields(lines[0])
	if len(f) != 3 || f[0] != "040000" || f[1] != "tree" || !c.isOID(f[2]) || !c.isOID(lines[1]) {
		return res, fmt.Errorf("checkpoint: unexpected fast-import output %q", truncate(string(out), 200))
	}
	if lines[2] != res.recordOID {
		return res, fmt.Errorf("checkpoint: the record of uncovered paths was stored as %q, expected %s", truncate(lines[2], 80), res.recordOID)
	}
	res.commit, res.tree = lines[1], f[2]
	if len(res.files) > 0 {
		if err := c.readMarks(marks, res.files); err != nil {
			return res, err
		}
	}
	return res, nil
}

// firstFileMark is the mark of the first stored file: :1 is the
// checkpoint commit, :2 the record blob, :3 its commit.
const firstFileMark = 4

// readMarks fills in the object ids of the stored files from a marks file
// (":<mark> <oid>" lines).
func (c *Checkpointer) readMarks(name string, files []importedFile) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("checkpoint: reading fast-import marks: %w", err)
	}
	n := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		mark, oid, ok := bytes.Cut(line, []byte(" "))
		if !ok || len(mark) < 2 || mark[0] != ':' {
			return fmt.Errorf("checkpoint: malformed fast-import mark %q", truncate(string(line), 80))
		}
		m, err := strconv.Atoi(string(mark[1:]))
		if err != nil || m < 1 || m >= firstFileMark+len(files) || !c.isOID(string(oid)) {
			return fmt.Errorf("checkpoint: malformed fast-import mark %q", truncate(string(line), 80))
		}
		if m >= firstFileMark {
			if files[m-firstFileMark].oid == "" {
				n++
			}
			files[m-firstFileMark].oid = string(oid)
		}
	}
	if n != len(files) {
		return fmt.Errorf("checkpoint: fast-import marks name %d of %d stored files", n, len(files))
	}
	return nil
}

func (c *Checkpointer) writeStream(w *bufio.Writer, src fileSource, spec streamSpec, entries []importEntry, res *imported) error {
	var skipped, uncov []string
	limit := c.opts.maxFileSize()
	var refs []importEntry
	for _, e := range entries {
		if e.delete {
			res.gone = append(res.gone, e.path)
			continue
		}
		if e.oid != "" {
			refs = append(refs, e)
			continue
		}
		sf, err := src.open(e.path, e.classify)
		if err != nil {
			return fmt.Errorf("%s: %w", e.path, err)
		}
		if e.classify && (sf.kind == 's' || sf.kind == 'f' && limit >= 0 && sf.size > limit) {
			sf.release()
			rel, _ := c.wsPath(e.path)
			if sf.kind == 'f' && c.opts.Oversize == OversizeFail {
				return &FileTooLargeError{Path: rel, Size: sf.size, Limit: limit}
			}
			skipped = append(skipped, rel)
			uncov = append(uncov, e.path)
			res.gone = append(res.gone, e.path)
			continue
		}
		mark := firstFileMark + len(res.files)
		var mode uint32
		switch sf.kind {
		case 'l':
			blobHeader(w, mark, int64(len(sf.target)))
			w.WriteString(sf.target)
			w.WriteByte('\n')
			mode = gitx.ModeSymlink
		case 'f':
			blobHeader(w, mark, sf.size)
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
			sf.release()
			res.gone = append(res.gone, e.path) // vanished, or a directory or a special file now
			continue
		}
		res.files = append(res.files, importedFile{path: e.path, mode: mode, sd: sf.sd, sdOK: sf.sdOK})
	}
	record, msg, err := spec.finish(skipped, uncov)
	if err != nil {
		return err
	}
	res.recordOID = c.blobOID(record)
	fmt.Fprintf(w, "blob\nmark :2\ndata %d\n", len(record))
	w.Write(record)
	fmt.Fprintf(w, "\ncommit %s\nmark :3\ncommitter %s <%s> %d +0000\ndata %d\n%s\nM 100644 :2 %s\n\n",
		spec.ref, gitx.IdentityName, gitx.IdentityEmail, spec.when, len(recordMsg), recordMsg, uncoveredName)
	fmt.Fprintf(w, "commit %s\nmark :1\ncommitter %s <%s> %d +0000\ndata %d\n", spec.ref, gitx.IdentityName, gitx.IdentityEmail, spec.when, len(msg))
	w.Write(msg)
	if spec.base == c.emptyTree {
		// Built from nothing: fast-import then stores the trees it
		// builds, the empty tree included (a snapshot of only absent
		// paths names it, and git fsck wants it stored).
		w.WriteString("\nfrom :3\ndeleteall\n")
	} else {
		fmt.Fprintf(w, "\nfrom :3\nM 040000 %s \"\"\n", spec.base)
	}
	for _, p := range res.gone {
		w.WriteString("D ")
		writePath(w, p)
	}
	for i, f := range res.files {
		b := w.AvailableBuffer()
		b = append(b, "M "...)
		b = strconv.AppendUint(b, uint64(f.mode), 8)
		b = append(b, " :"...)
		b = strconv.AppendInt(b, int64(firstFileMark+i), 10)
		b = append(b, ' ')
		w.Write(b)
		writePath(w, f.path)
	}
	for _, e := range refs {
		b := w.AvailableBuffer()
		b = append(b, "M "...)
		b = strconv.AppendUint(b, uint64(e.mode), 8)
		b = append(b, ' ')
		b = append(b, e.oid...)
		b = append(b, ' ')
		w.Write(b)
		writePath(w, e.path)
	}
	w.WriteString("\nls :1 \"\"\nget-mark :1\nget-mark :2\ndone\n")
	return nil
}

// blobHeader starts a blob command for content of size bytes.
func blobHeader(w *bufio.Writer, mark int, size int64) {
	b := w.AvailableBuffer()
	b = append(b, "blob\nmark :"...)
	b = strconv.AppendInt(b, int64(mark), 10)
	b = append(b, "\ndata "...)
	b = strconv.AppendInt(b, size, 10)
	b = append(b, '\n')
	w.Write(b)
}

// writePath ends a file command with path p and a newline: verbatim to
// the end of the line, or C-quoted when it would not read back so.
func writePath(w *bufio.Writer, p string) {
	plain := p != "" && p[0] != '"'
	for i := 0; plain && i < len(p); i++ {
		plain = p[i] >= 0x20 && p[i] != 0x7f
	}
	if plain {
		w.WriteString(p)
	} else {
		w.WriteString(quotePath(p))
	}
	w.WriteByte('\n')
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

// packLimit is the number of packs above which a checkpoint consolidates
// them: each full checkpoint adds one pack, and git looks objects up pack
// by pack. looseLimit is the estimated number of loose objects (each
// path-scoped checkpoint writes a few) above which a full checkpoint
// packs them; looseHardLimit, far higher, makes a path-scoped one do it.
const (
	packLimit      = 32
	looseLimit     = 4096
	looseHardLimit = 32768
	// looseCheckEvery is how many loose objects a Checkpointer writes
	// between two looks at the object store's loose objects.
	looseCheckEvery = 1024
)

// maybeRepack merges small packs geometrically ("git repack -d
// --geometric=2", which rewrites only the small packs and rolls the loose
// objects into a pack) when the object store holds more than packLimit
// packs or about more than limit loose objects (0: looseLimit). Failure
// is not an error of the checkpoint that triggered it: the next one tries
// again.
func (c *Checkpointer) maybeRepack(ctx context.Context, limit int) {
	if limit == 0 {
		limit = looseLimit
	}
	n := 0
	if entries, err := os.ReadDir(filepath.Join(c.objects, "pack")); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".pack") {
				n++
			}
		}
	}
	if n <= packLimit && c.looseEstimate() <= limit {
		return
	}
	_, _ = c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.refEnv,
		Args: []string{"repack", "-d", "-q", "--geometric=2", "--no-write-bitmap-index"}})
}

// looseEstimate estimates the loose objects in the object store from one
// fan-out directory, as "git gc --auto" does.
func (c *Checkpointer) looseEstimate() int {
	entries, err := os.ReadDir(filepath.Join(c.objects, "17"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if len(e.Name()) == len(c.zeroOID)-2 {
			n++
		}
	}
	return n * 256
}
