package gate

import (
	"fmt"
	"strings"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// Explanation is the whole trace of one decision: each layer of the decision order as it was
// walked, and for every part of the action the rules considered and the matrix cell.
type Explanation struct {
	// Decision is the decision Check would return (without ids: Explain records nothing).
	Decision Decision
	// Steps lists the layers walked, in order; the last one decided.
	Steps []Step
	// Parts lists every part the rule and matrix layers evaluated.
	Parts []Part
	// Commands lists each simple command of the action's command line with its own outcome
	// (the strictest of its parts); empty for actions without a command.
	Commands []CommandOutcome
	// Dir is the directory the action's command was decided in (its working directory against
	// the first workspace root); "" for an action without a command.
	Dir string
}

// CommandOutcome is one simple command of a command line and how the gate judged it.
type CommandOutcome struct {
	Command shell.Command
	// Verdict, Layer and RuleID are those of the command's strictest part; a command whose
	// parts were never reached (an earlier layer decided) has none.
	Verdict policy.Verdict
	Layer   policy.Layer
	RuleID  string
	Decided bool
}

// Step is one layer of the decision order.
type Step struct {
	Layer   policy.Layer
	Decided bool
	Detail  string
}

// Part is one part of an action (one risk level and one target) and how it was decided.
type Part struct {
	Level    risk.Level
	Severity risk.Severity
	// Target is the part's resolved target: relative to its workspace root, or absolute.
	Target string
	Inside bool
	// Command is the index of the simple command this part belongs to in
	// Explanation.Commands, or -1 for the action as declared.
	Command int
	Verdict policy.Verdict
	Layer   policy.Layer
	RuleID  string
	// Rules traces every rule of the profile against this part.
	Rules []policy.Trace
	// Matrix is the autonomy matrix cell for this part's level.
	Matrix policy.Cell
}

// Explain decides a under the run state s (nil means the zero State) with a full trace and
// returns the explanation: every layer walked and every part decided, even past the part that
// settled a Deny. It records nothing and latches nothing.
func (g *Gate) Explain(s *State, a policy.Action) Explanation {
	tr := Trace{Full: true}
	d := g.Decide(s, a, &tr)
	return tr.Explanation(d)
}

// Explanation returns the whole explanation of the decision d that Decide returned while
// filling t: the layers walked, each part with the rules considered and its matrix cell, and
// each simple command's outcome. It reads the trace; nothing is decided again (the per-rule
// detail of a part is worked out from the part's recorded subject, which the run state does
// not affect). A Trace that Decide did not fill explains only d.
func (t *Trace) Explanation(d Decision) Explanation {
	e := Explanation{Decision: d}
	if t == nil || t.st == nil {
		return e
	}
	e.Dir = t.dir
	e.Steps = append(e.Steps, t.steps[:t.nsteps]...)
	e.Steps = append(e.Steps, t.moreSteps...)
	for i := 0; i < t.nparts+len(t.moreParts); i++ {
		p := t.partAt(i)
		e.Parts = append(e.Parts, Part{Level: p.sub.Level, Severity: p.sub.Severity, Target: p.sub.Target,
			Inside: p.sub.Inside(), Command: p.cmd, Verdict: p.verdict, Layer: p.layer, RuleID: p.ruleID,
			Rules: t.st.rules.Explain(&p.sub), Matrix: p.cell})
	}
	if t.an != nil {
		for i, c := range t.an.Commands {
			co := CommandOutcome{Command: c}
			for _, p := range e.Parts {
				if p.Command != i {
					continue
				}
				if !co.Decided || p.Verdict.StricterThan(co.Verdict) {
					co.Verdict, co.Layer, co.RuleID, co.Decided = p.Verdict, p.Layer, p.RuleID, true
				}
			}
			e.Commands = append(e.Commands, co)
		}
	}
	return e
}

// String renders the explanation for a terminal.
func (e Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "decision: %s\n", e.Decision)
	for _, s := range e.Steps {
		mark := "pass"
		if s.Decided {
			mark = "DECIDED"
		}
		fmt.Fprintf(&b, "  %-9s %-7s %s\n", s.Layer, mark, s.Detail)
	}
	for _, c := range e.Commands {
		outcome := "not reached"
		if c.Decided {
			outcome = fmt.Sprintf("%s by %s %s", c.Verdict, c.Layer, c.RuleID)
		}
		fmt.Fprintf(&b, "  command %s: %s\n", c.Command.String(), outcome)
	}
	for _, p := range e.Parts {
		where := p.Target
		if where == "" {
			where = "(no target)"
		}
		fmt.Fprintf(&b, "  part %s/%s %s: %s by %s %s (matrix %s)\n", p.Level, p.Severity, where, p.Verdict, p.Layer, p.RuleID, p.Matrix)
		for _, t := range p.Rules {
			mark := " "
			if t.Decisive {
				mark = "*"
			}
			fmt.Fprintf(&b, "    %s %3d %-28s %-7s %s\n", mark, t.Priority, t.RuleID, t.Action, t.Why)
		}
	}
	return b.String()
}

