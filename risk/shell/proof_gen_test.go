//go:build linux

package shell_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/reins-go/reins/internal/shelltables"
	"github.com/reins-go/reins/risk/shell"
)

// Generating the lines the proofs run. Every table entry becomes lines: each option of each
// table in its spellings (every listed name; "--opt=VALUE" and "--opt VALUE"; "-oVALUE" and
// "-o VALUE"; the shortest unique abbreviation of a long option where the program accepts
// abbreviations; a short option clustered behind a flag), with a value that probes it
// (proofProbe: a secret outside the workspace, executable, so that an option that reads, writes
// or runs its value is seen doing so) or an ordinary one ("1"), before the context's operands.
// Every context also runs with its operands alone, with an extra operand the program might write
// ("out.txt"), and with a response-file operand ("@" + proofProbe). Every program the analysis
// knows runs with a few generic operands, and every line of internal/shelltables runs as
// written. Only the lines whose claim is bounded are run (see unbounded).
//
// In CI each option runs once, its spelling and context chosen by rotation (tables shared by
// several programs spread their options over them); REINS_PROOF_FULL=1 runs every spelling with
// every value in every context. Combinations of several options, in shuffled order with the
// operands, are FuzzProof's seeds.

// proofRow is one line to run and the table entry it stands for.
type proofRow struct {
	Entry string // "sort --output", "sort: operands", "find -newer", "shelltables.Table"
	Line  string
}

// proofContext says how to make a line of a table's context.
type proofContext struct {
	pre      string     // before the program: a pipe feeding it ("printf 'data.txt\n' | ")
	operands [][]string // operand lists to put after the options (one line each)
	tail     string     // for a table of options before a command (git, wrappers): what follows them
	post     string     // after the operands: a redirection
}

var (
	fileOps  = [][]string{{"data.txt"}}
	noOps    = [][]string{{}}
	pairOps  = [][]string{{"a.txt", "b.txt"}}
	binOps   = [][]string{{"a.bin"}}
	dirOps   = [][]string{{"src"}}
	grepOps  = [][]string{{"TODO", "file.txt"}, {"-r", "TODO", "src"}}
	catThen  = "cat data.txt"
	gitTail  = "log --oneline -1"
	patOnly  = [][]string{{"fixture"}}
	nameOnly = [][]string{{"ls"}}
)

