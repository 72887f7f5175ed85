package fspath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

type fileKind uint8

const (
	kindMissing fileKind = iota
	kindDir
	kindFile  // a regular file
	kindOther // a device, a socket, a pipe: anything but a directory, a regular file or a link
	kindSymlink
)

// notDir reports a kind that exists and is not a directory (nor a link to follow).
func (k fileKind) notDir() bool { return k == kindFile || k == kindOther }

// Bounds on the work one resolution does.
const (
	// MaxPathLen is the longest target (and resolved path) accepted, as PATH_MAX.
	MaxPathLen = 4096
	// MaxLinks is how many symbolic links one resolution follows, as the kernel's ELOOP limit.
	MaxLinks = 40
	// MaxSteps bounds the components one resolution walks, links' contents included.
	MaxSteps = 8192
)

// Errors of [Workspace.Resolve]. Each means the target cannot be resolved and must be refused.
var (
	ErrEmpty    = errors.New("empty target path")
	ErrNUL      = errors.New("target path contains a NUL byte")
	ErrTooLong  = fmt.Errorf("target path longer than %d bytes", MaxPathLen)
	ErrLoop     = fmt.Errorf("more than %d symbolic links", MaxLinks)
	ErrTooDeep  = fmt.Errorf("more than %d path components to walk", MaxSteps)
	ErrNoVolume = errors.New("a rooted path without a volume name")
)

// AmbiguousError is returned for a target that the kernel and a lexical join read differently:
// a host that resolves it one way and a host that resolves it the other write different files,
// so no single answer about it is safe.
type AmbiguousError struct {
	// Target is the path as given.
	Target string
	// Kernel is where the kernel's reading leads (symbolic links followed, then ".." applied to
	// the real directory), or "" when the kernel refuses the path.
	Kernel string
	// Lexical is where filepath.Join / filepath.Clean's reading leads, after its links.
	Lexical string
	// Why says what makes the readings differ.
	Why string
}

// Error says that the target is ambiguous and why.
func (e *AmbiguousError) Error() string {
	if e.Kernel == "" {
		return fmt.Sprintf("ambiguous path %q: %s", e.Target, e.Why)
	}
	return fmt.Sprintf("ambiguous path %q: %s (the kernel reaches %s, a lexical join %s)", e.Target, e.Why, e.Kernel, e.Lexical)
}

// Workspace resolves targets against workspace roots, symlink-safely. It is immutable and safe
// for concurrent use.
type Workspace struct {
	pl           Platform
	home         string     // absolute, slash form: what a leading ~ or $HOME names; "" unknown
	primary      string     // the first root, resolved: relative targets start here
	primaryGiven string     // the first root as given, absolute and clean: where a lexical join starts
	roots        []string   // every root (workspace and trusted), resolved, deepest first
	rootZ        [][]byte   // each root NUL-terminated, parallel to roots: stat without allocating
	rootID       []fileStat // each root's identity when it was opened, parallel to roots
	rootFI       []os.FileInfo
}

// NewWorkspace resolves the roots: dirs must exist and be directories (the first one is where
// relative targets start); trusted directories count as inside too, and one that does not exist
// or cannot be expanded grants nothing. home expands a leading ~ or $HOME, in the roots and in
// targets (see [Workspace.Resolve]).
//
// Each root's identity (device and inode) is recorded here. A root is a path: one that is moved
// away, replaced by a symbolic link or removed after this call is noticed by the next
// [Workspace.Resolve], which then resolves targets under it by what the path leads to now, from
// the filesystem root, never against the directory that was opened.
func NewWorkspace(dirs, trusted []string, home string) (*Workspace, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no workspace root")
	}
	w := &Workspace{pl: Host()}
	if h := w.pl.ToSlash(home); h != "" && (w.pl.IsAbs(h) || strings.HasPrefix(h, "/")) {
		w.home = w.pl.Clean(h)
	}
	for i, d := range dirs {
		given, real, err := resolveRoot(d, home)
		if err != nil {
			return nil, fmt.Errorf("workspace root %q: %w", d, err)
		}
		if i == 0 {
			w.primary, w.primaryGiven = real, given
		}
		w.roots = append(w.roots, real)
	}
	for _, t := range trusted {
		if _, real, err := resolveRoot(t, home); err == nil {
			w.roots = append(w.roots, real)
		}
	}
	slices.SortStableFunc(w.roots, func(a, b string) int { return len(b) - len(a) })
	w.roots = slices.Compact(w.roots)
	for _, r := range w.roots {
		z := append([]byte(r), 0)
		st, _ := statPath(z, true)
		fi, _ := os.Stat(r)
		w.rootZ, w.rootID, w.rootFI = append(w.rootZ, z), append(w.rootID, st), append(w.rootFI, fi)
	}
	return w, nil
}

