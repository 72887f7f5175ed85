// Package shword reads shell words as the shell would when they hold no
// expansion: quote removal, backslash escapes, a leading ~. Package
// sandbox/script (the built-in script reader) and package
// sandbox/script/shellanalysis share it.
package shword

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Literal returns the value of a word made only of literal parts (plain
// text, single quotes, double quotes around plain text), with a leading
// unquoted ~ or ~/ replaced by home, and $'...' strings decoded. ok is
// false for any expansion, for $"..." strings, for ~user, for a ~ when home is "", and for
// an unquoted ~ after = or : (bash expands it in a word that looks like
// an assignment).
func Literal(w *syntax.Word, home string) (string, bool) {
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				rest := v[1:]
				if home == "" || (rest != "" && !strings.HasPrefix(rest, "/")) {
					return "", false
				}
				if rest == "" && len(w.Parts) > 1 {
					return "", false // "~"'x' is ~x: a user name
				}
				v = home + rest
			}
			if strings.Contains(v, "=~") || strings.Contains(v, ":~") {
				return "", false
			}
			b.WriteString(Unescape(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				// ANSI-C quoting; \c (a control character) is left to
				// the shell, whose reading the decoder does not share.
				if strings.Contains(p.Value, `\c`) {
					return "", false
				}
				v, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}})
				if err != nil {
					return "", false
				}
				b.WriteString(v)
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// Unescape removes the backslashes of an unquoted literal: a backslash
// keeps the next character, and a backslash-newline is removed.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that escape $, `, ", \ and a
// newline inside double quotes; others stay, as the shell keeps them.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ParseStmt parses the source text of one command; it returns nil
// unless the text is exactly one statement.
func ParseStmt(text string) *syntax.Stmt {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil
	}
	return f.Stmts[0]
}

// HasBraces reports whether the shell would brace-expand w ("{a,b}",
// "{1..3}"); it does not change w.
func HasBraces(w *syntax.Word) bool {
	c := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	return syntax.SplitBraces(c)
}