// proofContexts holds the contexts whose operands are not one file; the rest read "data.txt"
// (a git subcommand: nothing).
var proofContexts = map[string]proofContext{
	"grep": {operands: grepOps}, "egrep": {operands: grepOps}, "fgrep": {operands: grepOps}, "zgrep": {operands: grepOps},
	"rg": {operands: [][]string{{"TODO", "file.txt"}, {"TODO"}}},
	"jq": {operands: [][]string{{".", "package.json"}}}, "gojq": {operands: [][]string{{".", "package.json"}}},
	"yq":  {operands: [][]string{{".", "config.yaml"}}},
	"sed": {operands: [][]string{{"p", "data.txt"}}}, "gsed": {operands: [][]string{{"p", "data.txt"}}},
	"awk": {operands: [][]string{{"'{print}'", "data.txt"}}}, "gawk": {operands: [][]string{{"'{print}'", "data.txt"}}},
	"mawk": {operands: [][]string{{"'{print}'", "data.txt"}}},
	"tr":   {operands: [][]string{{"a", "b"}}, post: " < data.txt"},
	"date": {operands: [][]string{{"+%s"}, {}}}, "seq": {operands: [][]string{{"3"}}}, "factor": {operands: [][]string{{"6"}}},
	"numfmt": {operands: [][]string{{"1000"}}}, "printf": {tail: `'%s\n' x`},
	"basename": {operands: [][]string{{"src/a.go"}}}, "dirname": {operands: [][]string{{"src/a.go"}}},
	"realpath": {operands: [][]string{{"src/a.go"}}}, "readlink": {operands: [][]string{{"src/a.go"}}},
	"which": {operands: nameOnly}, "type": {operands: nameOnly}, "hash": {tail: "ls"}, "man": {operands: nameOnly},
	"ls": {operands: dirOps}, "dir": {operands: dirOps}, "vdir": {operands: dirOps}, "du": {operands: dirOps}, "tree": {operands: dirOps},
	"df": {operands: [][]string{{"."}}}, "cmp": {operands: pairOps}, "diff": {operands: pairOps}, "comm": {operands: pairOps},
	"join": {operands: pairOps}, "locate": {operands: patOnly}, "plocate": {operands: patOnly}, "bc": {operands: [][]string{{"calc.bc"}}},
	"less": {operands: [][]string{{"README.md"}}}, "more": {operands: [][]string{{"README.md"}}},
	"fd": {operands: [][]string{{"a", "src"}}}, "fdfind": {operands: [][]string{{"a", "src"}}},
	"xxd": {operands: binOps}, "hexdump": {operands: binOps}, "hd": {operands: binOps}, "od": {operands: binOps}, "strings": {operands: binOps},
	"uname": {operands: noOps}, "arch": {operands: noOps}, "nproc": {operands: noOps}, "pwd": {operands: noOps}, "tty": {operands: noOps},
	"logname": {operands: noOps}, "whoami": {operands: noOps}, "groups": {operands: noOps}, "id": {operands: noOps}, "dmesg": {operands: noOps},
	"shuf": {operands: fileOps}, "tsort": {operands: fileOps},
	// Tables of options before a command or a subcommand.
	"git": {tail: gitTail}, "docker": {tail: "ps"},
	"timeout": {tail: "1 " + catThen}, "taskset": {tail: "1 " + catThen}, "nice": {tail: catThen}, "ionice": {tail: catThen},
	"nohup": {tail: catThen}, "setsid": {tail: catThen}, "stdbuf": {tail: catThen}, "strace": {tail: catThen},
	"xargs": {pre: `printf 'data.txt\n' | `, tail: "cat"},
	// git subcommands whose operands are not optional.
	"git blame": {operands: [][]string{{"src/a.go"}}}, "git annotate": {operands: [][]string{{"src/a.go"}}},
	"git cat-file":     {operands: [][]string{{"commit", "HEAD"}, {"-p", "HEAD:src/a.go"}}},
	"git check-ignore": {operands: [][]string{{"x.log"}}}, "git check-attr": {operands: [][]string{{"diff", "a.txt"}}},
	"git merge-base": {operands: [][]string{{"HEAD", "v1"}}}, "git name-rev": {operands: [][]string{{"HEAD"}}},
	"git rev-parse": {operands: [][]string{{"HEAD"}}}, "git rev-list": {operands: [][]string{{"HEAD"}}},
	"git ls-tree": {operands: [][]string{{"HEAD"}}}, "git var": {operands: [][]string{{"GIT_AUTHOR_IDENT"}}},
	"git show": {operands: [][]string{{"HEAD"}, {"HEAD:src/a.go"}}}, "git log": {operands: [][]string{{}, {"--", "src"}}},
	"git diff":      {operands: [][]string{{}, {"HEAD"}, {"--no-index", "a.txt", "b.txt"}}},
	"git diff-tree": {operands: [][]string{{"HEAD"}}}, "git diff-index": {operands: [][]string{{"HEAD"}}},
	"git grep": {operands: [][]string{{"TODO"}}}, "git describe": {operands: [][]string{{"--always"}}},
	"git range-diff": {operands: [][]string{{"HEAD~0...HEAD"}}}, "git cherry": {operands: [][]string{{"v1"}}},
	"git shortlog": {operands: [][]string{{"HEAD"}}}, "git help": {operands: [][]string{{"log"}}},
	"git stash": {operands: [][]string{{"list"}}}, "git worktree": {operands: [][]string{{"list"}}},
	"git submodule": {operands: [][]string{{"status"}}}, "git remote": {operands: [][]string{{}, {"get-url", "origin"}}},
	"git config": {operands: [][]string{{"--get", "user.name"}, {"-l"}}}, "git reflog": {operands: [][]string{{}, {"show"}}},
	"git branch": {operands: [][]string{{}, {"-l"}}}, "git tag": {operands: [][]string{{}, {"-l"}}},
}

func contextOf(ctx string) proofContext {
	if c, ok := proofContexts[ctx]; ok {
		switch {
		case c.tail != "":
			c.operands = noOps
		case c.operands == nil:
			c.operands = fileOps
		}
		return c
	}
	if strings.HasPrefix(ctx, "git ") || strings.HasPrefix(ctx, "docker ") {
		return proofContext{operands: noOps}
	}
	return proofContext{operands: fileOps}
}

// line assembles one line of a context: its options (already spelled), then its tail or the
// operands.
func (c proofContext) line(ctx string, opts []string, operands []string) string {
	words := append([]string{ctx}, opts...)
	if c.tail != "" {
		words = append(words, c.tail)
	} else {
		words = append(words, operands...)
	}
	return strings.TrimSpace(c.pre + strings.Join(words, " ") + c.post)
}

