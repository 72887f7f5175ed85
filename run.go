package reins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Options configure a Run. A nil *Options, and every zero field, means the documented default.
// New copies the options; later changes to them have no effect.
type Options struct {
	// Workspace lists the workspace roots (see gate.Options). Default: the current directory.
	Workspace []string
	// ConfigDir is the user configuration directory reins profiles are loaded from; the gate
	// always protects it (see gate.Options). Default: os.UserConfigDir()/reins.
	ConfigDir string
	// Profiles are named profiles, besides the built-in ones, that SwitchTo can select and
	// alternatives may propose.
	Profiles []profile.Profile
	// ConfirmSwitch is asked before a switch to a profile that is not at least as restrictive as
	// the active one (see profile.AtLeastAsRestrictive). Nil means such switches are refused.
	ConfirmSwitch func(ctx context.Context, req SwitchRequest) (bool, error)

	// Store holds the run's state: halt, failure counts, meters, session grants, parked
	// actions. Default: a new MemoryStore (the state lives and dies with the Run). A FileStore
	// keeps it across the processes of one machine; a shared store across machines.
	Store Store
	// Grants keeps "always" grants beyond the run (a FileStore beside the user profile file, for
	// example). Nil means an "always" answer is kept for the run only (and recorded as such).
	Grants Store
	// Meters are the budgets (cost, tokens, wall time, actions, or any name) with their limits.
	// A meter the store does not hold yet is added; one it holds keeps its state (a budget shared
	// by several runs is not reset by a new one).
	Meters []Meter
	// MaxConsecutiveFailures is how many failures in a row of one tool halt the run. Default: 3.
	MaxConsecutiveFailures int
	// OnRepeatedFailure says what MaxConsecutiveFailures failures of one tool in a row do:
	// FailuresLatch (the default, the autonomy seed's hard stop) or FailuresDeescalate (the
	// policy spec: step the autonomy down one band).
	OnRepeatedFailure FailurePolicy

	// Audit receives every record the run writes: decisions, approvals, grants, checkpoints,
	// outcomes, halts, resets, switches, budgets. Default: audit.Discard. A decision that cannot
	// be recorded is a Deny.
	Audit audit.Sink
	// Clock tells the time and runs timers: decision ids, records, grant expiry, meters,
	// approval and operation timeouts. Default: the system clock. Tests inject a fake one
	// (reinstest.Clock) instead of sleeping.
	Clock Clock
	// Logger receives diagnostics the run cannot return (a record that could not be written
	// after the fact). Default: discard; the run never writes to the global logger.
	Logger *slog.Logger
	// Anchor, when not nil, makes the run write its audit log's chain head to a store off the
	// machine periodically and at Close (see AnchorOptions, audit.VerifyAnchored).
	Anchor *AnchorOptions

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
	// Sandbox runs DoCommand's commands whose decision carries the Sandbox obligation, confined
	// to what the gate's analysis claimed for them (sandbox.Command.Confine). Only a backend
	// that enforces a confinement (sandbox.Enforcing: the hardened backend, containers) satisfies
	// the obligation. Without one, a line the gate would allow is asked about instead (CONFIRM:
	// a human's approval runs it unconfined), unless TrustAnalysis is set.
	Sandbox Runner
	// Runner runs DoCommand's other commands. Nil means Sandbox runs them too.
	Runner Runner
	// TrustAnalysis lets a line the gate allows run unconfined, in Runner, where no enforcing
	// sandbox exists: the host takes the analysis's word for what the line does. Each such run is
	// recorded (audit kind sandbox_waived, CheckSandboxTrusted). It never covers a line that
	// touches files it does not name (xargs, find -exec): those are still asked about.
	//
	// Warning: the analysis is wrong somewhere (it sees the line, not what a program does at
	// run time); with TrustAnalysis a line it misjudges runs with the user's full rights. Use it
	// only where no sandbox can run and asking is not possible.
	TrustAnalysis bool
}

