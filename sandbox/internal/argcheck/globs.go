package argcheck

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/shword"
)

// globWords is what the check knows of how the shell will expand a
// script's globs: whether bash's default glob options (no dotglob, no
// nocaseglob, no GLOBIGNORE, globbing on) are proven to hold for the
// whole script, and which words the shell expands as patterns.
//
// Only then is a glob judged by what the shell expands it to (a "*"
// does not match .git or .env); otherwise it is judged loosely, with
// dot names and any case matching, since either the options may have
// changed or the pattern reaches a program that may match it its own
// way (find -name, a quoted pattern, a glob that matched nothing and is
// passed on as written).
type globWords struct {
	// defaults: bash's default glob options hold for every command.
	defaults bool
	// shell holds the values of words the shell expands as patterns:
	// every glob character in them unquoted and unescaped, in a position
	// the shell expands (a command's words, a for list, a redirection).
	shell map[string]bool
	// other holds the values of words that hold a glob character in any
	// other way (quoted, escaped, in an assignment, a [[ ]] or a case
	// pattern): a value in both is not a shell glob.
	other map[string]bool
}

// bashFamily are the shells whose globbing follows bash's rules (dash
// and ash know no dotglob at all); zsh, ksh and mksh read option files
// and letters the check does not follow, so their globs are judged
// loosely.
var bashFamily = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true}

// globEnv are the environment variables that change how a bash script's
// globs match, or run code that may change it before the script starts.
var globEnv = []string{"BASHOPTS", "SHELLOPTS", "GLOBIGNORE", "BASH_ENV", "ENV"}

// globOptionText are the words whose mention in a script means that its
// glob options may change: dotglob, nocaseglob and GLOBIGNORE (and their
// zsh and ksh relatives) widen what a pattern matches; noglob passes
// patterns on as written.
var globOptionText = append([]string{"noglob", "bashopts", "shellopts"}, globOptionWords...)

// codeBuiltins run shell code or load builtins in the shell itself:
// what they change is not in the script's words.
var codeBuiltins = map[string]bool{
	"eval": true, "source": true, ".": true, "trap": true, "builtin": true, "command": true,
	"enable": true, "compgen": true, "complete": true, "bind": true, "fc": true, "alias": true,
	"coproc": true,
}

// nameBuiltins set variables or options named by their arguments: with
// literal arguments the names are in the script's text (and
// globOptionText finds GLOBIGNORE there); a computed one could be any.
var nameBuiltins = map[string]bool{
	"shopt": true, "declare": true, "typeset": true, "local": true, "export": true, "readonly": true,
	"nameref": true, "read": true, "mapfile": true, "readarray": true, "printf": true, "let": true, "getopts": true,
	"unset": true, "set": true,
}

// readGlobWords reads a script for [globWords]; shell is the interpreter
// (its base name) and env the command's environment. Anything it cannot
// read leaves defaults false, which only makes the check stricter.
func readGlobWords(shell, text string, env []string, home string) globWords {
	g := globWords{shell: map[string]bool{}, other: map[string]bool{}}
	lower := strings.ToLower(text)
	g.defaults = bashFamily[shell]
	for _, w := range globOptionText {
		if strings.Contains(lower, w) {
			g.defaults = false
		}
	}
	for _, k := range globEnv {
		if _, ok := envlist.Lookup(env, k); ok {
			g.defaults = false
		}
	}
	for _, k := range envlist.Keys(env) {
		if strings.HasPrefix(k, "BASH_FUNC_") {
			g.defaults = false // an exported function may stand for any command
		}
	}
	if len(text) > maxGlobScript {
		g.defaults = false
		return g
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		g.defaults = false
		return g
	}
	expanded := map[*syntax.Word]bool{}
	nodes := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if nodes++; nodes > maxGlobNodes {
			g.defaults = false
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			if !inertCall(n, home) {
				g.defaults = false
			}
			for _, w := range n.Args {
				expanded[w] = true
			}
		case *syntax.WordIter:
			for _, w := range n.Items {
				expanded[w] = true
			}
		case *syntax.Redirect:
			if n.Word != nil && n.Op != syntax.Hdoc && n.Op != syntax.DashHdoc && n.Op != syntax.WordHdoc {
				expanded[n.Word] = true
			}
		case *syntax.DeclClause:
			if !inertDecl(n, home) {
				g.defaults = false
			}
		case *syntax.CoprocClause, *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			// Arithmetic evaluates the values of the variables it names
			// as expressions, which may assign any variable (x is
			// "GLOBIGNORE=1").
			g.defaults = false
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsLeq, syntax.TsGtr, syntax.TsGeq:
				g.defaults = false // arithmetic, as above
			}
		case *syntax.ParamExp:
			if n.Index != nil || n.Slice != nil {
				g.defaults = false // an index or offset is arithmetic
			}
		case *syntax.Assign:
			if n.Index != nil {
				g.defaults = false
			}
		case *syntax.Word:
			v, ok := shword.Literal(n, home)
			if !ok || !strings.ContainsAny(v, "*?[") {
				return true
			}
			if expanded[n] && unquotedGlob(n) && !strings.Contains(v, "=") {
				g.shell[v] = true
			} else {
				g.other[v] = true
			}
		}
		return true
	})
	if nodes > maxGlobNodes {
		g.defaults = false
	}
	return g
}

