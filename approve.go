package reins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// Request is what an Approver is asked.
type Request struct {
	// Action is the action, Decision the gate's CONFIRM and Explanation its whole trace (read
	// from the decision's own trace, not decided again).
	Action      policy.Action
	Decision    gate.Decision
	Explanation gate.Explanation
	// Proposal is set on a second question, after an "always" answer: the grant that would be
	// kept and a preview of what it would and would not match. Answering Allow keeps it;
	// anything else keeps the approval for this action only.
	Proposal *Proposal
	// ParkedID is set when the request resolves a parked action.
	ParkedID string
}

// Answer is an approver's reply.
type Answer struct {
	// Verdict: Allow approves; anything else (the zero value is Deny) refuses.
	Verdict policy.Verdict
	// Scope says how far an approval reaches. Ignored for a refusal.
	Scope Scope
	// Note is recorded with the answer.
	Note string
	// By names who decided; "" is recorded as "user".
	By string
	// Expires, when set, ends a session or always grant after this long.
	Expires time.Duration
	// MaxUses, when set, ends a session or always grant after this many actions.
	MaxUses int
}

// Approver answers a CONFIRM. An error, a panic, or no answer within the approval timeout counts
// as a refusal.
type Approver interface {
	Approve(ctx context.Context, req Request) (Answer, error)
}

// ApproverFunc adapts a function to an Approver.
type ApproverFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Approval is how a CONFIRM was answered.
type Approval struct {
	Approved bool
	Scope    Scope
	By       string
	Note     string
	// Human reports that a person answered (false for a timeout, an error or a panic).
	Human bool
	// Grant is the id of the grant the answer made, if any.
	Grant string
}

// Headless says what happens to a CONFIRM when no Approver is configured.
type Headless uint8

// The headless behaviours.
const (
	// HeadlessDeny denies the action (the default: nobody to ask means no).
	HeadlessDeny Headless = iota
	// HeadlessPark queues the action for later review and returns a *ParkedError; see
	// Run.Parked and Run.Resolve.
	HeadlessPark
)

// ErrParked is matched (errors.Is) by a *ParkedError.
var ErrParked = errors.New("reins: parked for review")

// ParkedError reports that a CONFIRM was queued for later review (Options.Headless is
// HeadlessPark). It matches ErrParked and gate.ErrDenied: the action did not run.
type ParkedError struct {
	ID       string
	Decision gate.Decision
}

// Error implements error.
func (e *ParkedError) Error() string {
	return "reins: parked for review as " + e.ID + ": " + e.Decision.String()
}

// Is reports whether target is ErrParked or gate.ErrDenied.
func (e *ParkedError) Is(target error) bool { return target == ErrParked || target == gate.ErrDenied }

// Parked lists the actions waiting for review, oldest first.
func (r *Run) Parked(ctx context.Context) ([]Parked, error) {
	s, err := r.store.Load(ctx)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(s.Parked)
	for i := range out {
		out[i].Action = cloneAction(out[i].Action)
	}
	return out, nil
}

// ErrNotParked is matched by the error of Resolve for an id that waits for nothing.
var ErrNotParked = errors.New("reins: no parked action")

// Park queues action a, which decision d asked about, for later review, and records it; Do
// does this on its own without an approver under HeadlessPark. A host whose client asks the
// human itself (an agent CLI's own permission dialog) parks the question under the client's id
// for the call, and Resolves it when the client reports the answer. id "" means a fresh id
// ("parked-N"); an id already waiting is an error. It returns the id.
func (r *Run) Park(ctx context.Context, id string, a policy.Action, d gate.Decision) (string, error) {
	now := r.clock.Now()
	_, err := r.store.Update(ctx, func(s *RunState) error {
		pid := id
		if pid == "" {
			s.Seq++
			pid = "parked-" + strconv.FormatUint(s.Seq, 10)
		}
		if slices.ContainsFunc(s.Parked, func(p Parked) bool { return p.ID == pid }) {
			return fmt.Errorf("reins: %q is already parked", pid)
		}
		id = pid
		s.Parked = append(s.Parked, Parked{ID: pid, Time: now, Action: cloneAction(a), Decision: d})
		return nil
	})
	if err != nil {
		return "", err
	}
	_ = r.recordAbout(ctx, r.act.Load(), a, d, audit.Record{Kind: audit.KindParked, Decision: policy.Confirm,
		DecidedBy: audit.DecidedByDefault, RuleMatched: "parked:" + id, Reason: "parked for review as " + id})
	return id, nil
}

