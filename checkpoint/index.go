package checkpoint

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// The private index is a plain git index file (gitformat-index(5)). git
// reads it ("git status" compares the work tree with it), and the package
// writes it itself after a snapshot or a restore, with the stat data of
// the files it has just read or written and the object ids git stored
// them under: a file is then read and hashed once per change, by
// fast-import, instead of a second time by "git update-index". Only the
// subset git itself writes into an index that no merge, sparse checkout
// or split index ever touched is read back; anything else (unmerged
// entries, skip-worktree or intent-to-add flags, a required extension) is
// errIndexUnsupported, and the caller falls back to git.

// errIndexUnsupported reports an index this package does not rewrite.
var errIndexUnsupported = errors.New("checkpoint: private index holds something only git may rewrite")

// Bounds on an index file read back (the private index of a workspace of
// a million files is about 100 MB).
const (
	maxIndexBytes   = 1 << 30
	maxIndexEntries = 1 << 24
)

// statData is the stat information a git index records for an entry, each
// field truncated to 32 bits as git truncates it.
type statData struct {
	ctimeSec, ctimeNsec uint32
	mtimeSec, mtimeNsec uint32
	dev, ino, uid, gid  uint32
	size                uint32
}

// indexEntry is one stage-0 entry of an index.
type indexEntry struct {
	path  string // work-tree path
	mode  uint32 // gitx.ModeFile, ModeExec, ModeSymlink or ModeGitlink
	oid   []byte // raw object id
	sd    statData
	valid bool // the assume-valid flag, kept as read
}

// gitIndex is an index read from disk.
type gitIndex struct {
	entries []indexEntry // sorted by path, unique
	// mtimeSec is the index file's modification time when read (0: there
	// was no index): entries changed at or after it are "racily clean".
	mtimeSec uint32
}

func (c *Checkpointer) newHash() hash.Hash {
	if len(c.zeroOID) == 64 {
		return sha256.New()
	}
	return sha1.New()
}

// indexCache is the private index as this Checkpointer last read or wrote
// it, with its cache tree: reused while the file is that file (same
// inode, size and modification time; every writer, git included,
// replaces the file by renaming a new one over it). Guarded by the
// workspace lock.
type indexCache struct {
	key  indexKey
	idx  *gitIndex
	tree *treeNode // nil: not computed
}

type indexKey struct {
	size, mtime int64
	id          uint64
}

func keyOf(st os.FileInfo) indexKey {
	return indexKey{size: st.Size(), mtime: st.ModTime().UnixNano(), id: fileID(st)}
}

