package policy

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// A glob is a doublestar pattern compiled once: braces expanded into alternatives, each
// alternative split into path segments. Matching walks segments without allocating and never
// re-parses the pattern (doublestar.Match parses on every call).
//
// Semantics follow doublestar on clean paths (no empty segments, no trailing slash):
//   - "*" matches any run of characters within one segment, "?" one character, "[...]" one
//     character of a class ("[!...]" or "[^...]" negated), "\" escapes the next character;
//   - a segment that is exactly "**" matches zero or more whole segments;
//   - "{a,b}" matches either alternative; alternatives may contain "/" and nest.
//
// Patterns that cannot match a clean path are rejected with a reason instead of silently never
// matching: empty segments ("a//b"), a trailing slash ("build/"), and classes that contain "/".
type glob struct {
	src  string
	alts []globAlt
	one  [1]globAlt // alts' storage when the pattern has no braces
	segs [4]segPat  // its segments' storage when it has at most four
}

type globAlt struct {
	abs  bool     // the alternative began with "/": it matches absolute paths
	segs []segPat // one per path segment
	lit  string   // the leading literal segments joined by "/" ("" if the first is not literal)
	last string   // the last segment when it is a literal, else ""
	ext  string   // the extension (".go") every matching last segment ends with, else ""

	kind    uint8  // the alternative's shape (altGeneral... in match.go)
	fastLit string // the shape's literal: the path, directory, base name or star prefix
	fastSuf string // altStar: the text after the star
}

type segPat struct {
	text    string // the segment pattern, unescaped if literal
	literal bool   // no wildcard: compare with ==
	double  bool   // the segment is "**"
}

const maxGlobAlternatives = 256

var errEmptyPattern = errors.New("empty pattern")

// compileGlob compiles a doublestar pattern. path reports whether the pattern is matched against
// paths (absolute alternatives allowed) or against plain names such as tool and host names.
func compileGlob(pattern string) (*glob, error) {
	if pattern == "" {
		return nil, errEmptyPattern
	}
	// Only classes, braces and escapes can make a pattern invalid: one without them (literal
	// text, "*", "**", "/") needs no validation.
	if strings.ContainsAny(pattern, "[]{}\\") {
		if !doublestar.ValidatePattern(pattern) {
			return nil, fmt.Errorf("invalid glob %q: unbalanced brackets or braces, or a trailing backslash", pattern)
		}
		if strings.Contains(pattern, `\/`) {
			return nil, fmt.Errorf("glob %q: an escaped / is still a path separator; write / alone", pattern)
		}
	}
	if strings.IndexByte(pattern, '{') < 0 {
		// No braces (the common case): one alternative, stored inline.
		g := &glob{src: pattern}
		ca, err := compileAlt(pattern, g.segs[:0])
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", pattern, err)
		}
		g.one[0] = ca
		g.alts = g.one[:]
		return g, nil
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", pattern, err)
	}
	g := &glob{src: pattern}
	for _, a := range alts {
		if !doublestar.ValidatePattern(a) {
			return nil, fmt.Errorf("glob %q: alternative %q is not a valid pattern", pattern, a)
		}
		ca, err := compileAlt(a, nil)
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", pattern, err)
		}
		g.alts = append(g.alts, ca)
	}
	return g, nil
}

// compileAlt compiles one alternative (without braces). Its segments go to buf when they fit.
func compileAlt(p string, buf []segPat) (globAlt, error) {
	var a globAlt
	if strings.HasPrefix(p, "/") {
		a.abs = true
		p = p[1:]
		if p == "" {
			// "/" alone: the root directory itself, zero segments.
			return a, nil
		}
	}
	if strings.HasSuffix(p, "/") {
		return a, fmt.Errorf("alternative %q ends with /, which never matches a clean path; use %q to match a directory and everything under it", p, strings.TrimSuffix(p, "/")+"/**")
	}
	var lits []string
	litPrefix := true
	litEnd := 0 // p[:litEnd] is the literal prefix while it has no escapes
	escaped := false
	if n := strings.Count(p, "/") + 1; n <= cap(buf) {
		a.segs = buf[:0]
	} else {
		a.segs = make([]segPat, 0, n)
	}
	off := 0
	for rest, more := p, true; more; {
		var s string
		s, rest, more = nextSegment(rest)
		off += len(s) + 1
		if s == "" {
			return a, fmt.Errorf("alternative %q has an empty path segment", p)
		}
		seg := segPat{text: s}
		switch {
		case s == "**":
			seg.double = true
		case !hasMeta(s):
			seg.literal = true
			seg.text = unescape(s)
		default:
			if classHasSlash(s) {
				return a, fmt.Errorf("alternative %q has a character class containing /, which never matches within a segment", p)
			}
			if err := checkClasses(s); err != nil {
				return a, fmt.Errorf("alternative %q: %w", p, err)
			}
		}
		if litPrefix && seg.literal {
			lits = append(lits, seg.text)
			litEnd = off - 1
			escaped = escaped || strings.IndexByte(s, '\\') >= 0
		} else {
			litPrefix = false
		}
		a.segs = append(a.segs, seg)
	}
	if escaped {
		a.lit = strings.Join(lits, "/")
	} else {
		a.lit = p[:litEnd]
	}
	a.classify()
	if n := len(a.segs); n > 0 {
		last := a.segs[n-1]
		switch {
		case last.literal:
			a.last = last.text
		case !last.double:
			a.ext = literalExt(last.text)
		}
	}
	return a, nil
}

