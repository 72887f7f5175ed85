package session

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

// Scope is how far an approval reaches.
type Scope uint8

// The scopes. The zero Scope is Once.
const (
	// Once approves this action only.
	Once Scope = iota
	// ForSession approves this action and those the same narrow grant covers, for the rest of the
	// session (see Grant).
	ForSession
	// Always does the same, and saves the grant (Options.Grants) after the approver has seen the
	// proposed rule and a preview of what it would and would not match.
	Always
)

// String returns "once", "session" or "always".
func (s Scope) String() string {
	switch s {
	case Once:
		return "once"
	case ForSession:
		return "session"
	case Always:
		return "always"
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// Request is what an Approver is asked.
type Request struct {
	// Action is the action, Decision the gate's CONFIRM and Explanation its whole trace.
	Action      policy.Action
	Decision    gate.Decision
	Explanation gate.Explanation
	// Proposal is set on a second question, after an "always" answer: the grant that would be
	// saved and a preview of what it would and would not match. Answering Allow saves it;
	// anything else keeps the approval for this action only.
	Proposal *Proposal
	// ParkedID is set when the request resolves a parked action (Session.Resolve asks no one;
	// this is for approvers that review the parked queue).
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

// Approver answers a CONFIRM. An error, or no answer within the approval timeout, counts as a
// refusal.
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
	// Human reports that a person answered (false for a timeout or an error).
	Human bool
	// Grant is the id of the grant the answer made, if any.
	Grant string
}

// ErrParked is matched (errors.Is) by a *ParkedError.
var ErrParked = errors.New("session: parked for review")

// ParkedError reports that a CONFIRM was queued for later review (Options.Headless is
// HeadlessPark). It matches ErrParked and gate.ErrDenied: the action did not run.
type ParkedError struct {
	ID       string
	Decision gate.Decision
}

// Error implements error.
func (e *ParkedError) Error() string {
	return "session: parked for review as " + e.ID + ": " + e.Decision.String()
}

// Is reports whether target is ErrParked or gate.ErrDenied.
func (e *ParkedError) Is(target error) bool { return target == ErrParked || target == gate.ErrDenied }

// Parked is an action waiting for review.
type Parked struct {
	ID       string
	Time     time.Time
	Action   policy.Action
	Decision gate.Decision
}

// Parked lists the actions waiting for review, oldest first.
func (s *Session) Parked() []Parked {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	out := make([]Parked, 0, len(s.parked))
	for _, p := range s.parked {
		c := *p
		c.Action.Targets = slices.Clone(p.Action.Targets)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Parked) int { return a.Time.Compare(b.Time) })
	return out
}

// Resolve answers a parked action. An approval becomes a grant (scope Once: a grant for this
// exact action, used once), so the agent's retry goes through; a refusal is recorded. The
// action is not run here. Each resolution is recorded.
func (s *Session) Resolve(ctx context.Context, id string, ans Answer) (Approval, error) {
	s.parkMu.Lock()
	p, ok := s.parked[id]
	delete(s.parked, id)
	s.parkMu.Unlock()
	if !ok {
		return Approval{}, fmt.Errorf("session: no parked action %q", id)
	}
	ap := Approval{Approved: ans.Verdict == policy.Allow, Scope: ans.Scope, By: by(ans), Note: ans.Note, Human: true}
	rec := audit.Record{Kind: KindParkedResolved, Decision: ans.Verdict, DecidedBy: audit.DecidedByUser, UserOverride: true,
		RuleMatched: "parked:" + id, DecisionID: p.Decision.DecisionID, CorrelationID: p.Decision.CorrelationID,
		Operation: string(p.Action.Operation), Tool: p.Action.Tool, Command: p.Action.Command, Targets: p.Action.Targets,
		Reason: describeApproval(ap), Approver: ap.By, Note: ap.Note}
	if ap.Approved {
		rec.ApprovalScope = ap.Scope.String()
		if ans.Scope == Once {
			ans.MaxUses = 1
		}
		exp, err := s.g.Explain(ctx, p.Action)
		if err == nil {
			exp.Decision = p.Decision
			gr, gerr := s.grant(ctx, p.Action, exp, ans, nil)
			if gerr != nil {
				rec.Reason += "; no grant: " + gerr.Error()
			} else {
				ap.Grant = gr.ID
				rec.Reason += "; grant " + gr.ID
			}
		}
	}
	return ap, s.g.Record(ctx, rec)
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
// approval (Approved false for a refusal, an error, a timeout) and a short rule id for records.
func (s *Session) ask(ctx context.Context, a policy.Action, d gate.Decision) (Approval, Answer, string) {
	exp, _ := s.g.Explain(ctx, a)
	exp.Decision = d
	req := Request{Action: a, Decision: d, Explanation: exp}
	ans, err, timedOut := s.call(ctx, req)
	switch {
	case timedOut:
		return Approval{By: "timeout", Note: fmt.Sprintf("no answer within %s", s.opts.ApprovalTimeout)}, ans, gate.CheckApprovalTimeout
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

// call runs the approver with the timeout. An approver that ignores its context is abandoned
// at the timeout (its goroutine ends when it returns).
func (s *Session) call(ctx context.Context, req Request) (Answer, error, bool) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if s.opts.ApprovalTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, s.opts.ApprovalTimeout)
	}
	defer cancel()
	type result struct {
		a   Answer
		err error
	}
	ch := make(chan result, 1)
	go func() {
		a, err := s.opts.Approver.Approve(actx, req)
		ch <- result{a, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return Answer{}, r.err, true
		}
		return r.a, r.err, false
	case <-actx.Done():
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			return Answer{}, actx.Err(), true
		}
		return Answer{}, ctx.Err(), false
	}
}

// park queues a CONFIRM for later review.
func (s *Session) park(a policy.Action, d gate.Decision, now time.Time) string {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	s.parkSeq++
	id := "parked-" + strconv.FormatUint(s.parkSeq, 10)
	a.Targets = slices.Clone(a.Targets)
	s.parked[id] = &Parked{ID: id, Time: now, Action: a, Decision: d}
	return id
}
