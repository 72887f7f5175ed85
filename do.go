package reins

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

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
// refusal, with what the rollback did. It never matches gate.ErrDenied, even when the tool's
// error does (a tool that itself went through a gate): a failing tool must not read as a
// denial. Err holds the tool's error as it was.
type ActionError struct {
	Err error
	// RolledBack reports that the workspace was restored; RollbackErr why it could not be.
	RolledBack  bool
	RollbackErr error
}

// Error implements error.
func (e *ActionError) Error() string {
	s := "reins: the action failed: " + e.Err.Error()
	switch {
	case e.RolledBack:
		s += " (rolled back)"
	case e.RollbackErr != nil:
		s += " (rollback failed: " + e.RollbackErr.Error() + ")"
	}
	return s
}

// Unwrap returns the action's error and the rollback's. A tool error that matches
// gate.ErrDenied is returned opaque (its text only), so errors.Is(err, gate.ErrDenied) stays
// false for a failed action; read Err for the error itself.
func (e *ActionError) Unwrap() []error {
	err := e.Err
	if errors.Is(err, gate.ErrDenied) {
		err = opaqueError{err.Error()}
	}
	if e.RollbackErr != nil {
		return []error{err, e.RollbackErr}
	}
	return []error{err}
}

type opaqueError struct{ s string }

func (e opaqueError) Error() string { return e.s }

// Func is an action's body. It receives the operation's context (cancelled by an emergency
// stop, bounded by the profile's timeout) and the decision it runs under.
type Func func(ctx context.Context, d gate.Decision) error

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

// Do runs one action end to end as one operation, through the run's pipeline:
//
//  1. admit: take a snapshot of the run state, decide with the gate (tracing the decision),
//     latch what it says to latch, record it;
//  2. approve: apply a standing grant (counting its use), or ask the approver about a CONFIRM
//     (or park it, or deny it: see Options), keeping the answer as a grant when the human says
//     so;
//  3. obligations: a checkpoint first, a notification, the sandbox;
//  4. run fn;
//  5. settle: count the result, roll the workspace back on failure, record the outcome.
//
// One decision record, at most one approval record and exactly one outcome record are written;
// checkpoint events are recorded on their own.
//
// The error is nil, or matches gate.ErrDenied (a *gate.DeniedError with the alternatives the
// engine knows, or a *ParkedError), or is an *ActionError: the gate's refusal and the tool's
// failure are told apart. An action whose decision carries the Sandbox obligation is denied
// here: run commands with DoCommand, which honours it.
func (r *Run) Do(ctx context.Context, a policy.Action, fn Func) (Outcome, error) {
	op, err := r.Begin(ctx)
	if err != nil {
		return Outcome{}, err
	}
	defer op.End()
	return r.do(op.ctx, op, a, fn, nil, nil)
}

// DoCommand is Do for a command: it runs cmd through the run's runner, or, when the decision
// carries the Sandbox obligation, through the Sandbox runner confined to what the gate's analysis
// claimed (see Options.Sandbox and Options.TrustAnalysis). When
// cmd.Args is empty it is bash -c a.Command (bash, whose grammar the analysis reads); when
// a.Command is empty it is cmd.Args, quoted. The command runs only as decided: its Dir and Env
// are the action's WorkDir and Env (a cmd.Dir or cmd.Env the action does not carry is decided
// with the action; one that differs from it is refused). A result with violations latches the
// run's sandbox-escape hard stop; a non-zero exit status is the action's failure (rolled back
// when it was checkpointed).
func (r *Run) DoCommand(ctx context.Context, a policy.Action, cmd sandbox.Command) (Outcome, sandbox.Result, error) {
	op, err := r.Begin(ctx)
	if err != nil {
		return Outcome{}, sandbox.Result{ExitCode: sandbox.ExitDenied}, err
	}
	defer op.End()
	return r.doCommand(op.ctx, op, a, cmd, nil)
}

