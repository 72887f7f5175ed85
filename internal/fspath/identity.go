package fspath

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Protection by identity.
//
// A hard link gives a file a second name, and the second name matches nothing: appending to
// "alias" after "ln .git/config alias" rewrites the repository's configuration. So the
// protected files are also known by identity (device and inode), and a target that is one of
// them under another name has that file's protection.
//
// A file with one link has one name, the one being checked, so the index is only consulted for
// a regular file whose link count is above one: for every other target the cost is one lstat
// and nothing is allocated. The index holds the protected files whose link count was above one
// when it was built; it is built on the first such lookup, from
//
//   - every workspace root, walked whole: each entry's path relative to its (deepest) root is
//     matched against both lists, and a protected regular file with several links is recorded;
//   - every absolute entry outside the roots (~/.aws, /etc, the reins configuration
//     directory), walked whole, everything below it protected with the entry's class;
//   - the home directory's own entries that are protected (~/.ssh, ~/.bashrc, ~/.gitconfig)
//     and the directories that lead to a run of names (~/.config for .config/fish).
//
// The walk is bounded ([MaxIndexEntries] entries). An index that could not be completed (the
// bound, a directory it may enter but not list) answers for a file with several names that it
// does not know with [IncompleteIndexEntry], read-and-write protected: unknown is refused.
//
// Freshness. A new link to a file changes the file's status change time (ctime), and every name
// of the file shares it. So a lookup rebuilds the index first when the target's ctime is not
// older than the index (with the filesystem's timestamp granularity as slack), or when a root or
// the home directory changed (an entry renamed into a protected name there). A file whose links
// have not changed since the index was built, under directories that did not change, is known
// to it. What this does not see: a directory below a root's top level, holding a file that
// already had several names, renamed to a protected name (the rename itself is a write to a
// protected path, which the gate refuses), and timestamps of a network filesystem whose server
// clock is behind this host's.

// MaxIndexEntries bounds the directory entries one build of an [Identities] index reads.
const MaxIndexEntries = 1 << 20

// maxIndexEntries is MaxIndexEntries, lowered by tests.
var maxIndexEntries = MaxIndexEntries

// maxIndexDepth bounds how deep the build descends.
const maxIndexDepth = 256

// IncompleteIndexEntry is the entry of the [Hit] an incomplete index gives a file with several
// names that it does not know.
const IncompleteIndexEntry = "a file with several names, some of which could not be checked"

// Identities knows the protected files of a set of workspace roots by device and inode. Build
// one per [Matcher] and roots with [Matcher.Identities]; it is safe for concurrent use.
type Identities struct {
	m     *Matcher
	roots []*RootMatcher // deepest first
	home  string
	now   func() time.Time

	snap atomic.Pointer[idSnapshot]
	mu   sync.Mutex // one build at a time
}

// idSnapshot is one build of the index. It is immutable once published.
type idSnapshot struct {
	at       int64 // Unix nanoseconds when the build began
	ids      map[fileID]Hit
	complete bool
	dirs     []dirStamp // the roots and the home directory as the build found them
	entries  int
	// The file whose lookup asked for this build, as it was seen before the build began: as
	// long as its ctime is the same, its links are the ones the build saw.
	trigger      fileID
	triggerCtime int64
}

type dirStamp struct {
	z     []byte // the path, NUL-terminated
	st    fileStat
	found bool
}

// Identities returns the identity index of m's protected files for the roots (absolute, clean,
// resolved) and the home directory ("" when unknown). Nothing is read until the first lookup.
func (m *Matcher) Identities(roots []string, home string) *Identities {
	x := &Identities{m: m, home: home, now: time.Now}
	for _, r := range roots {
		x.roots = append(x.roots, m.ForRoot(r))
	}
	for i := 1; i < len(x.roots); i++ { // deepest first, as Workspace.Roots lists them
		for j := i; j > 0 && len(x.roots[j].root) > len(x.roots[j-1].root); j-- {
			x.roots[j], x.roots[j-1] = x.roots[j-1], x.roots[j]
		}
	}
	return x
}

// In returns the protection the file at rel inside root (as [Workspace.Resolve] returns them)
// has under another of its names, or the zero Hit. See [Identities.Abs].
func (x *Identities) In(root, rel string) Hit {
	if !identityKnown || len(root)+len(rel)+2 > MaxPathLen+2 {
		return Hit{}
	}
	var buf [MaxPathLen + 2]byte
	n := copy(buf[:], root)
	if rel != "." && rel != "" {
		if n > 0 && buf[n-1] != '/' {
			buf[n] = '/'
			n++
		}
		n += copy(buf[n:], rel)
	}
	buf[n] = 0
	return x.lookup(buf[:n+1])
}