// nextSegment returns the first segment of a pattern (up to a "/" outside of character classes
// and escapes), the rest after that "/", and whether there was one.
func nextSegment(p string) (seg, rest string, more bool) {
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}

func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			return true
		}
	}
	return false
}

func classHasSlash(s string) bool {
	in := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			in = true
		case ']':
			in = false
		case '/':
			if in {
				return true
			}
		}
	}
	return false
}

// checkClasses rejects reversed ranges such as [z-a], which doublestar accepts with a meaning
// of its own.
func checkClasses(s string) error {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			j := i + 1
			if j < len(s) && (s[j] == '!' || s[j] == '^') {
				j++
			}
			for first := true; j < len(s) && (first || s[j] != ']'); first = false {
				lo, w := classRune(s, j)
				j += w
				if j+1 < len(s) && s[j] == '-' && s[j+1] != ']' {
					hi, w2 := classRune(s, j+1)
					if hi < lo {
						return fmt.Errorf("reversed range %q-%q in a character class", lo, hi)
					}
					j += 1 + w2
				}
			}
			i = j
		}
	}
	return nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// literalExt returns the extension (from the last '.') of the literal suffix of a segment
// pattern, if that suffix contains a '.': every name the segment matches ends with it.
func literalExt(s string) string {
	// Walk back over literal characters; stop at any metacharacter.
	i := len(s)
	for i > 0 {
		c := s[i-1]
		if c == '*' || c == '?' || c == ']' || c == '[' || c == '\\' {
			break
		}
		if i >= 2 && s[i-2] == '\\' {
			break // escaped character: keep it simple and stop
		}
		i--
	}
	suffix := s[i:]
	if dot := strings.LastIndexByte(suffix, '.'); dot >= 0 && dot < len(suffix)-1 {
		return suffix[dot:]
	}
	return ""
}

// expandBraces expands {a,b} alternatives (nested, escaped commas and braces respected). It reads
// the pattern the way the matcher does: a backslash escapes the next byte and a character class
// "[...]" is one unit, so a ',', '{' or '}' inside a class or after a backslash is a literal and
// never splits or closes an alternative ("{secrets/[a,b]*,keys/**}" has two alternatives, not
// three). An unterminated class is an error rather than a literal '['.
func expandBraces(p string) ([]string, error) {
	open := -1
scan:
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			end, err := classEnd(p, i)
			if err != nil {
				return nil, err
			}
			i = end
		case '{':
			open = i
			break scan
		}
	}
	if open < 0 {
		return []string{p}, nil
	}
	depth, close := 0, -1
	var commas []int
	for i := open; i < len(p) && close < 0; i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			end, err := classEnd(p, i)
			if err != nil {
				return nil, err
			}
			i = end
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				close = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if close < 0 {
		return nil, errors.New("unbalanced braces")
	}
	var parts []string
	start := open + 1
	for _, c := range commas {
		parts = append(parts, p[start:c])
		start = c + 1
	}
	parts = append(parts, p[start:close])
	var out []string
	for _, part := range parts {
		sub, err := expandBraces(p[:open] + part + p[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
		if len(out) > maxGlobAlternatives {
			return nil, fmt.Errorf("more than %d brace alternatives", maxGlobAlternatives)
		}
	}
	return out, nil
}

// classEnd returns the index of the ']' that closes the character class opening at p[i] == '['.
// Like the matcher, it lets a backslash escape the next byte and refuses an empty class ("[]",
// "[!]"): a ']' right after the opening (and its negation) does not close it.
func classEnd(p string, i int) (int, error) {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	if j < len(p) && p[j] == ']' {
		return 0, errors.New("empty character class")
	}
	for ; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case ']':
			return j, nil
		}
	}
	return 0, errors.New("unterminated character class")
}

// segs is a path split into segments without allocating: it keeps the path's strings (at most
// two, a root and a relative path) and the offsets of the first segments; later segments, in
// paths deeper than len(idx), are found by scanning. It holds no other pointers, so splitting a
// subject's path never makes the subject escape to the heap.
type segs struct {
	parts [2]string
	np    int
	idx   [24]segRef
	n     int
}