func (r *Run) doCommand(ctx context.Context, op *Op, a policy.Action, cmd sandbox.Command, b *batchState) (Outcome, sandbox.Result, error) {
	a, cmd, err := commandPair(a, cmd)
	if err != nil {
		return Outcome{}, sandbox.Result{ExitCode: sandbox.ExitDenied}, err
	}
	var res sandbox.Result
	var runner Runner
	out, err := r.do(ctx, op, a, func(ctx context.Context, d gate.Decision) error {
		var rerr error
		res, rerr = r.runCommand(ctx, runner, cmd)
		return rerr
	}, b, &commandRun{cmd: &cmd, runner: &runner})
	return out, res, err
}

// commandRun is what the pipeline settles for a DoCommand: the command (its Confine set when the
// decision is confined) and the runner it runs in.
type commandRun struct {
	cmd    *sandbox.Command
	runner *Runner
}

// plain returns the runner of a command that needs no sandbox: Runner, or Sandbox without one.
func (r *Run) plain() Runner {
	if r.opts.Runner != nil {
		return r.opts.Runner
	}
	return r.opts.Sandbox
}

// enforcing reports whether the run has a sandbox that enforces a confinement (sandbox.Enforcing).
func (r *Run) enforcing() bool {
	s, ok := r.opts.Sandbox.(sandbox.Sandbox)
	return ok && r.opts.Sandbox != nil && sandbox.Enforcing(s)
}

func (r *Run) runCommand(ctx context.Context, runner Runner, cmd sandbox.Command) (sandbox.Result, error) {
	res, err := runner.Run(ctx, cmd)
	// Every violation is an escape signal but one the backend reports when it could not check a
	// command (a script its reader does not know): that refusal is the backend's limit, not the
	// command's attempt, so the command fails without halting the run.
	var v []string
	for _, x := range res.Violations {
		if x.Kind != sandbox.ViolationUncheckable {
			v = append(v, x.String())
		}
	}
	if len(v) > 0 {
		r.RecordViolation(context.WithoutCancel(ctx), strings.Join(v, "; "))
	}
	if err != nil {
		return res, err
	}
	if res.ExitCode != 0 {
		return res, &CommandError{Result: res}
	}
	return res, nil
}

