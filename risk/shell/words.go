package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// wordVal is what a word evaluates to, as far as the line itself says.
type wordVal struct {
	vals     []string // one per brace-expansion result; meaningful only when lit
	lit      bool     // every part is known: no unknown variable, substitution or arithmetic
	glob     bool     // unquoted pattern characters remain: the shell will expand them
	globLead bool     // some result starts with an unquoted pattern: it may expand to "-x"
	subst    bool     // the word holds a $( ), backquote or <( ) (walked as commands)
}

func (v wordVal) join() string { return strings.Join(v.vals, " ") }

type wordMode uint8

const (
	modeArg     wordMode = iota // a command argument: brace expansion, tilde, globs
	modeAssign                  // an assignment value: tilde only, no braces, no globs
	modeHeredoc                 // a heredoc body: like double quotes
)

// word evaluates a word and walks the substitutions it contains (they run, whatever the word
// is used for).
func (w *walker) word(word *syntax.Word, sc *scope, cx ctx, assign bool) wordVal {
	mode := modeArg
	if assign {
		mode = modeAssign
	}
	return w.wordMode(word, sc, cx, mode)
}

func (w *walker) wordMode(word *syntax.Word, sc *scope, cx ctx, mode wordMode) wordVal {
	var v wordVal
	if word == nil {
		return wordVal{lit: true, vals: []string{""}}
	}
	if !w.spend(&w.words, maxWords, "more words than the analysis reads") {
		return v
	}
	// Substitutions run and expansions that evaluate text as code are found wherever they
	// sit in the word, evaluated by this analysis or not.
	v.subst = w.walkNode(word, sc, cx)
	words := []*syntax.Word{word}
	var span uint64 // the word's length, taken before SplitBraces (see below)
	if mode == modeArg && len(word.Parts) > 0 && !cx.posix {
		// A brace element may be empty ({,0}); the position of a word that starts or ends
		// with one cannot be asked once the braces are split.
		span = uint64(int(word.End().Offset()) - int(word.Pos().Offset()) + 1)
	}
	if mode == modeArg && span > 0 && syntax.SplitBraces(word) {
		// Count what the braces make before making it: {1..20000000} is one short word.
		n := braceCount(word.Parts)
		size := n * span
		if n > maxBraceWords {
			w.hazard("brace expansion makes more words than the analysis expands")
			return wordVal{subst: v.subst}
		}
		if w.braceWords+n > maxLineBraceWords || w.braceBytes+size > maxBraceBytes {
			w.stop("brace expansions make more words than the analysis expands")
			return wordVal{subst: v.subst}
		}
		w.braceWords += n
		w.braceBytes += size
		words = words[:0]
		for bw, err := range expand.BracesSeq(nil, word) {
			if err != nil {
				w.hazard("brace expansion: " + err.Error())
				return wordVal{subst: v.subst}
			}
			words = append(words, bw)
		}
	}
	v.lit = true
	for _, wd := range words {
		e := evaluator{w: w, sc: sc, mode: mode}
		e.parts(wd.Parts, false, true)
		if !e.ok {
			v.lit = false
			v.vals = nil
			return v
		}
		v.glob = v.glob || e.glob
		v.globLead = v.globLead || e.globLead && e.glob // a lone "[" is literal
		v.vals = append(v.vals, e.b.String())
	}
	return v
}

// braceCount is how many words brace expansion makes of parts, saturating above the caps.
func braceCount(parts []syntax.WordPart) uint64 {
	n := uint64(1)
	for _, p := range parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		n = satMul(n, braceExpCount(b))
	}
	return n
}

const braceSaturate = 1 << 40

func satMul(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > braceSaturate/b {
		return braceSaturate
	}
	return a * b
}

func braceExpCount(b *syntax.BraceExp) uint64 {
	if !b.Sequence {
		var n uint64
		for _, e := range b.Elems {
			n += braceCount(e.Parts)
			if n > braceSaturate {
				return braceSaturate
			}
		}
		return n
	}
	if len(b.Elems) < 2 {
		return 1
	}
	fromLit, toLit := b.Elems[0].Lit(), b.Elems[1].Lit()
	from, err1 := strconv.ParseInt(fromLit, 10, 64)
	to, err2 := strconv.ParseInt(toLit, 10, 64)
	if err1 != nil || err2 != nil {
		if fromLit == "" || toLit == "" {
			return 1
		}
		from, to = int64(fromLit[0]), int64(toLit[0])
	}
	var span uint64
	if from <= to {
		span = uint64(to) - uint64(from)
	} else {
		span = uint64(from) - uint64(to)
	}
	incr := uint64(1)
	if len(b.Elems) > 2 {
		if s, err := strconv.ParseInt(b.Elems[2].Lit(), 10, 64); err == nil && s != 0 {
			if s < 0 {
				s = -s
			}
			if s > 0 {
				incr = uint64(s)
			}
		}
	}
	n := span/incr + 1
	if n > braceSaturate || n == 0 {
		return braceSaturate
	}
	return n
}