type segRef struct {
	part   uint8
	lo, hi uint16
}

// addPath appends the segments of a slash-separated path, skipping empty ones (a leading "/").
func (s *segs) addPath(p string) {
	if s.np == len(s.parts) {
		panic("policy: bug: segs holds at most two paths")
	}
	part := s.np
	s.parts[part] = p
	s.np++
	for i := 0; i < len(p); {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			j = len(p)
		} else {
			j += i
		}
		if j > i {
			if s.n < len(s.idx) {
				s.idx[s.n] = segRef{part: uint8(part), lo: uint16(i), hi: uint16(j)}
			}
			s.n++
		}
		i = j + 1
	}
}

// at returns segment i.
func (s *segs) at(i int) string {
	if i < len(s.idx) {
		r := s.idx[i]
		return s.parts[r.part][r.lo:r.hi]
	}
	k := 0
	for part := 0; part < s.np; part++ {
		p := s.parts[part]
		for rest := p; rest != ""; {
			seg := rest
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				seg, rest = rest[:j], rest[j+1:]
			} else {
				rest = ""
			}
			if seg == "" {
				continue
			}
			if k == i {
				return seg
			}
			k++
		}
	}
	return ""
}

// matchSegs matches pattern segments against path segments; "**" matches zero or more segments.
// It is the classic star-backtracking algorithm lifted from characters to segments.
func matchSegs(pat []segPat, path *segs) bool {
	pi, si := 0, 0
	starPi, starSi := -1, 0
	for si < path.n {
		if pi < len(pat) {
			p := pat[pi]
			if p.double {
				starPi, starSi = pi, si
				pi++
				continue
			}
			if p.matchSegment(path.at(si)) {
				pi++
				si++
				continue
			}
		}
		if starPi < 0 {
			return false
		}
		starSi++
		pi, si = starPi+1, starSi
	}
	for pi < len(pat) && pat[pi].double {
		pi++
	}
	return pi == len(pat)
}

func (p segPat) matchSegment(name string) bool {
	if p.literal {
		return p.text == name
	}
	return matchWild(p.text, name)
}

// matchWild matches one segment pattern (with *, ?, [...] and \ escapes) against a name.
func matchWild(pat, name string) bool {
	pi, ni := 0, 0
	starPi, starNi := -1, 0
	for ni < len(name) {
		if pi < len(pat) {
			switch c := pat[pi]; c {
			case '*':
				for pi < len(pat) && pat[pi] == '*' {
					pi++
				}
				starPi, starNi = pi, ni
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(name[ni:])
				pi++
				ni += w
				continue
			case '[':
				r, w := utf8.DecodeRuneInString(name[ni:])
				if ok, next := matchClass(pat, pi, r); ok {
					pi = next
					ni += w
					continue
				}
			case '\\':
				if pi+1 < len(pat) && pat[pi+1] == name[ni] {
					pi += 2
					ni++
					continue
				}
			default:
				if c == name[ni] {
					pi++
					ni++
					continue
				}
			}
		}
		if starPi < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(name[starNi:])
		starNi += w
		pi, ni = starPi, starNi
	}
	for pi < len(pat) && pat[pi] == '*' {
		pi++
	}
	return pi == len(pat)
}

// matchClass matches rune r against the class starting at pat[i] == '['. It returns whether it
// matched and the index just past the closing ']'.
func matchClass(pat string, i int, r rune) (bool, int) {
	i++ // '['
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	matched := false
	first := true
	for i < len(pat) {
		if pat[i] == ']' && !first {
			return matched != negate, i + 1
		}
		first = false
		lo, w := classRune(pat, i)
		i += w
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			hi, w = classRune(pat, i+1)
			i += 1 + w
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, len(pat) // unterminated: rejected at compile time, never matches
}

func classRune(pat string, i int) (rune, int) {
	if pat[i] == '\\' && i+1 < len(pat) {
		r, w := utf8.DecodeRuneInString(pat[i+1:])
		return r, w + 1
	}
	return utf8.DecodeRuneInString(pat[i:])
}

// matchPath reports whether the glob matches the path held in segs. abs says whether the path
// is absolute; an alternative matches only paths of its own kind.
func (g *glob) matchPath(path *segs, abs bool) bool {
	for i := range g.alts {
		a := &g.alts[i]
		if a.abs == abs && matchSegs(a.segs, path) {
			return true
		}
	}
	return false
}

// matchName matches a plain name (tool, host, provider, surface) as a one- or many-segment path.
func (g *glob) matchName(name string) bool {
	var s segs
	s.addPath(name)
	abs := strings.HasPrefix(name, "/")
	return g.matchPath(&s, abs)
}