// commandPair makes the action and the command say the same thing: the line, the working
// directory and the environment the gate decides are the ones that run.
func commandPair(a policy.Action, cmd sandbox.Command) (policy.Action, sandbox.Command, error) {
	switch {
	case len(cmd.Args) == 0 && a.Command == "":
		return a, cmd, errors.New("reins: DoCommand: neither the action's command nor the command's arguments are set")
	case len(cmd.Args) == 0:
		cmd.Args = []string{"bash", "-c", a.Command}
	case a.Command == "":
		a.Command = quoteArgs(cmd.Args)
	case !(len(cmd.Args) == 3 && (cmd.Args[0] == "bash" || cmd.Args[0] == "sh") && cmd.Args[1] == "-c" && cmd.Args[2] == a.Command) && quoteArgs(cmd.Args) != a.Command:
		return a, cmd, errors.New("reins: DoCommand: the action's command and the command's arguments differ (the gate must decide what runs)")
	}
	if len(cmd.Args) >= 3 && path.Base(cmd.Args[0]) == "sh" && cmd.Args[1] == "-c" {
		// The analysis reads bash's grammar; sh is dash on Debian and Ubuntu, which reads some
		// lines differently. Run what was analysed (with any positional arguments after the
		// script, and whichever path names sh).
		cmd.Args = append([]string{"bash"}, cmd.Args[1:]...)
	}
	switch {
	case cmd.Dir == "":
		cmd.Dir = a.WorkDir
	case a.WorkDir == "":
		a.WorkDir = cmd.Dir
	case cmd.Dir != a.WorkDir:
		return a, cmd, fmt.Errorf("reins: DoCommand: the command's directory %q is not the action's %q (the gate must decide where it runs)", cmd.Dir, a.WorkDir)
	}
	switch {
	case len(cmd.Env) == 0:
		cmd.Env = slices.Clone(a.Env)
	case len(a.Env) == 0:
		a.Env = slices.Clone(cmd.Env)
	case !sameEnv(cmd.Env, a.Env):
		return a, cmd, errors.New("reins: DoCommand: the command's environment is not the action's (the gate must decide what it runs with)")
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

// pipeline is one action's way through the run: the steps of Do, one method each, called in
// order; each reports whether the action goes on. It lives on do's stack.
type pipeline struct {
	r     *Run
	op    *Op
	a     policy.Action
	cmd   *commandRun // set for DoCommand
	b     *batchState // set within a batch
	tr    *gate.Trace // from tracePool, for the time of the pipeline
	d     gate.Decision
	out   Outcome
	err   error
	ans   Answer
	human bool // a human approved
	// confined holds what the analysis claimed for an allowed shell line (the Sandbox
	// obligation's policy); unconfined says the line was asked about because no sandbox here
	// enforces it, so an approval runs it without one; trusted says the host trusts the
	// analysis instead (Options.TrustAnalysis).
	confined   *gate.Confinement
	unconfined bool
	trusted    bool
}

// do runs one action within op.
func (r *Run) do(ctx context.Context, op *Op, a policy.Action, fn Func, b *batchState, cmd *commandRun) (Outcome, error) {
	tr := tracePool.Get().(*gate.Trace)
	defer tracePool.Put(tr)
	p := pipeline{r: r, op: op, a: a, cmd: cmd, b: b, tr: tr}
	if p.admit(ctx) && p.approve(ctx) && p.obligations(ctx) {
		p.settle(ctx, p.run(ctx, fn))
	}
	return p.out, p.err
}

// tracePool holds the traces of decisions in flight: a Trace is several kilobytes, and every
// action is traced (its explanation, shown to an approver, reads the trace), so allocating one
// per action, with the pipeline around it, cost more than the decision itself. Nothing reads a
// trace after its pipeline ends: the explanation copies what it shows.
var tracePool = sync.Pool{New: func() any { return new(gate.Trace) }}

// refuse ends the pipeline after the decision with a fresh Deny of its own layer and no
// obligations, recorded as the action's outcome.
func (p *pipeline) refuse(ctx context.Context, layer policy.Layer, ruleID, reason string) bool {
	d := p.d
	nd := gate.Decision{Verdict: policy.Deny, Layer: layer, RuleID: ruleID, Reason: reason, Profile: d.Profile,
		Risk: d.Risk, CorrelationID: d.CorrelationID, DecisionID: d.DecisionID}
	p.out.Decision = nd
	rec := audit.Record{Kind: audit.KindOutcome, Decision: policy.Deny, DecidedBy: audit.DecidedByDefault,
		Outcome: audit.OutcomeDenied, Layer: layer, RuleMatched: ruleID, Reason: reason, Obligations: 0}
	if p.human {
		rec.DecidedBy, rec.UserOverride = audit.DecidedByUser, true
	}
	_ = p.r.recordAbout(ctx, p.op.act, p.a, nd, rec)
	p.err = &gate.DeniedError{Decision: nd, Alternatives: p.op.act.g.Alternatives(nil, p.a, nd)}
	return false
}

// admit is step 1: the wall-time meter, the decision (traced), a grant's use.
func (p *pipeline) admit(ctx context.Context) bool {
	r := p.r
	if s, err := r.store.Load(ctx); err == nil {
		r.tick(ctx, s)
	}
	d, err := r.check(ctx, p.op.act, p.a, p.tr)
	p.d, p.out.Decision = d, d
	if err != nil {
		_ = r.recordAbout(ctx, p.op.act, p.a, d, audit.Record{Kind: audit.KindOutcome, Decision: policy.Deny, Outcome: audit.OutcomeDenied, Error: err.Error()})
		p.err = err
		return false
	}
	if d.Verdict == policy.Allow && strings.HasPrefix(d.RuleID, gate.CheckGrantPrefix) {
		if err := r.useGrant(ctx, d.RuleID); err != nil {
			// The grant expired, was used up or revoked since the decision: ask again.
			p.d.Verdict = policy.Confirm
			p.d.Reason = "the grant " + d.RuleID + " no longer applies; " + d.Reason
			p.out.Decision = p.d
		}
	}
	p.enforcement()
	return true
}

// enforcement settles who carries out an allowed line's Sandbox obligation. The analysis
// proposes, the sandbox enforces: a command runs confined to what its analysis claimed in a
// sandbox that enforces it (sandbox.Enforcing). Where there is none (not Linux, no Landlock, no
// Sandbox given, a Do whose function runs the line itself), the line is not allowed on the
// analysis's word: it becomes a CONFIRM, and a human's approval runs it unconfined; unless the
// host trusts the analysis (Options.TrustAnalysis, recorded), which never covers a line that
// touches files it does not name.
func (p *pipeline) enforcement() {
	r := p.r
	if c, ok := p.tr.Confinement(); ok && p.d.Verdict == policy.Allow {
		p.confined = &c
	}
	if p.d.Verdict != policy.Allow || !p.d.Obligations.Has(policy.Sandbox) || p.cmd != nil && r.enforcing() {
		return
	}
	if r.opts.TrustAnalysis && (p.confined == nil || !p.confined.Unknown) {
		p.trusted = true
		return
	}
	p.unconfined = true
	p.d.Verdict = policy.Confirm
	why := "no sandbox here enforces what the analysis claims"
	if p.cmd == nil {
		why = "the decision requires a sandbox, which only DoCommand provides"
	}
	p.d.Reason = why + ", so the line is asked about instead of allowed (approving runs it unconfined): " + p.d.Reason
	p.out.Decision = p.d
}

// approve is step 2: an ALLOW goes on; a CONFIRM is put to the approver (or parked, or denied);
// a DENY ends here.
func (p *pipeline) approve(ctx context.Context) bool {
	r, d := p.r, p.d
	switch d.Verdict {
	case policy.Allow:
		return true
	case policy.Confirm:
	default:
		_ = r.recordAbout(ctx, p.op.act, p.a, d, audit.Record{Kind: audit.KindOutcome, Decision: policy.Deny, Outcome: audit.OutcomeDenied})
		p.err = &gate.DeniedError{Decision: d, Alternatives: p.op.act.g.Alternatives(nil, p.a, d)}
		return false
	}
	if r.opts.Approver == nil {
		if r.opts.Headless != HeadlessPark {
			return p.refuse(ctx, policy.LayerApproval, gate.CheckApprovalNone, "the action needs confirmation and no approver is configured (headless: deny)")
		}
		id, err := r.Park(ctx, "", p.a, d)
		if err != nil {
			return p.refuse(ctx, policy.LayerApproval, gate.CheckApprovalNone, "the action needs confirmation and could not be parked: "+err.Error())
		}
		p.out.Parked = id
		_ = r.recordAbout(ctx, p.op.act, p.a, d, audit.Record{Kind: audit.KindOutcome, Decision: policy.Confirm, Outcome: audit.OutcomeParked,
			RuleMatched: "parked:" + id, Reason: "parked for review as " + id})
		p.err = &ParkedError{ID: id, Decision: d}
		return false
	}
	exp := p.tr.Explanation(d)
	ap, ans, rule := r.ask(ctx, Request{Action: p.a, Decision: d, Explanation: exp})
	p.out.Approval, p.ans, p.human = &ap, ans, ap.Human
	rec := audit.Record{Kind: audit.KindApproval, Decision: policy.Deny, DecidedBy: audit.DecidedByDefault, RuleMatched: rule,
		Reason: describeApproval(ap), Approver: ap.By, Note: ap.Note}
	if ap.Approved {
		rec.Decision, rec.ApprovalScope = policy.Allow, ap.Scope.String()
	}
	if ap.Human {
		rec.DecidedBy, rec.UserOverride = audit.DecidedByUser, true
	}
	if err := r.recordAbout(ctx, p.op.act, p.a, d, rec); err != nil {
		return p.refuse(ctx, policy.LayerAudit, gate.CheckAudit, "the approval could not be recorded: "+err.Error())
	}
	if !ap.Approved {
		reason := "the user did not approve"
		switch rule {
		case gate.CheckApprovalTimeout:
			reason = "no approval within " + r.opts.ApprovalTimeout.String() + ": a timeout counts as a denial"
		case gate.CheckApprovalError:
			reason = ap.Note
		}
		if ap.Human && ap.Note != "" {
			reason += ": " + ap.Note
		}
		return p.refuse(ctx, policy.LayerApproval, rule, reason)
	}
	if p.unconfined {
		// The human approved running it without the sandbox no backend here can provide.
		p.d.Obligations &^= policy.Sandbox
	}
	if ap.Scope != Once {
		review := func(pr Proposal) bool {
			a2, err, timedOut := r.call(ctx, Request{Action: p.a, Decision: d, Explanation: exp, Proposal: &pr})
			return err == nil && !timedOut && a2.Verdict == policy.Allow
		}
		if g, err := r.grant(ctx, p.a, exp, ans, review); err == nil {
			ap.Grant, ap.Scope = g.ID, g.Scope
		} else {
			ap.Scope = Once
		}
	}
	p.d.Verdict = policy.Allow
	p.out.Decision = p.d
	return true
}

// obligations is step 3: the sandbox, the checkpoint, the notification, then a last look at the
// operation's context.
func (p *pipeline) obligations(ctx context.Context) bool {
	r, d, a := p.r, p.d, p.a
	if !p.sandbox(ctx) {
		return false
	}
	if d.Obligations.Has(policy.Checkpoint) && !p.checkpoint(ctx) {
		return false
	}
	if d.Obligations.Has(policy.Notify) {
		if r.opts.Notifier == nil {
			return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationNotify, "the decision requires notifying the user and no notifier is configured")
		}
		if err := r.opts.Notifier.Notify(ctx, Notice{Kind: NoticeAction, Action: a, Decision: d, Message: describe(a)}); err != nil {
			return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationNotify, "the user could not be notified: "+err.Error())
		}
	}
	if s, err := r.store.Load(ctx); err != nil {
		return p.refuse(ctx, policy.LayerInput, CheckRunState, "the run state could not be read: "+err.Error())
	} else if err := r.admitAction(ctx, s); err != nil {
		return p.refuse(ctx, policy.LayerHardStop, gate.CheckHardStopBudget, "the actions budget does not admit this action: "+err.Error())
	}
	if err := ctx.Err(); err != nil {
		return p.refuse(ctx, policy.LayerHalted, gate.CheckContext, "the operation ended before the action ran: "+context.Cause(ctx).Error())
	}
	return true
}

