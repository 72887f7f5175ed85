package shell

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/risk"
)

// Options describe the environment a command line will run in. A nil *Options means an unknown
// working directory and home directory: relative paths are reported relative to where the line
// starts, and "~" and $HOME are opaque.
type Options struct {
	// Dir is the directory the line starts in; relative paths are joined to it (and to every
	// literal cd the line makes). "" leaves them relative.
	Dir string
	// Home is what "~" and $HOME expand to; "" makes them opaque.
	Home string
	// TempDir is what mktemp writes under; "" means "/tmp".
	TempDir string
	// Registries maps a package ecosystem ("npm", "pypi", "go", "cargo", "rubygems", "composer",
	// "maven", "apt", "brew", ...) to the hosts its installs reach. reins ships none; an install
	// whose ecosystem has no entry reports network use with an unknown host.
	Registries map[string][]string
	// MaxDepth bounds nested scripts (bash -c, eval, heredocs into a shell); deeper ones are
	// opaque. Zero means 8.
	MaxDepth int
}

// Path is a path a command reads or writes, as written and as joined to the working directory.
type Path struct {
	// Path is Raw joined to the working directory the command runs in (not cleaned: ".." must be
	// applied after symbolic links, which the gate resolves).
	Path string
	// Raw is the path as the command line spells it after quote removal.
	Raw string
	// Glob reports unquoted pattern characters (*, ?, [): the shell expands the path to whatever
	// matches.
	Glob bool
	// Unknown reports that the command reads files the line does not name, found at run time:
	// the names xargs reads from its input, the files find -exec is handed, the file a glob's
	// match may name as an option's value. Path is the directory they are looked up from (the
	// working directory, find's starting point). The names may lead anywhere the program can
	// reach; only the sandbox holds the command to what it may read. Only programs whose every
	// option and operand only reads get such a path; any other program with unknown operands is
	// opaque.
	Unknown bool
}

// Command is one simple command of a line, with its effects.
type Command struct {
	// Text is the command's source text (for command_pattern rules).
	Text string
	// Program is argv[0] when it is literal, else "".
	Program string
	// Argv is the literal prefix of the arguments (all of them when every word is literal).
	Argv []string
	// Via names the wrapper that runs it ("sudo", "xargs", "find -exec", "bash -c", "function f").
	Via string
	// Depth is how deep in nested scripts it sits (0 for the line itself).
	Depth int
	// Dir is the directory the command runs in (after cd and git -C), or "" when the line
	// makes it unknown or the analysis was given none.
	Dir string

	Reads  []Path
	Writes []Path // writes and deletions, redirection targets included
	Hosts  []string
	Why    []string // why the command is opaque (see Opaque), and notes

	// Elevated reports that the command runs with raised privileges: it is, or is run by, sudo,
	// doas, pkexec, run0 or su. (Commands of a script such a program is handed are separate
	// commands; the one that runs the script is elevated.)
	Elevated bool
	// Network reports that the command reaches other hosts (Hosts lists the literal ones).
	Network bool
	// ExecutesCode reports that the command runs code it was handed (an interpreter's -c/-e, eval,
	// source, a shell reading a pipe or heredoc).
	ExecutesCode bool
	// Redirects reports an output redirection to a file; Substitution a $( ), backquote or <( ) in
	// its words. Allowlist entries do not cover either unless they say so.
	Redirects    bool
	Substitution bool
	// Opaque reports that the analysis cannot see what the command does (Why says why): a
	// non-literal program or path argument, code it was handed, an unknown wrapper flag, a glob.
	Opaque bool

	Risk     risk.Set
	Severity risk.Severity

	// Config lists the configuration the program reads from its directory tree that decides
	// what it runs (see [Config]): the command's levels hold only while each is absent or
	// trusted.
	Config []Config
}