// Trace collects how Decide reached a decision: the layers it walked, the shell analysis of the
// command line, and every part the rule and matrix layers decided with its subject and
// outcome. Pass a Trace to Decide and read it with [Trace.Explanation]; a Trace may be reused
// (Decide starts it afresh). The zero Trace is ready to use. Tracing into a Trace on the
// caller's stack costs no allocation for actions of up to 16 parts.
type Trace struct {
	// Full makes Decide decide every part, even after a Deny has settled the decision (Check's
	// shortcut); the explanation then lists every part.
	Full bool

	st        *state
	an        *shell.Analysis
	dir       string
	steps     [8]Step
	nsteps    int
	moreSteps []Step
	parts     [16]tracedPart
	nparts    int
	moreParts []tracedPart
	writes    [8]tracedWrite
	nwrites   int
	more      []tracedWrite
	network   bool
	unknown   bool
	confined  bool
}

// tracedWrite is a path an allowed shell line writes, as resolved: inside root at path, or the
// absolute path when root is "".
type tracedWrite struct {
	root, path string
	glob       bool
}

// tracedPart is one part as Decide decided it.
type tracedPart struct {
	sub     policy.Subject
	cmd     int
	verdict policy.Verdict
	layer   policy.Layer
	ruleID  string
	cell    policy.Cell
}

// Confinement is what a shell line the gate allowed without asking may do, as its analysis
// claims: the sandbox policy the run enforces for it (the Sandbox obligation).
type Confinement struct {
	// Writable lists the absolute, resolved paths the line writes (files or directories; a
	// file may not exist yet). For a write through a pattern, the directory the pattern expands
	// in. Empty for a read-only line.
	Writable []string
	// Network reports that the line reaches the network, at hosts the profile allowed.
	Network bool
	// Unknown reports that the line reads or writes files it does not name, found at run time
	// (xargs' input, find -exec's matches): the analysis stood for them with their directory, so
	// only a sandbox that masks secrets makes the claim true.
	Unknown bool
}

// Confinement returns the sandbox policy of the decision Decide traced into t: ok is false
// unless that decision allowed a shell line without asking (and so carries the Sandbox
// obligation for it).
func (t *Trace) Confinement() (c Confinement, ok bool) {
	if t == nil || !t.confined {
		return Confinement{}, false
	}
	c.Network, c.Unknown = t.network, t.unknown
	seen := map[string]bool{}
	for i := 0; i < t.nwrites+len(t.more); i++ {
		w := t.writes[:t.nwrites]
		var x tracedWrite
		if i < t.nwrites {
			x = w[i]
		} else {
			x = t.more[i-t.nwrites]
		}
		p := x.path
		if x.root != "" {
			p = strings.TrimSuffix(x.root, "/") + "/" + x.path
			if x.path == "." {
				p = x.root
			}
		}
		if x.glob {
			p = globDir(p)
		}
		if !seen[p] {
			seen[p] = true
			c.Writable = append(c.Writable, p)
		}
	}
	return c, true
}

// globDir returns the deepest directory of p that holds no pattern character.
func globDir(p string) string {
	i := strings.IndexAny(p, "*?[{")
	if i < 0 {
		return p
	}
	if j := strings.LastIndexByte(p[:i], '/'); j > 0 {
		return p[:j]
	}
	return "/"
}

// confine records what an allowed shell line writes and whether it reaches the network.
func (t *Trace) confine(pieces []piece, targets []target) {
	if t == nil {
		return
	}
	t.confined = true
	for i := range pieces {
		if pieces[i].levels.Has(risk.Network) {
			t.network = true
		}
	}
	for i := range targets {
		x := &targets[i]
		t.unknown = t.unknown || x.unknown
		if !(x.access == accessWrite || x.access == accessAny && writes(pieces[x.piece].levels)) {
			continue
		}
		w := tracedWrite{root: x.root, path: x.path, glob: x.glob}
		if t.nwrites < len(t.writes) {
			t.writes[t.nwrites] = w
			t.nwrites++
		} else {
			t.more = append(t.more, w)
		}
	}
}

func (t *Trace) partAt(i int) *tracedPart {
	if i < t.nparts {
		return &t.parts[i]
	}
	return &t.moreParts[i-t.nparts]
}

func (t *Trace) full() bool { return t != nil && t.Full }

// begin starts the trace of a decision under st.
func (t *Trace) begin(st *state) {
	if t == nil {
		return
	}
	full := t.Full
	*t = Trace{Full: full, st: st}
}

func (t *Trace) analysis(an *shell.Analysis, dir string) {
	if t != nil {
		t.an, t.dir = an, dir
	}
}

func (t *Trace) step(s Step) {
	if t.nsteps < len(t.steps) {
		t.steps[t.nsteps] = s
		t.nsteps++
		return
	}
	t.moreSteps = append(t.moreSteps, s)
}

func (t *Trace) passed(l policy.Layer, detail string) {
	if t != nil {
		t.step(Step{Layer: l, Detail: detail})
	}
}

func (t *Trace) decided(l policy.Layer, detail string) {
	if t != nil {
		t.step(Step{Layer: l, Decided: true, Detail: detail})
	}
}

func (t *Trace) part(sub *policy.Subject, cmd int, v policy.Verdict, l policy.Layer, id string, cell policy.Cell) {
	if t == nil {
		return
	}
	p := tracedPart{sub: *sub, cmd: cmd, verdict: v, layer: l, ruleID: id, cell: cell}
	if t.nparts < len(t.parts) {
		t.parts[t.nparts] = p
		t.nparts++
		return
	}
	t.moreParts = append(t.moreParts, p)
}