// spellings lists the ways to give option o with value v (the value is ignored by flags).
func spellings(t shell.ProofTable, o shell.ProofOption, v string) [][]string {
	var out [][]string
	for _, n := range o.Names {
		long := strings.HasPrefix(n, "--") || t.OneDash && len(n) > 2
		short := !t.OneDash && len(n) == 2
		forms := func(name string) {
			switch o.Arg {
			case 0:
				out = append(out, []string{name})
			case '=':
				out = append(out, []string{name, v})
				switch {
				case strings.HasPrefix(name, "--") && !t.OneDash:
					out = append(out, []string{name + "=" + v})
				case len(name) == 2:
					out = append(out, []string{name + v})
				}
			case '?':
				if strings.HasPrefix(name, "--") || t.OneDash {
					out = append(out, []string{name + "=" + v}, []string{name})
				} else {
					out = append(out, []string{name + v}, []string{name})
				}
			case '2':
				out = append(out, []string{name, "x", v})
			}
		}
		forms(n)
		if long && t.Abbrev && strings.HasPrefix(n, "--") {
			if p := abbreviation(t, o, n); p != "" {
				forms(p)
			}
		}
		if short {
			if f := clusterFlag(t, o); f != 0 {
				switch o.Arg {
				case 0:
					out = append(out, []string{"-" + string(f) + n[1:]})
				case '=':
					out = append(out, []string{"-" + string(f) + n[1:], v}, []string{"-" + string(f) + n[1:] + v})
				}
			}
		}
	}
	return out
}

// abbreviation returns the shortest unique prefix of the long option name (with its dashes),
// or "" when only the whole name is unique.
func abbreviation(t shell.ProofTable, o shell.ProofOption, name string) string {
	body := strings.TrimPrefix(name, "--")
	for k := 1; k < len(body); k++ {
		prefix := body[:k]
		unique := true
		for _, other := range t.Options {
			if slices.Equal(other.Names, o.Names) {
				continue
			}
			for _, on := range other.Names {
				if strings.HasPrefix(on, "--") && strings.HasPrefix(on[2:], prefix) {
					unique = false
				}
			}
		}
		if unique {
			return "--" + prefix
		}
	}
	return ""
}

// clusterFlag returns a short flag of the table that takes no value and has no effect, other
// than o, to cluster o behind; 0 when there is none.
func clusterFlag(t shell.ProofTable, o shell.ProofOption) byte {
	for _, f := range t.Options {
		if f.Arg != 0 || f.Effect != 0 || slices.Equal(f.Names, o.Names) {
			continue
		}
		for _, n := range f.Names {
			if len(n) == 2 && n[0] == '-' && n[1] != '-' && !(t.Num && n[1] >= '0' && n[1] <= '9') && n[1] != '?' && n[1] != '#' && n[1] != '~' {
				return n[1]
			}
		}
	}
	return 0
}

// proofValues are the values a row gives an option that takes one: the probe first.
func proofValues(o shell.ProofOption) []string {
	switch o.Effect {
	case 'R', 'W', 'D':
		return []string{proofProbe}
	}
	return []string{proofProbe, "1"}
}

