package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/risk"
)

// arg is one argument after expansion: its literal value when known.
type arg struct {
	val  string
	lit  bool
	glob bool
	// globLead: the word starts with an unquoted pattern ("*.txt"), so it may expand to a file
	// named like an option ("-o…"). See globOption.
	globLead bool
	// attached: the value was attached to a short option ("-fvalue"). Some parsers (clap,
	// pflag, argparse) drop a leading "=" from it ("-f=value"), others keep it: both are paths.
	attached bool
	// input: the word is not on the line but comes at run time from xargs' input or find's
	// results (lit is false; val then holds the directory the names are under, "" for the
	// working directory); found: from find, whose results are paths under val (they never look
	// like options).
	input, found bool
	word         *syntax.Word // the word it came from, for source positions
}

func (a arg) is(s ...string) bool {
	if !a.lit {
		return false
	}
	for _, x := range s {
		if a.val == x {
			return true
		}
	}
	return false
}

// call is one simple command being classified. A wrapper (sudo, timeout, xargs) re-dispatches
// the same call on the command it runs, so the wrapped command is what the entry describes.
type call struct {
	w    *walker
	sc   *scope
	cx   ctx
	cmd  *Command
	name string // base name of the program
	args []arg  // the arguments after the program
	end  int    // source offset where the simple command ends
	hops int
}

func (w *walker) call(ce *syntax.CallExpr, st *syntax.Stmt, sc *scope, cx ctx) {
	cmd := w.newCommand(text(cx, st), cx)
	if len(ce.Args) == 0 {
		for _, as := range ce.Assigns {
			w.assign(as, sc, cx)
		}
	} else {
		// VAR=x cmd: inert only for variables on the allowlist (env.go).
		cmd.Substitution = w.prefixEnv(ce.Assigns, sc, cx)
	}
	args, subst := w.args(ce.Args, sc, cx)
	cmd.Substitution = cmd.Substitution || subst
	w.redirects(cmd, st.Redirs, sc, cx)
	if len(args) == 0 {
		w.takeHazards(cmd)
		if len(cmd.Writes) > 0 || len(cmd.Reads) > 0 || cmd.Opaque || cmd.Substitution && len(ce.Assigns) == 0 {
			if len(cmd.Writes) > 0 {
				cmd.Risk = cmd.Risk.With(risk.Mutating)
			} else {
				cmd.Risk = cmd.Risk.With(risk.ReadOnly)
			}
			w.cmds = append(w.cmds, *cmd)
		}
		return
	}
	w.nameArgs(args)
	injected := w.globOption(args)
	c := &call{w: w, sc: sc, cx: cx, cmd: cmd, end: int(ce.End().Offset())}
	slot := len(w.cmds)
	c.dispatch(args)
	if injected && c.name == args[0].val {
		if t := readOnlyTools[c.name]; t != nil && t.spec.readsFiles() {
			// A match named like "-f.env.go" is an option naming a file the program reads.
			c.unknownRead(".")
		}
	}
	w.takeHazards(cmd)
	if cmd.Dir == "" && c.sc.cwdKnown {
		cmd.Dir = c.sc.cwd
	}
	for i := range cmd.Config {
		cmd.Config[i].Dir = cmd.Dir
	}
	w.insert(slot, *cmd)
}

// insert places a command at its position in source order, before the nested commands it ran.
func (w *walker) insert(slot int, cmd Command) {
	w.cmds = append(w.cmds, Command{})
	copy(w.cmds[slot+1:], w.cmds[slot:])
	w.cmds[slot] = cmd
}

// args expands words into arguments.
func (w *walker) args(words []*syntax.Word, sc *scope, cx ctx) ([]arg, bool) {
	var out []arg
	subst := false
	for _, wd := range words {
		if w.stopped != "" {
			break // past a limit: the rest is not read
		}
		v := w.word(wd, sc, cx, false)
		subst = subst || v.subst
		if !v.lit {
			out = append(out, arg{word: wd})
			continue
		}
		for _, s := range v.vals {
			out = append(out, arg{val: s, lit: true, glob: v.glob, globLead: v.globLead, word: wd})
		}
	}
	return out, subst
}

func literalPrefix(args []arg) []string {
	var out []string
	for _, a := range args {
		if !a.lit {
			break
		}
		out = append(out, a.val)
	}
	return out
}

