package shell

import (
	"io"
	"maps"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/risk"
)

// scope is what the shell knows at a point of the line: the working directory, the variables the
// line assigned (nil value: assigned something unknown), and the functions it defined.
type scope struct {
	cwd      string
	cwdKnown bool
	// cwdNamed: a cd on the line named a directory (not only ".."): it may be a symbolic link,
	// and bash's cd applies a later ".." to the name, not to the link's target.
	cwdNamed bool
	vars     map[string]*string
	funcs    map[string]bool
}

func newScope(dir string) *scope {
	return &scope{cwd: dir, cwdKnown: true, vars: map[string]*string{}, funcs: map[string]bool{}}
}

func (s *scope) clone() *scope {
	return &scope{cwd: s.cwd, cwdKnown: s.cwdKnown, cwdNamed: s.cwdNamed, vars: maps.Clone(s.vars), funcs: maps.Clone(s.funcs)}
}

// merge folds a branch that may or may not have run (an if, a loop body) back into s: whatever
// the branch changed becomes unknown.
func (s *scope) merge(branch *scope) {
	if branch.cwd != s.cwd || branch.cwdKnown != s.cwdKnown {
		s.cwdKnown = false
	}
	s.cwdNamed = s.cwdNamed || branch.cwdNamed
	for name, v := range branch.vars {
		old, had := s.vars[name]
		if !had || old == nil || v == nil || *old != *v {
			s.vars[name] = nil
		}
	}
	for name := range branch.funcs {
		s.funcs[name] = true
	}
}

func (s *scope) set(name string, val string, known bool) {
	if known {
		s.vars[name] = &val
	} else {
		s.vars[name] = nil
	}
}

// join joins a path to the working directory, without cleaning (the gate applies ".." after
// resolving links).
func (s *scope) join(p string) string {
	if strings.HasPrefix(p, "/") || s.cwd == "" {
		return p
	}
	if s.cwd == "/" {
		return "/" + p
	}
	return s.cwd + "/" + p
}

type stdinKind uint8

const (
	stdinNone stdinKind = iota
	stdinPipe
	stdinText // a heredoc or herestring with literal content
	stdinOpaque
	stdinFile
)

// ctx is where a statement sits: the source it comes from, how deep, and what feeds its stdin.
type ctx struct {
	src   string
	depth int
	via   string
	// posix: the script is run by a POSIX shell (sh, dash): it was parsed as POSIX, and words
	// are not brace-expanded.
	posix bool
	stdin stdinKind
	text  string // stdin content for stdinText
}

type walker struct {
	opts     *Options
	maxDepth int
	cmds     []Command

	// pending holds the hazards of the statement being analysed (see hazard).
	pending []string

	// What the line has cost so far (see the limits in shell.go). Past a limit the rest of the
	// line is not analysed and the analysis ends with an opaque command (stopped says why).
	stmtCount, words int
	braceWords       uint64
	braceBytes       uint64
	nestedBytes      int
	stopped          string
}

// spend counts one unit against a limit; past it the analysis stops.
func (w *walker) spend(n *int, limit int, why string) bool {
	if w.stopped != "" {
		return false
	}
	*n++
	if *n > limit {
		w.stop(why)
		return false
	}
	return true
}

// stop ends the analysis: what follows is not read, and the line is opaque.
func (w *walker) stop(why string) {
	if w.stopped == "" {
		w.stopped = why
	}
}

// script parses src and walks it.
func (w *walker) script(src string, sc *scope, depth int, via string, posix bool) error {
	if w.stopped != "" {
		return nil
	}
	if depth > 0 {
		w.nestedBytes += len(src)
		if w.nestedBytes > maxNestedBytes {
			w.stop("nested scripts larger than the analysis reads")
			return nil
		}
		if why := tooDeep(src); why != "" {
			w.stop(why)
			return nil
		}
	}
	// Statements are parsed one at a time and walked as they come, so a line past the
	// statement budget is not parsed to its end.
	// Once the analysis stops, the reader reports the end of the input, so the parser ends
	// within its read buffer. (The loop never breaks: StmtsSeq yields a parse error again after
	// its consumer stops, which a range-over-func loop turns into a panic.)
	pool := &parsers
	if posix {
		pool = &posixParsers
	}
	p := pool.Get().(*syntax.Parser)
	defer pool.Put(p)
	cx := ctx{src: src, depth: depth, via: via, posix: posix}
	var perr error
	for st, err := range p.StmtsSeq(&stopReader{r: strings.NewReader(src), w: w}) {
		switch {
		case w.stopped != "":
		case err != nil:
			if perr == nil {
				perr = err
			}
		case perr == nil:
			w.stmt(st, sc, cx)
		}
	}
	if w.stopped != "" {
		return nil
	}
	return perr
}

