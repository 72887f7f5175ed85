// Package script is how the argument checks of package sandbox read a
// shell script ("sh -c SCRIPT"): the [Reader] function type, the
// [Command] and [Path] it returns, and [Builtin], the reader local uses
// unless its configuration names another.
//
// Builtin links nothing but a shell parser (mvdan.cc/sh/v3/syntax) and
// reads only what it can spell out: lists and pipelines of simple
// commands whose program it knows to open nothing but what its
// arguments name, with literal words. Everything else is unreadable, and
// local refuses it. Package sandbox/script/shellanalysis holds the
// reader of the full shell analysis (package risk/shell): importing it
// is the opt-in to that analysis, which importing package sandbox alone
// does not link.
//
// A reader fails closed: what it cannot spell out is marked Unreadable,
// never left out.
package script

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/sandbox/internal/shword"
)

// Reader reads the script of an "sh -c SCRIPT" command. dir is the
// directory the script starts in; home is what ~ and $HOME stand for (""
// when unknown: they are then unreadable). It returns the script's
// simple commands as the shell would run them, nested ones included; an
// error refuses the whole script. A script with nothing to run returns
// no command and no error.
type Reader func(text, dir, home string) ([]Command, error)

// Command is one simple command of a script, as a [Reader] read it.
type Command struct {
	// Text is the command's source text, for messages.
	Text string
	// Argv is the program and its arguments, spelled out (quotes
	// removed, ~ expanded); the check takes each as a possible path,
	// relative to every directory the script may be in.
	Argv []string
	// Words are the command's other literal words that may name a path
	// (redirection targets, the values of environment assignments, the
	// values glued to short options), checked like Argv.
	Words []string
	// Paths are the paths the reader knows the command reads or writes,
	// joined to the directory it runs in.
	Paths []Path
	// Unreadable says why the reader cannot see what the command does,
	// so that a path could hide there; "" when it can. local refuses a
	// command with a reason.
	Unreadable string
}

// Path is a path a command reads or writes.
type Path struct {
	// Path is Raw joined to the directory the command runs in (not
	// cleaned: ".." applies after symbolic links).
	Path string
	// Raw is the path as the script spells it.
	Raw string
	// Glob says that the shell expands Path as a pattern.
	Glob bool
}

// MaxScript bounds the script Builtin reads (64 KiB, the shell
// analysis's bound); a longer one is an error.
const MaxScript = 64 << 10

// Bounds of the work Builtin does for one script; past one, the script
// is an error.
const (
	maxNesting = 100
	maxNodes   = 100000
	maxText    = 200 // bytes of Command.Text kept
)

// ErrUnread is wrapped by the errors of [Builtin]: the script is too
// large or nested too deeply to read, or does not parse.
var ErrUnread = errors.New("the script cannot be read")

// dataPrograms open nothing but the files their arguments name, run no
// other program and reach no network: what Builtin reads. Each maps to
// the short options Builtin accepts for it (their GNU coreutils
// meanings; a cluster is read when each of its characters is listed,
// and what follows an option letter may be its value, so every tail of
// the cluster is checked as a path too). Long options (--x) are
// unreadable for all of them: some take files that list more files
// (--files0-from) or name a program (--compress-program, diff's pager).
var dataPrograms = map[string]string{
	"cat":      "AbeEnstTuv",
	"cd":       "LP",
	"cmp":      "bilnsv",
	"comm":     "123z",
	"cp":       "abdfHilLnPpRrsStTuvxZ",
	"cut":      "bcdfnsz",
	"date":     "dfIRru",
	"df":       "aBhHiklPtTxv",
	"diff":     "abBcCdeEiINnpqrsStTuUwWxXyZ",
	"du":       "0aBbcDdHhkLlmPSstXx",
	"egrep":    "abcdefhilmnoqrsvwxyzABCDEFGHILPRTUVZ0123456789",
	"fgrep":    "abcdefhilmnoqrsvwxyzABCDEFGHILPRTUVZ0123456789",
	"fold":     "bsw",
	"grep":     "abcdefhilmnoqrsvwxyzABCDEFGHILPRTUVZ0123456789",
	"head":     "cnqvz0123456789",
	"join":     "aeijotvz12",
	"ln":       "bdfFiLnPrsStTv",
	"ls":       "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
	"mkdir":    "mpvZ",
	"mv":       "bfinStTuvZ",
	"nl":       "bdfhilnpsvw",
	"paste":    "dsz",
	"readlink": "efmnqsvz",
	"realpath": "emLPqsz",
	"rm":       "dfiIrRv",
	"rmdir":    "pv",
	"sort":     "bcCdfghikmMnorRsStTuVz",
	"stat":     "cfLt",
	"tail":     "cfFnqsvz0123456789",
	"tee":      "aip",
	"touch":    "acdfhmrt",
	"tr":       "cCdst",
	"uniq":     "cdDfisuwz",
	"wc":       "clmwL",
}

