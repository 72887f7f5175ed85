// Package shellanalysis reads shell scripts for the argument checks of
// package sandbox with the full shell analysis of package risk/shell:
// [Read] is a [script.Reader]. Importing this package is the opt-in to
// that analysis (its option tables for some 180 programs); package
// sandbox alone links none of it and reads scripts with
// [script.Builtin], which refuses much more.
//
//	local, err := sandbox.NewLocal(sandbox.LocalConfig{Root: ws, Scripts: shellanalysis.Read})
//
// Read reports a command as unreadable when the analysis marks it opaque
// (a computed path, code handed to another interpreter, a script read
// from a pipe, a program it cannot see through), except a call of a
// function the script defines, whose body the analysis reads where it is
// defined; and when a word or an assignment value it could not spell out
// may name a path (unless the program never opens its arguments, such
// as echo and test). The remote backends (package sandbox/remote) read
// "sh -c" scripts with it.
package shellanalysis

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/risk/shell"
	"github.com/reins-go/reins/sandbox/internal/shword"
	"github.com/reins-go/reins/sandbox/script"
)

var _ script.Reader = Read

// Read reads text with [shell.Analyze], started in dir, with ~ and $HOME
// standing for home. It implements [script.Reader].
func Read(text, dir, home string) ([]script.Command, error) {
	a, err := shell.Analyze(text, &shell.Options{Dir: dir, Home: home})
	if errors.Is(err, shell.ErrEmpty) {
		return nil, nil // nothing runs
	}
	if err != nil {
		return nil, fmt.Errorf("the shell script does not parse: %w", err)
	}
	funcs := map[string]bool{}
	for _, c := range a.Commands {
		if name, ok := strings.CutPrefix(c.Via, "function "); ok {
			funcs[name] = true
		}
	}
	out := make([]script.Command, 0, len(a.Commands))
	for i := range a.Commands {
		c := &a.Commands[i]
		sc := script.Command{Text: c.Text, Argv: c.Argv}
		if c.Opaque && !(len(c.Why) == 1 && funcs[c.Program]) {
			// A call of a function defined in the script is opaque only
			// because its body is analysed where it is defined.
			sc.Unreadable = "the shell analysis cannot see what it does (" + strings.Join(c.Why, "; ") + "), so a path it uses could hide there"
		}
		if why := hiddenWord(c); why != "" && sc.Unreadable == "" {
			sc.Unreadable = why
		}
		sc.Words = assignedWords(c)
		for _, l := range [][]shell.Path{c.Reads, c.Writes} {
			for _, p := range l {
				sc.Paths = append(sc.Paths, script.Path{Path: p.Path, Raw: p.Raw, Glob: p.Glob})
			}
		}
		out = append(out, sc)
	}
	return out, nil
}

// wordSafe are the programs that never open their arguments: a word the
// analysis does not spell out ("echo $HOME") does not hide a path.
var wordSafe = map[string]bool{
	"echo": true, "printf": true, "test": true, "[": true, "true": true, "false": true, ":": true,
	"exit": true, "return": true, "shift": true, "sleep": true, "wait": true, "kill": true,
	"expr": true, "seq": true, "let": true,
}

// assignedWords returns the literal values of a command's environment
// assignments.
func assignedWords(c *shell.Command) []string {
	st := shword.ParseStmt(c.Text)
	if st == nil {
		return nil
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return nil
	}
	var words []string
	for _, as := range call.Assigns {
		if as.Value == nil {
			continue
		}
		if v, ok := shword.Literal(as.Value, ""); ok {
			words = append(words, v)
		}
	}
	return words
}

// hiddenWord explains why a command has a word (argument or assignment
// value) that the analysis could not spell out and that may name a
// path, or returns "".
func hiddenWord(c *shell.Command) string {
	if wordSafe[c.Program] {
		return ""
	}
	st := shword.ParseStmt(c.Text)
	if st == nil {
		if strings.ContainsAny(c.Text, "$`") {
			return "a word of the command is computed at run time, so it could name any path"
		}
		return ""
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return ""
	}
	for _, as := range call.Assigns {
		if as.Value != nil {
			if _, lit := shword.Literal(as.Value, ""); !lit {
				return fmt.Sprintf("the value of %s is computed at run time, so it could name any path", as.Name.Value)
			}
		}
	}
	n := 0
	for _, w := range call.Args {
		if !syntax.SplitBraces(w) {
			n++
			continue
		}
		// Count the expansion lazily, and stop once it outgrows the argument vector.
		for _, err := range expand.BracesSeq(nil, w) {
			if err != nil {
				return "a brace expansion is too large to check"
			}
			if n++; n > len(c.Argv) {
				break
			}
		}
	}
	if len(c.Argv) < n {
		return fmt.Sprintf("argument %d is computed at run time, so it could name any path", len(c.Argv))
	}
	return ""
}
