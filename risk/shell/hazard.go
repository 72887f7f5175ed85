package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/risk"
)

// Expansions bash evaluates a second time.
//
// Some expansions take a value and evaluate it again as code: prompt expansion (${v@P}) runs
// the command substitutions in v; arithmetic evaluates every variable it names as another
// arithmetic expression, and an array subscript in that expression ("a[$(cmd)]") is expanded
// with command substitution; indirection (${!x}) expands whatever name x holds, subscript
// included. The analysis does not follow values it does not know, so any such expansion whose
// inputs are not all literal numbers (or variables the line set to literal numbers) is a hazard:
// the command that contains it is opaque and may run anything.

// hazard records that the statement being analysed holds something the analysis cannot see
// through. The command the statement becomes (or a command made for it) is opaque.
func (w *walker) hazard(why string) {
	for _, p := range w.pending {
		if p == why {
			return
		}
	}
	w.pending = append(w.pending, why)
}

// takeHazards moves the pending hazards onto cmd.
func (w *walker) takeHazards(cmd *Command) {
	if len(w.pending) == 0 {
		return
	}
	cmd.Opaque = true
	cmd.Why = append(cmd.Why, w.pending...)
	cmd.Risk = cmd.Risk.With(risk.Exec)
	w.pending = nil
}

// walkNode walks the command substitutions inside n (they run) and checks every expansion in
// it for second evaluation. It reports whether n holds a substitution.
func (w *walker) walkNode(n syntax.Node, sc *scope, cx ctx) bool {
	if n == nil {
		return false
	}
	subst := false
	nodes := 0
	syntax.Walk(n, func(node syntax.Node) bool {
		if node == nil {
			return true
		}
		nodes++
		if nodes > maxWordNodes {
			if nodes == maxWordNodes+1 {
				w.hazard("an expression larger than the analysis reads")
			}
			return false
		}
		switch s := node.(type) {
		case *syntax.CmdSubst:
			subst = true
			w.stmts(s.Stmts, sc.clone(), cx)
			return false
		case *syntax.ProcSubst:
			subst = true
			w.stmts(s.Stmts, sc.clone(), cx)
			return false
		case *syntax.ParamExp:
			w.paramHazard(s, sc)
		case *syntax.ArithmExp:
			w.arith(s.X, sc, "arithmetic expansion")
		case *syntax.ArithmCmd:
			w.arith(s.X, sc, "(( ))")
		case *syntax.LetClause:
			for _, x := range s.Exprs {
				w.arith(x, sc, "let")
			}
		case *syntax.CStyleLoop:
			w.arith(s.Init, sc, "for (( ))")
			w.arith(s.Cond, sc, "for (( ))")
			w.arith(s.Post, sc, "for (( ))")
		case *syntax.BinaryTest:
			switch s.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, x := range []syntax.TestExpr{s.X, s.Y} {
					if wd, ok := x.(*syntax.Word); ok {
						w.arith(wd, sc, "[[ "+s.Op.String()+" ]]")
					} else {
						w.hazard("[[ " + s.Op.String() + " ]] evaluates its operands as arithmetic")
					}
				}
			}
		case *syntax.UnaryTest:
			if s.Op == syntax.TsVarSet || s.Op == syntax.TsRefVar {
				if wd, ok := s.X.(*syntax.Word); !ok || !safeVarName(wd.Lit()) {
					w.hazard("[[ " + s.Op.String() + " ]] of a name with a subscript evaluates it as arithmetic")
				}
			}
		case *syntax.Assign:
			if s.Index != nil {
				w.arith(s.Index, sc, "an array subscript")
			}
		case *syntax.ArrayElem:
			if s.Index != nil {
				w.arith(s.Index, sc, "an array subscript")
			}
		case *syntax.DblQuoted:
			if s.Dollar {
				w.hazard(`$"..." is replaced by a translation that is expanded again`)
			}
		}
		return true
	})
	return subst
}