// rootOK reports whether root i's path still leads to the directory opened by NewWorkspace
// (through a link or not: the same directory holds the same names). It costs one stat and, on
// Linux/amd64, allocates nothing.
func (w *Workspace) rootOK(i int) bool {
	st, err := statPath(w.rootZ[i], true)
	if err != nil || st.kind != kindDir {
		return false
	}
	if identityKnown {
		return st.dev == w.rootID[i].dev && st.ino == w.rootID[i].ino
	}
	fi, err := os.Stat(w.roots[i])
	return err == nil && w.rootFI[i] != nil && os.SameFile(fi, w.rootFI[i])
}

func resolveRoot(dir, home string) (given, real string, err error) {
	dir, err = Expand(dir, home)
	if err != nil {
		return "", "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", "", err
	}
	if !fi.IsDir() {
		return "", "", errors.New("not a directory")
	}
	pl := Host()
	return pl.Clean(abs), pl.Clean(r), nil
}

// Primary returns the first root, resolved, in slash form.
func (w *Workspace) Primary() string { return w.primary }

// Roots returns every root, resolved, in slash form, deepest first.
func (w *Workspace) Roots() []string { return slices.Clone(w.roots) }

// RootOf returns the deepest root holding the absolute, resolved path abs, or "".
func (w *Workspace) RootOf(abs string) string {
	for _, r := range w.roots {
		if w.pl.Within(abs, r) {
			return r
		}
	}
	return ""
}

// Rel returns abs relative to root r, which holds it: "." for r itself.
func Rel(abs, r string) string {
	switch {
	case len(abs) == len(r):
		return "."
	case r != "" && r[len(r)-1] == '/':
		return abs[len(r):]
	}
	return abs[len(r)+1:]
}

