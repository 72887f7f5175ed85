package checkpoint

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// A path-scoped snapshot writes its few objects itself, as loose objects
// (zlib-compressed "<type> <size>\0<content>" files named by their hash,
// the format every git version reads), and creates its ref as a loose ref
// file with git's lock-and-rename protocol: no process is started, so its
// cost is that of reading and hashing the covered files. A repository
// whose refs or objects are not plain files (reftable, a compatibility
// object format) is left to git: the snapshot then goes through
// fast-import like a full one (see looseOK).

// looseSmall is the size up to which a file is read into memory, hashed,
// and written only when its object does not exist yet; larger files are
// streamed through the hash and the compressor into a temporary file.
const looseSmall = 256 << 10

var zlibPool = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	return w
}}

// looseWriter writes objects into an object directory.
type looseWriter struct {
	dir  string // the object directory
	h    hash.Hash
	zw   *zlib.Writer
	buf  bytes.Buffer
	hdr  []byte
	n    int // objects written (not already there)
	read []byte
}

func (c *Checkpointer) newLooseWriter() *looseWriter {
	return &looseWriter{dir: c.objects, h: c.newHash(), zw: zlibPool.Get().(*zlib.Writer)}
}

func (w *looseWriter) close() {
	if w.zw != nil {
		w.zw.Reset(io.Discard)
		zlibPool.Put(w.zw)
		w.zw = nil
	}
}

func (w *looseWriter) header(typ string, size int64) []byte {
	w.hdr = append(append(append(w.hdr[:0], typ...), ' '), strconv.FormatInt(size, 10)...)
	return append(w.hdr, 0)
}

// put stores an object held in memory and returns its raw id.
func (w *looseWriter) put(typ string, data []byte) ([]byte, error) {
	hdr := w.header(typ, int64(len(data)))
	w.h.Reset()
	w.h.Write(hdr)
	w.h.Write(data)
	oid := w.h.Sum(nil)
	final := w.objectPath(oid)
	if _, err := os.Lstat(final); err == nil {
		return oid, nil
	}
	w.buf.Reset()
	w.zw.Reset(&w.buf)
	w.zw.Write(hdr)
	w.zw.Write(data)
	if err := w.zw.Close(); err != nil {
		return nil, err
	}
	if err := w.install(final, w.buf.Bytes()); err != nil {
		return nil, err
	}
	w.n++
	return oid, nil
}

// putStream stores a blob of size bytes read from r: a small one through
// put, a large one through a temporary file.
func (w *looseWriter) putStream(size int64, r io.Reader) ([]byte, error) {
	if size <= looseSmall {
		if int64(cap(w.read)) < size {
			w.read = make([]byte, size)
		}
		b := w.read[:size]
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("read %d bytes: %w", size, err)
		}
		return w.put("blob", b)
	}
	tmp, err := os.CreateTemp(w.dir, "tmp_obj_")
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	hdr := w.header("blob", size)
	w.h.Reset()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	w.zw.Reset(bw)
	w.h.Write(hdr)
	w.zw.Write(hdr)
	n, err := io.CopyN(io.MultiWriter(w.h, w.zw), r, size)
	if err != nil {
		return nil, fmt.Errorf("read %d of %d bytes: %w", n, size, err)
	}
	if err := w.zw.Close(); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := tmp.Chmod(0o444); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	oid := w.h.Sum(nil)
	final := w.objectPath(oid)
	if _, err := os.Lstat(final); err == nil {
		return oid, nil // the deferred function removes the copy
	}
	if err := w.rename(tmp.Name(), final); err != nil {
		return nil, err
	}
	done = true
	w.n++
	return oid, nil
}

func (w *looseWriter) objectPath(oid []byte) string {
	x := hex.EncodeToString(oid)
	return filepath.Join(w.dir, x[:2], x[2:])
}

// install writes an object file: a temporary file in its fan-out
// directory, renamed into place (the object's name is its content's hash,
// so replacing an existing one changes nothing).
func (w *looseWriter) install(final string, data []byte) error {
	fan := filepath.Dir(final)
	name := filepath.Join(fan, "tmp_obj_"+randHex())
	err := createFile(name, data, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(fan, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		err = createFile(name, data, 0o444)
	}
	if err == nil {
		err = rename(name, final)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

func (w *looseWriter) rename(tmp, final string) error {
	err := rename(tmp, final)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(filepath.Dir(final), 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		err = rename(tmp, final)
	}
	return err
}

// rename is rename(2) on files the package names itself (os.Rename looks
// at the destination first, to refuse replacing a directory: one more
// system call per object).
func rename(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// commitObject renders a commit as fast-import writes it for the package:
// the package's identity as author and committer, at when (UTC).
func commitObject(tree, parent string, when int64, msg []byte) []byte {
	var b bytes.Buffer
	b.WriteString("tree " + tree + "\n")
	if parent != "" {
		b.WriteString("parent " + parent + "\n")
	}
	id := gitx.IdentityName + " <" + gitx.IdentityEmail + "> " + strconv.FormatInt(when, 10) + " +0000\n"
	b.WriteString("author " + id)
	b.WriteString("committer " + id)
	b.WriteByte('\n')
	b.Write(msg)
	return b.Bytes()
}

// looseOK reports whether the repository holding the checkpoints keeps
// its refs and objects as plain files the package may write itself: not
// a reftable repository, no compatibility object format, no other
// extension the package does not know to be harmless. gitDir is the
// (common) git directory.
func looseOK(gitDir string) bool {
	if _, err := os.Lstat(filepath.Join(gitDir, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil || len(b) > 1<<20 {
		return false
	}
	inExt := false
	for _, line := range strings.Split(strings.ToLower(string(b)), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inExt = strings.HasPrefix(line, "[extensions")
			continue
		}
		if !inExt || line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, _, _ := strings.Cut(line, "=")
		switch strings.TrimSpace(key) {
		case "objectformat", "worktreeconfig", "preciousobjects", "partialclone", "noop":
			// Written objects and loose refs mean the same under these.
		default:
			return false
		}
	}
	return true
}

// createRef creates the new ref name (refs/reins/checkpoints/<id>) at
// commit as a loose ref file in the repository's common git directory: a
// lock file created exclusively, then renamed into place, as git does.
// Only used where refs are files (looseOK).
func (c *Checkpointer) createRef(name, commit string) error {
	final := filepath.Join(c.refDir, filepath.FromSlash(name))
	lock := final + ".lock"
	data := []byte(commit + "\n")
	err := createFile(lock, data, 0o666)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(final), 0o777); err != nil {
			return fmt.Errorf("checkpoint: creating %s: %w", name, err)
		}
		err = createFile(lock, data, 0o666)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: creating %s: %w", name, err)
	}
	// A new id: nothing is there (git's own ref creation renames the
	// same way).
	if err := rename(lock, final); err != nil {
		os.Remove(lock)
		return fmt.Errorf("checkpoint: creating %s: %w", name, err)
	}
	return nil
}
