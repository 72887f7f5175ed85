package reins

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// ReplayOptions configure Replay. A nil *ReplayOptions means the defaults.
type ReplayOptions struct {
	// Workspace and ConfigDir are the gate's (see gate.Options); targets are resolved against
	// the workspace as it is now. Default: the current directory, and the gate's default.
	Workspace []string
	ConfigDir string
	// Baseline, when set, is re-decided too, for the "was" explanation (the profile that made
	// the log, or the same profile before an edit). Without it, Was holds only what the record
	// says (verdict, obligations, layer, rule, reason).
	Baseline *profile.Profile
	// MaxRecords bounds the decision records read. Default 1,000,000.
	MaxRecords int
}

// Change is one recorded decision that would be different.
type Change struct {
	// Record is the recorded decision; Action the action recovered from it.
	Record audit.Record
	Action policy.Action
	// Was explains the decision as recorded (or re-decided under the baseline); Now under the
	// profile replayed.
	Was, Now gate.Explanation
}

// String renders the change on one line.
func (c Change) String() string {
	return fmt.Sprintf("%s: %s -> %s", describe(c.Action), c.Was.Decision, c.Now.Decision)
}

// ReplayReport is what Replay found.
type ReplayReport struct {
	// Decisions counts the decision records re-decided.
	Decisions int
	// Skipped counts the decision records that could not be re-decided, and SkippedWhy says why,
	// per reason: they were decided by the run's state at the time (a latched halt, an exhausted
	// budget), not by the profile, or by a failure of the moment (a context or audit failure, an
	// unreadable run state).
	Skipped    int
	SkippedWhy map[string]int
	// Changes lists every decision that would change, in log order.
	Changes []Change
}

// Replay re-decides the actions recorded in an audit log (the decision records of records,
// from audit.Scan, say) under profile p, and reports every decision whose verdict or
// obligations would change, with both explanations. It records nothing and latches nothing.
//
// Records a standing grant decided are re-decided against the profile without the grant (the
// log does not hold the grant): the grant still answers what the profile would CONFIRM, so the
// record changes only when the profile now denies the action, which no grant outranks. A hard
// stop that depends on the action alone (a write outside the workspace) is re-decided; one that
// depended on the run's state is skipped with its reason.
//
// The action is recovered from the record's tool, operation, command, host and targets; for an
// action without a command line, the recorded risk set stands for its declared risk. What a
// record does not keep (a declared severity, the working directory, the environment, the
// provider and surface labels) is not replayed.
func Replay(ctx context.Context, records iter.Seq2[audit.Record, error], p profile.Profile, opts *ReplayOptions) (ReplayReport, error) {
	var o ReplayOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = 1_000_000
	}
	gopts := &gate.Options{Workspace: o.Workspace, ConfigDir: o.ConfigDir}
	now, err := gate.New(p, gopts)
	if err != nil {
		return ReplayReport{}, err
	}
	var base *gate.Gate
	if o.Baseline != nil {
		if base, err = gate.New(*o.Baseline, gopts); err != nil {
			return ReplayReport{}, err
		}
	}
	rep := ReplayReport{SkippedWhy: map[string]int{}}
	for r, err := range records {
		if err != nil {
			return rep, err
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if r.Kind != audit.KindDecision {
			continue
		}
		if rep.Decisions+rep.Skipped >= o.MaxRecords {
			return rep, fmt.Errorf("reins: replay: more than %d decision records", o.MaxRecords)
		}
		if why := unreplayable(r); why != "" {
			rep.Skipped++
			rep.SkippedWhy[why]++
			continue
		}
		rep.Decisions++
		a := ActionOf(r)
		en := now.Explain(nil, a)
		was := gate.Explanation{Decision: gate.Decision{Verdict: r.Decision, Obligations: r.Obligations, RuleID: r.RuleMatched,
			Reason: r.Reason, Profile: r.Profile, Risk: r.Risk, DecisionID: r.DecisionID, CorrelationID: r.CorrelationID, Layer: r.Layer}}
		if base != nil {
			was = base.Explain(nil, a)
		}
		if strings.HasPrefix(r.RuleMatched, gate.CheckGrantPrefix) {
			// The grant answered a CONFIRM: it would answer it again, and never a DENY.
			if base == nil && en.Decision.Verdict != policy.Deny {
				continue
			}
		}
		if was.Decision.Verdict != en.Decision.Verdict || was.Decision.Obligations != en.Decision.Obligations {
			r = r.Clone()
			rep.Changes = append(rep.Changes, Change{Record: r, Action: a, Was: was, Now: en})
		}
	}
	return rep, nil
}

// unreplayable says why a decision record cannot be re-decided from the action and a profile,
// or "" when it can.
func unreplayable(r audit.Record) string {
	switch r.Layer {
	case policy.LayerRule, policy.LayerMatrix, policy.LayerBoundary, policy.LayerMode:
		return ""
	case policy.LayerHardStop:
		if r.RuleMatched == gate.CheckHardStopExternalWrite {
			return ""
		}
		return "decided by the run's state (" + r.RuleMatched + ")"
	case policy.LayerHalted:
		return "decided by the run's state (a latched halt)"
	case policy.LayerInput:
		if r.RuleMatched == gate.CheckUnparsableCommand || r.RuleMatched == gate.CheckInvalidRisk {
			return ""
		}
		return "decided by a failure of the moment (" + r.RuleMatched + ")"
	}
	return "decided by a failure of the moment (" + r.Layer.String() + ")"
}

// ActionOf recovers the action a decision record describes (see Replay for what is lost).
func ActionOf(r audit.Record) policy.Action {
	a := policy.Action{Tool: r.Tool, Operation: policy.Operation(r.Operation), Command: r.Command, Host: r.Host,
		Targets: append([]string(nil), r.Targets...), CorrelationID: r.CorrelationID}
	if a.Targets == nil && r.Target != "" {
		a.Targets = []string{r.Target}
	}
	if a.Command == "" {
		// Levels read from a shell analysis are not declared; the rest are.
		a.Risk = r.Risk & risk.Of(risk.Levels()...)
	}
	return a
}