// stopReader reads r until the walker stops.
type stopReader struct {
	r *strings.Reader
	w *walker
}

func (s *stopReader) Read(b []byte) (int, error) {
	if s.w.stopped != "" {
		return 0, io.EOF
	}
	return s.r.Read(b)
}

func (w *walker) stmts(list []*syntax.Stmt, sc *scope, cx ctx) {
	for _, st := range list {
		if w.stopped != "" {
			return
		}
		w.stmt(st, sc, cx)
	}
}

func text(cx ctx, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if st, ok := n.(*syntax.Stmt); ok && st.Cmd != nil {
		// A statement's end includes its ";" or "&": stop at the command and its redirections.
		end = int(st.Cmd.End().Offset())
		for _, r := range st.Redirs {
			if e := int(r.End().Offset()); e > end {
				end = e
			}
		}
	}
	if start < 0 || end > len(cx.src) || start > end {
		return ""
	}
	return cx.src[start:end]
}

func (w *walker) stmt(st *syntax.Stmt, sc *scope, cx ctx) {
	if !w.spend(&w.stmtCount, maxStatements, "more commands than the analysis reads") {
		return
	}
	// Hazards found in this statement's own words belong to it; a nested statement (in a
	// substitution) keeps its own.
	outer := w.pending
	w.pending = nil
	w.stmtBody(st, sc, cx)
	if len(w.pending) > 0 {
		cmd := w.newCommand(text(cx, st), cx)
		w.takeHazards(cmd)
		w.cmds = append(w.cmds, *cmd)
	}
	w.pending = outer
}

func (w *walker) stmtBody(st *syntax.Stmt, sc *scope, cx ctx) {
	// Heredocs and herestrings feed the command's stdin; their expansions run first.
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			switch {
			case r.Hdoc == nil:
				cx.stdin, cx.text = stdinText, ""
			case quotedWord(r.Word):
				// <<'EOF': the body is taken as it is, nothing expands.
				var b strings.Builder
				for _, p := range r.Hdoc.Parts {
					if l, ok := p.(*syntax.Lit); ok {
						b.WriteString(l.Value)
					}
				}
				cx.stdin, cx.text = stdinText, b.String()
			default:
				v := w.wordMode(r.Hdoc, sc, cx, modeHeredoc)
				if v.lit {
					cx.stdin, cx.text = stdinText, v.join()
				} else {
					cx.stdin = stdinOpaque
				}
			}
		case syntax.WordHdoc:
			v := w.word(r.Word, sc, cx, false)
			if v.lit {
				cx.stdin, cx.text = stdinText, v.join()+"\n"
			} else {
				cx.stdin = stdinOpaque
			}
		case syntax.RdrIn, syntax.RdrInOut:
			cx.stdin = stdinFile
		}
	}
	switch c := st.Cmd.(type) {
	case nil:
		// Only redirections ("> file" truncates it).
		if len(st.Redirs) > 0 {
			cmd := w.newCommand(text(cx, st), cx)
			w.redirects(cmd, st.Redirs, sc, cx)
			if len(cmd.Writes) > 0 || cmd.Redirects {
				cmd.Risk = cmd.Risk.With(risk.Mutating)
			} else {
				cmd.Risk = cmd.Risk.With(risk.ReadOnly)
			}
			w.cmds = append(w.cmds, *cmd)
		}
	case *syntax.CallExpr:
		w.call(c, st, sc, cx)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt:
			w.stmt(c.X, sc, cx)
			// The right side may not run: what it changes becomes uncertain.
			branch := sc.clone()
			w.stmt(c.Y, branch, cx)
			sc.merge(branch)
		default: // | and |&: each side runs in a subshell; the right one reads the left one's output
			left := cx
			w.stmt(c.X, sc.clone(), left)
			right := cx
			right.stdin = stdinPipe
			w.stmt(c.Y, sc.clone(), right)
		}
		w.compoundRedirects(st, sc, cx)
	case *syntax.Subshell:
		w.stmts(c.Stmts, sc.clone(), cx)
		w.compoundRedirects(st, sc, cx)
	case *syntax.Block:
		w.stmts(c.Stmts, sc, cx)
		w.compoundRedirects(st, sc, cx)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			branch := sc.clone()
			w.stmts(ic.Cond, branch, cx)
			w.stmts(ic.Then, branch, cx)
			sc.merge(branch)
		}
		w.compoundRedirects(st, sc, cx)
	case *syntax.WhileClause:
		branch := sc.clone()
		w.stmts(c.Cond, branch, cx)
		w.stmts(c.Do, branch, cx)
		sc.merge(branch)
		w.compoundRedirects(st, sc, cx)
	case *syntax.ForClause:
		wi, ok := c.Loop.(*syntax.WordIter)
		if !ok {
			w.substitutionsIn(c.Loop, sc, cx)
			branch := sc.clone()
			w.stmts(c.Do, branch, cx)
			sc.merge(branch)
			w.compoundRedirects(st, sc, cx)
			break
		}
		// A loop over words the line spells out (no glob: its matches are not known) runs its
		// body once per word with the variable set to it; the iterations' other changes
		// (and break, continue) leave the state after each uncertain.
		var vals []string
		known := true
		for _, item := range wi.Items {
			v := w.word(item, sc, cx, false)
			if !v.lit || v.glob {
				known = false
				continue
			}
			vals = append(vals, v.vals...)
		}
		if runEnv(wi.Name.Value) {
			w.hazard("the loop assigns " + wi.Name.Value + ", which changes what later commands run")
		}
		if !known || len(vals) == 0 || len(vals) > maxLoopWords || !wi.InPos.IsValid() && len(wi.Items) == 0 {
			branch := sc.clone()
			branch.set(wi.Name.Value, "", false)
			w.stmts(c.Do, branch, cx)
			sc.merge(branch)
		} else {
			for _, v := range vals {
				branch := sc.clone()
				branch.set(wi.Name.Value, v, true)
				w.stmts(c.Do, branch, cx)
				sc.merge(branch)
			}
		}
		w.compoundRedirects(st, sc, cx)
	case *syntax.CaseClause:
		w.word(c.Word, sc, cx, false)
		for _, item := range c.Items {
			// Patterns are expanded (substitutions run) until one matches.
			for _, pat := range item.Patterns {
				w.walkNode(pat, sc, cx)
			}
			branch := sc.clone()
			w.stmts(item.Stmts, branch, cx)
			sc.merge(branch)
		}
		w.compoundRedirects(st, sc, cx)
	case *syntax.FuncDecl:
		// The body counts as if it ran: it may be called from anywhere, under any name.
		names := c.Names
		if c.Name != nil {
			names = append([]*syntax.Lit{c.Name}, names...)
		}
		label := "function"
		for _, n := range names {
			if n != nil {
				sc.funcs[n.Value] = true
				label = "function " + n.Value
			}
		}
		if c.Body != nil {
			fcx := cx
			fcx.via = label
			w.stmt(c.Body, sc.clone(), fcx)
		}
	case *syntax.DeclClause:
		w.decl(c, sc, cx)
		w.compoundRedirects(st, sc, cx)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt, sc, cx)
		}
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, sc.clone(), cx)
	default:
		// Arithmetic, [[ tests ]], let: nothing runs but the substitutions they contain.
		w.substitutionsIn(c, sc, cx)
		w.compoundRedirects(st, sc, cx)
	}
}