// Config is configuration a command reads from the workspace that decides what it runs: git's
// repository configuration (fsmonitor, pagers, diff drivers, hooks), a build tool's
// configuration (a compiler wrapper in .cargo/config.toml, a toolchain run from a path in
// rust-toolchain.toml). The analysis reads no files, so it classifies the command as if the
// configuration were absent or trusted; the gate checks each Config the way it checks git's
// (internal/gitcfg: Scan for ConfigRepository, ScanFiles for ConfigFiles, each answer cached
// by the identity of the files it looked at) and treats the command as exec and opaque when
// the configuration is there and not trusted.
type Config struct {
	// Kind says how the configuration is found and judged.
	Kind ConfigKind
	// Dir is the directory the program looks from (the command's, after cd and -C); "" when
	// the line makes it unknown, which is never trusted.
	Dir string
	// Names are the files looked for (ConfigFiles), relative to Dir and, with Up, to every
	// directory above it.
	Names []string
	Up    bool
}

// ConfigKind says how a [Config] is found and judged.
type ConfigKind uint8

const (
	// ConfigRepository is the git repository git discovers from Dir; it is trusted when its
	// configuration runs no program (gitcfg.Scan finds nothing).
	ConfigRepository ConfigKind = iota + 1
	// ConfigFiles are files the program reads if they exist (Names, from Dir up); they are
	// trusted only when none exists (gitcfg.ScanFiles).
	ConfigFiles
)

// Analysis is what a whole command line does.
type Analysis struct {
	// Commands lists every simple command, nested ones included, in the order they appear.
	Commands []Command
	// Risk is the union of the commands' risk levels; Severity the strictest severity.
	Risk     risk.Set
	Severity risk.Severity
	// Reads, Writes and Hosts collect every command's.
	Reads  []Path
	Writes []Path
	Hosts  []string
	// Network, ExecutesCode and Opaque are true when any command's is.
	Network      bool
	ExecutesCode bool
	Opaque       bool
}

// ErrEmpty is returned for a line with no commands.
var ErrEmpty = errors.New("shell: empty command line")

// ErrTooLong is returned for a line longer than MaxLine bytes. Such a line is not parsed: the
// analysis is opaque and fails closed, though the line may well be valid shell.
var ErrTooLong = errors.New("shell: command line too long to analyse")

// Limits on what one line may cost. Past one, the analysis stops reading and the line is
// opaque (it ends with a command that may do anything), so any line up to MaxLine bytes is
// analysed in bounded time and memory.
const (
	// MaxLine is the longest line Analyze parses (64 KiB).
	MaxLine = 64 << 10
	// maxNesting bounds how deeply brackets, braces and parentheses nest (the parser recurses).
	maxNesting = 100
	// maxStatements bounds the statements walked, nested ones included.
	maxStatements = 1000
	// maxWords bounds the words evaluated.
	maxWords = 4096
	// maxWordNodes bounds the syntax nodes of one word or expression that are checked.
	maxWordNodes = 4096
	// maxBraceWords bounds the words one brace expansion makes; maxLineBraceWords all of them,
	// and maxBraceBytes their total size (counted before expanding anything).
	maxBraceWords     = 64
	maxLineBraceWords = 1024
	maxBraceBytes     = 256 << 10
	// maxNestedBytes bounds the nested scripts parsed (bash -c, eval, heredocs to a shell).
	maxNestedBytes = 256 << 10
	// maxLoopWords bounds the words a for loop's body is analysed for, one pass each; a longer
	// list leaves the variable unknown.
	maxLoopWords = 16
)

// maxOperators bounds the operator characters of a line (| & ; $ ` ( ) < >): each makes
// syntax nodes, and one pipeline or case of 30 000 of them is one statement the parser must read
// whole.
const maxOperators = 16 << 10

// tooDeep reports why a line is not parsed: brackets nested deeper than maxNesting, or more
// operators than maxOperators. Quoting is ignored, so quoted text counts too (the line is then
// opaque, never allowed; it is not denied).
func tooDeep(src string) string {
	depth, top, ops := 0, 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			if depth > top {
				top = depth
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
		switch src[i] {
		case '|', '&', ';', '$', '`', '(', ')', '<', '>':
			ops++
		}
	}
	switch {
	case top > maxNesting:
		return "brackets nest deeper than the analysis reads"
	case ops > maxOperators:
		return "more operators than the analysis reads"
	}
	return ""
}