// Bounds of the glob-word reading; past one, the script's globs are
// judged loosely.
const (
	maxGlobScript = 64 << 10
	maxGlobNodes  = 100000
)

// inertCall reports whether a simple command is known to leave the
// shell's glob options as they are: a literal program that is not a
// builtin running code, and, for a builtin that sets what its arguments
// name, literal arguments only; set without -f or noglob.
func inertCall(ce *syntax.CallExpr, home string) bool {
	if len(ce.Args) == 0 {
		return true // assignments: their names are literal text
	}
	prog, ok := shword.Literal(ce.Args[0], home)
	if !ok || shword.HasBraces(ce.Args[0]) || strings.ContainsAny(prog, "*?[") {
		return false // a computed program may be any builtin
	}
	if codeBuiltins[prog] {
		return false
	}
	if !nameBuiltins[prog] {
		return true
	}
	operands := false
	for _, w := range ce.Args[1:] {
		v, ok := shword.Literal(w, home)
		if !ok || shword.HasBraces(w) {
			return false
		}
		if prog != "set" || operands {
			continue
		}
		switch {
		case v == "--" || v == "-":
			operands = true
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			if !strings.HasPrefix(v[1:], "-") && strings.ContainsRune(v[1:], 'f') {
				return false // set -f: patterns are passed on as written
			}
		}
	}
	return true
}

// inertDecl reports whether a declaration (declare, typeset, local,
// export, readonly, nameref) leaves the glob options as they are: every
// name it sets is literal text, and it makes no integer variable (whose
// assignments are arithmetic) and no name reference (which assigns the
// variable its value names).
func inertDecl(d *syntax.DeclClause, home string) bool {
	if d.Variant != nil && d.Variant.Value == "nameref" {
		return false
	}
	for _, a := range d.Args {
		if a.Name != nil {
			continue
		}
		if a.Value == nil {
			return false
		}
		v, ok := shword.Literal(a.Value, home)
		if !ok || shword.HasBraces(a.Value) {
			return false
		}
		if (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) && strings.ContainsAny(v[1:], "in") {
			return false
		}
	}
	return true
}

// unquotedGlob reports whether every glob character of w is unquoted and
// unescaped: w is made of plain literal parts without a backslash.
func unquotedGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || strings.Contains(l.Value, `\`) {
			return false
		}
	}
	return true
}

// shellGlob reports whether the literal word v is expanded by the shell
// with its default options (see globWords).
// A "**" is left out: without globstar bash reads it as "*", which
// expandGlob does not.
func (g globWords) shellGlob(v string) bool {
	return g.defaults && g.shell[v] && !g.other[v] && !strings.Contains(v, "**")
}

// dirsOnly reports whether a pattern as written ends in "/": the shell
// then matches directories (and links to them) only.
func dirsOnly(raw string) bool {
	return strings.HasSuffix(raw, "/")
}