// sandbox carries out the Sandbox obligation: the command goes to the enforcing sandbox,
// confined to its analysis's claim when the gate allowed it; a trusted analysis runs it
// unconfined, recorded; anything else is refused. A command without the obligation runs in the
// plain runner.
func (p *pipeline) sandbox(ctx context.Context) bool {
	r, d := p.r, p.d
	if !d.Obligations.Has(policy.Sandbox) {
		if p.cmd != nil {
			if *p.cmd.runner = r.plain(); *p.cmd.runner == nil {
				return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationSandbox, "no runner is configured")
			}
		}
		return true
	}
	switch {
	case p.trusted:
		if p.cmd != nil {
			if *p.cmd.runner = r.plain(); *p.cmd.runner == nil {
				return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationSandbox, "no runner is configured")
			}
		}
		_ = r.recordAbout(ctx, p.op.act, p.a, d, audit.Record{Kind: audit.KindSandboxWaived, Decision: policy.Allow,
			DecidedBy: audit.DecidedByHook, RuleMatched: CheckSandboxTrusted,
			Reason: "no sandbox here enforces the analysis's claim; the host trusts the analysis (Options.TrustAnalysis), so it runs unconfined"})
		return true
	case p.cmd == nil:
		return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationSandbox, "the decision requires a sandbox: run the command with DoCommand")
	case !r.enforcing():
		return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationSandbox, "the decision requires a sandbox that enforces its policy and none is configured (local confines nothing)")
	}
	*p.cmd.runner = r.opts.Sandbox
	if c := p.confined; c != nil {
		p.cmd.cmd.Confine = &sandbox.Confine{Writable: slices.Clone(c.Writable), Network: c.Network}
	}
	return true
}