// systemBinDirs hold programs whose base name says what they are. A program named by any other
// path ("./cat", "bin/rm") is a local file: it runs whatever it contains.
var systemBinDirs = map[string]bool{
	"/bin": true, "/usr/bin": true, "/usr/local/bin": true, "/sbin": true, "/usr/sbin": true,
	"/usr/local/sbin": true, "/opt/homebrew/bin": true, "/run/current-system/sw/bin": true,
}

func (c *call) dispatch(args []arg) {
	prog := args[0]
	c.args = args[1:]
	c.cmd.Argv = literalPrefix(args)
	if !prog.lit {
		c.cmd.Program = ""
		c.opaque("the program is not literal")
		c.risk(risk.Exec)
		return
	}
	c.cmd.Program = prog.val
	c.name = path.Base(prog.val)
	if prog.glob {
		c.opaque("the program name is a glob")
	}
	if c.sc.funcs[prog.val] {
		c.opaque("calls the shell function " + prog.val + " (its body is analysed where it is defined)")
		c.risk(risk.Exec)
		return
	}
	if strings.Contains(prog.val, "/") && !systemBinDirs[path.Dir(prog.val)] {
		c.risk(risk.Exec)
		c.read(prog)
		return
	}
	if strings.Contains(prog.val, "/") && len(c.cmd.Argv) > 0 {
		// A system program named by its path: rules see its name ("/bin/rm" is "rm").
		c.cmd.Argv[0] = c.name
	}
	if h, ok := programs[c.name]; ok {
		h(c)
		return
	}
	c.risk(risk.Exec) // unknown programs run code
}

// rewrap re-dispatches on the command a wrapper runs.
func (c *call) rewrap(args []arg, via string) {
	c.hops++
	if c.hops > 16 || len(args) == 0 {
		if len(args) == 0 {
			return
		}
		c.opaque("too many nested wrappers")
		c.risk(risk.Exec)
		return
	}
	if c.cmd.Via == "" || c.cmd.Via == c.cx.via {
		c.cmd.Via = via
	} else {
		c.cmd.Via += " > " + via
	}
	if args[0].word != nil {
		if start := int(args[0].word.Pos().Offset()); start >= 0 && start <= c.end && c.end <= len(c.cx.src) {
			c.cmd.Text = c.cx.src[start:c.end]
		}
	}
	c.dispatch(args)
}

// spawn analyses a separate command run by this one (find -exec).
func (c *call) spawn(args []arg, via string) {
	if len(args) == 0 {
		return
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a.lit {
			b.WriteString(a.val)
		} else {
			b.WriteString("?")
		}
	}
	sub := &call{w: c.w, sc: c.sc, cx: c.cx, cmd: &Command{Text: b.String(), Via: via, Depth: c.cx.depth}, end: c.end}
	slot := len(c.w.cmds)
	sub.dispatch(args)
	c.w.insert(slot, *sub.cmd)
}

// config records configuration the program reads from its directory tree (see Config); its
// directory is the command's, set once the command is classified.
func (c *call) config(kind ConfigKind, up bool, names ...string) {
	for _, cf := range c.cmd.Config {
		if cf.Kind == kind && len(cf.Names) == len(names) && (len(names) == 0 || cf.Names[0] == names[0]) {
			return
		}
	}
	c.cmd.Config = append(c.cmd.Config, Config{Kind: kind, Names: names, Up: up})
}

func (c *call) risk(levels ...risk.Level) {
	for _, l := range levels {
		c.cmd.Risk = c.cmd.Risk.With(l)
	}
}

func (c *call) severity(s risk.Severity) {
	if s > c.cmd.Severity {
		c.cmd.Severity = s
	}
}

func (c *call) opaque(why string) {
	c.cmd.Opaque = true
	c.cmd.Why = append(c.cmd.Why, why)
}

func (c *call) note(why string) { c.cmd.Why = append(c.cmd.Why, why) }

// dashIsAFile are the programs that give "-" no special meaning: for them it names a file
// called "-" in the working directory (mv - x renames it, rm - removes it, cp - x reads it).
var dashIsAFile = map[string]bool{
	"mv": true, "cp": true, "rm": true, "ln": true, "link": true, "unlink": true, "mkdir": true,
	"rmdir": true, "chmod": true, "chown": true, "chgrp": true, "install": true, "shred": true,
	"truncate": true, "mkfifo": true, "mknod": true, "rename": true, "stat": true, "readlink": true,
	"realpath": true, "ls": true, "du": true, "file": true, "chattr": true, "lsattr": true,
}