// hasDotDot reports whether a path has a ".." component.
func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// allDotDotFirst reports whether every ".." component of p comes before any other name.
func allDotDotFirst(p string) bool {
	named := false
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if named {
				return false
			}
		default:
			named = true
		}
	}
	return true
}

// onlyDotDot reports whether p is made of ".." (and "." and empty) components only.
func onlyDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c != ".." && c != "." && c != "" {
			return false
		}
	}
	return true
}

// quotedWord reports whether a heredoc delimiter is quoted in any way (which stops expansion
// in the body).
func quotedWord(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// compoundRedirects records the redirections of a compound command ({ ...; } > file) as a
// command of their own.
func (w *walker) compoundRedirects(st *syntax.Stmt, sc *scope, cx ctx) {
	if len(st.Redirs) == 0 {
		return
	}
	cmd := w.newCommand(text(cx, st), cx)
	w.redirects(cmd, st.Redirs, sc, cx)
	if len(cmd.Writes) == 0 && len(cmd.Reads) == 0 && !cmd.Opaque {
		return
	}
	if len(cmd.Writes) > 0 || cmd.Redirects {
		cmd.Risk = cmd.Risk.With(risk.Mutating)
	} else {
		cmd.Risk = cmd.Risk.With(risk.ReadOnly)
	}
	w.cmds = append(w.cmds, *cmd)
}

// substitutionsIn walks every command substitution inside a node that runs nothing else, and
// checks its expansions for second evaluation (see hazard).
func (w *walker) substitutionsIn(n syntax.Node, sc *scope, cx ctx) {
	w.walkNode(n, sc, cx)
}

func (w *walker) assign(as *syntax.Assign, sc *scope, cx ctx) {
	if as.Name == nil {
		return
	}
	if !as.Naked && runEnv(as.Name.Value) {
		w.hazard("assigns " + as.Name.Value + ", which changes what later commands run")
	}
	switch {
	case as.Array != nil || as.Index != nil || as.Append:
		w.substitutionsIn(as, sc, cx)
		sc.set(as.Name.Value, "", false)
	case as.Naked:
		// "export V" or "local V": the value does not change.
	case as.Value == nil:
		sc.set(as.Name.Value, "", true)
	default:
		v := w.word(as.Value, sc, cx, true)
		sc.set(as.Name.Value, v.join(), v.lit && len(v.vals) == 1)
	}
}

func (w *walker) newCommand(text string, cx ctx) *Command {
	return &Command{Text: text, Via: cx.via, Depth: cx.depth}
}

// isDevSink reports paths that are not files: writing to them is not a write. A descriptor path
// is one only when a number follows: "/proc/self/fd/../cwd/x" is the command's working
// directory, which the gate must see (issue 23).
func isDevSink(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin", "/dev/zero":
		return true
	}
	for _, dir := range [...]string{"/dev/fd/", "/proc/self/fd/"} {
		if n, ok := strings.CutPrefix(p, dir); ok {
			return n != "" && strings.Trim(n, "0123456789") == ""
		}
	}
	return false
}

