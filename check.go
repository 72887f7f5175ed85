package reins

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// CheckSandboxTrusted is the check id of the record that says a decision's Sandbox obligation
// was not enforced because the host trusts the analysis (Options.TrustAnalysis).
const CheckSandboxTrusted = "obligation:sandbox-trusted"

// CheckRunState is the check id of a decision denied because the run state could not be read
// (layer input): the store is unreachable, so the run fails closed.
const CheckRunState = "run-state"

// Check decides action a without running anything: it takes a snapshot of the run state,
// decides with the active profile's gate, latches the hard stop the decision names, and records
// the decision. A host that runs its tools itself calls Check before and RecordResult after
// each one; Do does all of it.
//
// A non-nil error always comes with a Deny: the context was done, the run state could not be
// read, or the decision could not be recorded. A Deny for policy reasons is a decision, not an
// error; so is the Deny of an operation whose context an emergency stop cancelled before its
// decision (recorded, layer halted).
func (r *Run) Check(ctx context.Context, a policy.Action) (gate.Decision, error) {
	return r.check(ctx, r.act.Load(), a, nil)
}

// Explain decides a exactly as Check would, against the same snapshot of the run state, and
// returns the whole trace. It records nothing and latches nothing.
func (r *Run) Explain(ctx context.Context, a policy.Action) (gate.Explanation, error) {
	gs, err := r.snapshot(ctx)
	if err != nil {
		return gate.Explanation{}, fmt.Errorf("%w: %w", ErrRunState, err)
	}
	return r.act.Load().g.Explain(&gs, a), nil
}

// check is the admit step of every action: snapshot, decide, latch, record. tr, when not nil,
// collects the decision's trace.
func (r *Run) check(ctx context.Context, act *active, a policy.Action, tr *gate.Trace) (gate.Decision, error) {
	now := r.clock.Now()
	id := newV7(now)
	var d gate.Decision
	if err := ctx.Err(); err != nil {
		if !errors.Is(context.Cause(ctx), ErrEmergencyStop) {
			d := gate.Decision{Verdict: policy.Deny, Layer: policy.LayerInput, RuleID: gate.CheckContext, Reason: "context done before the decision",
				Profile: act.name, DecisionID: id, CorrelationID: correlation(a, id)}
			return d, fmt.Errorf("reins: check %q: %w", a.Tool, err)
		}
		// An emergency stop cancelled the operation before its decision: that is the halt's
		// Deny (even if a reset has come since), recorded like every decision.
		ctx = context.WithoutCancel(ctx)
		d = gate.Decision{Verdict: policy.Deny, Layer: policy.LayerHalted, RuleID: gate.CheckHalted, Profile: act.name,
			Reason: "the run is halted: an emergency stop cancelled the operation before its decision"}
	} else if gs, err := r.snapshot(ctx); err != nil {
		d = gate.Decision{Verdict: policy.Deny, Layer: policy.LayerInput, RuleID: CheckRunState, Profile: act.name,
			Reason: "the run state could not be read, so nothing is allowed: " + err.Error()}
		d.DecisionID, d.CorrelationID = id, correlation(a, id)
		_ = r.writeDecision(ctx, act, a, d, now)
		return d, fmt.Errorf("reins: check %q: %w: %w", a.Tool, ErrRunState, err)
	} else {
		d = act.g.Decide(&gs, a, tr)
	}
	d.DecisionID, d.CorrelationID = id, correlation(a, id)
	if d.Latch != "" {
		r.latch(ctx, gate.Halt{Cause: d.Latch, Reason: d.Reason, Time: now})
	}
	if err := r.writeDecision(ctx, act, a, d, now); err != nil {
		d.Verdict, d.Obligations, d.Layer, d.RuleID = policy.Deny, 0, policy.LayerAudit, gate.CheckAudit
		d.Reason = "the decision could not be recorded: " + err.Error()
		return d, fmt.Errorf("reins: check %q: recording the decision: %w", a.Tool, err)
	}
	return d, nil
}

