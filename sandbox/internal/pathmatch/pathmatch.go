// Package pathmatch is the denied-path matching that package sandbox and
// its backend sub-packages share: the compiled denied entries, the
// symlink-following resolution, the workspace-root and working-directory
// checks, and the scan for protected paths in writable directories. The
// protection lists themselves come from internal/fspath.
//
// Error texts start with "sandbox: ", as the public packages' do.
package pathmatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/reins-go/reins/internal/fspath"
)

// DefaultDenied returns the paths every policy denies: the seeds' .git,
// .env, .env.local, .ssh, id_rsa and id_ed25519 first, then the rest of
// reins' two protection classes. It returns a new slice on each call.
func DefaultDenied() []string {
	out := fspath.Seeds()
	d := fspath.Defaults()
	for _, e := range append(d.ReadWrite, d.Write...) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// Matcher matches paths against denied entries on their components,
// case-insensitively. The fields are read-only once New returned.
type Matcher struct {
	Rel [][]string     // relative entries, split into components
	Abs [][]string     // absolute entries, split into components
	Raw []string       // entries as configured, parallel to Rel then Abs
	Cls []fspath.Class // each entry's protection class, parallel to Raw
}

// New compiles the default denied paths plus extra. Entries starting
// with ~ or $HOME are expanded against the user's home directory
// ([HomeDir]); an entry that cannot be honoured (no home directory, a
// pattern other than * and ? in a name, "..") is an error, never dropped.
func New(extra []string) (Matcher, error) {
	var m Matcher
	var relRaw, absRaw []string
	var relCls, absCls []fspath.Class
	defaults := DefaultDenied()
	write := fspath.Defaults().Write
	home := HomeDir()
	for i, e := range append(defaults, extra...) {
		name := fmt.Sprintf("FsNetPolicy.DeniedPaths[%d] %q", i-len(defaults), e)
		if i < len(defaults) {
			name = fmt.Sprintf("default denied path %q", e)
		}
		if e == "" || strings.IndexByte(e, 0) >= 0 {
			return Matcher{}, fmt.Errorf("sandbox: %s is not a path", name)
		}
		x := e
		if fspath.IsAbsEntry(filepath.ToSlash(e)) {
			var err error
			if x, err = fspath.Expand(e, home); err != nil {
				return Matcher{}, fmt.Errorf("sandbox: %s cannot be honoured: %w", name, err)
			}
		}
		comps := SplitComponents(filepath.Clean(x))
		for _, c := range comps {
			if c == ".." {
				return Matcher{}, fmt.Errorf(`sandbox: %s has a ".." component`, name)
			}
		}
		if len(comps) == 0 {
			return Matcher{}, fmt.Errorf("sandbox: %s names the root or the current directory", name)
		}
		if why := fspath.CheckEntry(filepath.ToSlash(x)); why != "" {
			return Matcher{}, fmt.Errorf("sandbox: %s: %s", name, why)
		}
		cls := fspath.ReadWriteProtected
		if i < len(defaults) && slices.Contains(write, e) {
			cls = fspath.WriteProtected
		}
		if filepath.IsAbs(x) {
			m.Abs = append(m.Abs, comps)
			absRaw = append(absRaw, e)
			absCls = append(absCls, cls)
		} else {
			m.Rel = append(m.Rel, comps)
			relRaw = append(relRaw, e)
			relCls = append(relCls, cls)
		}
	}
	m.Raw = append(relRaw, absRaw...)
	m.Cls = append(relCls, absCls...)
	return m, nil
}

// HomeDir returns the user's home directory: $HOME when it is an
// absolute path, else the home directory of the account this process
// runs as (os/user), else "" (then entries that start with ~ cannot be
// honoured).
func HomeDir() string {
	return homeFrom(os.Getenv("HOME"), func() (string, error) {
		u, err := user.Current()
		if err != nil {
			return "", err
		}
		return u.HomeDir, nil
	})
}

// homeFrom is HomeDir given $HOME and the account lookup.
func homeFrom(env string, account func() (string, error)) string {
	if filepath.IsAbs(env) {
		return filepath.Clean(env)
	}
	if h, err := account(); err == nil && filepath.IsAbs(h) {
		return filepath.Clean(h)
	}
	return ""
}

// SplitComponents splits a clean path into its non-empty, non-"."
// components.
func SplitComponents(p string) []string {
	var out []string
	for _, c := range strings.Split(p, string(filepath.Separator)) {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// Match reports the denied entry that the absolute, clean path p
// matches, comparing components case-insensitively: a read-and-write
// protected entry when one matches, else the first write-protected one.
func (m Matcher) Match(p string) (entry string, ok bool) {
	entry, cls := m.MatchClass(p)
	return entry, cls != fspath.Unprotected
}

// MatchClass is Match with the matched entry's protection class
// (fspath.Unprotected when none matches).
func (m Matcher) MatchClass(p string) (string, fspath.Class) {
	comps := SplitComponents(p)
	best, bestCls := "", fspath.Unprotected
	consider := func(k int) bool {
		c := fspath.ReadWriteProtected
		if k < len(m.Cls) {
			c = m.Cls[k]
		}
		if c > bestCls {
			best, bestCls = m.Raw[k], c
		}
		return bestCls == fspath.ReadWriteProtected
	}
	for i, e := range m.Rel {
		for start := 0; start+len(e) <= len(comps); start++ {
			if equalFoldRun(comps[start:start+len(e)], e) {
				if consider(i) {
					return best, bestCls
				}
				break
			}
		}
	}
	for i, e := range m.Abs {
		if len(e) <= len(comps) && equalFoldRun(comps[:len(e)], e) {
			if consider(len(m.Rel) + i) {
				return best, bestCls
			}
		}
	}
	return best, bestCls
}

// equalFoldRun reports whether the path components a match the entry
// components b: ASCII case folded, * and ? in an entry's names as
// wildcards (".env.*").
func equalFoldRun(a, b []string) bool {
	for i := range b {
		if !fspath.MatchName(b[i], a[i]) {
			return false
		}
	}
	return true
}

// maxSymlinkHops bounds symlink resolution, as the kernel does (40).
const maxSymlinkHops = 40

// ErrTooManyLinks reports a symlink loop or an over-long chain.
var ErrTooManyLinks = errors.New("too many levels of symbolic links")

// ResolvePath returns the absolute path that p names once every symlink
// in it has been followed. Components that do not exist are appended as
// written (a file about to be created). A dangling symlink is followed
// to its target, because creating a file through it creates the target.
// visit, if not nil, is called with the location of every symlink
// target on the way, so a caller can check intermediate hops too.
func ResolvePath(p string, visit func(string)) (string, error) {
	return resolvePath(p, visit, nil)
}

// Memo remembers what one check read of the file system (the lstat and
// readlink of each path it resolved), so that the many paths of one
// command, which share their leading directories, are not read again
// component by component. It holds at most maxMemo paths. The zero
// value is ready; a Memo is not safe for concurrent use.
type Memo struct {
	m map[string]memoEntry
}

type memoEntry struct {
	fi     os.FileInfo
	err    error
	target string
	lerr   error
}

// maxMemo bounds the paths a Memo remembers.
const maxMemo = 4096

func (mm *Memo) lstat(p string) (os.FileInfo, error) {
	if mm == nil {
		return os.Lstat(p)
	}
	if e, ok := mm.m[p]; ok {
		return e.fi, e.err
	}
	fi, err := os.Lstat(p)
	if mm.m == nil {
		mm.m = map[string]memoEntry{}
	}
	if len(mm.m) < maxMemo {
		e := memoEntry{fi: fi, err: err}
		if err == nil && fi.Mode()&os.ModeSymlink != 0 {
			e.target, e.lerr = os.Readlink(p)
		}
		mm.m[p] = e
	}
	return fi, err
}

func (mm *Memo) readlink(p string) (string, error) {
	if mm != nil {
		if e, ok := mm.m[p]; ok && e.fi != nil {
			return e.target, e.lerr
		}
	}
	return os.Readlink(p)
}

func resolvePath(p string, visit func(string), mm *Memo) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("sandbox: resolve %q: not absolute", p)
	}
	// ".." is applied to the resolved path, as the kernel does: it goes
	// to the parent of where the symlinks so far led, not lexically.
	pending := SplitComponents(p)
	resolved := string(filepath.Separator)
	hops := 0
	missing := false
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		if c == ".." {
			resolved = filepath.Dir(resolved)
			if missing {
				if _, err := os.Lstat(resolved); err == nil {
					missing = false
				}
			}
			continue
		}
		next := filepath.Join(resolved, c)
		if missing {
			resolved = next
			continue
		}
		fi, err := mm.lstat(next)
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			missing = true
			resolved = next
			continue
		case err != nil:
			return "", fmt.Errorf("sandbox: resolve %q: %w", p, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("sandbox: resolve %q: %w", p, ErrTooManyLinks)
		}
		target, err := mm.readlink(next)
		if err != nil {
			return "", fmt.Errorf("sandbox: resolve %q: %w", p, err)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		if visit != nil {
			if filepath.IsAbs(target) {
				visit(filepath.Clean(target))
			} else {
				visit(filepath.Join(resolved, target))
			}
		}
		pending = append(SplitComponents(target), pending...)
	}
	return resolved, nil
}

// Checked is the outcome of checking one path.
type Checked struct {
	Abs      string // the path as written, made absolute and clean
	Resolved string // the path with every symlink followed
	Entry    string // the denied entry it matched, if any
	Denied   bool
}

// Check makes unsafePath absolute against base and matches it against
// the denied entries, first as written (cleaned, and before cleaning)
// and then with every symlink (including intermediate hops) followed
// and ".." applied to where the links led. A path that cannot be
// resolved is an error, which callers treat as a denial.
func (m Matcher) Check(base, unsafePath string) (Checked, error) {
	return m.CheckMemo(base, unsafePath, nil)
}

// CheckMemo is Check reading the file system through memo (nil: no
// memo), for the many paths of one command.
func (m Matcher) CheckMemo(base, unsafePath string, memo *Memo) (Checked, error) {
	abs := unsafePath
	if !filepath.IsAbs(abs) {
		abs = base + string(filepath.Separator) + abs
	}
	pc := Checked{Abs: filepath.Clean(abs)}
	if e, ok := m.Match(pc.Abs); ok {
		pc.Entry, pc.Denied = e, true
	} else if e, ok := m.Match(abs); ok {
		// As written, before ".." is applied: ".git/../x" mentions .git.
		pc.Entry, pc.Denied = e, true
	}
	var hopEntry string
	resolved, err := resolvePath(abs, func(hop string) {
		if e, ok := m.Match(hop); ok && hopEntry == "" {
			hopEntry = e
		}
	}, memo)
	if err != nil {
		return pc, err
	}
	pc.Resolved = resolved
	if !pc.Denied {
		if e, ok := m.Match(resolved); ok {
			pc.Entry, pc.Denied = e, true
		} else if hopEntry != "" {
			pc.Entry, pc.Denied = hopEntry, true
		}
	}
	return pc, nil
}

// ResolveRoot makes root absolute, follows its symlinks and checks that
// it is a directory; field names the setting in errors.
func ResolveRoot(root, field string) (string, error) {
	if root == "" {
		return "", fmt.Errorf("sandbox: %s is empty", field)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s %q: %w", field, root, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s %q: %w", field, root, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s %q: %w", field, root, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("sandbox: %s %q is not a directory", field, root)
	}
	return resolved, nil
}

// Refusal kinds, spelled as package sandbox's ViolationKind values.
const (
	KindDeniedPath  = "denied-path"
	KindOutsideRoot = "outside-root"
	KindUncheckable = "uncheckable"
)

// Refusal is why a working directory was refused; Kind is one of the
// Kind constants.
type Refusal struct {
	Kind, Subject, Detail string
}

// Workdir checks that dir (empty means root) resolves inside root and
// names no denied path; it returns the resolved directory, or why it is
// refused.
func Workdir(root string, m Matcher, dir string) (string, *Refusal) {
	if dir == "" {
		dir = root
	}
	pc, err := m.Check(root, dir)
	if err != nil {
		return "", &Refusal{KindUncheckable, dir, "working directory cannot be resolved: " + err.Error()}
	}
	if !fspath.Within(pc.Resolved, root) {
		return "", &Refusal{KindOutsideRoot, dir, fmt.Sprintf("working directory resolves to %s, outside the root %s", pc.Resolved, root)}
	}
	if pc.Denied {
		return "", &Refusal{KindDeniedPath, dir, fmt.Sprintf("working directory matches denied path %q", pc.Entry)}
	}
	fi, err := os.Stat(pc.Resolved)
	if err != nil || !fi.IsDir() {
		return "", &Refusal{KindUncheckable, dir, "working directory does not exist or is not a directory"}
	}
	return pc.Resolved, nil
}

// FindProtected walks dirs and returns, resolved, the existing paths
// that match a denied entry of m: masks (read-and-write protected paths,
// to hide) and read-only paths (write-protected ones: .git, .envrc,
// shell rc files, editor and agent configuration). Absolute denied
// entries that exist are found too. It does not descend into a matched
// directory.
func FindProtected(m Matcher, dirs []string) (masks, readOnly []string, err error) {
	return findProtected(m, dirs, true, 0)
}

// WalkProtected is FindProtected without the absolute denied entries
// that lie outside dirs: what a command that can write only in dirs may
// have created there.
func WalkProtected(m Matcher, dirs []string) (masks, readOnly []string, err error) {
	return findProtected(m, dirs, false, 0)
}

// ErrScanTooLarge is returned by [WalkProtectedBounded] when the
// directories hold more entries than its limit.
var ErrScanTooLarge = errors.New("too many entries to scan for protected paths")

// WalkProtectedBounded is WalkProtected that visits at most limit
// entries; past them it fails with [ErrScanTooLarge]. A directory this
// process may not read is skipped: a command that runs as this process's
// user, with no more rights, cannot read it either.
func WalkProtectedBounded(m Matcher, dirs []string, limit int) (masks, readOnly []string, err error) {
	return findProtected(m, dirs, false, limit)
}

func findProtected(m Matcher, dirs []string, absolute bool, limit int) (masks, readOnly []string, err error) {
	visited := 0
	seen := map[string]bool{}
	add := func(p string, ro bool) error {
		r, err := ResolvePath(p, nil)
		if err != nil {
			return err
		}
		if seen[r] {
			return nil
		}
		if _, err := os.Stat(r); err != nil {
			return nil // dangling: nothing to hide
		}
		seen[r] = true
		if ro {
			readOnly = append(readOnly, r)
		} else {
			masks = append(masks, r)
		}
		return nil
	}
	for _, w := range dirs {
		err := filepath.WalkDir(w, func(p string, d os.DirEntry, err error) error {
			if err != nil && limit > 0 && errors.Is(err, fs.ErrPermission) {
				return filepath.SkipDir
			}
			if err != nil {
				return fmt.Errorf("sandbox: scanning %s for denied paths: %w", w, err)
			}
			if visited++; limit > 0 && visited > limit {
				return fmt.Errorf("sandbox: scanning %s: %w (more than %d)", w, ErrScanTooLarge, limit)
			}
			if p == w {
				return nil
			}
			entry, cls := m.MatchClass(p)
			if cls == fspath.Unprotected {
				return nil
			}
			// Only act on the component that completes the match.
			if parentEntry, parentOK := m.Match(filepath.Dir(p)); parentOK && parentEntry == entry {
				return filepath.SkipDir
			}
			if err := add(p, cls == fspath.WriteProtected); err != nil {
				return err
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	for i, e := range m.Abs {
		if !absolute {
			break
		}
		p := string(filepath.Separator) + filepath.Join(e...)
		if strings.ContainsAny(p, "*?") {
			continue // a pattern: only the walk finds what it matches
		}
		if _, err := os.Lstat(p); err == nil {
			ro := len(m.Rel)+i < len(m.Cls) && m.Cls[len(m.Rel)+i] == fspath.WriteProtected
			if err := add(p, ro); err != nil {
				return nil, nil, err
			}
		}
	}
	sort.Strings(masks)
	sort.Strings(readOnly)
	return masks, readOnly, nil
}