func (w *walker) redirects(cmd *Command, redirs []*syntax.Redirect, sc *scope, cx ctx) {
	for _, r := range redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			w.redirectPath(cmd, r.Word, sc, cx, true)
		case syntax.RdrIn:
			w.redirectPath(cmd, r.Word, sc, cx, false)
		case syntax.RdrInOut:
			w.redirectPath(cmd, r.Word, sc, cx, false)
			w.redirectPath(cmd, r.Word, sc, cx, true)
		case syntax.DplIn, syntax.DplOut:
			v := w.word(r.Word, sc, cx, false)
			if v.lit && len(v.vals) == 1 && isFD(v.vals[0]) {
				continue
			}
			if r.Op == syntax.DplOut {
				w.redirectPath(cmd, r.Word, sc, cx, true) // bash: >&file writes file
			} else {
				cmd.Opaque = true
				cmd.Why = append(cmd.Why, "duplicates a descriptor that is not a number")
			}
		}
	}
}

func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // ">&-" closes
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (w *walker) redirectPath(cmd *Command, word *syntax.Word, sc *scope, cx ctx, write bool) {
	v := w.word(word, sc, cx, false)
	if v.subst {
		cmd.Substitution = true
	}
	if !v.lit || len(v.vals) != 1 {
		cmd.Opaque = true
		cmd.Why = append(cmd.Why, "a redirection target is not literal")
		if write {
			cmd.Redirects = true
			cmd.Risk = cmd.Risk.With(risk.Mutating)
		}
		return
	}
	p := v.vals[0]
	if isDevSink(p) {
		return
	}
	addPath(cmd, sc, p, v.glob, write)
	if write {
		cmd.Redirects = true
		cmd.Risk = cmd.Risk.With(risk.Mutating)
	}
}

// addPath records a literal path the command reads or writes.
func addPath(cmd *Command, sc *scope, p string, glob, write bool) {
	if !strings.HasPrefix(p, "/") && !sc.cwdKnown {
		cmd.Opaque = true
		cmd.Why = append(cmd.Why, "relative path "+p+" after a change to an unknown directory")
		return
	}
	pp := Path{Path: sc.join(p), Raw: p, Glob: glob}
	if glob {
		cmd.Why = append(cmd.Why, "glob "+p+" expands to files the line does not name")
	}
	if write {
		cmd.Writes = append(cmd.Writes, pp)
	} else {
		cmd.Reads = append(cmd.Reads, pp)
	}
}

// cd applies a literal cd (or pushd) to the scope. bash's cd is logical: it removes "dir/.."
// from the path as written, and falls back to the path as the kernel resolves it when that does
// not exist, so a ".." after a directory the line named (which may be a symbolic link) leaves
// the directory unknown. A ".." from the starting directory (Options.Dir, taken to be free of
// symbolic links) is its parent either way.
func cd(sc *scope, target string, known bool, home string) {
	if known && hasDotDot(target) {
		if strings.HasPrefix(target, "/") || !allDotDotFirst(target) || sc.cwdNamed || !sc.cwdKnown || sc.cwd == "" {
			sc.cwdKnown = false
			return
		}
		sc.cwd = path.Clean(sc.join(target))
		sc.cwdNamed = !onlyDotDot(target) // "../x" names x
		return
	}
	switch {
	case !known:
		sc.cwdKnown = false
	case target == "" || target == "~":
		if home == "" {
			sc.cwdKnown = false
			return
		}
		sc.cwd = home
		sc.cwdNamed = true
	case target == "-":
		sc.cwdKnown = false
	case target == ".":
	case strings.HasPrefix(target, "/"):
		sc.cwd = target
		sc.cwdNamed = true
	default:
		if sc.cwd == "" {
			sc.cwd = target
		} else {
			sc.cwd = sc.join(target)
		}
		sc.cwdNamed = true
	}
}