func (r *Run) writeDecision(ctx context.Context, act *active, a policy.Action, d gate.Decision, now time.Time) error {
	rec := audit.Record{
		Time:          now,
		CorrelationID: d.CorrelationID, Profile: d.Profile, Operation: string(a.Operation),
		Decision: d.Verdict, RuleMatched: d.RuleID, Kind: audit.KindDecision, DecisionID: d.DecisionID,
		Layer: d.Layer, DecidedBy: audit.DecidedByLayer(d.Layer), Reason: d.Reason,
		Obligations: d.Obligations, Risk: d.Risk, ProfileHash: act.hash, BundleVersion: act.bundle,
		Tool: a.Tool, Command: a.Command, Host: a.Host, Targets: a.Targets,
	}
	if len(a.Targets) > 0 {
		rec.Target = a.Targets[0]
	}
	if a.Input != "" {
		rec.Input = cutInput(a.Input)
	}
	return r.sink.Write(ctx, rec)
}

func correlation(a policy.Action, id [16]byte) [16]byte {
	if a.CorrelationID != [16]byte{} {
		return a.CorrelationID
	}
	return id
}

// cutInput bounds the tool input an audit record keeps (policy.MaxInput bytes, cut at a rune
// boundary and marked).
func cutInput(in string) string {
	if len(in) <= policy.MaxInput {
		return in
	}
	n := policy.MaxInput
	for n > 0 && !utf8.RuneStart(in[n]) {
		n--
	}
	return in[:n] + "…[cut]"
}

// record writes r outside any decision: it fills the time and decision id (when zero), the
// correlation id (the decision id, when zero), the active profile and its hash (when empty) and
// the version of the policy bundle in force (when zero).
// It writes even when ctx is done (a record of what happened must not be lost to a
// cancellation).
func (r *Run) record(ctx context.Context, rec audit.Record) error {
	if rec.Time.IsZero() {
		rec.Time = r.clock.Now()
	}
	if rec.DecisionID == [16]byte{} {
		rec.DecisionID = newV7(rec.Time)
	}
	if rec.CorrelationID == [16]byte{} {
		rec.CorrelationID = rec.DecisionID
	}
	if rec.Profile == "" {
		act := r.act.Load()
		rec.Profile, rec.ProfileHash = act.name, act.hash
	}
	if rec.BundleVersion == 0 {
		rec.BundleVersion = r.act.Load().bundle
	}
	if err := r.sink.Write(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("reins: audit: %w", err)
	}
	return nil
}

// recordAbout writes rec as a record about action a and its decision d: it fills the time (when
// zero), the decision and correlation ids, the profile and hash of act, the action's fields and,
// where rec leaves them empty, the decision's layer, rule, obligations, risk and reason.
func (r *Run) recordAbout(ctx context.Context, act *active, a policy.Action, d gate.Decision, rec audit.Record) error {
	rec.DecisionID, rec.CorrelationID = d.DecisionID, d.CorrelationID
	rec.Profile, rec.ProfileHash, rec.BundleVersion, rec.Operation, rec.Tool, rec.Command, rec.Host, rec.Targets = act.name, act.hash, act.bundle, string(a.Operation), a.Tool, a.Command, a.Host, a.Targets
	if len(a.Targets) > 0 {
		rec.Target = a.Targets[0]
	}
	if rec.Layer == policy.LayerNone {
		rec.Layer = d.Layer
	}
	if rec.RuleMatched == "" {
		rec.RuleMatched = d.RuleID
	}
	if rec.Obligations == 0 {
		rec.Obligations = d.Obligations
	}
	if rec.Risk == 0 {
		rec.Risk = d.Risk
	}
	if rec.Reason == "" {
		rec.Reason = d.Reason
	}
	return r.record(ctx, rec)
}
