package gate

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

// Checkpointer snapshots the workspace before mutating work and restores it after a failure.
// *checkpoint.Checkpointer satisfies it.
type Checkpointer interface {
	// Snapshot records the workspace and returns the checkpoint's id.
	Snapshot(ctx context.Context, label, correlationID string) (id string, err error)
	// Restore makes the workspace exactly the checkpoint again.
	Restore(ctx context.Context, id string) error
}

// Approver answers a CONFIRM: whether a human approves the action. An error counts as no.
type Approver interface {
	Approve(ctx context.Context, a policy.Action, d Decision) (bool, error)
}

// ApproverFunc adapts a function to an Approver.
type ApproverFunc func(ctx context.Context, a policy.Action, d Decision) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, a policy.Action, d Decision) (bool, error) {
	return f(ctx, a, d)
}

// Notifier tells the user that an action is going ahead (the Notify obligation). An error
// stops the action: an obligation that cannot be honoured is not honoured.
type Notifier interface {
	Notify(ctx context.Context, a policy.Action, d Decision) error
}

// NotifierFunc adapts a function to a Notifier.
type NotifierFunc func(ctx context.Context, a policy.Action, d Decision) error

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, a policy.Action, d Decision) error {
	return f(ctx, a, d)
}

// Outcome is how Do ended.
type Outcome struct {
	// Decision is the gate's decision (after approval, for a Confirm).
	Decision Decision
	// Approved reports that a human approved a CONFIRM.
	Approved bool
	// CheckpointID is the checkpoint taken before the action, if any.
	CheckpointID string
	// Ran reports that the action's function was called; Err is what it returned.
	Ran bool
	Err error
	// RolledBack reports that the workspace was restored to CheckpointID after the failure.
	RolledBack bool
}

// ErrNotApproved is returned (wrapped in a DeniedError's decision reason) when a CONFIRM was
// refused or nobody could be asked.
var ErrNotApproved = errors.New("gate: not approved")

// Do runs one action end to end, as one operation (see Begin): it decides, asks the Approver for
// a CONFIRM, honours the obligations (a checkpoint first, a notification), calls run, and on
// failure restores the checkpoint; the outcome is recorded in the audit log and reported to the
// failure counter (three failures of one tool in a row halt the run).
//
// It fails closed: a Deny, a CONFIRM without an Approver or without approval, an obligation the
// gate cannot honour (Checkpoint without a Checkpointer, Notify without a Notifier) or that fails,
// all return an error matching ErrDenied and run nothing. The Sandbox obligation is the host's:
// run receives the decision and must run the action sandboxed when d.Obligations has Sandbox.
func (g *Gate) Do(ctx context.Context, a policy.Action, run func(ctx context.Context, d Decision) error) (Outcome, error) {
	var out Outcome
	op, err := g.Begin(ctx)
	if err != nil {
		return out, err
	}
	defer op.End()
	ctx = op.Context()
	d, err := op.Check(ctx, a)
	out.Decision = d
	if err != nil {
		return out, err
	}
	deny := func(reason string) (Outcome, error) {
		d.Verdict, d.Reason = policy.Deny, reason
		out.Decision = d
		g.recordDo(ctx, op.st, a, d, audit.Record{Kind: audit.KindDecision, Decision: policy.Deny, DecidedBy: audit.DecidedByDefault, Reason: reason})
		return out, &DeniedError{Decision: d}
	}
	switch d.Verdict {
	case policy.Allow:
	case policy.Confirm:
		if g.opts.Approver == nil {
			return deny("the action needs confirmation and no approver is configured")
		}
		ok, err := g.opts.Approver.Approve(ctx, a, d)
		if err != nil || !ok {
			reason := "the user did not approve"
			if err != nil {
				reason = "approval failed: " + err.Error()
			}
			d.Verdict, d.Reason = policy.Deny, reason
			out.Decision = d
			g.recordDo(ctx, op.st, a, d, audit.Record{Kind: audit.KindDecision, Decision: policy.Deny, DecidedBy: audit.DecidedByUser, UserOverride: true, Reason: reason})
			return out, fmt.Errorf("%w: %w", ErrNotApproved, &DeniedError{Decision: d})
		}
		out.Approved = true
		d.Verdict = policy.Allow
		out.Decision = d
		if err := g.recordDo(ctx, op.st, a, d, audit.Record{Kind: audit.KindDecision, Decision: policy.Allow, DecidedBy: audit.DecidedByUser, UserOverride: true, Reason: "approved by the user"}); err != nil {
			return deny("the approval could not be recorded: " + err.Error())
		}
	default:
		return out, &DeniedError{Decision: d}
	}

	if d.Obligations.Has(policy.Checkpoint) {
		if g.opts.Checkpointer == nil {
			return deny("the decision requires a checkpoint and no checkpointer is configured")
		}
		id, err := g.opts.Checkpointer.Snapshot(ctx, "before "+describe(a), d.CorrelationID.String())
		if err != nil {
			return deny("the checkpoint could not be taken: " + err.Error())
		}
		out.CheckpointID = id
	}
	if d.Obligations.Has(policy.Notify) {
		if g.opts.Notifier == nil {
			return deny("the decision requires notifying the user and no notifier is configured")
		}
		if err := g.opts.Notifier.Notify(ctx, a, d); err != nil {
			return deny("the user could not be notified: " + err.Error())
		}
	}

	out.Ran = true
	out.Err = run(ctx, d)
	g.RecordResult(ctx, a.Tool, out.Err)
	rec := audit.Record{Kind: audit.KindOutcome, Decision: d.Verdict, DecidedBy: audit.DecidedByLayer(d.Layer.String()),
		Outcome: audit.OutcomeSucceeded, CheckpointID: out.CheckpointID}
	if out.Err != nil {
		rec.Outcome, rec.Error = audit.OutcomeFailed, out.Err.Error()
		if out.CheckpointID != "" {
			if rerr := g.opts.Checkpointer.Restore(context.WithoutCancel(ctx), out.CheckpointID); rerr != nil {
				rec.Error += "; rollback failed: " + rerr.Error()
				out.Err = errors.Join(out.Err, fmt.Errorf("gate: rollback to %s failed: %w", out.CheckpointID, rerr))
			} else {
				out.RolledBack = true
				rec.Outcome = audit.OutcomeRolledBack
			}
		}
	}
	if err := g.recordDo(ctx, op.st, a, d, rec); err != nil {
		out.Err = errors.Join(out.Err, err)
	}
	return out, out.Err
}