// paramHazard checks a parameter expansion for operators that evaluate a value again.
func (w *walker) paramHazard(p *syntax.ParamExp, sc *scope) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	switch {
	case p.Excl && p.Names == 0:
		w.hazard("${!" + name + "} expands the variable whose name " + name + " holds")
	case p.Names != 0:
		w.hazard("${!" + name + p.Names.String() + "} lists variables the analysis does not know")
	case p.NestedParam != nil || p.Flags != nil || len(p.Modifiers) > 0:
		w.hazard("a parameter expansion the analysis does not evaluate")
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && runEnv(name) {
		w.hazard("${" + name + ":=...} assigns " + name + ", which changes what later commands run")
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps {
		op := p.Exp.Word.Lit()
		w.hazard("${" + name + "@" + op + "} transforms the value in a way the analysis does not evaluate")
	}
	if p.Index != nil {
		if wd, ok := p.Index.(*syntax.Word); !ok || (wd.Lit() != "@" && wd.Lit() != "*") {
			w.arith(p.Index, sc, "an array subscript")
		}
	}
	if p.Slice != nil {
		w.arith(p.Slice.Offset, sc, "a substring offset")
		w.arith(p.Slice.Length, sc, "a substring length")
	}
}

// arith records a hazard unless every operand of x is a literal number or a variable the line
// set to one.
func (w *walker) arith(x syntax.ArithmExpr, sc *scope, where string) {
	if x == nil {
		return
	}
	if !arithSafe(x, sc) {
		w.hazard(where + " evaluates a value the analysis does not know as arithmetic, which can run commands")
	}
}

func arithSafe(x syntax.ArithmExpr, sc *scope) bool {
	stack := []syntax.ArithmExpr{x}
	for n := 0; len(stack) > 0; n++ {
		if n > maxWordNodes {
			return false
		}
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := x.(type) {
		case nil:
		case *syntax.BinaryArithm:
			if x.Op == syntax.Assgn {
				// "x = expr" does not evaluate x's old value (assigning IFS or PATH is another
				// matter).
				if wd, ok := x.X.(*syntax.Word); ok && syntax.ValidName(wd.Lit()) && !runEnv(wd.Lit()) {
					stack = append(stack, x.Y)
					continue
				}
			}
			stack = append(stack, x.X, x.Y)
		case *syntax.UnaryArithm:
			stack = append(stack, x.X)
		case *syntax.ParenArithm:
			stack = append(stack, x.X)
		case *syntax.Word:
			if !arithLeafSafe(x, sc) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// arithLeafSafe: a literal number, a numeric special parameter, or a variable the line set to a
// literal integer.
func arithLeafSafe(wd *syntax.Word, sc *scope) bool {
	if len(wd.Parts) != 1 {
		return false
	}
	part := wd.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && !dq.Dollar && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	switch p := part.(type) {
	case *syntax.Lit:
		v := p.Value
		switch {
		case v == "":
			return false
		case v[0] >= '0' && v[0] <= '9':
			// A number (bash rejects a malformed one with an error; it names no variable).
			for i := 0; i < len(v); i++ {
				c := v[i]
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '@' || c == '_') {
					return false
				}
			}
			return true
		case syntax.ValidName(v):
			return knownInt(sc, v)
		}
	case *syntax.ParamExp:
		if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil ||
			p.Names != 0 || p.Exp != nil || p.NestedParam != nil {
			return false
		}
		switch p.Param.Value {
		case "#", "?", "$", "!":
			return true
		}
		return knownInt(sc, p.Param.Value)
	}
	return false
}

func knownInt(sc *scope, name string) bool {
	v, ok := sc.vars[name]
	if !ok || v == nil {
		return false
	}
	s := strings.TrimPrefix(strings.TrimPrefix(*v, "-"), "+")
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// safeVarName: a variable name, or a name with a literal numeric subscript. Builtins that take
// a variable name (unset, read, printf -v, test -v, declare) evaluate any other subscript as
// arithmetic.
func safeVarName(s string) bool {
	name, sub, hasSub := strings.Cut(s, "[")
	if !syntax.ValidName(name) {
		return false
	}
	if !hasSub {
		return true
	}
	sub, ok := strings.CutSuffix(sub, "]")
	if !ok || sub == "" {
		return false
	}
	if sub == "@" || sub == "*" {
		return true
	}
	for i := 0; i < len(sub); i++ {
		if sub[i] < '0' || sub[i] > '9' {
			return false
		}
	}
	return true
}

// nameBuiltins are builtins whose arguments name variables; bash evaluates a subscript in such
// a name as arithmetic ("unset 'a[$(cmd)]'" runs cmd). The value says which arguments are
// names: "all" (every operand), or the option that introduces one.
var nameBuiltins = map[string]string{
	"unset": "all", "read": "all", "mapfile": "all", "readarray": "all", "getopts": "all", "let": "all",
	"declare": "all", "typeset": "all", "local": "all", "export": "all", "readonly": "all",
	"printf": "-v", "test": "-v", "[": "-v", "wait": "-p",
}

// nameArgs records a hazard for a variable-name argument the analysis cannot vouch for.
func (w *walker) nameArgs(args []arg) {
	i := 0
	for i < len(args) && args[i].is("command", "builtin") {
		i++
	}
	if i >= len(args) || !args[i].lit {
		return
	}
	prog := args[i].val
	which, ok := nameBuiltins[prog]
	if !ok {
		return
	}
	rest := args[i+1:]
	for j, a := range rest {
		if which != "all" {
			if j == 0 || !rest[j-1].is(which, "-R") {
				continue
			}
		}
		if !a.lit {
			w.hazard(prog + " of a name the line does not spell out")
			continue
		}
		if strings.HasPrefix(a.val, "-") {
			continue
		}
		name, _, _ := strings.Cut(a.val, "=")
		if prog == "let" {
			name = a.val
		}
		if base, _, _ := strings.Cut(name, "["); prog != "unset" && prog != "test" && prog != "[" && runEnv(base) {
			w.hazard(prog + " assigns " + base + ", which changes what later commands run")
		}
		if strings.Contains(name, "[") && !safeVarName(name) || prog == "let" && !letSafe(a.val) {
			w.hazard(prog + " " + a.val + " evaluates a subscript or expression as arithmetic, which can run commands")
		}
	}
}

// letSafe: a let expression made of numbers, names set nowhere (they evaluate to 0 or to their
// literal value) is still unknown; only digits and operators are safe.
func letSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || strings.IndexByte("+-*/%()<>=!&|^~?: ", c) >= 0) {
			return false
		}
	}
	return true
}

// anyOperandReaders only read, whatever words they are given: every option of the real program
// (not only of its table) only changes what it prints or names a file it reads, and every
// operand is a file it reads (or a name or number). Fed words the line does not spell out (from
// xargs' input, a glob that may expand to "-f.env"), they read files the line does not name:
// unknown reads of the working directory (Path.Unknown), not an opaque command. A glob in option
// position for any other program is opaque: "sort *.txt" with a file named "-ofoo" writes foo.
var anyOperandReaders = map[string]bool{
	"ls": true, "dir": true, "vdir": true, "du": true, "df": true, "stat": true, "cat": true, "tac": true, "head": true,
	"tail": true, "wc": true, "nl": true, "cut": true, "paste": true, "fold": true, "expand": true, "unexpand": true,
	"rev": true, "od": true, "hexdump": true, "hd": true, "strings": true, "grep": true, "egrep": true, "fgrep": true,
	"cmp": true, "comm": true, "join": true, "column": true, "basename": true, "dirname": true, "realpath": true,
	"readlink": true, "echo": true, "md5sum": true, "sha1sum": true, "sha224sum": true, "sha256sum": true,
	"sha384sum": true, "sha512sum": true, "b2sum": true, "cksum": true, "sum": true,
}

// globOption records a hazard for a glob that may expand to an option, and reports whether the
// program is one of anyOperandReaders fed such a glob (the caller records the unknown reads).
func (w *walker) globOption(args []arg) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args[1:] {
		if a.is("--") {
			return false
		}
		if a.lit && a.globLead {
			if args[0].lit && anyOperandReaders[args[0].val] {
				return true
			}
			w.hazard("glob " + a.val + " may expand to a file name that the program reads as an option")
			return false
		}
	}
	return false
}
