package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// Outcome is how Do ended.
type Outcome struct {
	// Decision is the final decision: the gate's, or, when Do refused the action after it (an
	// approval refused or timed out, an obligation that could not be honoured), a fresh Deny
	// with its own layer and reason and no obligations.
	Decision gate.Decision
	// Approval is set when a CONFIRM was put to the approver.
	Approval *Approval
	// CheckpointID is the checkpoint taken before the action (or the batch's), if any.
	CheckpointID string
	// Ran reports that the action's function was called.
	Ran bool
	// RolledBack reports that the workspace was restored to CheckpointID after the failure.
	RolledBack bool
	// Parked is the id under which the action waits for review, if it was parked.
	Parked string
}

// ActionError is the failure of an action that ran: the tool's own error, not the gate's
// refusal (it never matches gate.ErrDenied), with what the rollback did.
type ActionError struct {
	Err error
	// RolledBack reports that the workspace was restored; RollbackErr why it could not be.
	RolledBack  bool
	RollbackErr error
}

// Error implements error.
func (e *ActionError) Error() string {
	s := "session: the action failed: " + e.Err.Error()
	switch {
	case e.RolledBack:
		s += " (rolled back)"
	case e.RollbackErr != nil:
		s += " (rollback failed: " + e.RollbackErr.Error() + ")"
	}
	return s
}

// Unwrap returns the action's error and the rollback's.
func (e *ActionError) Unwrap() []error {
	if e.RollbackErr != nil {
		return []error{e.Err, e.RollbackErr}
	}
	return []error{e.Err}
}

// Func is an action's body. It receives the operation's context (cancelled by an emergency
// stop, bounded by the profile's timeout) and the decision it runs under.
type Func func(ctx context.Context, d gate.Decision) error

// Do runs one action end to end as one gate operation: it decides; asks the approver for a
// CONFIRM (or applies a standing grant, or parks it, or denies it: see Options); honours the
// obligations (a checkpoint first, a notification); calls fn; on failure restores the
// checkpoint. One decision record (the gate's), at most one approval record and exactly one
// outcome record are written; checkpoint events are recorded on their own.
//
// A grant's use count counts the actions whose decision names it (Decision.RuleID "grant:...");
// a grant that answered one part of a compound action whose reason names another rule is not
// counted.
//
// The error is nil, or matches gate.ErrDenied (a *gate.DeniedError with the alternatives the
// engine knows, or a *ParkedError), or is an *ActionError: the gate's refusal and the tool's
// failure are told apart. An action whose decision carries the Sandbox obligation is denied
// here: run commands with DoCommand, which honours it.
func (s *Session) Do(ctx context.Context, a policy.Action, fn Func) (Outcome, error) {
	op, err := s.g.Begin(ctx)
	if err != nil {
		return Outcome{}, err
	}
	defer op.End()
	return s.do(op.Context(), op, a, fn, nil, "")
}

// DoCommand is Do for a command: it runs cmd through the session's runner, the Sandbox runner
// when the decision carries the Sandbox obligation (without one the command is denied). When
// cmd.Args is empty it is sh -c a.Command; when a.Command is empty it is cmd.Args, quoted. A
// result with violations latches the gate's sandbox-escape hard stop; a non-zero exit status is
// the action's failure (rolled back when it was checkpointed).
func (s *Session) DoCommand(ctx context.Context, a policy.Action, cmd sandbox.Command) (Outcome, sandbox.Result, error) {
	a, cmd, err := commandPair(a, cmd)
	if err != nil {
		return Outcome{}, sandbox.Result{ExitCode: sandbox.ExitDenied}, err
	}
	var res sandbox.Result
	op, err := s.g.Begin(ctx)
	if err != nil {
		return Outcome{}, res, err
	}
	defer op.End()
	out, err := s.do(op.Context(), op, a, func(ctx context.Context, d gate.Decision) error {
		var rerr error
		res, rerr = s.runCommand(ctx, d, cmd)
		return rerr
	}, nil, "command")
	return out, res, err
}

