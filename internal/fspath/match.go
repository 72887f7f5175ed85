package fspath

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Matcher matches paths against the two protection lists. It is immutable and safe for
// concurrent use; matching does not allocate.
type Matcher struct {
	byLen [32][]nameEntry // single literal names, by length
	long  []nameEntry     // single literal names of 32 bytes or more
	multi []nameEntry     // runs of names, and names with wildcards
	abs   []absEntry
	hasRW bool
}

type nameEntry struct {
	comps []string
	wild  bool // some component holds * or ?
	entry string
	class Class
}

type absEntry struct {
	path  string // clean, absolute, slash form; symlinks resolved where the path exists
	comps []string
	entry string
	class Class
}

// Hit is a protection match: the entry as configured and its class.
type Hit struct {
	Entry string
	Class Class
}

// NewMatcher compiles the lists. home expands entries that start with ~ or $HOME. Every entry
// is checked with [CheckEntry]; an entry that cannot be honoured (a pattern, "..", ~ without a
// home directory) is an error naming it, never silently dropped. An absolute entry protects the
// path as written and, when it exists and a symbolic link is on the way, the path it resolves
// to.
func NewMatcher(l Lists, home string) (*Matcher, error) {
	m := &Matcher{}
	for _, class := range [...]Class{ReadWriteProtected, WriteProtected} {
		list := l.Write
		if class == ReadWriteProtected {
			list = l.ReadWrite
		}
		for _, e := range list {
			if err := m.add(e, class, home); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *Matcher) add(e string, class Class, home string) error {
	if why := CheckEntry(e); why != "" {
		return fmt.Errorf("protected path %q: %s", e, why)
	}
	if class == ReadWriteProtected {
		m.hasRW = true
	}
	raw := e
	e = Host().ToSlash(e)
	if IsAbsEntry(e) {
		x, err := Expand(e, home)
		if err != nil {
			return fmt.Errorf("protected path %q: %w", e, err)
		}
		pl := Host()
		x = pl.Clean(x)
		if !pl.IsAbs(x) && !strings.HasPrefix(x, "/") {
			return fmt.Errorf("protected path %q: %q is not absolute", e, x)
		}
		m.abs = append(m.abs, absEntry{path: x, comps: pl.Components(x), entry: raw, class: class})
		if real, err := filepath.EvalSymlinks(x); err == nil {
			if r := pl.Clean(real); r != x {
				m.abs = append(m.abs, absEntry{path: r, comps: pl.Components(r), entry: raw, class: class})
			}
		}
		return nil
	}
	var comps []string
	wild := false
	for _, c := range strings.Split(e, "/") {
		if c == "" || c == "." {
			continue
		}
		wild = wild || strings.ContainsAny(c, "*?")
		comps = append(comps, c)
	}
	n := nameEntry{comps: comps, wild: wild, entry: raw, class: class}
	switch {
	case len(comps) > 1 || wild:
		m.multi = append(m.multi, n)
	case len(comps[0]) < len(m.byLen):
		m.byLen[len(comps[0])] = append(m.byLen[len(comps[0])], n)
	default:
		m.long = append(m.long, n)
	}
	return nil
}

// better reports whether class c beats the best hit so far.
func better(c Class, best Hit) bool { return c > best.Class }

// Names matches the components of p (slash or native separators, relative or absolute) against
// the name entries: the strongest hit, or the zero Hit.
func (m *Matcher) Names(p string) Hit {
	var best Hit
	pl := Host()
	for i := 0; i < len(p); {
		c, next := nextComp(pl, p, i)
		if c != "" {
			if h := m.nameAt(pl, c, p, next); better(h.Class, best) {
				best = h
				if best.Class == ReadWriteProtected {
					return best
				}
			}
		}
		i = next
	}
	return best
}

// nameAt matches entries that start with component c, whose following components start at
// p[next:].
func (m *Matcher) nameAt(pl Platform, c, p string, next int) Hit {
	var best Hit
	var bucket []nameEntry
	if len(c) < len(m.byLen) {
		bucket = m.byLen[len(c)]
	} else {
		bucket = m.long
	}
	for i := range bucket {
		if n := &bucket[i]; better(n.class, best) && equalFold(c, n.comps[0]) {
			best = Hit{n.entry, n.class}
		}
	}
	for i := range m.multi {
		n := &m.multi[i]
		if !better(n.class, best) || !MatchName(n.comps[0], c) {
			continue
		}
		ok, j := true, next
		for _, want := range n.comps[1:] {
			var got string
			for got == "" && j < len(p) {
				got, j = nextComp(pl, p, j)
			}
			if !MatchName(want, got) {
				ok = false
				break
			}
		}
		if ok {
			best = Hit{n.entry, n.class}
		}
	}
	return best
}

// nextComp returns the component of p that starts at i ("" for an empty or "." one) and the
// index after its separator.
func nextComp(pl Platform, p string, i int) (string, int) {
	j := i
	for j < len(p) && !pl.IsSep(p[j]) {
		j++
	}
	c := p[i:j]
	if c == "." {
		c = ""
	}
	return c, j + 1
}

// Abs matches an absolute, clean path: the absolute entries that hold it, then its names.
func (m *Matcher) Abs(p string) Hit {
	var best Hit
	pl := Host()
	for i := range m.abs {
		if a := &m.abs[i]; better(a.class, best) && pl.WithinFold(p, a.path) {
			best = Hit{a.entry, a.class}
		}
	}
	if best.Class == ReadWriteProtected {
		return best
	}
	if h := m.Names(p); better(h.Class, best) {
		best = h
	}
	return best
}

// In matches a path inside a workspace root: rel is relative to root ("." for the root itself).
// Absolute entries are matched on root + rel; names only on rel, so a root that happens to lie
// under a directory named like an entry is not protected as a whole.
func (m *Matcher) In(root, rel string) Hit {
	var best Hit
	pl := Host()
	for i := range m.abs {
		a := &m.abs[i]
		if !better(a.class, best) {
			continue
		}
		switch {
		case pl.WithinFold(root, a.path):
			best = Hit{a.entry, a.class} // the whole root is protected
		case rel != "." && pl.WithinFold(a.path, root):
			sub := a.path[len(root):]
			for len(sub) > 0 && pl.IsSep(sub[0]) {
				sub = sub[1:]
			}
			if pl.WithinFold(rel, sub) {
				best = Hit{a.entry, a.class}
			}
		}
	}
	if best.Class == ReadWriteProtected || rel == "." {
		return best
	}
	if h := m.Names(rel); better(h.Class, best) {
		best = h
	}
	return best
}

// RootMatcher is a [Matcher] specialised for paths inside one workspace root: the absolute
// entries that concern the root are worked out once, so [RootMatcher.In] only looks at those
// and at the names. Build one per root with [Matcher.ForRoot].
type RootMatcher struct {
	m     *Matcher
	root  string
	whole Hit      // an absolute entry holding the whole root
	subs  []absSub // absolute entries under the root, relative to it
}

type absSub struct {
	sub   string
	entry string
	class Class
}

// ForRoot returns the matcher for paths inside root (absolute, clean, resolved).
func (m *Matcher) ForRoot(root string) *RootMatcher {
	r := &RootMatcher{m: m, root: root}
	pl := Host()
	for i := range m.abs {
		a := &m.abs[i]
		switch {
		case pl.WithinFold(root, a.path):
			if better(a.class, r.whole) {
				r.whole = Hit{a.entry, a.class}
			}
		case pl.WithinFold(a.path, root):
			sub := a.path[len(root):]
			for len(sub) > 0 && pl.IsSep(sub[0]) {
				sub = sub[1:]
			}
			r.subs = append(r.subs, absSub{sub, a.entry, a.class})
		}
	}
	return r
}

// Root returns the root r matches paths in.
func (r *RootMatcher) Root() string { return r.root }

// In is [Matcher.In] for r's root: the same answer, without looking at absolute entries that
// cannot concern the root.
func (r *RootMatcher) In(rel string) Hit {
	best := r.whole
	if best.Class == ReadWriteProtected || rel == "." {
		return best
	}
	pl := Host()
	for i := range r.subs {
		if s := &r.subs[i]; better(s.class, best) && pl.WithinFold(rel, s.sub) {
			best = Hit{s.entry, s.class}
		}
	}
	if best.Class == ReadWriteProtected {
		return best
	}
	if h := r.m.Names(rel); better(h.Class, best) {
		best = h
	}
	return best
}

// GlobReaches returns the strongest class a shell glob p could expand into: some wildcard
// component of p could match a protected name. As in the shell, * and ? do not match a leading
// dot; ** (what find -exec stands for) matches anything. A bracket expression counts as any one
// character. It errs towards reaching.
func (m *Matcher) GlobReaches(p string) Class {
	best := Unprotected
	pl := Host()
	consider := func(glob, name string, c Class) {
		if c > best && globCouldMatch(glob, name) {
			best = c
		}
	}
	for i := 0; i < len(p); {
		g, next := nextComp(pl, p, i)
		i = next
		if g == "" || !strings.ContainsAny(g, "*?[") {
			continue
		}
		if g == "**" {
			if m.hasRW {
				return ReadWriteProtected
			}
			best = WriteProtected
			continue
		}
		for b := range m.byLen {
			for _, n := range m.byLen[b] {
				consider(g, n.comps[0], n.class)
			}
		}
		for _, lists := range [...][]nameEntry{m.long, m.multi} {
			for _, n := range lists {
				for _, c := range n.comps {
					consider(g, c, n.class)
				}
			}
		}
		for _, a := range m.abs {
			for _, c := range a.comps {
				consider(g, c, a.class)
			}
		}
		if best == ReadWriteProtected {
			return best
		}
	}
	return best
}

// MatchName reports whether the name matches the entry component pattern: * matches any run of
// characters and ? any one (a UTF-8 character, or one byte where the name is not valid UTF-8, as
// in path.Match), ASCII case folded; everything else is literal. It does not allocate.
func MatchName(pattern, name string) bool {
	px, nx := 0, 0
	starP, starN := -1, 0
	for nx < len(name) || px < len(pattern) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starP, starN = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					px, nx = px+1, nx+charLen(name, nx)
					continue
				}
			default:
				if nx < len(name) && lower(c) == lower(name[nx]) {
					px, nx = px+1, nx+1
					continue
				}
			}
		}
		if starP >= 0 && starN < len(name) {
			starN++ // by bytes, as path.Match: a * may end inside a character, which only matches more
			px, nx = starP+1, starN
			continue
		}
		return false
	}
	return true
}