// Resolve returns the root holding target ("" when it lies outside every root) and the target's
// path: relative to that root when inside, absolute when outside, in slash form. A relative
// target is relative to the primary root.
//
// The target is read as the kernel reads it when a writer creates it (mkdir -p of its parent,
// then open): every symbolic link is followed, ".." goes to the parent of the real directory it
// follows, and past a component that does not exist yet the rest names directories a writer
// creates, until a ".." climbs back into existing ones and resolution against the filesystem
// resumes. When the target holds "..", it is also read lexically (filepath.Clean, which
// filepath.Join applies, then its links); if the readings name different files, or a ".."
// follows something that is not a directory (the kernel refuses that), the result is an
// [*AmbiguousError]: one host would write one file, another a different one.
//
// Two more kinds of target are refused with an [*AmbiguousError], because the process that
// opens them decides where they lead, not the path:
//
//   - A leading "~", "~user", "$HOME" or other "$" expansion: "~" and "$HOME" are read as the
//     home directory (as a shell expands them), the others are refused (see spelling.go).
//   - A path through a link of the proc filesystem that names the state of the process that
//     opens it (Linux): /proc/<pid>/cwd, root, exe, fd/N, map_files/..., and every spelling that
//     reaches one (/proc/self/..., /proc/thread-self/..., /dev/fd/N, /dev/stdin, a link in the
//     workspace to any of them, "/proc/./self", "//proc"). The gate's own process state is not
//     the command's. The links of procfs that only name the reading process ("self",
//     "thread-self", "mounts", "net") are kept as written, not replaced by the gate's pid, so
//     /proc/self/status stays /proc/self/status; a ".." back over one of them is refused.
//
// Every root a target is resolved under is first checked to still be the directory
// [NewWorkspace] opened; one that is not (moved away, replaced by a link) is not trusted as a
// starting point: the target is resolved from the filesystem root, by what it leads to now.
//
// Resolve follows at most [MaxLinks] links and walks at most [MaxSteps] components. It
// allocates only when the target is not clean, passes through a symbolic link or starts with a
// home spelling. On Linux a clean target inside a root is first checked with one openat2 call
// on its whole path that refuses every link (which also shows that the root's path has none):
// when it finds the target, or its parent with only the last component missing, no walk is
// needed (see [SetFastResolve]); any other answer falls back to the walk.
func (w *Workspace) Resolve(target string) (root, p string, err error) {
	switch {
	case target == "":
		return "", "", ErrEmpty
	case strings.IndexByte(target, 0) >= 0:
		return "", "", ErrNUL
	case len(target) > MaxPathLen:
		return "", "", ErrTooLong
	}
	t, err := w.spell(w.pl.ToSlash(target))
	if err != nil {
		err.(*AmbiguousError).Target = target
		return "", "", err
	}
	if len(t) > MaxPathLen {
		return "", "", ErrTooLong
	}
	var buf [MaxPathLen + 2]byte
	n, changed, isAbs, err := w.resolveInto(&buf, t)
	if err != nil {
		var amb *AmbiguousError
		if errors.As(err, &amb) {
			amb.Target = target
			if amb.Lexical == "" {
				amb.Lexical = w.lexicalTarget(t, isAbs)
			}
		}
		return "", "", err
	}
	if !changed {
		return w.split(t, isAbs)
	}
	abs := string(buf[:n])
	if hasDotDot(t) {
		lex := w.lexicalTarget(t, isAbs)
		ln, lchanged, _, err := w.resolveInto(&buf, lex)
		if err != nil {
			return "", "", err
		}
		lreal := lex
		if lchanged {
			lreal = string(buf[:ln])
		}
		if lreal != abs {
			return "", "", &AmbiguousError{Target: target, Kernel: abs, Lexical: lreal,
				Why: `a ".." after a symbolic link or a directory that does not exist yet leads elsewhere than the lexical reading`}
		}
	}
	if r := w.RootOf(abs); r != "" {
		return r, Rel(abs, r), nil
	}
	return "", abs, nil
}

// resolveInto resolves slash-form t into buf: n is the length of the result, changed reports
// that it differs from t as written (absolute) or from the primary root joined with t.
func (w *Workspace) resolveInto(buf *[MaxPathLen + 2]byte, t string) (n int, changed, isAbs bool, err error) {
	base, rest, isAbs, ri, err := w.start(t)
	if err != nil {
		return 0, false, isAbs, err
	}
	if ri >= 0 {
		if w.fast(buf, base, rest, ri) { // resolves to base + "/" + rest, as the walk would find
			n = copy(buf[:], base)
			if n > w.floor(base) && rest != "" {
				buf[n] = '/'
				n++
			}
			n += copy(buf[n:], rest)
			return n, w.slashesDropped(t, base, rest, isAbs), isAbs, nil
		}
		if !w.rootOK(ri) {
			// The root's path no longer leads to the directory that was opened: resolve the
			// whole path from its volume's root, by what it leads to now.
			full := base
			if rest != "" {
				full = strings.TrimRight(base, "/") + "/" + rest
			}
			f := w.floor(full)
			base, rest = full[:f], full[f:]
		}
	}
	n, changed, err = w.walk(buf, base, rest)
	return n, changed || w.slashesDropped(t, base, rest, isAbs), isAbs, err
}

// slashesDropped reports whether an absolute t is longer than the base + "/" + rest the walk
// starts from: "/root//x", whose extra slashes start drops.
func (w *Workspace) slashesDropped(t, base, rest string, isAbs bool) bool {
	if !isAbs {
		return false
	}
	sep := 1
	if base[len(base)-1] == '/' {
		sep = 0
	}
	return len(t) != len(base)+len(rest)+sep && !(rest == "" && len(t) == len(base))
}

// lexicalTarget is where filepath.Join(root-as-given, target) points before the kernel follows
// any link.
func (w *Workspace) lexicalTarget(t string, isAbs bool) string {
	if isAbs {
		return w.pl.Clean(t)
	}
	return w.pl.Clean(w.primaryGiven + "/" + t)
}