// readIndex reads the private index; a missing file is an empty index.
func (c *Checkpointer) readIndex() (*gitIndex, error) {
	st, err := os.Stat(c.index)
	if err == nil && c.icache != nil && c.icache.key == keyOf(st) {
		return c.icache.idx, nil
	}
	c.icache = nil
	f, err := os.Open(c.index)
	if errors.Is(err, os.ErrNotExist) {
		return &gitIndex{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading the private index: %w", err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("checkpoint: reading the private index: %w", err)
	}
	if st.Size() > maxIndexBytes {
		return nil, fmt.Errorf("%w: %d bytes", errIndexUnsupported, st.Size())
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("checkpoint: reading the private index: %w", err)
	}
	idx, err := parseIndex(data, len(c.zeroOID)/2, c.newHash())
	if err != nil {
		return nil, err
	}
	idx.mtimeSec = uint32(st.ModTime().Unix())
	c.icache = &indexCache{key: keyOf(st), idx: idx}
	return idx, nil
}

// parseIndex parses an index file of version 2, 3 or 4 whose object ids
// have hashLen bytes, checking its trailing checksum with h.
func parseIndex(data []byte, hashLen int, h hash.Hash) (*gitIndex, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errIndexUnsupported, fmt.Sprintf(format, args...))
	}
	if len(data) < 12+hashLen || string(data[:4]) != "DIRC" {
		return nil, bad("not an index file")
	}
	body, sum := data[:len(data)-hashLen], data[len(data)-hashLen:]
	if !allZero(sum) {
		h.Reset()
		h.Write(body)
		if !bytes.Equal(h.Sum(nil), sum) {
			return nil, bad("checksum mismatch")
		}
	}
	version := binary.BigEndian.Uint32(body[4:])
	if version < 2 || version > 4 {
		return nil, bad("version %d", version)
	}
	n := binary.BigEndian.Uint32(body[8:])
	if n > maxIndexEntries || uint64(n)*uint64(40+hashLen+3) > uint64(len(body)) {
		return nil, bad("%d entries", n)
	}
	idx := &gitIndex{entries: make([]indexEntry, 0, n)}
	off := 12
	prev := ""
	fixed := 40 + hashLen + 2 // stat data, object id, flags
	for i := uint32(0); i < n; i++ {
		if off+fixed > len(body) {
			return nil, bad("truncated entry %d", i)
		}
		b := body[off:]
		u := func(k int) uint32 { return binary.BigEndian.Uint32(b[4*k:]) }
		e := indexEntry{
			sd: statData{ctimeSec: u(0), ctimeNsec: u(1), mtimeSec: u(2), mtimeNsec: u(3),
				dev: u(4), ino: u(5), uid: u(7), gid: u(8), size: u(9)},
			mode: u(6),
			oid:  b[40 : 40+hashLen : 40+hashLen], // the file's bytes stay with the entries
		}
		flags := binary.BigEndian.Uint16(b[40+hashLen:])
		hdr := fixed
		if flags&0x3000 != 0 {
			return nil, bad("unmerged entry %d", i)
		}
		if flags&0x4000 != 0 {
			if version < 3 || off+hdr+2 > len(body) {
				return nil, bad("extended flags in entry %d", i)
			}
			if binary.BigEndian.Uint16(b[hdr:]) != 0 {
				return nil, bad("skip-worktree or intent-to-add entry %d", i)
			}
			hdr += 2
		}
		e.valid = flags&0x8000 != 0
		switch e.mode {
		case gitx.ModeFile, gitx.ModeExec, gitx.ModeSymlink, gitx.ModeGitlink:
		default:
			return nil, bad("mode %o in entry %d", e.mode, i)
		}
		namelen := int(flags & 0xfff)
		rest := body[off+hdr:]
		var name string
		if version == 4 {
			strip, k := decodeVarint(rest)
			if k == 0 || strip > uint64(len(prev)) {
				return nil, bad("malformed name of entry %d", i)
			}
			rest = rest[k:]
			end := bytes.IndexByte(rest, 0)
			if end < 0 {
				return nil, bad("unterminated name of entry %d", i)
			}
			name = prev[:len(prev)-int(strip)] + string(rest[:end])
			off += hdr + k + end + 1
		} else {
			end := bytes.IndexByte(rest, 0)
			if end < 0 {
				return nil, bad("unterminated name of entry %d", i)
			}
			name = string(rest[:end])
			// Padded with 1 to 8 NULs to a multiple of eight bytes.
			off += (hdr + end + 8) &^ 7
		}
		if namelen != 0xfff && namelen != len(name) || namelen == 0xfff && len(name) < 0xfff {
			return nil, bad("name length of entry %d", i)
		}
		if name == "" || !validIndexPath(name) || name <= prev && i > 0 {
			return nil, bad("entry %d: path %q out of order or invalid", i, truncate(name, 80))
		}
		e.path = name
		prev = name
		idx.entries = append(idx.entries, e)
	}
	// Extensions: optional ones (an upper-case first letter) are dropped
	// (the next write leaves them out); a required one is not understood.
	for off < len(body) {
		if off+8 > len(body) {
			return nil, bad("truncated extension")
		}
		sig := body[off : off+4]
		size := binary.BigEndian.Uint32(body[off+4:])
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, bad("required extension %q", sig)
		}
		if uint64(size) > uint64(len(body)-off-8) {
			return nil, bad("truncated extension %q", sig)
		}
		off += 8 + int(size)
	}
	return idx, nil
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// validIndexPath accepts what git accepts in an index: a relative path
// without empty, "." or ".." components and without a trailing slash.
func validIndexPath(p string) bool {
	if p == "" {
		return false
	}
	for len(p) > 0 {
		el := p
		i := strings.IndexByte(p, '/')
		if i >= 0 {
			el, p = p[:i], p[i+1:]
			if p == "" {
				return false // trailing slash
			}
		} else {
			p = ""
		}
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

// decodeVarint decodes git's offset varint (varint.c); k is 0 when the
// encoding is malformed or overflows.
func decodeVarint(b []byte) (v uint64, k int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = uint64(c & 127)
	k = 1
	for c&128 != 0 {
		v++
		if v == 0 || v>>57 != 0 || k >= len(b) {
			return 0, 0
		}
		c = b[k]
		k++
		v = v<<7 + uint64(c&127)
	}
	return v, k
}

// appendVarint appends git's offset varint encoding of v.
func appendVarint(dst []byte, v uint64) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		buf[pos] = 128 | byte(v&127)
	}
	return append(dst, buf[pos:]...)
}