// FailurePolicy says what repeated failures of one tool do (Options.OnRepeatedFailure).
type FailurePolicy uint8

// The failure policies.
const (
	// FailuresLatch latches the tool-failures hard stop (the autonomy seed). The default.
	FailuresLatch FailurePolicy = iota
	// FailuresDeescalate steps the autonomy down one band (autonomous to trusted, trusted to
	// supervised) through a profile switch, which takes effect at the next operation boundary
	// and is recorded like any switch; the tool's failure count starts again. A run that is
	// already supervised has nowhere to step down to, and latches the hard stop instead.
	FailuresDeescalate
)

// Run is one agent run under reins: it owns all of the run's state and writes every record.
// Each action goes through one pipeline ([Run.Do]): admit (decide with the gate against a
// snapshot of the run state, record the decision, latch what it says to latch), approve (ask a
// human about a CONFIRM, or apply a standing grant, or park it), obligations (checkpoint first,
// notify, choose the sandbox), run, and settle (roll back a failure, count it, record the
// outcome). The decider, package gate, holds no state of its own.
//
// A Run is safe for concurrent use. It holds resources only when its store watches a shared
// state; call Close when done in any case.
type Run struct {
	opts    Options
	sink    audit.Sink
	clock   Clock
	log     *slog.Logger
	maxFail int
	store   Store
	kept    Store // always grants; nil when none are kept

	act    atomic.Pointer[active]
	grants atomic.Pointer[grantIndex]
	start  time.Time // the wall-time meter counts from here

	// Operation boundaries and pending profile switches.
	opMu     sync.Mutex
	inflight int
	pending  *pendingSwitch
	drained  chan struct{}    // closed when a pending switch is applied
	ops      map[*Op]struct{} // operations in flight, for EmergencyStop

	stopWatch context.CancelFunc
	watchDone chan struct{}
	anc       *anchoring // nil unless Options.Anchor is set
}

// active is the profile in force: its gate and its limit on operations in flight.
type active struct {
	g         *gate.Gate
	sem       *semaphore.Weighted // nil means no limit
	name      string              // the profile's name
	hash      string              // the profile's content hash, for audit records
	bundle    uint64              // the policy bundle version of its managed tier, for audit records
	rulesOnly bool                // its managed tier allows managed rules only: no grants (managed.go)
	asks      *policy.RuleSet     // its managed tier's CONFIRM rules: no grant answers them (managed.go)
}

// DefaultApprovalTimeout is how long an approver is waited for before the CONFIRM counts as a
// denial (the gate spec: 300 s).
const DefaultApprovalTimeout = 300 * time.Second