// start returns where the walk of slash-form t begins: the deepest root lexically holding an
// absolute t (roots are resolved already), else its volume's root; the primary for a relative t.
// ri is the index of the root the walk starts from, or -1.
func (w *Workspace) start(t string) (base, rest string, isAbs bool, ri int, err error) {
	if !w.pl.IsAbs(t) {
		if w.pl.Volumes && (t != "" && t[0] == '/' || w.pl.VolumeLen(t) > 0) {
			return "", "", false, -1, ErrNoVolume // "\x" or "C:x": relative to a current drive or directory
		}
		return w.primary, t, false, w.rootIndex(w.primary), nil
	}
	for i, r := range w.roots {
		if w.pl.Within(t, r) {
			rest = t[len(r):]
			for rest != "" && rest[0] == '/' {
				rest = rest[1:]
			}
			return r, rest, true, i, nil
		}
	}
	v := w.pl.VolumeLen(t)
	return t[:v+1], t[v+1:], true, -1, nil
}

func (w *Workspace) rootIndex(r string) int {
	for i := range w.roots {
		if w.roots[i] == r {
			return i
		}
	}
	return -1
}

// split answers for a target whose resolution is base + "/" + rest exactly, with substrings of t.
func (w *Workspace) split(t string, isAbs bool) (root, p string, err error) {
	if isAbs {
		if r := w.RootOf(t); r != "" {
			return r, Rel(t, r), nil
		}
		return "", t, nil
	}
	// Relative: the path is primary + "/" + t; the holding root is primary or one under it.
	for _, r := range w.roots {
		if len(r) > len(w.primary) && w.pl.Within(r, w.primary) {
			sub := Rel(r, w.primary)
			if t == sub {
				return r, ".", nil
			}
			if len(t) > len(sub) && t[len(sub)] == '/' && t[:len(sub)] == sub {
				return r, t[len(sub)+1:], nil
			}
		}
	}
	return w.primary, t, nil
}

// floor is the length of the root prefix of an absolute slash path ("/" or "C:/"): ".." never
// goes below it.
func (w *Workspace) floor(p string) int {
	v := w.pl.VolumeLen(p)
	if v > 2 { // UNC: the share is the root, with or without a slash after it
		if len(p) > v && p[v] == '/' {
			return v + 1
		}
		return v
	}
	return v + 1
}