// charLen is the length of the character at name[i]: its UTF-8 sequence, or one byte where the
// text is not valid UTF-8.
func charLen(name string, i int) int {
	if name[i] < utf8.RuneSelf {
		return 1
	}
	_, w := utf8.DecodeRuneInString(name[i:])
	return w
}

// globCouldMatch reports whether a shell glob component could match a name that the entry
// component (itself possibly holding * and ?) matches. A leading dot must be matched literally.
func globCouldMatch(glob, entry string) bool {
	if strings.HasPrefix(entry, ".") && !strings.HasPrefix(glob, ".") {
		return false
	}
	if !strings.ContainsAny(entry, "*?") {
		// The shell's locale decides whether ? and a bracket expression match a byte or a
		// UTF-8 character: either could.
		return globMatch(glob, entry, false) || globMatch(glob, entry, true)
	}
	// Both sides are patterns: compare the literal text before their first wildcards.
	gp := glob[:strings.IndexAny(glob, "*?[")]
	ep := entry[:strings.IndexAny(entry, "*?")]
	n := min(len(gp), len(ep))
	return equalFold(gp[:n], ep[:n])
}

// globMatch matches a shell glob component against a literal name, ASCII case folded; a bracket
// expression matches any one character. With utf8Chars a character (for ? and a bracket
// expression) is a UTF-8 sequence, as in a UTF-8 locale; without, a byte, as in the C locale.
func globMatch(glob, name string, utf8Chars bool) bool {
	step := func(i int) int {
		if utf8Chars {
			return charLen(name, i)
		}
		return 1
	}
	px, nx := 0, 0
	starP, starN := -1, 0
	for nx < len(name) || px < len(glob) {
		if px < len(glob) {
			switch c := glob[px]; c {
			case '*':
				starP, starN = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					px, nx = px+1, nx+step(nx)
					continue
				}
			case '[':
				end := strings.IndexByte(glob[px+1:], ']')
				if end >= 0 && nx < len(name) {
					if end == 0 { // "[]...]": the ] is a member
						if e2 := strings.IndexByte(glob[px+2:], ']'); e2 >= 0 {
							end = e2 + 1
						}
					}
					px, nx = px+end+2, nx+step(nx)
					continue
				}
				if end < 0 && nx < len(name) && name[nx] == '[' {
					px, nx = px+1, nx+1
					continue
				}
			case '\\':
				if px+1 < len(glob) && nx < len(name) && lower(glob[px+1]) == lower(name[nx]) {
					px, nx = px+2, nx+1
					continue
				}
			default:
				if nx < len(name) && lower(c) == lower(name[nx]) {
					px, nx = px+1, nx+1
					continue
				}
			}
		}
		if starP >= 0 && starN < len(name) {
			starN++ // by bytes: a * may end inside a character, which only matches more
			px, nx = starP+1, starN
			continue
		}
		return false
	}
	return true
}

// leadsToRun reports whether comps (names below a directory) are the first names of a run of
// names entry (".config" for ".config/fish"), so a path with them could reach it.
func (m *Matcher) leadsToRun(comps []string) bool {
	for i := range m.multi {
		n := &m.multi[i]
		if len(n.comps) <= len(comps) {
			continue
		}
		ok := true
		for k, c := range comps {
			if !MatchName(n.comps[k], c) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
