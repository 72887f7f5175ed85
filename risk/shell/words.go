package shell

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// wordVal is what a word evaluates to, as far as the line itself says.
type wordVal struct {
	vals  []string // one per brace-expansion result; meaningful only when lit
	lit   bool     // every part is known: no unknown variable, substitution or arithmetic
	glob  bool     // unquoted pattern characters remain: the shell will expand them
	subst bool     // the word holds a $( ), backquote or <( ) (walked as commands)
}

func (v wordVal) join() string { return strings.Join(v.vals, " ") }

type wordMode uint8

const (
	modeArg     wordMode = iota // a command argument: brace expansion, tilde, globs
	modeAssign                  // an assignment value: tilde only, no braces, no globs
	modeHeredoc                 // a heredoc body: like double quotes
)

const maxBraceWords = 64

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
	syntax.Walk(word, func(n syntax.Node) bool {
		switch s := n.(type) {
		case *syntax.CmdSubst:
			v.subst = true
			w.stmts(s.Stmts, sc.clone(), cx)
			return false
		case *syntax.ProcSubst:
			v.subst = true
			w.stmts(s.Stmts, sc.clone(), cx)
			return false
		}
		return true
	})
	words := []*syntax.Word{word}
	if mode == modeArg && syntax.SplitBraces(word) {
		words = expand.Braces(word)
		if len(words) > maxBraceWords {
			return wordVal{subst: v.subst}
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
		v.vals = append(v.vals, e.b.String())
	}
	return v
}

type evaluator struct {
	w       *walker
	sc      *scope
	mode    wordMode
	b       strings.Builder
	ok      bool
	glob    bool
	bracket bool // an unquoted "[" waits for its "]" to make a pattern
	done    bool // evaluation failed; ok is false
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
			e.parts(p.Parts, true, false)
		case *syntax.ParamExp:
			e.param(p, quoted)
		case *syntax.ExtGlob:
			e.glob = true
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
			case '[':
				e.bracket = true
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