// Abs returns the protection the file at the absolute, resolved path p has under another of its
// names: the zero Hit when it is not a regular file, has one link, or none of its other names
// is protected. It costs one lstat and allocates nothing unless the file has several links.
func (x *Identities) Abs(p string) Hit {
	if !identityKnown || len(p) > MaxPathLen {
		return Hit{}
	}
	var buf [MaxPathLen + 2]byte
	n := copy(buf[:], p)
	buf[n] = 0
	return x.lookup(buf[:n+1])
}

func (x *Identities) lookup(path []byte) Hit {
	st, err := statPath(path, false)
	if err != nil || st.kind != kindFile || st.nlink <= 1 {
		return Hit{}
	}
	return x.lookupLinked(&st)
}

// lookupLinked answers for a regular file with several links, rebuilding the index first when
// it may not know the file's current names.
func (x *Identities) lookupLinked(st *fileStat) Hit {
	observed := x.now().UnixNano()
	s := x.snap.Load()
	if s == nil || x.stale(s, st) {
		s = x.refresh(observed, st)
	}
	if h, ok := s.ids[st.id()]; ok {
		return h
	}
	if !s.complete {
		return Hit{Entry: IncompleteIndexEntry, Class: ReadWriteProtected}
	}
	return Hit{}
}

// ctimeSlack returns how much older than the build a change can look: a jiffy of the kernel's
// coarse clock, or a whole second (and more) on a filesystem that keeps whole seconds.
func ctimeSlack(ctime int64) int64 {
	if ctime%int64(time.Second) == 0 {
		return int64(2 * time.Second)
	}
	return int64(100 * time.Millisecond)
}

// stale reports whether snapshot s may not know the names of the file st describes: its links
// changed after (or too close to) the build, or a root or the home directory changed since.
func (x *Identities) stale(s *idSnapshot, st *fileStat) bool {
	seen := st.id() == s.trigger && st.ctime == s.triggerCtime
	if !seen && st.ctime >= s.at-ctimeSlack(st.ctime) {
		return true
	}
	for i := range s.dirs {
		d := &s.dirs[i]
		now, err := statPath(d.z, true)
		if (err == nil) != d.found || err == nil && (now.id() != d.st.id() || now.mtime != d.st.mtime || now.ctime != d.st.ctime) {
			return true
		}
	}
	return false
}

// refresh builds a new snapshot, unless one that began after observed (and so saw what the
// caller saw) was published meanwhile. st is the file the caller saw before observed.
func (x *Identities) refresh(observed int64, st *fileStat) *idSnapshot {
	x.mu.Lock()
	defer x.mu.Unlock()
	if cur := x.snap.Load(); cur != nil && cur.at > observed {
		return cur
	}
	s := x.build()
	s.trigger, s.triggerCtime = st.id(), st.ctime
	x.snap.Store(s)
	return s
}

// build walks the roots, the absolute entries and the home directory (see the comment at the
// top of this file).
func (x *Identities) build() *idSnapshot {
	s := &idSnapshot{at: x.now().UnixNano(), ids: map[fileID]Hit{}, complete: true}
	b := &indexBuild{x: x, s: s, dirsSeen: map[fileID]bool{}}
	stamp := func(p string) {
		z := append([]byte(p), 0)
		st, err := statPath(z, true)
		s.dirs = append(s.dirs, dirStamp{z: z, st: st, found: err == nil})
	}
	for _, r := range x.roots {
		stamp(r.root)
	}
	if x.home != "" {
		stamp(x.home)
	}
	for i, r := range x.roots {
		b.walk(r.root, func(p string) Hit { return r.In(Rel(p, r.root)) }, x.deeper(i), 0)
	}
	for i := range x.m.abs {
		a := &x.m.abs[i]
		if x.inRoot(a.path) {
			continue // its files are walked with their root, where In matches the entry
		}
		b.tree(a.path, Hit{a.entry, a.class}, 0)
	}
	if x.home != "" && !x.inRoot(x.home) {
		b.home(x.home, nil)
	}
	s.entries = b.entries
	return s
}

// deeper returns the roots below root i: its walk leaves them to their own.
func (x *Identities) deeper(i int) func(string) bool {
	r := x.roots[i].root
	return func(p string) bool {
		for j := 0; j < i; j++ {
			if o := x.roots[j].root; len(o) > len(r) && p == o {
				return true
			}
		}
		return false
	}
}