// recordDo writes a record about the decision d of action a, filling what it shares with the
// decision record.
func (g *Gate) recordDo(ctx context.Context, st *state, a policy.Action, d Decision, r audit.Record) error {
	r.Time = g.clock()
	r.DecisionID, r.CorrelationID = d.DecisionID, d.CorrelationID
	r.Profile, r.ProfileHash, r.Operation, r.Tool, r.Command, r.Host, r.Targets = st.name, st.hash, string(a.Operation), a.Tool, a.Command, a.Host, a.Targets
	if len(a.Targets) > 0 {
		r.Target = a.Targets[0]
	}
	r.Layer, r.RuleMatched, r.Obligations, r.Risk = d.Layer.String(), d.RuleID, d.Obligations, d.Risk
	if r.Reason == "" {
		r.Reason = d.Reason
	}
	if err := g.sink.Write(context.WithoutCancel(ctx), r); err != nil {
		return fmt.Errorf("gate: audit: %w", err)
	}
	return nil
}

func describe(a policy.Action) string {
	switch {
	case a.Command != "":
		return a.Command
	case len(a.Targets) > 0:
		return a.Tool + " " + a.Targets[0]
	}
	return a.Tool
}

// CheckpointEvent is a checkpoint event as the host hands it to RecordCheckpoint (the fields of
// checkpoint.Event, without the gate importing that package).
type CheckpointEvent struct {
	// Kind is "created", "restored" or "pruned".
	Kind          string
	ID            string
	Label         string
	CorrelationID string
	Workspace     string
	// Undo is, for a restore, the checkpoint holding the state it replaced; Cause why it ran.
	Undo  string
	Cause error
}

// RecordCheckpoint writes a checkpoint event to the audit log. Wire it to the checkpointer's
// event callback so the trail shows every snapshot, restore and prune:
//
//	checkpoint.Options{OnEvent: func(ev checkpoint.Event) {
//		g.RecordCheckpoint(ctx, gate.CheckpointEvent{Kind: ..., ID: ev.Checkpoint.ID, ...})
//	}}
func (g *Gate) RecordCheckpoint(ctx context.Context, ev CheckpointEvent) error {
	var kind audit.Kind
	switch ev.Kind {
	case "created":
		kind = audit.KindCheckpointCreated
	case "restored":
		kind = audit.KindCheckpointRestored
	case "pruned":
		kind = audit.KindCheckpointPruned
	default:
		return fmt.Errorf("gate: RecordCheckpoint: unknown event kind %q (want created, restored or pruned)", ev.Kind)
	}
	now := g.clock()
	st := g.st.Load()
	reason := ev.Label
	if ev.Undo != "" {
		reason += " (undo with " + ev.Undo + ")"
	}
	if ev.Cause != nil {
		reason += ": " + ev.Cause.Error()
	}
	r := audit.Record{Time: now, Kind: kind, DecisionID: newV7(now), Profile: st.name, ProfileHash: st.hash,
		CheckpointID: ev.ID, Target: ev.Workspace, Reason: reason, Decision: policy.Allow, DecidedBy: audit.DecidedByHook,
		RuleMatched: "checkpoint"}
	r.CorrelationID = r.DecisionID
	if id, err := uuid.Parse(ev.CorrelationID); err == nil {
		r.CorrelationID = id
	}
	if err := g.sink.Write(ctx, r); err != nil {
		return fmt.Errorf("gate: audit: %w", err)
	}
	return nil
}