// encodeIndex renders entries (sorted, unique) as a version 4 index, with
// the given extensions (each a signature and its payload, already
// framed) after them.
func encodeIndex(entries []indexEntry, h hash.Hash, ext ...[]byte) []byte {
	out := make([]byte, 12, 12+len(entries)*80)
	copy(out, "DIRC")
	binary.BigEndian.PutUint32(out[4:], 4)
	binary.BigEndian.PutUint32(out[8:], uint32(len(entries)))
	prev := ""
	for _, e := range entries {
		for _, v := range []uint32{e.sd.ctimeSec, e.sd.ctimeNsec, e.sd.mtimeSec, e.sd.mtimeNsec,
			e.sd.dev, e.sd.ino, e.mode, e.sd.uid, e.sd.gid, e.sd.size} {
			out = binary.BigEndian.AppendUint32(out, v)
		}
		out = append(out, e.oid...)
		flags := uint16(min(len(e.path), 0xfff))
		if e.valid {
			flags |= 0x8000
		}
		out = binary.BigEndian.AppendUint16(out, flags)
		common := 0
		for common < len(prev) && common < len(e.path) && prev[common] == e.path[common] {
			common++
		}
		out = appendVarint(out, uint64(len(prev)-common))
		out = append(out, e.path[common:]...)
		out = append(out, 0)
		prev = e.path
	}
	for _, x := range ext {
		out = append(out, x...)
	}
	h.Reset()
	h.Write(out)
	return h.Sum(out)
}

// indexUpdate is a change to the private index: entries to set (with
// fresh stat data) and paths to remove.
type indexUpdate struct {
	set    []indexEntry
	remove []string
}

// apply returns the entries of idx with u applied. A set path replaces
// any entry of the same name, entries below it (it was a directory) and
// entries named like one of its parent directories (they were files).
func (u indexUpdate) apply(old []indexEntry) []indexEntry {
	set := slices.Clone(u.set)
	if !slices.IsSortedFunc(set, func(a, b indexEntry) int { return strings.Compare(a.path, b.path) }) {
		slices.SortStableFunc(set, func(a, b indexEntry) int { return strings.Compare(a.path, b.path) })
	}
	set = slices.CompactFunc(set, func(a, b indexEntry) bool { return a.path == b.path })
	// Within the update, a file where another path needs a directory
	// gives way, as in fast-import's tree. Sorted, the paths below p come
	// after p and after the other names that start with p and a byte
	// below '/'.
	kept := make([]indexEntry, 0, len(set))
	for k, e := range set {
		j := k + 1
		for j < len(set) && strings.HasPrefix(set[j].path, e.path) && set[j].path[len(e.path)] < '/' {
			j++
		}
		if j < len(set) && strings.HasPrefix(set[j].path, e.path+"/") {
			continue
		}
		kept = append(kept, e)
	}
	set = kept
	if len(old) == 0 {
		return set
	}
	drop := make(map[string]bool, len(u.set)+len(u.remove))
	for _, p := range u.remove {
		drop[p] = true
	}
	find := func(p string) (int, bool) {
		return slices.BinarySearchFunc(old, p, func(e indexEntry, p string) int { return strings.Compare(e.path, p) })
	}
	for _, e := range set {
		drop[e.path] = true
		for d := path.Dir(e.path); d != "."; d = path.Dir(d) {
			if _, ok := find(d); ok {
				drop[d] = true
			}
		}
		i, _ := find(e.path + "/")
		for ; i < len(old) && strings.HasPrefix(old[i].path, e.path+"/"); i++ {
			drop[old[i].path] = true
		}
	}
	out := make([]indexEntry, 0, len(old)+len(set))
	i := 0
	for _, e := range old {
		if drop[e.path] {
			continue
		}
		for i < len(set) && set[i].path < e.path {
			out = append(out, set[i])
			i++
		}
		out = append(out, e)
	}
	return append(out, set[i:]...)
}