// New starts a run of profile p with the given options: it compiles the profile into a gate,
// declares the meters in the store, and, when the store is a Watcher, starts watching it.
func New(ctx context.Context, p profile.Profile, opts *Options) (*Run, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Meters = append([]Meter(nil), o.Meters...)
	o.Profiles = append([]profile.Profile(nil), o.Profiles...)
	r := &Run{opts: o, sink: o.Audit, clock: o.Clock, log: o.Logger, maxFail: o.MaxConsecutiveFailures,
		store: o.Store, kept: o.Grants}
	if r.sink == nil {
		r.sink = audit.Discard
	}
	if r.clock == nil {
		r.clock = systemClock{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.store == nil {
		r.store = NewMemoryStore()
	}
	if r.maxFail == 0 {
		r.maxFail = 3
	}
	if r.maxFail < 0 {
		return nil, fmt.Errorf("reins: MaxConsecutiveFailures %d is negative", r.maxFail)
	}
	if o.OnRepeatedFailure > FailuresDeescalate {
		return nil, fmt.Errorf("reins: OnRepeatedFailure %d is not a known policy", o.OnRepeatedFailure)
	}
	if o.Headless > HeadlessPark {
		return nil, fmt.Errorf("reins: Headless %d is not a known behaviour", o.Headless)
	}
	if r.opts.ApprovalTimeout == 0 {
		r.opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	p, err := p.Managed.Impose(p) // the profile's managed tier, if any (managed.go)
	if err != nil {
		return nil, err
	}
	g, err := gate.New(p, &gate.Options{Workspace: o.Workspace, ConfigDir: o.ConfigDir, Profiles: o.Profiles})
	if err != nil {
		return nil, err
	}
	r.act.Store(newActive(g))
	r.start = r.clock.Now()
	r.hearStore()
	if err := r.declareMeters(ctx); err != nil {
		return nil, err
	}
	if err := r.startAnchoring(); err != nil {
		return nil, err
	}
	if w, ok := r.store.(Watcher); ok {
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r.stopWatch, r.watchDone = cancel, make(chan struct{})
		go func() {
			defer close(r.watchDone)
			if err := w.Watch(wctx, r.watched); err != nil && wctx.Err() == nil {
				r.log.Error("reins: watching the run state stopped", "err", err)
			}
		}()
	}
	return r, nil
}

func newActive(g *gate.Gate) *active {
	c := g.Profile()
	a := &active{g: g, name: c.Name(), hash: c.Profile().Hash()}
	if m := c.Managed(); m != nil {
		a.bundle, a.rulesOnly, a.asks = m.Bundle, m.RulesOnly, managedAsks(c, m)
	}
	if n := g.Profile().Limits().MaxConcurrentOps; n > 0 {
		a.sem = semaphore.NewWeighted(int64(n))
	}
	return a
}

// Close stops watching a shared store (when the store is a Watcher) and waits for the watch to
// end; with Options.Anchor it stops anchoring and anchors the log's head once more, returning
// that anchor's error. It does not close the store, the audit sink or any backend: they are the
// host's. Close is safe to call more than once.
func (r *Run) Close() error {
	err := r.stopAnchoring()
	if r.stopWatch != nil {
		r.stopWatch()
		<-r.watchDone
	}
	return err
}

// watched is the watch callback of a shared store: a halt latched elsewhere cancels the
// operations in flight here, as an emergency stop does.
func (r *Run) watched(s *RunState) {
	if s.Halt != nil && s.Halt.Cause == gate.CauseEmergency {
		r.cancelOps()
	}
}

// Gate returns the decider of the active profile.
func (r *Run) Gate() *gate.Gate { return r.act.Load().g }

// Profile returns the active compiled profile.
func (r *Run) Profile() *profile.Compiled { return r.act.Load().g.Profile() }

// State returns a snapshot of the run state (read-only; see RunState).
func (r *Run) State(ctx context.Context) (*RunState, error) { return r.store.Load(ctx) }

// snapshot takes what a decision reads from the run state: the halt, an exhausted meter and the
// standing grants. It allocates nothing when the state has not changed since the last call.
func (r *Run) snapshot(ctx context.Context) (gate.State, error) {
	s, err := r.store.Load(ctx)
	if err != nil {
		return gate.State{}, err
	}
	var kept *RunState
	if r.kept != nil {
		if kept, err = r.kept.Load(ctx); err != nil {
			return gate.State{}, err
		}
	}
	gs := gate.State{Halt: s.Halt, Exhausted: r.exhausted(s)}
	if (len(s.Grants) > 0 || kept != nil && len(kept.Grants) > 0) && !r.act.Load().rulesOnly {
		ix := r.grants.Load()
		if asks := r.act.Load().asks; ix == nil || ix.runRev != s.Rev || kept != nil && ix.keptRev != kept.Rev || ix.asks != asks {
			ix = newGrantIndex(s, kept, r.clock.Now)
			ix.asks = asks
			r.grants.Store(ix)
		}
		gs.Grants = ix
	}
	return gs, nil
}

// ErrRunState is matched by the error of a decision that could not read the run state (the
// store is unreachable): the decision is a Deny.
var ErrRunState = errors.New("reins: run state unavailable")