// tableGroups groups the contexts that share one table, so that CI runs each option once.
func tableGroups() [][]shell.ProofTable {
	byKey := map[string][]shell.ProofTable{}
	var keys []string
	for _, t := range shell.ProofTables() {
		var b strings.Builder
		b.WriteString(t.Man)
		for _, o := range t.Options {
			fmt.Fprintf(&b, "|%v%c%c", o.Names, o.Arg, o.Effect)
		}
		k := b.String()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], t)
	}
	sort.Strings(keys)
	out := make([][]shell.ProofTable, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// tableRows generates the rows of the option tables: one line per option (full: every
// spelling, value, operand list and context), the operand rows of every context, and the
// -NUM rows.
func tableRows(full bool) []proofRow {
	var rows []proofRow
	add := func(entry, line string) { rows = append(rows, proofRow{Entry: entry, Line: line}) }
	for _, group := range tableGroups() {
		for i, o := range group[0].Options {
			tables := group
			if !full {
				tables = group[i%len(group) : i%len(group)+1]
			}
			for _, t := range tables {
				c := contextOf(t.Context)
				entry := t.Context + " " + o.Names[len(o.Names)-1]
				values := proofValues(o)
				if !full {
					values = values[:1]
				}
				for vi, v := range values {
					sp := spellings(t, o, v)
					if !full {
						sp = sp[(i+vi)%len(sp) : (i+vi)%len(sp)+1]
					}
					for _, words := range sp {
						ops := c.operands
						if !full && len(ops) > 1 {
							ops = ops[i%len(ops) : i%len(ops)+1]
						}
						for _, operands := range ops {
							add(entry, c.line(t.Context, words, operands))
						}
					}
				}
			}
		}
		for _, t := range group {
			c := contextOf(t.Context)
			if t.Num {
				add(t.Context+" -NUM", c.line(t.Context, []string{"-2"}, c.operands[0]))
			}
			for _, operands := range c.operands {
				add(t.Context+": operands", c.line(t.Context, nil, operands))
			}
			if c.tail == "" && !strings.HasPrefix(t.Context, "git ") {
				base := c.operands[0]
				add(t.Context+": operands", c.line(t.Context, nil, append(slices.Clone(base), "out.txt")))
				add(t.Context+": operands", c.line(t.Context, nil, append(slices.Clone(base), "@"+proofProbe)))
			}
		}
	}
	return rows
}

// findRows generates find's rows: every primary, with a probe for those that take words, and
// the options before the starting points.
func findRows(full bool) []proofRow {
	var rows []proofRow
	for _, p := range shell.ProofFindPrimaries() {
		switch p.Name {
		case "(", ")", "!", ",":
			continue
		}
		entry := "find " + p.Name
		var argSets [][]string
		switch p.Args {
		case 0:
			argSets = [][]string{nil}
		case 1:
			argSets = [][]string{{proofProbe}}
			if full || p.Effect == 0 {
				argSets = append(argSets, []string{"1"})
			}
		default:
			argSets = [][]string{{proofProbe, "%p"}}
		}
		for _, a := range argSets {
			rows = append(rows, proofRow{Entry: entry, Line: strings.Join(append([]string{"find", ".", p.Name}, a...), " ")})
		}
	}
	for _, l := range []string{
		"find . -newerma " + proofProbe, "find . -newermt 2020-01-01", "find -L . -name '*.go'", "find -H src -type f",
		"find -P . -maxdepth 1", "find -O3 . -name x", "find", "find src", "find . " + proofProbe,
	} {
		rows = append(rows, proofRow{Entry: "find", Line: l})
	}
	return rows
}

// programRows runs every program the analysis knows with a few generic operands: what it does
// with none, a file, a file it might write, a response file, --help and --version.
func programRows() []proofRow {
	tables := map[string]bool{}
	for _, t := range shell.ProofTables() {
		tables[t.Context] = true
	}
	var rows []proofRow
	for _, p := range shell.ProofPrograms() {
		if tables[p] || p == "find" || !plainWord(p) {
			continue
		}
		for _, args := range []string{"", " data.txt", " data.txt out.txt", " @" + proofProbe, " " + proofProbe, " --help", " --version"} {
			rows = append(rows, proofRow{Entry: p + ": operands", Line: p + args})
		}
	}
	return rows
}

// plainWord reports a program name that is one shell word as written.
func plainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '+') {
			return false
		}
	}
	return s != "" && s != "." && s != "[" && s != "[["
}

// shelltablesRows are the lines of internal/shelltables, as written.
func shelltablesRows() []proofRow {
	var rows []proofRow
	for _, r := range shelltables.Table {
		rows = append(rows, proofRow{Entry: "shelltables.Table", Line: r.Line})
	}
	for _, r := range shelltables.Options {
		rows = append(rows, proofRow{Entry: "shelltables.Options", Line: r.Line})
	}
	for _, r := range shelltables.Expansions {
		rows = append(rows, proofRow{Entry: "shelltables.Expansions", Line: r.Line})
	}
	return rows
}

// comboLines generates n lines of several options each (FuzzProof's seeds): a context, two or
// three of its options in random spellings with random values, and its operands, options and
// operands in shuffled order (GNU programs take options after operands too). skip lists the
// entries whose own rows are known to fail: combining them would only find them again.
func comboLines(n int, seed uint64, skip map[string]bool) []string {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var tables []shell.ProofTable
	for _, t := range shell.ProofTables() {
		if !skip[t.Context+": operands"] && len(t.Options) > 1 {
			tables = append(tables, t)
		}
	}
	values := []string{proofProbe, "1", "x", "out.txt", "data.txt", "src", "$HOME/.aws/credentials"}
	var out []string
	for len(out) < n {
		t := tables[rng.IntN(len(tables))]
		c := contextOf(t.Context)
		var groups [][]string
		for k := 2 + rng.IntN(2); k > 0; k-- {
			o := t.Options[rng.IntN(len(t.Options))]
			if skip[t.Context+" "+o.Names[len(o.Names)-1]] {
				continue
			}
			sp := spellings(t, o, values[rng.IntN(len(values))])
			groups = append(groups, sp[rng.IntN(len(sp))])
		}
		if len(groups) == 0 {
			continue
		}
		operands := c.operands[rng.IntN(len(c.operands))]
		if c.tail == "" && !t.Posix && !slices.Contains(operands, "--") && rng.IntN(2) == 0 {
			// Operands among the options: GNU getopt_long permutes, so the options still count.
			for _, o := range operands {
				groups = append(groups, []string{o})
			}
			operands = nil
			rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
		}
		var words []string
		for _, g := range groups {
			words = append(words, g...)
		}
		out = append(out, c.line(t.Context, words, operands))
	}
	return out
}