// writeIndex applies the updates, in order, to the private index and
// writes it back. Entries
// whose file changed in the same second as the index being replaced was
// written are checked against the disk first, as git does when it writes
// an index: if the content differs although the stat data match, the
// entry's size is zeroed so that git never takes it for clean.
func (c *Checkpointer) writeIndex(idx *gitIndex, updates ...indexUpdate) error {
	entries := slices.Clip(idx.entries)
	if len(updates) == 0 {
		entries = slices.Clone(entries) // the cached index stays as read
	}
	dirty := map[string]bool{"": true}
	for _, u := range updates {
		entries = u.apply(entries)
		for d := range u.dirty() {
			dirty[d] = true
		}
	}
	for i := range entries {
		// Never "assume unchanged": git would not look at the file.
		entries[i].valid = false
	}
	if idx.mtimeSec != 0 {
		for i := range entries {
			e := &entries[i]
			if e.sd.mtimeSec >= idx.mtimeSec && e.mode != gitx.ModeGitlink && e.sd.size != 0 {
				if c.racilyModified(e) {
					e.sd.size = 0
				}
			}
		}
	}
	// The trees of the directories the update did not touch are the
	// ones computed last time.
	var old *treeNode
	if c.icache != nil && c.icache.idx == idx {
		old = c.icache.tree
	}
	tree := buildTree(entries, 0, c.newHash(), old, dirty)
	data := encodeIndex(entries, c.newHash(), treeExtension(tree))
	tmp, err := os.CreateTemp(c.private, "index-*.tmp")
	if err != nil {
		return fmt.Errorf("checkpoint: writing the private index: %w", err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), c.index)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		c.icache = nil
		return fmt.Errorf("checkpoint: writing the private index: %w", werr)
	}
	c.icache = nil
	if st, err := os.Stat(c.index); err == nil {
		c.icache = &indexCache{key: keyOf(st), tree: tree,
			idx: &gitIndex{entries: entries, mtimeSec: uint32(st.ModTime().Unix())}}
	}
	return nil
}

// dirty returns the directories (work-tree paths, "" for the top) whose
// trees the update may change: those above every path it sets or
// removes, and the path itself, which may have been a directory.
func (u indexUpdate) dirty() map[string]bool {
	d := map[string]bool{"": true}
	mark := func(p string) {
		for !d[p] {
			d[p] = true
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				return
			}
			p = p[:i]
		}
	}
	for _, e := range u.set {
		mark(e.path)
	}
	for _, p := range u.remove {
		mark(p)
	}
	return d
}

// racilyModified reports whether the file of entry e has the modification
// time and size the entry records but other content.
func (c *Checkpointer) racilyModified(e *indexEntry) bool {
	name := filepath.Join(c.workDir, filepath.FromSlash(e.path))
	sd, mode, ok := lstatData(name)
	isLink := mode == gitx.ModeSymlink
	if !ok || sd.mtimeSec != e.sd.mtimeSec || sd.size != e.sd.size || isLink != (e.mode == gitx.ModeSymlink) {
		return false // git sees the change in the stat data
	}
	var content []byte
	var err error
	if isLink {
		var target string
		target, err = os.Readlink(name)
		content = []byte(target)
	} else {
		content, err = readNoFollow(name)
	}
	if err != nil {
		return true
	}
	return c.blobOID(content) != hex.EncodeToString(e.oid)
}