// read and write record a path argument; "-" (stdin/stdout, but for the programs of
// dashIsAFile) and device sinks are not paths.
func (c *call) read(a arg)  { c.path(a, false) }
func (c *call) write(a arg) { c.path(a, true) }

func (c *call) path(a arg, write bool) {
	if isProcSubst(a) {
		return // <(cmd) is a pipe (/dev/fd/N); the command it runs is analysed as its own
	}
	if !a.lit && a.input {
		c.unknownPath(a, write)
		return
	}
	if !a.lit {
		c.opaque("a path argument is not literal")
		return
	}
	if a.val == "-" && !dashIsAFile[c.name] || a.val == "" || isDevSink(a.val) {
		return
	}
	addPath(c.cmd, c.sc, a.val, a.glob, write)
	if v, ok := strings.CutPrefix(a.val, "="); a.attached && ok && v != "" && v != "-" && !isDevSink(v) {
		addPath(c.cmd, c.sc, v, a.glob, write)
	}
}

// unknownPath records an operand that is only known at run time (see arg.input): a read by a
// program that only reads whatever it is given, or of find's results, is a read of the
// directory the names are looked up from (Path.Unknown); a write of find's results is a write of
// everything under its starting point; anything else is opaque.
func (c *call) unknownPath(a arg, write bool) {
	under := a.val
	if under == "" {
		under = "."
	}
	switch {
	case write && a.found:
		addPath(c.cmd, c.sc, strings.TrimSuffix(under, "/")+"/**", true, true)
	case !write && (a.found || anyOperandReaders[c.name]):
		c.unknownRead(under)
	default:
		c.opaque("a path argument is not literal")
	}
}

// unknownRead records that the command reads files under dir the line does not name.
func (c *call) unknownRead(dir string) {
	n := len(c.cmd.Reads)
	addPath(c.cmd, c.sc, dir, false, false)
	if len(c.cmd.Reads) > n {
		c.cmd.Reads[len(c.cmd.Reads)-1].Unknown = true
	}
}

func (c *call) readAll(args []arg) {
	for _, a := range args {
		c.read(a)
	}
}

func (c *call) writeAll(args []arg) {
	for _, a := range args {
		c.write(a)
	}
}

// cwd records a write to the working directory (an install, an extraction without -C).
func (c *call) cwd(write bool) {
	c.path(arg{val: ".", lit: true}, write)
}

func (c *call) net(hosts ...string) {
	c.cmd.Network = true
	c.risk(risk.Network)
	for _, h := range hosts {
		if h = strings.ToLower(strings.TrimSuffix(h, ".")); h != "" {
			c.cmd.Hosts = append(c.cmd.Hosts, h)
		}
	}
}

// code records that the command runs code it was handed. Shell code is analysed as a nested
// script; any other language is opaque.
func (c *call) code(src string, shell bool, via string) { c.codeIn(src, shell, false, via) }

// codeIn is code with the dialect: posix for a script a POSIX shell (sh, dash) runs.
func (c *call) codeIn(src string, shell, posix bool, via string) {
	c.cmd.ExecutesCode = true
	c.risk(risk.Exec)
	if !shell {
		c.opaque(via + " runs code the analysis does not read")
		return
	}
	if c.cx.depth+1 > c.w.maxDepth {
		c.opaque("nested scripts deeper than the analysis follows")
		return
	}
	if err := c.w.script(src, c.sc.clone(), c.cx.depth+1, via, posix); err != nil {
		c.opaque(via + " script does not parse: " + err.Error())
		c.risk(risk.Mutating, risk.Destructive, risk.Network)
		c.severity(risk.High)
	}
}

// stdinCode handles an interpreter that reads its program from standard input.
func (c *call) stdinCode(shell bool) { c.stdinCodeIn(shell, false) }

// stdinCodeIn is stdinCode with the dialect (posix: sh, dash).
func (c *call) stdinCodeIn(shell, posix bool) {
	switch c.cx.stdin {
	case stdinText:
		c.codeIn(c.cx.text, shell, posix, c.name+" reading a heredoc")
	case stdinPipe:
		c.cmd.ExecutesCode = true
		c.risk(risk.Exec)
		c.opaque(c.name + " runs code piped into it")
	case stdinFile:
		c.cmd.ExecutesCode = true
		c.risk(risk.Exec)
		c.opaque(c.name + " runs a script from a redirected file")
	default:
		c.cmd.ExecutesCode = true
		c.risk(risk.Exec)
		c.opaque(c.name + " without a script runs whatever reaches its input")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