// checkpoint carries out the Checkpoint obligation: the batch's checkpoint, or one taken now. A
// confined line can change only what the sandbox lets it write, so its checkpoint covers just
// that (PathSnapshotter), and a confined line that may write nothing needs none.
func (p *pipeline) checkpoint(ctx context.Context) bool {
	r, d, a := p.r, p.d, p.a
	if p.b != nil {
		p.out.CheckpointID = p.b.checkpoint
		return true
	}
	if r.opts.Checkpointer == nil {
		return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationCheckpoint, "the decision requires a checkpoint and no checkpointer is configured")
	}
	label := "before " + describe(a)
	var id string
	var err error
	ps, scoped := r.opts.Checkpointer.(PathSnapshotter)
	switch {
	case p.cmd != nil && p.cmd.cmd.Confine != nil && len(p.cmd.cmd.Confine.Writable) == 0:
		return true // confined to writing nothing: there is nothing to restore
	case p.cmd != nil && p.cmd.cmd.Confine != nil && scoped:
		id, err = ps.SnapshotPaths(ctx, label, d.CorrelationID.String(), p.cmd.cmd.Confine.Writable)
		if err != nil {
			// A write set the checkpointer cannot scope to (a path outside the workspace, which
			// no checkpoint covers): the whole workspace, as without a confinement.
			id, err = r.opts.Checkpointer.Snapshot(ctx, label, d.CorrelationID.String())
		}
	default:
		id, err = r.opts.Checkpointer.Snapshot(ctx, label, d.CorrelationID.String())
	}
	if err != nil {
		return p.refuse(ctx, policy.LayerObligation, gate.CheckObligationCheckpoint, "the checkpoint could not be taken: "+err.Error())
	}
	p.out.CheckpointID = id
	r.recordCheckpointEvent(ctx, p.op.act, a, d, audit.KindCheckpointCreated, id, label)
	return true
}