// readNoFollow reads a regular file without following a symbolic link in
// its last component.
func readNoFollow(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// newIndexEntry builds the entry of a file just read or written.
func (c *Checkpointer) newIndexEntry(p string, mode uint32, oid string, sd statData) (indexEntry, error) {
	raw, err := hex.DecodeString(oid)
	if err != nil || len(raw) != len(c.zeroOID)/2 {
		return indexEntry{}, fmt.Errorf("checkpoint: object id %q for %s", truncate(oid, 80), truncate(p, 80))
	}
	return indexEntry{path: p, mode: mode, oid: raw, sd: sd}, nil
}

// cacheTree returns the "TREE" extension of an index holding entries
// (sorted, unique): the object id of the tree of every directory, as "git
// write-tree" would write them, so that "git status" skips every
// directory whose tree is the base snapshot's without reading either.
func (c *Checkpointer) cacheTree(entries []indexEntry) []byte {
	return treeExtension(buildTree(entries, 0, c.newHash(), nil, nil))
}

// treeExtension renders a cache tree as the "TREE" index extension.
func treeExtension(root *treeNode) []byte {
	var body []byte
	var write func(n *treeNode, name string)
	write = func(n *treeNode, name string) {
		body = append(body, name...)
		body = append(body, 0)
		body = strconv.AppendInt(body, int64(n.count), 10)
		body = append(body, ' ')
		body = strconv.AppendInt(body, int64(len(n.subs)), 10)
		body = append(body, '\n')
		body = append(body, n.oid...)
		// In git's order: shorter names first, then byte order.
		subs := slices.Clone(n.subs)
		slices.SortFunc(subs, func(a, b *treeNode) int {
			if len(a.name) != len(b.name) {
				return len(a.name) - len(b.name)
			}
			return strings.Compare(a.name, b.name)
		})
		for _, s := range subs {
			write(s, s.name)
		}
	}
	write(root, "")
	ext := make([]byte, 0, 8+len(body))
	ext = append(ext, "TREE"...)
	ext = binary.BigEndian.AppendUint32(ext, uint32(len(body)))
	return append(ext, body...)
}

// treeNode is a directory of the cache tree.
type treeNode struct {
	name  string
	count int // index entries below it
	oid   []byte
	subs  []*treeNode // in tree order
}

// sub returns the subdirectory name of n, or nil.
func (n *treeNode) sub(name string) *treeNode {
	if n == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(n.subs, name, func(s *treeNode, name string) int {
		return strings.Compare(s.name+"/", name+"/")
	})
	if !ok {
		return nil
	}
	return n.subs[i]
}

// buildTree computes the tree of entries, which all start with the same
// directory prefix of length off. Index order is tree order: a
// directory's entries are contiguous, and sort where "name/" would. A
// directory that dirty does not name (dirty nil: every directory is) is
// taken from old when old has it, without reading its entries.
func buildTree(entries []indexEntry, off int, h hash.Hash, old *treeNode, dirty map[string]bool) *treeNode {
	return buildTreeEmit(entries, off, h, old, dirty, nil)
}

// buildTreeEmit is buildTree that also hands every tree it computes (not
// those taken from old) to emit, with its object id and content, subtrees
// first.
func buildTreeEmit(entries []indexEntry, off int, h hash.Hash, old *treeNode, dirty map[string]bool, emit func(oid, content []byte)) *treeNode {
	dir := ""
	if off > 0 {
		dir = entries[0].path[:off-1]
	}
	if old != nil && dirty != nil && !dirty[dir] && old.count == len(entries) {
		return old
	}
	n := &treeNode{count: len(entries)}
	var content []byte
	for i := 0; i < len(entries); {
		rest := entries[i].path[off:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			content = strconv.AppendUint(content, uint64(entries[i].mode), 8)
			content = append(content, ' ')
			content = append(content, rest...)
			content = append(content, 0)
			content = append(content, entries[i].oid...)
			i++
			continue
		}
		name := rest[:j]
		prefix := entries[i].path[:off+j+1]
		// The directory's entries end at the first path past the prefix.
		k := i + 1 + sort.Search(len(entries)-i-1, func(x int) bool {
			p := entries[i+1+x].path
			return p > prefix && !strings.HasPrefix(p, prefix)
		})
		sub := buildTreeEmit(entries[i:k], off+j+1, h, old.sub(name), dirty, emit)
		sub.name = name
		n.subs = append(n.subs, sub)
		content = append(content, "40000 "...)
		content = append(content, name...)
		content = append(content, 0)
		content = append(content, sub.oid...)
		i = k
	}
	h.Reset()
	h.Write([]byte("tree " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	n.oid = h.Sum(nil)
	if emit != nil {
		emit(n.oid, content)
	}
	return n
}