// wordSafePrograms never open their arguments: a word the reader cannot
// spell out (echo "$HOME") does not hide a path there, and options are
// not read.
var wordSafePrograms = map[string]bool{
	"echo": true, "printf": true, "test": true, "[": true, "true": true, "false": true, ":": true,
	"exit": true, "return": true, "shift": true, "sleep": true, "wait": true, "kill": true,
	"expr": true, "seq": true, "basename": true, "dirname": true, "pwd": true, "id": true,
	"whoami": true, "uname": true,
}

// Builtin is the reader local uses unless LocalConfig.Scripts names
// another. It reads lists (;, &&, ||, &) and pipelines of simple
// commands, nested in { } and ( ), with literal words (quotes removed, a
// leading ~ expanded) and literal redirection targets, and commands
// inside $( ) and <( ) as commands of their own. A command is
// unreadable when its program is not one Builtin knows to open only
// what its arguments name (cat, ls, cp, rm, ... and the builtins that
// open nothing, such as echo and test), when it has an environment
// assignment, a long option, a word that is computed (a variable, a
// substitution, arithmetic, brace expansion) other than in the
// arguments of echo, printf and the like, or when it is a compound
// command (if, for, while, case, a function, [[ ]], (( ))). The words
// of an unreadable command are still returned, as far as they are
// literal: the hardened sandbox checks them without refusing what it
// cannot read.
func Builtin(text, dir, home string) ([]Command, error) {
	if len(text) > MaxScript {
		return nil, fmt.Errorf("%w: it is longer than %d bytes", ErrUnread, MaxScript)
	}
	if nestingOver(text, maxNesting) {
		return nil, fmt.Errorf("%w: brackets nest deeper than %d", ErrUnread, maxNesting)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return nil, fmt.Errorf("%w: it does not parse: %v", ErrUnread, err)
	}
	r := builtin{text: text, home: home}
	nodes := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if nodes++; nodes > maxNodes {
			return false
		}
		if st, ok := n.(*syntax.Stmt); ok {
			r.out = append(r.out, r.stmt(st))
		}
		return true
	})
	if nodes > maxNodes {
		return nil, fmt.Errorf("%w: it has more than %d syntax nodes", ErrUnread, maxNodes)
	}
	return r.out, nil
}

type builtin struct {
	text, home string
	out        []Command
}

// source returns the source text of n, cut to maxText bytes.
func (r *builtin) source(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(r.text) || s > e {
		return ""
	}
	t := r.text[s:e]
	if len(t) > maxText {
		t = t[:maxText] + "..."
	}
	return t
}

// stmt reads one statement: its redirections and its command.
func (r *builtin) stmt(st *syntax.Stmt) Command {
	c := Command{Text: r.source(st)}
	unreadable := func(why string) {
		if c.Unreadable == "" {
			c.Unreadable = why
		}
	}
	for _, rd := range st.Redirs {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			// The body is the command's input, not a path; what runs in
			// it ($( )) is read as commands of its own.
			continue
		case syntax.DplIn, syntax.DplOut:
			if v, ok := shword.Literal(rd.Word, r.home); ok && isFD(v) {
				continue
			}
			if rd.Op == syntax.DplIn {
				unreadable("it duplicates a descriptor that is not a number")
				continue
			}
		}
		if rd.Word == nil {
			continue
		}
		v, ok := shword.Literal(rd.Word, r.home)
		switch {
		case !ok || shword.HasBraces(rd.Word):
			unreadable("a redirection target is computed at run time, so it could name any path")
		case rd.Op == syntax.WordHdoc:
			// A here-string is input, not a path.
		default:
			c.Words = append(c.Words, v)
		}
	}
	switch cmd := st.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		r.call(cmd, &c, unreadable)
	case *syntax.BinaryCmd, *syntax.Block, *syntax.Subshell:
		// Lists, pipelines and groups: their statements are read on
		// their own.
	default:
		unreadable("a compound command (if, for, while, case, a function, [[ ]], (( ))): the built-in script reader reads only lists of simple commands; its literal words are checked")
		syntax.Walk(cmd, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Stmt:
				return false // read on its own
			case *syntax.Word:
				if v, ok := shword.Literal(n, r.home); ok {
					c.Words = append(c.Words, v)
				}
				return false
			}
			return true
		})
	}
	return c
}

