package gate

import (
	"fmt"
	"strings"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// target is one action target after resolution.
type target struct {
	raw  string
	root string // "" when outside every root
	path string // relative to root when inside, absolute when outside
	err  error
}

// matrixReasons holds the reason text of every matrix cell, built once so a matrix decision
// allocates nothing.
var matrixReasons = func() (r [3][8]string) {
	for _, b := range []policy.Band{policy.Supervised, policy.Trusted, policy.Autonomous} {
		for _, l := range risk.Levels() {
			r[b][l] = fmt.Sprintf("autonomy matrix: %s × %s = %s", b, l, policy.Matrix(b, l))
		}
	}
	return r
}()

// modeDetail describes each permission mode for explanations (static, so Check builds nothing).
var modeDetail = [...]string{
	profile.Default:       "mode default: rules, then the autonomy matrix",
	profile.ReadOnly:      "mode read-only: the action is read-only",
	profile.Plan:          "mode plan",
	profile.EmergencyStop: "mode emergency-stop",
}

// discipline is the seed's checkpoint discipline: every mutating or destructive action that goes
// ahead is checkpointed first, whatever layer allowed it.
func discipline(l risk.Level) policy.Obligations {
	if l == risk.Mutating || l == risk.Destructive {
		return policy.Checkpoint
	}
	return 0
}

// decide walks the decision order for a. It has no side effects: a hard stop that must latch is
// returned for the caller to apply. tr, when not nil, collects the explanation.
func (g *Gate) decide(st *state, a *policy.Action, tr *tracer) (Decision, *Halt) {
	d := Decision{Verdict: policy.Deny, Profile: st.name}

	// The action's risk: declared, plus what its operation implies; nothing known means the worst.
	if a.Risk&^risk.Of(risk.Levels()...) != 0 || (a.Severity != 0 && !a.Severity.Valid()) {
		d.Layer, d.RuleID, d.Reason = LayerInput, "invalid-risk", "the action declares an invalid risk level or severity"
		tr.decided(LayerInput, d.Reason)
		return d, nil
	}
	op := a.Operation.Canonical()
	levels := a.Risk.Union(op.DefaultRisk())
	if levels.Empty() {
		levels = risk.Of(risk.Destructive)
	}
	d.Risk = levels

	// 1. Halted.
	if h := g.halt.Load(); h != nil {
		d.Layer, d.RuleID, d.Reason = LayerHalted, "halted", "the run is halted: "+h.Reason
		tr.decided(LayerHalted, d.Reason)
		return d, nil
	}
	if st.mode == profile.EmergencyStop {
		d.Layer, d.RuleID, d.Reason = LayerHalted, "emergency-stop", "emergency stop: every action is denied"
		tr.decided(LayerHalted, d.Reason)
		return d, nil
	}
	tr.passed(LayerHalted, "not halted")

	// 2. Hard stops.
	if budget := g.budgetValue(); budget > 0 && g.spentValue() > budget {
		h := &Halt{Cause: CauseBudget, Reason: fmt.Sprintf("budget exceeded: spent %g of %g", g.spentValue(), budget)}
		d.Layer, d.RuleID, d.Reason = LayerHardStop, "hard-stop:budget", h.Reason
		tr.decided(LayerHardStop, d.Reason)
		return d, h
	}
	var fixed [8]target
	targets := fixed[:0]
	for _, t := range a.Targets {
		root, p, err := st.ws.resolve(t)
		targets = append(targets, target{raw: t, root: root, path: p, err: err})
	}
	writes := levels.Has(risk.Mutating) || levels.Has(risk.Destructive)
	if writes && st.external == profile.ExternalWritesHalt {
		for _, t := range targets {
			if t.err == nil && t.root == "" {
				h := &Halt{Cause: CauseExternalWrite, Reason: "write outside the workspace: " + t.path}
				d.Layer, d.RuleID, d.Reason = LayerHardStop, "hard-stop:external-write", h.Reason
				tr.decided(LayerHardStop, d.Reason)
				return d, h
			}
		}
	}
	tr.passed(LayerHardStop, "no hard stop")

	// 3. Boundaries: protected paths, and targets that cannot be resolved.
	for _, t := range targets {
		if t.err != nil {
			d.Layer, d.RuleID = LayerBoundary, "unresolvable-path"
			d.Reason = fmt.Sprintf("target %q cannot be resolved: %v", t.raw, t.err)
			tr.decided(LayerBoundary, d.Reason)
			return d, nil
		}
		var hit string
		if t.root != "" {
			hit = st.prot.hitInside(t.root, t.path)
		} else {
			hit = st.prot.hitOutside(t.path)
		}
		if hit != "" {
			d.Layer, d.RuleID = LayerBoundary, "protected-path"
			d.Reason = fmt.Sprintf("target %q is protected (%s)", t.raw, hit)
			tr.decided(LayerBoundary, d.Reason)
			return d, nil
		}
	}
	tr.passed(LayerBoundary, "no protected path")

	// 4. Permission mode.
	switch st.mode {
	case profile.Plan:
		d.Layer, d.RuleID, d.Reason = LayerMode, "mode:plan", "plan mode denies tool execution"
		tr.decided(LayerMode, d.Reason)
		return d, nil
	case profile.ReadOnly:
		if levels != risk.Of(risk.ReadOnly) {
			d.Layer, d.RuleID, d.Reason = LayerMode, "mode:read-only", "read-only mode denies "+levels.String()
			tr.decided(LayerMode, d.Reason)
			return d, nil
		}
	}
	tr.passed(LayerMode, modeDetail[st.mode])

	// 5 and 6. Rules, then the autonomy matrix, for every part; the strictest part decides.
	sub := policy.Subject{Tool: a.Tool, Operation: op, Provider: a.Provider, Surface: a.Surface, Host: lowerHost(a.Host)}
	opaque := false
	if a.Command != "" {
		sub.Command = a.Command
		var ok bool
		sub.Argv, ok = plainArgv(a.Command, nil)
		opaque = !ok
	}
	first := true
	var obl policy.Obligations
	var sev risk.Severity
	for l := range levels.All() {
		sub.Level = l
		sub.Severity = l.Severity()
		if a.Severity != 0 && a.Risk.Has(l) {
			sub.Severity = a.Severity
		}
		n := len(targets)
		if n == 0 {
			n = 1
		}
		for i := 0; i < n; i++ {
			sub.Root, sub.Target = "", ""
			if len(targets) > 0 {
				sub.Root, sub.Target = targets[i].root, targets[i].path
			}
			v, layer, id, reason, o := g.decidePart(st, &sub, tr)
			if v != policy.Deny {
				obl |= o
			}
			// The strictest part decides; among equally strict parts, the most severe one
			// gives the reason.
			if first || v.StricterThan(d.Verdict) || v == d.Verdict && sub.Severity > sev {
				d.Verdict, d.Layer, d.RuleID, d.Reason = v, layer, id, reason
				sev = sub.Severity
				first = false
			}
		}
	}
	if d.Verdict == policy.Allow && opaque {
		d.Verdict, d.RuleID = policy.Confirm, "opaque-command"
		d.Reason = "the command cannot be analysed, so it is never auto-approved: " + d.Reason
	}
	if d.Verdict != policy.Deny {
		d.Obligations = obl
	}
	tr.decided(d.Layer, d.Reason)
	return d, nil
}

// decidePart runs the rule layer, then the matrix, for one part.
func (g *Gate) decidePart(st *state, sub *policy.Subject, tr *tracer) (policy.Verdict, Layer, string, string, policy.Obligations) {
	cell := policy.Matrix(st.band, sub.Level)
	obl := cell.Obligations | discipline(sub.Level)
	if m, ok := st.rules.Evaluate(sub); ok {
		tr.part(st, sub, m.Verdict, LayerRule, m.Rule.ID, cell)
		return m.Verdict, LayerRule, m.Rule.ID, m.Rule.Reason, obl | m.Obligations
	}
	tr.part(st, sub, cell.Verdict, LayerMatrix, "matrix", cell)
	return cell.Verdict, LayerMatrix, "matrix", matrixReasons[st.band][sub.Level], obl
}

func lowerHost(h string) string {
	for i := 0; i < len(h); i++ {
		if 'A' <= h[i] && h[i] <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// plainArgv splits a command line into words when it is a plain list of words (letters, digits
// and the punctuation of paths, flags and versions, separated by spaces). Anything a shell would
// interpret (quotes, $, backquotes, ;, &, |, <, >, globs, parentheses, newlines) makes the line
// opaque: ok is false and rules that match argument tokens do not apply.
func plainArgv(cmd string, dst []string) (argv []string, ok bool) {
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_./=:@%+,", c) >= 0:
		case c == ' ' || c == '\t':
		default:
			return nil, false
		}
	}
	for rest := cmd; ; {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		j := strings.IndexAny(rest, " \t")
		if j < 0 {
			j = len(rest)
		}
		dst = append(dst, rest[:j])
		rest = rest[j:]
	}
	return dst, len(dst) > 0
}
