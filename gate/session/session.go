package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// Checkpointer snapshots the workspace before mutating work and restores it after a failure.
// *checkpoint.Checkpointer satisfies it.
type Checkpointer interface {
	// Snapshot records the workspace and returns the checkpoint's id.
	Snapshot(ctx context.Context, label, correlationID string) (id string, err error)
	// Restore makes the workspace exactly the checkpoint again.
	Restore(ctx context.Context, id string) error
}

// Runner runs one command under confinement. Every backend of package sandbox satisfies it (it
// is sandbox.Sandbox's method set, declared here by its consumer). A Result with violations is
// a sandbox escape signal: DoCommand latches the gate's hard stop.
type Runner interface {
	Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error)
}

// NoticeKind says what a Notice is about.
type NoticeKind uint8

// The notices.
const (
	// NoticeAction: an action is going ahead (the Notify obligation).
	NoticeAction NoticeKind = iota
	// NoticeBudgetWarning: a meter passed its warning fraction.
	NoticeBudgetWarning
	// NoticeBudgetExceeded: a meter reached its limit; the gate halted.
	NoticeBudgetExceeded
)

// String returns "action", "budget_warning" or "budget_exceeded".
func (k NoticeKind) String() string {
	switch k {
	case NoticeAction:
		return "action"
	case NoticeBudgetWarning:
		return "budget_warning"
	case NoticeBudgetExceeded:
		return "budget_exceeded"
	}
	return fmt.Sprintf("NoticeKind(%d)", uint8(k))
}

// Notice is what a Notifier is told.
type Notice struct {
	Kind NoticeKind
	// Action and Decision are set for NoticeAction.
	Action   policy.Action
	Decision gate.Decision
	// Meter is set for the budget notices.
	Meter MeterStatus
	// Message says it to a human.
	Message string
}

// Notifier tells the user something: that an action goes ahead (the Notify obligation), that a
// budget meter is running out. An error for a NoticeAction stops the action: an obligation
// that cannot be honoured is not honoured.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// NotifierFunc adapts a function to a Notifier.
type NotifierFunc func(ctx context.Context, n Notice) error

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, n Notice) error { return f(ctx, n) }

// Headless says what happens to a CONFIRM when no Approver is configured.
type Headless uint8

// The headless behaviours.
const (
	// HeadlessDeny denies the action (the default: nobody to ask means no).
	HeadlessDeny Headless = iota
	// HeadlessPark queues the action for later review and returns a *ParkedError; see
	// Session.Parked and Session.Resolve.
	HeadlessPark
)

// DefaultApprovalTimeout is how long an approver is waited for before the CONFIRM counts as a
// denial (the gate spec: 300 s).
const DefaultApprovalTimeout = 300 * time.Second

// Options configure a Session. A nil *Options, and every zero field, means the documented
// default. New copies the options.
type Options struct {
	// Approver answers CONFIRM decisions. Nil means nobody can be asked: see Headless.
	Approver Approver
	// ApprovalTimeout bounds the wait for an answer; then the CONFIRM is a denial. Default
	// DefaultApprovalTimeout; negative means no timeout besides the context's.
	ApprovalTimeout time.Duration
	// Headless says what a CONFIRM becomes without an Approver. Default HeadlessDeny.
	Headless Headless
	// Checkpointer honours the Checkpoint obligation (a *checkpoint.Checkpointer). Nil means
	// actions that require a checkpoint are denied.
	Checkpointer Checkpointer
	// Notifier honours the Notify obligation and receives budget notices. Nil means actions
	// that require a notification are denied (budget notices are then only recorded).
	Notifier Notifier
	// Sandbox runs DoCommand's commands whose decision carries the Sandbox obligation (the
	// hardened backend, typically). Nil means such commands are denied.
	Sandbox Runner
	// Runner runs DoCommand's other commands. Nil means Sandbox runs them too.
	Runner Runner
	// Grants persists "always" grants. Nil means an "always" answer is kept for the session
	// only (and recorded as such).
	Grants GrantStore
	// Meters are the budgets (cost, tokens, wall time, actions, or any name) with their limits.
	Meters []Meter
	// Logger receives diagnostics the session cannot return. Default: discard.
	Logger *slog.Logger
}

// Session is the run discipline around a gate: it runs actions end to end (decide, ask, honour
// obligations, run, roll back, record), keeps the answers humans gave as grants, meters the
// run's budgets and holds parked actions. It is safe for concurrent use.
type Session struct {
	g       *gate.Gate
	opts    Options
	log     *slog.Logger
	grants  *grantSet
	meters  *meters
	parkMu  sync.Mutex
	parked  map[string]*Parked
	parkSeq uint64
}

// New returns a session running actions through g. It installs the session's grants as g's
// grant source (see gate.GrantSource) and loads the "always" grants from Options.Grants. A gate
// has one grant source: a second session on the same gate replaces the first one's grants.
func New(ctx context.Context, g *gate.Gate, opts *Options) (*Session, error) {
	if g == nil {
		return nil, errors.New("session: nil gate")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Meters = append([]Meter(nil), o.Meters...)
	if o.ApprovalTimeout == 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if o.Headless > HeadlessPark {
		return nil, fmt.Errorf("session: Headless %d is not a known behaviour", o.Headless)
	}
	s := &Session{g: g, opts: o, log: o.Logger, parked: map[string]*Parked{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	m, err := newMeters(o.Meters, time.Now)
	if err != nil {
		return nil, err
	}
	s.meters = m
	s.grants = newGrantSet(time.Now)
	if o.Grants != nil {
		saved, err := o.Grants.Load(ctx)
		if err != nil {
			return nil, fmt.Errorf("session: loading grants: %w", err)
		}
		if err := s.grants.add(saved...); err != nil {
			return nil, fmt.Errorf("session: loading grants: %w", err)
		}
	}
	g.SetGrants(s.grants)
	return s, nil
}

// Gate returns the session's gate.
func (s *Session) Gate() *gate.Gate { return s.g }

// Record kinds and outcomes the session writes besides the gate's.
const (
	// KindApproval records a human's (or the timeout's) answer to a CONFIRM: DecidedBy user
	// (or default for a timeout), UserOverride when a human answered, RuleMatched
	// "approval:<scope>", Reason who, the scope and the note.
	KindApproval audit.Kind = "approval"
	// KindParked records a CONFIRM queued for later review; KindParkedResolved its resolution.
	KindParked         audit.Kind = "parked"
	KindParkedResolved audit.Kind = "parked_resolved"
	// KindGrant records a grant made (RuleMatched its rule id); KindGrantRevoked its revocation.
	KindGrant        audit.Kind = "grant"
	KindGrantRevoked audit.Kind = "grant_revoked"
	// KindBudget records a meter's warning, its exhaustion, or its reset.
	KindBudget audit.Kind = "budget"

	// OutcomeDenied: the action did not run: the gate denied it, its approval was refused or
	// timed out, or an obligation could not be honoured. OutcomeParked: it waits for review.
	OutcomeDenied audit.Outcome = "denied"
	OutcomeParked audit.Outcome = "parked"
)