// run is step 4: call fn.
func (p *pipeline) run(ctx context.Context, fn Func) error {
	p.out.Ran = true
	return fn(ctx, p.d)
}

// settle is step 5: count the result, roll back a failure, record the outcome.
func (p *pipeline) settle(ctx context.Context, ferr error) {
	r, d, a := p.r, p.d, p.a
	r.countResult(ctx, a.Tool, ferr)
	rec := audit.Record{Kind: audit.KindOutcome, Decision: d.Verdict, DecidedBy: audit.DecidedByLayer(d.Layer),
		Outcome: audit.OutcomeSucceeded, CheckpointID: p.out.CheckpointID}
	if p.out.Approval != nil {
		rec.DecidedBy, rec.UserOverride = audit.DecidedByUser, p.out.Approval.Human
	}
	var aerr *ActionError
	if ferr != nil {
		aerr = &ActionError{Err: ferr}
		rec.Outcome, rec.Error = audit.OutcomeFailed, ferr.Error()
		if p.out.CheckpointID != "" && p.b == nil {
			if rerr := r.opts.Checkpointer.Restore(context.WithoutCancel(ctx), p.out.CheckpointID); rerr != nil {
				aerr.RollbackErr = fmt.Errorf("reins: rollback to %s failed: %w", p.out.CheckpointID, rerr)
				rec.Error += "; rollback failed: " + rerr.Error()
			} else {
				p.out.RolledBack, aerr.RolledBack = true, true
				rec.Outcome = audit.OutcomeRolledBack
			}
		}
	}
	// The log reads decision, approval, checkpoint, failure, rollback: the outcome record comes
	// before the restore's event.
	rerr := r.recordAbout(ctx, p.op.act, a, d, rec)
	if p.out.RolledBack {
		r.recordCheckpointEvent(ctx, p.op.act, a, d, audit.KindCheckpointRestored, p.out.CheckpointID, "rollback after: "+ferr.Error())
	}
	switch {
	case rerr != nil && aerr != nil:
		p.err = errors.Join(aerr, rerr)
	case rerr != nil:
		p.err = rerr
	case aerr != nil:
		p.err = aerr
	}
}

// recordCheckpointEvent writes a typed checkpoint event of the run's own checkpoints.
func (r *Run) recordCheckpointEvent(ctx context.Context, act *active, a policy.Action, d gate.Decision, k audit.Kind, id, label string) {
	if err := r.recordAbout(ctx, act, a, d, audit.Record{Kind: k, Decision: policy.Allow, DecidedBy: audit.DecidedByHook,
		RuleMatched: "checkpoint", CheckpointID: id, Reason: label}); err != nil {
		r.log.Error("reins: checkpoint event could not be recorded", "err", err)
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