// CommandError is a command's non-zero exit status.
type CommandError struct{ Result sandbox.Result }

// Error implements error.
func (e *CommandError) Error() string {
	s := fmt.Sprintf("exit status %d", e.Result.ExitCode)
	if e.Result.TimedOut {
		s += " (timed out or cancelled)"
	}
	return s
}

func (s *Session) runner(d gate.Decision) Runner {
	if d.Obligations.Has(policy.Sandbox) || s.opts.Runner == nil {
		return s.opts.Sandbox
	}
	return s.opts.Runner
}

func (s *Session) runCommand(ctx context.Context, d gate.Decision, cmd sandbox.Command) (sandbox.Result, error) {
	r := s.runner(d)
	res, err := r.Run(ctx, cmd)
	if res.Escaped() {
		v := make([]string, 0, len(res.Violations))
		for _, x := range res.Violations {
			v = append(v, x.String())
		}
		s.g.RecordViolation(context.WithoutCancel(ctx), strings.Join(v, "; "))
	}
	if err != nil {
		return res, err
	}
	if res.ExitCode != 0 {
		return res, &CommandError{Result: res}
	}
	return res, nil
}

func commandPair(a policy.Action, cmd sandbox.Command) (policy.Action, sandbox.Command, error) {
	switch {
	case len(cmd.Args) == 0 && a.Command == "":
		return a, cmd, errors.New("session: DoCommand: neither the action's command nor the command's arguments are set")
	case len(cmd.Args) == 0:
		cmd.Args = []string{"sh", "-c", a.Command}
	case a.Command == "":
		a.Command = quoteArgs(cmd.Args)
	case !(len(cmd.Args) == 3 && cmd.Args[0] == "sh" && cmd.Args[1] == "-c" && cmd.Args[2] == a.Command) && quoteArgs(cmd.Args) != a.Command:
		return a, cmd, errors.New("session: DoCommand: the action's command and the command's arguments differ (the gate must decide what runs)")
	}
	if a.Operation == "" {
		a.Operation = policy.OpShell
	}
	return a, cmd, nil
}

// quoteArgs renders an argument vector as a shell line, quoting what needs it.
func quoteArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// batchState is the batch an action runs in: its checkpoint stands for every action's.
type batchState struct {
	checkpoint string
}

