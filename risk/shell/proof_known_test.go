//go:build linux

package shell_test

import (
	"strings"

	"github.com/reins-go/reins/risk/shell"
)

// What the tracer proofs cannot prove, and what they currently reject.

// classUnproven is the finding of a row whose program cannot be run here: nothing proves it, so
// no table may call it read-only.
const classUnproven = "unproven"

// proofUnpackaged are the programs the analysis knows that Debian does not package (or packages
// as a different program under the same name). A row that names one with a bounded claim is
// unproven.
var proofUnpackaged = map[string]string{
	"fd":            "Debian packages fd as fdfind (fd-find); no program named fd exists",
	"gsed":          "gsed is Homebrew's name for GNU sed; Debian has none",
	"yq":            "the table describes mikefarah's yq 4; Debian's yq is kislyuk's yq 3, another program (a Python wrapper around jq)",
	"chdir":         "chdir is neither a bash builtin nor a program (zsh has it); bash says command not found",
	"python2":       "Debian 12 has no Python 2",
	"pip2":          "Debian 12 has no Python 2",
	"pypy":          "Debian 12 has no PyPy 2 (pypy3 only)",
	"yarn":          "Debian's yarnpkg installs yarnpkg, not yarn",
	"rar":           "rar is non-free; the proofs' mirrors are main",
	"terraform":     "not packaged by Debian",
	"bazel":         "Debian's bazel-bootstrap only builds Debian packages",
	"bun":           "not packaged by Debian",
	"caffeinate":    "macOS only",
	"launchctl":     "macOS only",
	"catchsegv":     "removed from glibc 2.35; Debian 12 has none",
	"cnpm":          "not packaged by Debian",
	"conda":         "not packaged by Debian",
	"dart":          "not packaged by Debian",
	"deno":          "not packaged by Debian",
	"dotnet":        "not packaged by Debian",
	"flutter":       "not packaged by Debian",
	"golangci-lint": "not packaged by Debian 12",
	"helm":          "not packaged by Debian",
	"nerdctl":       "not packaged by Debian",
	"prettier":      "not packaged by Debian 12",
	"ruff":          "not packaged by Debian 12",
	"swift":         "not packaged by Debian",
	"uv":            "not packaged by Debian",
	"vite":          "not packaged by Debian",
	"with-contenv":  "part of s6-overlay, not packaged by Debian",
	"zig":           "not packaged by Debian 12",
}

// proofNotInCI are programs Debian packages that CI does not install: whole toolchains that
// the analysis calls read-only only for "--version", an init system, and a kubectl four years
// older than the one agents run. Their rows are unproven as well.
var proofNotInCI = map[string]string{
	"ghc":        "ghc: about 800 MB installed, for one --version line",
	"kotlin":     "kotlin: about 300 MB, for one --version line",
	"gradle":     "gradle: a JVM and hundreds of libraries, for one --version line",
	"scala":      "scala: a JVM, for one --version line",
	"clang":      "clang: LLVM, for one --version line",
	"clang++":    "clang: LLVM, for one --version line",
	"java":       "default-jdk-headless: a JVM, for one --version line",
	"javac":      "default-jdk-headless: a JVM, for one --version line",
	"mvn":        "maven: a JVM, for one --version line",
	"elixir":     "elixir: Erlang, for one --version line",
	"mix":        "elixir: Erlang, for one --version line",
	"tsc":        "node-typescript: npm's dependency tree, for one --version line",
	"eslint":     "eslint: npm's dependency tree, for one --version line",
	"jest":       "jest: npm's dependency tree, for one --version line",
	"npm":        "npm: hundreds of node-* packages, for --version lines",
	"npx":        "npm: hundreds of node-* packages, for --version lines",
	"podman":     "podman: a container engine, for its --version and --help lines",
	"pypy3":      "pypy3: a second Python, for one --version line",
	"cargo":      "cargo and rustc: the Rust toolchain, for --version lines",
	"rustc":      "cargo and rustc: the Rust toolchain, for --version lines",
	"rc-service": "openrc: an init system, for one --version line",
	"kubectl":    "Debian 12's kubernetes-client is kubectl 1.20 (2021): proving it says nothing of the kubectl agents run",
}

// unprovable says why a program cannot be proven here, or "".
func unprovable(program string) string {
	if why, ok := proofUnpackaged[program]; ok {
		return why
	}
	return proofNotInCI[program]
}

// proofKnownRow is one entry of proofKnown: a line (or, with Line empty, every line that names
// Program) and the keys of the findings it shows (proofFinding.Key). Entry names the table entry
// a line stands for, so that FuzzProof's combinations leave it out.
type proofKnownRow struct {
	Line     string
	Program  string
	Findings []string
	Entry    string
}

// proofKnownSet is proofKnown indexed.
type proofKnownSet struct {
	lines     map[string]map[string]bool // line -> finding keys
	programs  map[string]map[string]bool // program -> finding keys of its program entries
	byProgram map[string]map[string]bool // program -> finding keys of any entry naming it (FuzzProof)
	fuzz      map[string]bool            // lines from FuzzProof's corpus, not from a generator
}

func proofKnownIndex() proofKnownSet {
	k := proofKnownSet{lines: map[string]map[string]bool{}, programs: map[string]map[string]bool{},
		byProgram: map[string]map[string]bool{}, fuzz: map[string]bool{}}
	add := func(m map[string]map[string]bool, key string, findings []string) {
		if m[key] == nil {
			m[key] = map[string]bool{}
		}
		for _, f := range findings {
			m[key][f] = true
		}
	}
	for _, r := range proofKnown {
		if r.Line == "" {
			add(k.programs, r.Program, r.Findings)
			add(k.byProgram, r.Program, r.Findings)
			continue
		}
		add(k.lines, r.Line, r.Findings)
		if r.Entry == "fuzz" {
			k.fuzz[r.Line] = true
		}
		an, _ := shell.Analyze(r.Line, &shell.Options{Dir: "/w", Home: "/h"})
		for _, c := range an.Commands {
			add(k.byProgram, c.Program, r.Findings)
		}
	}
	return k
}

// listed reports whether proofKnown lists finding f of result r: for its line, or for one of
// the programs it names.
func (k proofKnownSet) listed(r proofResult, f proofFinding) bool {
	if k.lines[r.Row.Line][f.Key] {
		return true
	}
	for _, p := range r.Programs {
		if k.programs[p][f.Key] {
			return true
		}
	}
	return false
}

// explains is listed, more widely, for FuzzProof: a finding listed for any line of a program
// the input names is not reported again.
func (k proofKnownSet) explains(r proofResult, f proofFinding) bool {
	if k.listed(r, f) {
		return true
	}
	for _, p := range r.Programs {
		if k.byProgram[p][f.Key] {
			return true
		}
	}
	return false
}

// unprovenKey is the key of the finding "unproven" for a program.
func unprovenKey(program string) string { return classUnproven + ": " + program }

func unprovenProgram(key string) (string, bool) {
	return strings.CutPrefix(key, classUnproven+": ")
}

// proofKnown: the open findings, the to-do of the table fixes (issue 22). TestProof fails on a
// finding not listed here and on an entry that no longer shows its findings, so fixing a table
// means deleting its entries. A failure message spells the entry to add; only add one for a
// finding to be fixed in a table.
var proofKnown = []proofKnownRow{}
