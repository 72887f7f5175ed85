package gate

import (
	"context"
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

// Explain walks the decision order for a exactly as Check does and returns the trace. It has no
// side effects: nothing is recorded and no hard stop latches.
func (g *Gate) Explain(ctx context.Context, a policy.Action) (Explanation, error) {
	if err := ctx.Err(); err != nil {
		return Explanation{}, err
	}
	tr := &tracer{}
	d, _ := g.decide(g.st.Load(), &a, tr)
	tr.e.Decision = d
	if tr.an != nil {
		for i, c := range tr.an.Commands {
			co := CommandOutcome{Command: c}
			for _, p := range tr.e.Parts {
				if p.Command != i {
					continue
				}
				if !co.Decided || p.Verdict.StricterThan(co.Verdict) {
					co.Verdict, co.Layer, co.RuleID, co.Decided = p.Verdict, p.Layer, p.RuleID, true
				}
			}
			tr.e.Commands = append(tr.e.Commands, co)
		}
	}
	return tr.e, nil
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

// tracer collects an explanation; a nil *tracer (Check's) does nothing and costs nothing.
type tracer struct {
	e  Explanation
	an *shell.Analysis
}

func (t *tracer) analysis(an *shell.Analysis) {
	if t != nil {
		t.an = an
	}
}

func (t *tracer) passed(l policy.Layer, detail string) {
	if t != nil {
		t.e.Steps = append(t.e.Steps, Step{Layer: l, Detail: detail})
	}
}

func (t *tracer) decided(l policy.Layer, detail string) {
	if t != nil {
		t.e.Steps = append(t.e.Steps, Step{Layer: l, Decided: true, Detail: detail})
	}
}

func (t *tracer) part(st *state, sub *policy.Subject, cmd int, v policy.Verdict, l policy.Layer, id string, cell policy.Cell) {
	if t == nil {
		return
	}
	t.e.Parts = append(t.e.Parts, Part{Level: sub.Level, Severity: sub.Severity, Target: sub.Target, Inside: sub.Inside(),
		Command: cmd, Verdict: v, Layer: l, RuleID: id, Rules: st.rules.Explain(sub), Matrix: cell})
}