type evaluator struct {
	w        *walker
	sc       *scope
	mode     wordMode
	b        strings.Builder
	ok       bool
	glob     bool
	globLead bool // the result starts with an unquoted pattern character
	bracket  bool // an unquoted "[" waits for its "]" to make a pattern
	done     bool // evaluation failed; ok is false
}

func (e *evaluator) fail() { e.done, e.ok = true, false }

func (e *evaluator) parts(parts []syntax.WordPart, quoted, first bool) {
	if !e.done {
		e.ok = true
	}
	for i, p := range parts {
		if e.done {
			return
		}
		switch p := p.(type) {
		case *syntax.Lit:
			e.lit(p.Value, quoted, first && i == 0)
		case *syntax.SglQuoted:
			if p.Dollar {
				s, _, err := expand.Format(nil, p.Value, nil)
				if err != nil {
					e.fail()
					return
				}
				s, _, _ = strings.Cut(s, "\x00")
				e.b.WriteString(s)
			} else {
				e.b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				e.fail() // $"...": a translation the analysis does not see
				return
			}
			e.parts(p.Parts, true, false)
		case *syntax.ParamExp:
			e.param(p, quoted)
		case *syntax.ExtGlob:
			if e.mode == modeArg && !quoted {
				e.glob = true
				if e.b.Len() == 0 {
					e.globLead = true
				}
			}
			e.b.WriteString(p.Op.String() + p.Pattern.Value + ")")
		default: // command and process substitutions, arithmetic, leftover braces
			e.fail()
			return
		}
	}
}

func (e *evaluator) lit(s string, quoted, first bool) {
	if first && !quoted && e.mode != modeHeredoc && strings.HasPrefix(s, "~") {
		rest := s[1:]
		name, tail, _ := strings.Cut(rest, "/")
		if name != "" || e.w.opts.Home == "" {
			e.fail() // ~user, or no known home
			return
		}
		e.b.WriteString(e.w.opts.Home)
		if strings.Contains(rest, "/") {
			e.b.WriteByte('/')
		}
		s = tail
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			next := s[i+1]
			switch {
			case next == '\n':
				i++
				continue
			case !quoted && e.mode != modeHeredoc:
				i++
				e.b.WriteByte(next) // an escaped character is literal, never a glob
				continue
			case next == '$' || next == '`' || next == '\\' || (next == '"' && e.mode != modeHeredoc):
				i++
				e.b.WriteByte(next)
				continue
			}
		}
		if !quoted && e.mode == modeArg {
			switch c {
			case '*', '?':
				e.glob = true
				if e.b.Len() == 0 {
					e.globLead = true
				}
			case '[':
				e.bracket = true
				if e.b.Len() == 0 {
					e.globLead = true // "[-]x" may be a pattern for "-x"
				}
			case ']':
				e.glob = e.glob || e.bracket
			}
		}
		e.b.WriteByte(c)
	}
}

func (e *evaluator) param(p *syntax.ParamExp, quoted bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil ||
		p.Names != 0 || p.Exp != nil || p.NestedParam != nil || len(p.Modifiers) > 0 {
		e.fail()
		return
	}
	val, ok := e.lookup(p.Param.Value)
	if !ok {
		e.fail()
		return
	}
	if !quoted && e.mode == modeArg {
		// Unquoted: the value is split into fields and globbed. A value that would change under
		// either is beyond a literal reading.
		if strings.ContainsAny(val, " \t\n") || val == "" {
			e.fail()
			return
		}
		if strings.ContainsAny(val, "*?[") {
			e.glob = true
			if e.b.Len() == 0 && strings.ContainsAny(val[:1], "*?[") {
				e.globLead = true
			}
		}
	}
	e.b.WriteString(val)
}

// lookup returns a variable's value when the line itself makes it known.
func (e *evaluator) lookup(name string) (string, bool) {
	if v, assigned := e.sc.vars[name]; assigned {
		if v == nil {
			return "", false
		}
		return *v, true
	}
	switch name {
	case "HOME":
		return e.w.opts.Home, e.w.opts.Home != ""
	case "PWD":
		return e.sc.cwd, e.sc.cwdKnown && strings.HasPrefix(e.sc.cwd, "/")
	}
	return "", false
}
