//go:build linux

package shell_test

import "github.com/reins-go/reins/risk/shell"

// The lines the tracer proofs currently reject: the to-do list of the table fixes (issue 22).
// Each entry is a line a generator produces (or a FuzzProof input), the keys of the findings it
// shows, and, in its comment, what was observed. TestProof fails on any finding not listed here,
// and on any listed line that stops showing its findings: fixing a table means removing its
// entries. Regenerate an entry from the failure message, which spells it.

// proofKnownRow is one entry: a line and the keys of the findings it shows (see
// proofFinding.Key). Entry names the table entry the line stands for, so that FuzzProof's
// combinations leave it out.
type proofKnownRow struct {
	Line     string
	Findings []string
	Entry    string
}

// classUnproven is the finding of a row whose program Debian does not package: nothing can
// prove it, so the table must not call it read-only.
const classUnproven = "unproven"

// proofUnpackaged are the programs the tables know that Debian does not package (or packages
// as a different program under the same name): their rows cannot be proven, so a row that
// names one with a bounded claim is the finding "unproven".
var proofUnpackaged = map[string]string{
	"fd":   "Debian packages fd as fdfind (package fd-find); no program named fd exists to prove the table against",
	"gsed": "gsed is Homebrew's name for GNU sed; Debian has no gsed",
	"yq":   "the table describes mikefarah's yq 4; Debian's yq package is kislyuk's yq 3, a different program (a Python wrapper that runs jq)",
}

// proofKnown: the open findings.
var proofKnown = []proofKnownRow{}

// proofKnownSet is proofKnown indexed.
type proofKnownSet struct {
	lines     map[string]map[string]bool // line -> finding keys
	byProgram map[string]map[string]bool // program -> finding keys listed for its lines
	unproven  map[string]bool
	fuzz      map[string]bool // lines that come from the fuzz corpus, not from a generator
}

func proofKnownIndex() proofKnownSet {
	k := proofKnownSet{lines: map[string]map[string]bool{}, byProgram: map[string]map[string]bool{}, unproven: map[string]bool{}, fuzz: map[string]bool{}}
	for _, r := range proofKnown {
		keys := map[string]bool{}
		for _, f := range r.Findings {
			keys[f] = true
			if p, ok := cutPrefix(f, classUnproven+": "); ok {
				k.unproven[p] = true
			}
		}
		if r.Line == "" {
			continue // an unproven program, whatever its lines
		}
		k.lines[r.Line] = keys
		if r.Entry == "fuzz" {
			k.fuzz[r.Line] = true
		}
		an, _ := shell.Analyze(r.Line, &shell.Options{Dir: "/w", Home: "/h"})
		for _, c := range an.Commands {
			if k.byProgram[c.Program] == nil {
				k.byProgram[c.Program] = map[string]bool{}
			}
			for f := range keys {
				k.byProgram[c.Program][f] = true
			}
		}
	}
	return k
}

// explains reports whether a FuzzProof finding is already listed: for this line, or for a line
// of one of the programs this line names, or as an unproven program.
func (k proofKnownSet) explains(r proofResult, f proofFinding) bool {
	if k.lines[r.Row.Line][f.Key] {
		return true
	}
	if f.Class == classUnproven {
		p, _ := cutPrefix(f.Key, classUnproven+": ")
		return k.unproven[p]
	}
	for _, p := range r.Programs {
		if k.byProgram[p][f.Key] {
			return true
		}
	}
	return false
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}
