package policy

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
)

// cmdRegex is a compiled command_pattern with a literal prefilter: lits holds strings of which at
// least one occurs in every text the regex matches, so a text containing none of them is
// rejected without running the regex. word, when set, is an ASCII word that occurs as a whole
// word (a maximal run of [0-9A-Za-z_]) in every matching text; the rule index uses it.
//
// The pattern is parsed (and so validated) when the rule set is compiled; the matcher itself is
// built the first time a text gets past the index and the prefilter. Most command rules of a
// large rule set never get that far, so compiling one costs a parse, not a parse and a
// compilation. regexp's parser accepts exactly what regexp.Compile accepts (compiling a parsed
// expression cannot fail), so a pattern that would fail is still refused at compile time.
type cmdRegex struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
	sets []litSet // every matching text holds one literal of each set
	word string
}

// litSet is a set of literals at least one of which occurs in every match.
type litSet struct {
	lits []string
	fold bool // lits are lower case and compared ignoring ASCII case
}

// maxLitSets bounds the prefilter's work: the most selective sets are kept.
const maxLitSets = 3

func compileCmdRegex(pattern string) (*cmdRegex, error) {
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		// Let regexp phrase the error exactly as it always has.
		if _, rerr := regexp.Compile(pattern); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	c := &cmdRegex{src: pattern}
	tree = tree.Simplify()
	// Each element of a concatenation brings its own requirement, and a text must meet them
	// all ("curl" or "wget", and "|", for `\b(curl|wget)\b.*\|\s*sh`), so a simple command
	// without a pipe is rejected before the regex runs.
	parts := []*syntax.Regexp{tree}
	if tree.Op == syntax.OpConcat {
		parts = tree.Sub
	}
	for _, sub := range parts {
		if lits, ok := requiredLiterals(sub, false); ok {
			c.sets = append(c.sets, litSet{lits: lits})
		} else if lits, ok := requiredLiterals(sub, true); ok {
			c.sets = append(c.sets, litSet{lits: lits, fold: true})
		}
	}
	slices.SortStableFunc(c.sets, func(a, b litSet) int { return shortest(b.lits) - shortest(a.lits) })
	if len(c.sets) > maxLitSets {
		c.sets = c.sets[:maxLitSets]
	}
	c.word = requiredWord(tree)
	return c, nil
}

// regexp returns the compiled matcher, building it on first use.
func (c *cmdRegex) regexp() *regexp.Regexp {
	c.once.Do(func() { c.re = regexp.MustCompile(c.src) })
	return c.re
}

func (c *cmdRegex) match(text string) bool {
	for i := range c.sets {
		set := &c.sets[i]
		found := false
		for _, l := range set.lits {
			if set.fold && containsFold(text, l) || !set.fold && strings.Contains(text, l) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return c.regexp().MatchString(text)
}

// requiredLiterals returns a set of literals at least one of which occurs in every match of re.
// ok is false when no such set is known (the regex then always runs). With fold, case-folded
// literals count too, returned in lower case, to be compared ignoring ASCII case.
func requiredLiterals(re *syntax.Regexp, fold bool) (lits []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return nil, false
		}
		if re.Flags&syntax.FoldCase != 0 || fold {
			if !fold {
				return nil, false
			}
			for _, r := range re.Rune {
				if r >= 128 {
					return nil, false // non-ASCII folding: keep it simple
				}
			}
			return []string{strings.ToLower(string(re.Rune))}, true
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0], fold)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0], fold)
		}
	case syntax.OpConcat:
		// Any child's requirement is the whole's; keep the most selective (longest shortest).
		var best []string
		for _, sub := range re.Sub {
			if l, ok := requiredLiterals(sub, fold); ok && shortest(l) > shortest(best) {
				best = l
			}
		}
		return best, best != nil
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			l, ok := requiredLiterals(sub, fold)
			if !ok {
				return nil, false
			}
			all = append(all, l...)
		}
		return all, true
	}
	return nil, false
}

// containsFold reports whether s contains the lower-case ASCII string sub, ignoring ASCII case.
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func shortest(lits []string) int {
	if lits == nil {
		return -1
	}
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// Items of the flattened regex used to find a required whole word.
const (
	itemUnknown = iota // may match anything, or nothing
	itemSep            // consumes or asserts a non-word boundary (\s+, " ", ^, $, \b)
	itemWord           // one literal ASCII word character
)

type reItem struct {
	kind int
	ch   byte
}

// requiredWord returns the longest ASCII word that occurs as a whole word in every match of re,
// or "" if none is provable. A run of literal word characters qualifies when a separator
// (a non-word literal, a class of non-word characters repeated at least once, an anchor or \b)
// stands right before and right after it.
func requiredWord(re *syntax.Regexp) string {
	var buf [64]reItem
	items := flatten(re, buf[:0])
	best := ""
	for i := 0; i < len(items); {
		if items[i].kind != itemWord {
			i++
			continue
		}
		j := i
		for j < len(items) && items[j].kind == itemWord {
			j++
		}
		if i > 0 && items[i-1].kind == itemSep && j < len(items) && items[j].kind == itemSep && j-i > len(best) {
			var b strings.Builder
			for _, it := range items[i:j] {
				b.WriteByte(it.ch)
			}
			best = b.String()
		}
		i = j
	}
	return best
}

func flatten(re *syntax.Regexp, out []reItem) []reItem {
	switch re.Op {
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = flatten(sub, out)
		}
		return out
	case syntax.OpCapture:
		return flatten(re.Sub[0], out)
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return append(out, reItem{kind: itemUnknown})
		}
		for _, r := range re.Rune {
			if r < 128 && isWordByte(byte(r)) {
				out = append(out, reItem{kind: itemWord, ch: byte(r)})
			} else {
				out = append(out, reItem{kind: itemSep})
			}
		}
		return out
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary:
		return append(out, reItem{kind: itemSep})
	}
	if isSeparator(re) {
		return append(out, reItem{kind: itemSep})
	}
	return append(out, reItem{kind: itemUnknown})
}

// isSeparator reports whether re always consumes at least one non-word character or asserts a
// non-word boundary, and nothing that could continue a word on the side it touches.
func isSeparator(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary:
		return true
	case syntax.OpCharClass:
		return !classHasWord(re.Rune)
	case syntax.OpLiteral:
		return re.Flags&syntax.FoldCase == 0 && len(re.Rune) > 0 && !(re.Rune[0] < 128 && isWordByte(byte(re.Rune[0]))) &&
			!(re.Rune[len(re.Rune)-1] < 128 && isWordByte(byte(re.Rune[len(re.Rune)-1])))
	case syntax.OpPlus:
		return isSeparator(re.Sub[0]) && re.Sub[0].Op == syntax.OpCharClass
	case syntax.OpRepeat:
		return re.Min >= 1 && re.Sub[0].Op == syntax.OpCharClass && isSeparator(re.Sub[0])
	case syntax.OpCapture:
		return isSeparator(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !isSeparator(sub) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}

func classHasWord(ranges []rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for _, w := range [][2]rune{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}} {
			if lo <= w[1] && w[0] <= hi {
				return true
			}
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