func (x *Identities) inRoot(p string) bool {
	for _, r := range x.roots {
		if Host().Within(p, r.root) {
			return true
		}
	}
	return false
}

// indexBuild is the state of one build.
type indexBuild struct {
	x        *Identities
	s        *idSnapshot
	entries  int
	dirsSeen map[fileID]bool
}

// budget counts one entry; false once the bound is reached (the index is then incomplete).
func (b *indexBuild) budget() bool {
	if b.entries >= maxIndexEntries {
		b.s.complete = false
		return false
	}
	b.entries++
	return true
}

// walk lists dir and everything below it, classifying each entry with class. skip names
// directories walked on their own (deeper roots).
func (b *indexBuild) walk(dir string, class func(string) Hit, skip func(string) bool, depth int) {
	entries, ok := b.list(dir, depth)
	if !ok {
		return
	}
	for _, e := range entries {
		if !b.budget() {
			return
		}
		p := join(dir, e.Name())
		switch t := e.Type(); {
		case t.IsDir():
			if !skip(p) {
				if h := class(p); h.Class == ReadWriteProtected {
					b.tree(p, h, depth+1) // everything below has the strongest class already
				} else {
					b.walk(p, class, skip, depth+1)
				}
			}
		case t.IsRegular():
			if h := class(p); h.Class != Unprotected {
				b.file(p, h)
			}
		}
	}
}

// tree records every regular file below p (a directory or a file) with protection h.
func (b *indexBuild) tree(p string, h Hit, depth int) {
	z := append([]byte(p), 0)
	st, err := statPath(z, false)
	switch {
	case err != nil:
		return // it does not exist: nothing to protect by identity
	case st.kind == kindFile:
		b.record(p, &st, h)
		return
	case st.kind != kindDir:
		return
	}
	b.walk(p, func(string) Hit { return h }, func(string) bool { return false }, depth)
}

// home looks at the home directory's own entries: the protected ones are recorded (a directory
// with everything below it), the directories that lead to a run of names are looked into.
func (b *indexBuild) home(dir string, comps []string) {
	entries, ok := b.list(dir, len(comps))
	if !ok {
		return
	}
	for _, e := range entries {
		if !b.budget() {
			return
		}
		p := join(dir, e.Name())
		if b.x.inRoot(p) {
			continue
		}
		h := b.x.m.Abs(p)
		switch t := e.Type(); {
		case h.Class != Unprotected && t.IsDir():
			b.tree(p, h, len(comps)+1)
		case h.Class != Unprotected && t.IsRegular():
			b.file(p, h)
		case t.IsDir() && b.x.m.leadsToRun(append(comps, e.Name())):
			b.home(p, append(comps[:len(comps):len(comps)], e.Name()))
		}
	}
}

// list reads a directory, once per directory identity. A directory that cannot be listed
// makes the index incomplete unless nothing with these credentials can enter it (no search
// permission): then nothing below it can be linked either.
func (b *indexBuild) list(dir string, depth int) ([]fs.DirEntry, bool) {
	if depth > maxIndexDepth || len(dir) > MaxPathLen {
		b.s.complete = false
		return nil, false
	}
	z := append([]byte(dir), 0)
	st, err := statPath(z, false)
	if err != nil || st.kind != kindDir {
		return nil, false
	}
	if b.dirsSeen[st.id()] {
		return nil, false
	}
	b.dirsSeen[st.id()] = true
	f, err := os.Open(dir)
	if err == nil {
		var entries []fs.DirEntry
		entries, err = f.ReadDir(-1)
		f.Close()
		if err == nil {
			return entries, true
		}
	}
	if !errors.Is(err, fs.ErrNotExist) && searchable(dir) {
		b.s.complete = false
	}
	return nil, false
}

// file records the regular file p with protection h when it has several links.
func (b *indexBuild) file(p string, h Hit) {
	z := append([]byte(p), 0)
	if st, err := statPath(z, false); err == nil && st.kind == kindFile {
		b.record(p, &st, h)
	}
}

func (b *indexBuild) record(p string, st *fileStat, h Hit) {
	if st.nlink <= 1 {
		return
	}
	if old, ok := b.s.ids[st.id()]; ok && old.Class >= h.Class {
		return
	}
	b.s.ids[st.id()] = Hit{Entry: h.Entry + " (another name of " + p + ")", Class: h.Class}
}

func join(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// searchable reports whether this process may enter dir (search permission), so that files
// below it could be linked by name even if it cannot be listed.
func searchable(dir string) bool {
	err := accessX(dir)
	return err == nil || !errors.Is(err, syscall.EACCES) && !errors.Is(err, fs.ErrPermission)
}