var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// posixParsers parse the scripts a POSIX shell (sh, dash) is handed.
var posixParsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangPOSIX)) }}

// Analyze parses a command line (bash syntax; POSIX is a subset) and reports what it does.
//
// A line that does not parse is an error, and the returned analysis fails closed: one opaque
// command carrying every risk level but ReadOnly, at High severity. Analyze never returns a nil
// Analysis.
func Analyze(line string, opts *Options) (an *Analysis, err error) {
	if opts == nil {
		opts = &Options{}
	}
	// A line must never crash the host: a panic in the parser or in this analysis (a bug) makes
	// the line unparsable, which fails closed, instead.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("shell: the analysis failed on this line (%v)", r)
			an = failClosed(line, err)
		}
	}()
	if testHookAnalyze != nil {
		testHookAnalyze(line)
	}
	if len(line) > MaxLine {
		return failClosed(line, ErrTooLong), ErrTooLong
	}
	w := &walker{opts: opts, maxDepth: opts.MaxDepth}
	if w.maxDepth <= 0 {
		w.maxDepth = 8
	}
	if why := tooDeep(line); why != "" {
		w.stop(why)
	} else if err := w.script(line, newScope(opts.Dir), 0, "", false); err != nil {
		return failClosed(line, err), err
	}
	if len(w.cmds) == 0 && w.stopped == "" {
		if strings.TrimSpace(line) == "" {
			return failClosed(line, ErrEmpty), ErrEmpty
		}
		// Comments, empty blocks, bare assignments: nothing runs.
	}
	return w.result(), nil
}

// testHookAnalyze, when set by a test, runs at the start of every Analyze.
var testHookAnalyze func(line string)

func failClosed(line string, err error) *Analysis {
	c := unknownCommand(line, "does not parse: "+err.Error())
	if err == ErrTooLong {
		c.Why[0] = err.Error()
		c.Text = line[:128] + "…"
	}
	return &Analysis{Commands: []Command{c}, Risk: c.Risk, Severity: risk.High, Opaque: true, Network: true, ExecutesCode: true}
}

// unknownCommand stands for what the analysis could not read: it may do anything.
func unknownCommand(text, why string) Command {
	all := risk.Of(risk.Mutating, risk.Exec, risk.Destructive, risk.Network)
	return Command{Text: text, Opaque: true, Why: []string{why}, Risk: all, Severity: risk.High, Network: true, ExecutesCode: true}
}

func (w *walker) result() *Analysis {
	if w.stopped != "" {
		w.cmds = append(w.cmds, unknownCommand("", w.stopped+": the rest of the line is not analysed"))
	}
	a := &Analysis{Commands: w.cmds}
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Risk.Empty() {
			c.Risk = risk.Of(risk.Exec)
		}
		if c.Severity < c.Risk.Severity() {
			c.Severity = c.Risk.Severity()
		}
		a.Risk = a.Risk.Union(c.Risk)
		if c.Severity > a.Severity {
			a.Severity = c.Severity
		}
		a.Reads = append(a.Reads, c.Reads...)
		a.Writes = append(a.Writes, c.Writes...)
		a.Hosts = append(a.Hosts, c.Hosts...)
		a.Network = a.Network || c.Network
		a.ExecutesCode = a.ExecutesCode || c.ExecutesCode
		a.Opaque = a.Opaque || c.Opaque
	}
	return a
}

// String renders a command for explanations: its text, risk and effects.
func (c *Command) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q [%s/%s]", c.Text, c.Risk, c.Severity)
	if c.Via != "" {
		fmt.Fprintf(&b, " via %s", c.Via)
	}
	for _, p := range c.Reads {
		fmt.Fprintf(&b, " read:%s", p.Path)
	}
	for _, p := range c.Writes {
		fmt.Fprintf(&b, " write:%s", p.Path)
	}
	for _, h := range c.Hosts {
		fmt.Fprintf(&b, " host:%s", h)
	}
	if c.Opaque {
		fmt.Fprintf(&b, " opaque(%s)", strings.Join(c.Why, "; "))
	}
	return b.String()
}