// Resolve answers a parked action. An approval becomes a grant (scope Once: a grant for this
// exact action, used once), so the agent's retry goes through; a refusal is recorded. The
// action is not run here. Each resolution is recorded.
func (r *Run) Resolve(ctx context.Context, id string, ans Answer) (Approval, error) {
	var p Parked
	found := false
	_, err := r.store.Update(ctx, func(s *RunState) error {
		i := slices.IndexFunc(s.Parked, func(x Parked) bool { return x.ID == id })
		if found = i >= 0; found {
			p = s.Parked[i]
			s.Parked = slices.Delete(s.Parked, i, i+1)
		}
		return nil
	})
	if err != nil {
		return Approval{}, err
	}
	if !found {
		return Approval{}, fmt.Errorf("%w %q", ErrNotParked, id)
	}
	ap := Approval{Approved: ans.Verdict == policy.Allow, Scope: ans.Scope, By: by(ans), Note: ans.Note, Human: true}
	rec := audit.Record{Kind: audit.KindParkedResolved, Decision: ans.Verdict, DecidedBy: audit.DecidedByUser, UserOverride: true,
		RuleMatched: "parked:" + id, DecisionID: p.Decision.DecisionID, CorrelationID: p.Decision.CorrelationID,
		Operation: string(p.Action.Operation), Tool: p.Action.Tool, Command: p.Action.Command, Targets: p.Action.Targets,
		Reason: describeApproval(ap), Approver: ap.By, Note: ap.Note}
	if ap.Approved {
		rec.ApprovalScope = ap.Scope.String()
		if ans.Scope == Once {
			ans.MaxUses = 1
		}
		exp, xerr := r.Explain(ctx, p.Action)
		if xerr == nil {
			exp.Decision = p.Decision
			gr, gerr := r.grant(ctx, p.Action, exp, ans, nil)
			if gerr != nil {
				rec.Reason += "; no grant: " + gerr.Error()
			} else {
				ap.Grant = gr.ID
				rec.Reason += "; grant " + gr.ID
			}
		}
	}
	return ap, r.record(ctx, rec)
}

func by(a Answer) string {
	if a.By == "" {
		return "user"
	}
	return a.By
}

func describeApproval(a Approval) string {
	s := "refused by " + a.By
	if a.Approved {
		s = "approved by " + a.By + " (scope " + a.Scope.String() + ")"
	}
	if a.Note != "" {
		s += ": " + a.Note
	}
	return s
}

// ask asks the approver about a CONFIRM, bounded by the approval timeout. It returns the
// approval (Approved false for a refusal, an error, a panic, a timeout), the answer and the
// check id for records.
func (r *Run) ask(ctx context.Context, req Request) (Approval, Answer, string) {
	ans, err, timedOut := r.call(ctx, req)
	switch {
	case timedOut:
		return Approval{By: "timeout", Note: fmt.Sprintf("no answer within %s", r.opts.ApprovalTimeout)}, ans, gate.CheckApprovalTimeout
	case err != nil:
		return Approval{By: "error", Note: "approval failed: " + err.Error()}, ans, gate.CheckApprovalError
	}
	ap := Approval{Approved: ans.Verdict == policy.Allow, Scope: ans.Scope, By: by(ans), Note: ans.Note, Human: true}
	if !ap.Approved {
		return ap, ans, gate.CheckApprovalRefused
	}
	if ap.Scope > Always {
		ap.Scope = Once
	}
	return ap, ans, approvalCheck(ap.Scope)
}

// approvalCheck returns the check id of an approval with the given scope.
func approvalCheck(s Scope) string {
	switch s {
	case ForSession:
		return gate.CheckApprovalSession
	case Always:
		return gate.CheckApprovalAlways
	}
	return gate.CheckApprovalOnce
}

// errApproverPanic wraps the value an approver panicked with.
type errApproverPanic struct{ v any }

func (e errApproverPanic) Error() string { return fmt.Sprintf("the approver panicked: %v", e.v) }

// errApprovalTimeout is the cause of an approval context the timeout ended.
var errApprovalTimeout = errors.New("reins: approval timed out")

// call runs the approver with the timeout (on the run's clock). An approver that ignores its
// context is abandoned at the timeout (its goroutine ends when it returns); one that panics is
// recovered, and its panic is an error (a refusal), never a crash of the host.
func (r *Run) call(ctx context.Context, req Request) (Answer, error, bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(context.Canceled)
	if t := r.opts.ApprovalTimeout; t > 0 {
		stop := r.clock.AfterFunc(t, func() { cancel(errApprovalTimeout) })
		defer stop()
	}
	type result struct {
		a   Answer
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if v := recover(); v != nil {
				res = result{err: errApproverPanic{v}}
			}
			ch <- res
		}()
		res.a, res.err = r.opts.Approver.Approve(actx, req)
	}()
	select {
	case res := <-ch:
		if res.err != nil && errors.Is(context.Cause(actx), errApprovalTimeout) && ctx.Err() == nil {
			return Answer{}, res.err, true
		}
		return res.a, res.err, false
	case <-actx.Done():
		if ctx.Err() == nil && errors.Is(context.Cause(actx), errApprovalTimeout) {
			return Answer{}, errApprovalTimeout, true
		}
		return Answer{}, ctx.Err(), false
	}
}