// walk resolves rest below base (a resolved directory) into buf and returns the length of the
// result and whether it differs from base + "/" + rest.
func (w *Workspace) walk(buf *[MaxPathLen + 2]byte, base, rest string) (n int, changed bool, err error) {
	n = copy(buf[:], base)
	floor := w.floor(base)
	links, steps := 0, 0
	missingAt := -1 // while >= 0: buf[:missingAt] exists, what follows does not yet
	notDir := false // the first missing component was below a non-directory
	last := kindDir // what buf[:n] names, while nothing is missing
	kept := -1      // buf[:kept] ends with a procfs link kept as written: no ".." may go back over it
	for i := 0; i <= len(rest); {
		if steps++; steps > MaxSteps {
			return 0, false, ErrTooDeep
		}
		j := strings.IndexByte(rest[i:], '/')
		if j < 0 {
			j = len(rest)
		} else {
			j += i
		}
		comp := rest[i:j]
		i = j + 1
		switch comp {
		case "":
			if len(rest) > 0 {
				changed = true // "a//b", a trailing slash
			}
			continue
		case ".":
			changed = true
			continue
		case "..":
			changed = true
			if missingAt >= 0 && notDir || missingAt < 0 && last.notDir() {
				return 0, false, &AmbiguousError{Why: `a ".." after something that is not a directory: the kernel refuses it, a lexical join does not`}
			}
			for n > floor && buf[n-1] != '/' {
				n--
			}
			if n > floor {
				n-- // drop the slash, keep the root itself
			}
			if n < kept {
				return 0, false, &AmbiguousError{Why: `a ".." back over a /proc link that names the reading process: where it leads depends on that process`}
			}
			if missingAt < 0 || n <= missingAt {
				missingAt, last = -1, kindDir // the parent of a real directory is a directory
			}
			continue
		}
		prefix := n
		if n > floor {
			buf[n] = '/'
			n++
		}
		if n+len(comp)+1 > len(buf) {
			return 0, false, ErrTooLong
		}
		dirN := n
		n += copy(buf[n:], comp)
		if missingAt >= 0 {
			continue // a directory a writer creates
		}
		buf[n] = 0
		kind, err := lstatKind(buf[:n+1])
		switch {
		case err == nil && kind == kindSymlink:
			if links++; links > MaxLinks {
				return 0, false, ErrLoop
			}
			if prefix > floor && w.onProcfs(buf, prefix) {
				k, err := procLink(buf[:n+1])
				if err != nil {
					return 0, false, err
				}
				last, kept = k, n
				continue
			}
			link, err := os.Readlink(string(buf[:n]))
			if err != nil {
				return 0, false, fmt.Errorf("cannot resolve %q: %w", string(buf[:n]), err)
			}
			link = w.pl.ToSlash(link)
			changed = true
			remaining := ""
			if i <= len(rest) {
				remaining = rest[i:]
			}
			switch {
			case w.pl.IsAbs(link):
				f := w.floor(link)
				n = copy(buf[:], link[:f])
				if f > 0 && link[f-1] != '/' { // a UNC share without its slash
					buf[n] = '/'
					n++
				}
				floor = n
				rest = link[f:] + "/" + remaining
			case link != "" && link[0] == '/' || w.pl.VolumeLen(link) > 0:
				return 0, false, fmt.Errorf("cannot resolve %q: %w", string(buf[:dirN+len(comp)]), ErrNoVolume)
			default:
				n = dirN
				if n > floor {
					n-- // drop the slash added before the link's name
				}
				rest = link + "/" + remaining
			}
			i = 0
			last = kindDir
			if kept > n {
				kept = -1 // the link left the kept procfs link's directory
			}
		case err == nil:
			last = kind
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			missingAt = prefix
			notDir = last.notDir() || errors.Is(err, syscall.ENOTDIR)
		default:
			return 0, false, fmt.Errorf("cannot resolve %q: %w", string(buf[:n]), err)
		}
	}
	return n, changed, nil
}

// onProcfs reports whether the directory buf[:end] lies on a proc filesystem. It NUL-terminates
// the directory in place for the system call and restores the byte after.
func (w *Workspace) onProcfs(buf *[MaxPathLen + 2]byte, end int) bool {
	c := buf[end]
	buf[end] = 0
	on := onProcfs(buf[:end+1])
	buf[end] = c
	return on
}

// procLink decides a symbolic link on a proc filesystem, path NUL-terminated. A link whose
// target is a name inside procfs ("self" -> "1234", "thread-self" -> "1234/task/1235", "mounts"
// -> "self/mounts") only names the reading process: it is kept as written and kind is what it
// leads to for the gate, which has the same shape for any process. Any other link ("cwd",
// "root", "exe", "fd/N", "map_files/...": a path elsewhere, or "pipe:[N]" and the like) leads
// where the state of the process that opens it says: an [*AmbiguousError].
func procLink(path []byte) (kind fileKind, err error) {
	p := string(path[:len(path)-1])
	link, rerr := os.Readlink(p)
	if rerr == nil && link != "" && link[0] != '/' && !strings.ContainsRune(link, ':') && !hasDotDot(link) {
		if st, serr := statPath(path, true); serr == nil {
			return st.kind, nil
		}
	}
	return kindMissing, &AmbiguousError{Why: fmt.Sprintf("%s is a /proc link to the state of the process that opens it (its working directory, root, executable or open files): the gate's own is not the command's", p)}
}

// cleanRel reports whether slash-form p is a relative path whose every component is a name:
// no leading, trailing or doubled slash, no "." and no "..".
func cleanRel(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch p[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

// hasDotDot reports whether slash-form p has a ".." component.
func hasDotDot(p string) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '.' && p[i+1] == '.' && (i == 0 || p[i-1] == '/') && (i+2 == len(p) || p[i+2] == '/') {
			return true
		}
	}
	return false
}