// call reads a simple command.
func (r *builtin) call(ce *syntax.CallExpr, c *Command, unreadable func(string)) {
	for _, as := range ce.Assigns {
		unreadable(fmt.Sprintf("it sets %s: the built-in script reader does not know what a variable changes", as.Name.Value))
		if as.Value != nil {
			if v, ok := shword.Literal(as.Value, r.home); ok {
				c.Words = append(c.Words, v)
			}
		}
	}
	if len(ce.Args) == 0 {
		return
	}
	// The program first: not knowing it is the reason that counts.
	prog := ""
	if v, ok := shword.Literal(ce.Args[0], r.home); ok && !shword.HasBraces(ce.Args[0]) && !strings.ContainsAny(v, "*?[/") {
		prog = v
		if _, data := dataPrograms[prog]; !data && !wordSafePrograms[prog] {
			unreadable(fmt.Sprintf("the built-in script reader does not know what %s does with its arguments (the full shell analysis does: package sandbox/script/shellanalysis)", prog))
		}
	}
	operands := false // after "--"
	for i, w := range ce.Args {
		v, ok := shword.Literal(w, r.home)
		if ok && shword.HasBraces(w) {
			ok = false
		}
		if i == 0 {
			switch {
			case !ok || strings.ContainsAny(v, "*?["):
				unreadable("the program is computed at run time")
			case strings.Contains(v, "/"):
				unreadable("the program " + v + " is given by its path: the built-in script reader knows programs by name only")
			}
		}
		if !ok {
			if !(i > 0 && wordSafePrograms[prog] && computedOK(w)) {
				unreadable(fmt.Sprintf("argument %d is computed at run time, so it could name any path", i))
			}
			continue
		}
		c.Argv = append(c.Argv, v)
		if i == 0 || wordSafePrograms[prog] {
			continue
		}
		if operands {
			continue
		}
		if leadingGlob(w) {
			unreadable(fmt.Sprintf("argument %d is a glob that may expand to a file name the program reads as an option (put it after -- or start it with ./)", i))
		}
		switch {
		case v == "--":
			operands = true
		case v == "-":
		case strings.HasPrefix(v, "--"):
			unreadable(fmt.Sprintf("%s is a long option: the built-in script reader does not know what it opens", v))
		case strings.HasPrefix(v, "-"):
			if known, ok := dataPrograms[prog]; ok && strings.Trim(v[1:], known) != "" {
				unreadable(fmt.Sprintf("%s is an option of %s the built-in script reader does not know", v, prog))
			}
			// A short option may carry its value glued to it ("-o.env"):
			// every tail of the cluster may be a path.
			for j := 2; j < len(v); j++ {
				c.Words = append(c.Words, v[j:])
			}
		}
	}
	if prog == "cd" && !hasOperand(c.Argv[1:]) {
		unreadable("cd without a directory goes to HOME or, with -, to the previous directory: the built-in script reader does not follow it")
	}
}

// leadingGlob reports whether w starts with an unquoted pattern
// character: what it expands to may start with "-".
func leadingGlob(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && l.Value != "" && strings.ContainsRune("*?[", rune(l.Value[0]))
}

// hasOperand reports whether args hold a word that is not an option.
func hasOperand(args []string) bool {
	for _, a := range args {
		if a != "-" && !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

// computedOK reports whether the computed parts of a word are plain
// parameter expansions ($x, ${x}, "$x") or command substitutions (whose
// commands are read on their own): what a program that never opens its
// arguments may be given.
func computedOK(w *syntax.Word) bool {
	ok := true
	var check func(parts []syntax.WordPart)
	check = func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit, *syntax.SglQuoted, *syntax.CmdSubst:
			case *syntax.DblQuoted:
				check(p.Parts)
			case *syntax.ParamExp:
				if p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil {
					ok = false
				}
			default:
				ok = false
			}
		}
	}
	check(w.Parts)
	return ok
}

// isFD reports whether a duplication target is a descriptor number or
// "-" (close).
func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// nestingOver reports whether brackets nest deeper than limit (quoting
// ignored: quoted brackets count too, on the safe side).
func nestingOver(src string, limit int) bool {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			if depth++; depth > limit {
				return true
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}