// do runs one action within op. kind is "command" for DoCommand (which honours Sandbox).
func (s *Session) do(ctx context.Context, op *gate.Op, a policy.Action, fn Func, b *batchState, kind string) (Outcome, error) {
	var out Outcome
	s.tick(ctx)
	d, err := op.Check(ctx, a)
	out.Decision = d
	if err != nil {
		_ = op.Record(ctx, a, d, audit.Record{Kind: audit.KindOutcome, Decision: policy.Deny, Outcome: OutcomeDenied, Error: err.Error()})
		return out, err
	}
	// deny refuses the action after the decision: a fresh Deny of its own layer, no obligations.
	deny := func(layer policy.Layer, ruleID, reason string) (Outcome, error) {
		nd := gate.Decision{Verdict: policy.Deny, Layer: layer, RuleID: ruleID, Reason: reason, Profile: d.Profile,
			Risk: d.Risk, CorrelationID: d.CorrelationID, DecisionID: d.DecisionID}
		out.Decision = nd
		rec := audit.Record{Kind: audit.KindOutcome, Decision: policy.Deny, DecidedBy: audit.DecidedByDefault,
			Outcome: OutcomeDenied, Layer: layer, RuleMatched: ruleID, Reason: reason, Obligations: 0}
		if out.Approval != nil && out.Approval.Human {
			rec.DecidedBy, rec.UserOverride = audit.DecidedByUser, true
		}
		_ = op.Record(ctx, a, nd, rec)
		return out, &gate.DeniedError{Decision: nd, Alternatives: s.g.Alternatives(ctx, a, nd)}
	}

	if d.Verdict == policy.Allow && strings.HasPrefix(d.RuleID, gate.CheckGrantPrefix) && !s.grants.use(d.RuleID) {
		// The grant expired or was used up since the decision: ask again.
		d.Verdict = policy.Confirm
		d.Reason = "the grant " + d.RuleID + " no longer applies; " + d.Reason
	}
	switch d.Verdict {
	case policy.Allow:
	case policy.Confirm:
		if s.opts.Approver == nil {
			if s.opts.Headless == HeadlessPark {
				id := s.park(a, d, timeNow())
				out.Parked = id
				_ = op.Record(ctx, a, d, audit.Record{Kind: KindParked, Decision: policy.Confirm, DecidedBy: audit.DecidedByDefault,
					RuleMatched: "parked:" + id, Reason: "no approver: parked for review as " + id})
				_ = op.Record(ctx, a, d, audit.Record{Kind: audit.KindOutcome, Decision: policy.Confirm, Outcome: OutcomeParked,
					RuleMatched: "parked:" + id, Reason: "parked for review as " + id})
				return out, &ParkedError{ID: id, Decision: d}
			}
			return deny(policy.LayerApproval, gate.CheckApprovalNone, "the action needs confirmation and no approver is configured (headless: deny)")
		}
		ap, ans, rule := s.ask(ctx, a, d)
		out.Approval = &ap
		rec := audit.Record{Kind: KindApproval, Decision: policy.Deny, DecidedBy: audit.DecidedByDefault, RuleMatched: rule,
			Reason: describeApproval(ap), Approver: ap.By, Note: ap.Note}
		if ap.Approved {
			rec.ApprovalScope = ap.Scope.String()
		}
		if ap.Human {
			rec.DecidedBy, rec.UserOverride = audit.DecidedByUser, true
		}
		if ap.Approved {
			rec.Decision = policy.Allow
		}
		if err := op.Record(ctx, a, d, rec); err != nil {
			return deny(policy.LayerAudit, gate.CheckAudit, "the approval could not be recorded: "+err.Error())
		}
		if !ap.Approved {
			reason := "the user did not approve"
			switch rule {
			case gate.CheckApprovalTimeout:
				reason = "no approval within " + s.opts.ApprovalTimeout.String() + ": a timeout counts as a denial"
			case gate.CheckApprovalError:
				reason = ap.Note
			}
			if ap.Human && ap.Note != "" {
				reason += ": " + ap.Note
			}
			return deny(policy.LayerApproval, rule, reason)
		}
		if ap.Scope != Once {
			exp, _ := s.g.Explain(ctx, a)
			exp.Decision = d
			review := func(p Proposal) bool {
				ans2, err, timedOut := s.call(ctx, Request{Action: a, Decision: d, Explanation: exp, Proposal: &p})
				return err == nil && !timedOut && ans2.Verdict == policy.Allow
			}
			if g, err := s.grant(ctx, a, exp, ans, review); err == nil {
				ap.Grant, ap.Scope = g.ID, g.Scope
			} else {
				ap.Scope = Once
			}
		}
		d.Verdict = policy.Allow
		out.Decision = d
	default:
		_ = op.Record(ctx, a, d, audit.Record{Kind: audit.KindOutcome, Decision: policy.Deny, Outcome: OutcomeDenied})
		return out, &gate.DeniedError{Decision: d, Alternatives: s.g.Alternatives(ctx, a, d)}
	}

	if d.Obligations.Has(policy.Sandbox) && kind != "command" {
		return deny(policy.LayerObligation, gate.CheckObligationSandbox, "the decision requires a sandbox: run the command with DoCommand")
	}
	if kind == "command" && s.runner(d) == nil {
		return deny(policy.LayerObligation, gate.CheckObligationSandbox, "the decision requires a sandbox and no sandbox runner is configured")
	}
	if d.Obligations.Has(policy.Checkpoint) {
		switch {
		case b != nil:
			out.CheckpointID = b.checkpoint
		case s.opts.Checkpointer == nil:
			return deny(policy.LayerObligation, gate.CheckObligationCheckpoint, "the decision requires a checkpoint and no checkpointer is configured")
		default:
			id, err := s.opts.Checkpointer.Snapshot(ctx, "before "+describe(a), d.CorrelationID.String())
			if err != nil {
				return deny(policy.LayerObligation, gate.CheckObligationCheckpoint, "the checkpoint could not be taken: "+err.Error())
			}
			out.CheckpointID = id
			s.recordCheckpoint(ctx, op, a, d, audit.KindCheckpointCreated, id, "before "+describe(a))
		}
	}
	if d.Obligations.Has(policy.Notify) {
		if s.opts.Notifier == nil {
			return deny(policy.LayerObligation, gate.CheckObligationNotify, "the decision requires notifying the user and no notifier is configured")
		}
		if err := s.opts.Notifier.Notify(ctx, Notice{Kind: NoticeAction, Action: a, Decision: d, Message: describe(a)}); err != nil {
			return deny(policy.LayerObligation, gate.CheckObligationNotify, "the user could not be notified: "+err.Error())
		}
	}
	if err := ctx.Err(); err != nil {
		return deny(policy.LayerHalted, gate.CheckContext, "the operation ended before the action ran: "+context.Cause(ctx).Error())
	}

	out.Ran = true
	ferr := fn(ctx, d)
	s.g.RecordResult(context.WithoutCancel(ctx), a.Tool, ferr)
	if _, ok := s.meters.m[MeterActions]; ok {
		_ = s.Use(ctx, MeterActions, 1)
	}
	rec := audit.Record{Kind: audit.KindOutcome, Decision: d.Verdict, DecidedBy: audit.DecidedByLayer(d.Layer),
		Outcome: audit.OutcomeSucceeded, CheckpointID: out.CheckpointID}
	if out.Approval != nil {
		rec.DecidedBy, rec.UserOverride = audit.DecidedByUser, out.Approval.Human
	}
	var aerr *ActionError
	if ferr != nil {
		aerr = &ActionError{Err: ferr}
		rec.Outcome, rec.Error = audit.OutcomeFailed, ferr.Error()
		if out.CheckpointID != "" && b == nil {
			if rerr := s.opts.Checkpointer.Restore(context.WithoutCancel(ctx), out.CheckpointID); rerr != nil {
				aerr.RollbackErr = fmt.Errorf("session: rollback to %s failed: %w", out.CheckpointID, rerr)
				rec.Error += "; rollback failed: " + rerr.Error()
			} else {
				out.RolledBack, aerr.RolledBack = true, true
				rec.Outcome = audit.OutcomeRolledBack
			}
		}
	}
	// The log reads decision, approval, checkpoint, failure, rollback: the outcome record comes
	// before the restore's event.
	rerr := op.Record(ctx, a, d, rec)
	if out.RolledBack {
		s.recordCheckpoint(ctx, op, a, d, audit.KindCheckpointRestored, out.CheckpointID, "rollback after: "+ferr.Error())
	}
	if err := rerr; err != nil {
		if aerr == nil {
			return out, err
		}
		return out, errors.Join(aerr, err)
	}
	if aerr != nil {
		return out, aerr
	}
	return out, nil
}

// recordCheckpoint writes a typed checkpoint event of Do's own checkpoints.
func (s *Session) recordCheckpoint(ctx context.Context, op *gate.Op, a policy.Action, d gate.Decision, k audit.Kind, id, label string) {
	if err := op.Record(ctx, a, d, audit.Record{Kind: k, Decision: policy.Allow, DecidedBy: audit.DecidedByHook,
		RuleMatched: "checkpoint", CheckpointID: id, Reason: label}); err != nil {
		s.log.Error("session: checkpoint event could not be recorded", "err", err)
	}
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
