package gate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// ErrEmergencyStop is the cause (context.Cause) of the contexts EmergencyStop cancels.
var ErrEmergencyStop = errors.New("gate: emergency stop")

// Op is one operation: a unit of agent work (a tool call, a plan step) between two boundaries.
// The profile is fixed for the whole operation: a profile switch requested meanwhile waits until
// no operation is in flight. At most the profile's max_concurrent_ops operations run at once, and
// an operation's context ends after the profile's timeout.
type Op struct {
	g      *Gate
	st     *state
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   context.CancelFunc // the timeout's, when the profile has one
	once   sync.Once
}

// Begin starts an operation: it waits (as long as ctx allows) for a pending profile switch to be
// applied and for a free slot under the profile's concurrency limit, then returns the operation.
// The caller must call End. The operation's Context carries the profile's timeout.
func (g *Gate) Begin(ctx context.Context) (*Op, error) {
	var st *state
	for {
		g.opMu.Lock()
		if g.pending != nil {
			if g.inflight == 0 {
				g.applyPendingLocked(ctx)
			} else {
				// A switch is waiting for the boundary: start nothing new until it is applied,
				// so a busy gate cannot postpone it forever.
				ch := g.drained
				g.opMu.Unlock()
				select {
				case <-ch:
					continue
				case <-ctx.Done():
					return nil, fmt.Errorf("gate: begin: %w", ctx.Err())
				}
			}
		}
		st = g.st.Load()
		g.inflight++
		g.opMu.Unlock()
		break
	}
	if st.sem != nil {
		if err := st.sem.Acquire(ctx, 1); err != nil {
			g.leave(ctx)
			return nil, fmt.Errorf("gate: begin: waiting for a free operation slot (max %d): %w", st.limits.MaxConcurrentOps, err)
		}
	}
	op := &Op{g: g, st: st}
	op.ctx, op.cancel = context.WithCancelCause(ctx)
	if t := st.limits.Timeout; t > 0 {
		op.ctx, op.stop = context.WithTimeout(op.ctx, t)
	}
	// Register the operation so EmergencyStop can cancel it. EmergencyStop latches before it
	// sweeps, so an operation registered after the sweep decides after the latch: its Check
	// is a Deny (everything new is denied, not cancelled).
	g.opMu.Lock()
	if g.ops == nil {
		g.ops = map[*Op]struct{}{}
	}
	g.ops[op] = struct{}{}
	g.opMu.Unlock()
	return op, nil
}

// End ends the operation; it is safe to call more than once. When it was the last operation in
// flight, a pending profile switch is applied.
func (op *Op) End() {
	op.once.Do(func() {
		op.cancel(context.Canceled)
		if op.stop != nil {
			op.stop()
		}
		op.g.opMu.Lock()
		delete(op.g.ops, op)
		op.g.opMu.Unlock()
		if op.st.sem != nil {
			op.st.sem.Release(1)
		}
		op.g.leave(context.WithoutCancel(op.ctx))
	})
}

func (g *Gate) leave(ctx context.Context) {
	g.opMu.Lock()
	defer g.opMu.Unlock()
	g.inflight--
	if g.inflight == 0 && g.pending != nil {
		g.applyPendingLocked(ctx)
	}
}

// Context returns the operation's context: the one Begin was given, with the profile's timeout.
func (op *Op) Context() context.Context { return op.ctx }

// Profile returns the profile the operation runs under.
func (op *Op) Profile() *profile.Compiled { return op.st.prof }

// Check decides an action under the operation's profile (see Gate.Check).
func (op *Op) Check(ctx context.Context, a policy.Action) (Decision, error) {
	return op.g.check(ctx, op.st, a)
}

// Run runs fn as one operation: Begin, fn with the operation's context, End.
func (g *Gate) Run(ctx context.Context, fn func(ctx context.Context, op *Op) error) error {
	op, err := g.Begin(ctx)
	if err != nil {
		return err
	}
	defer op.End()
	return fn(op.ctx, op)
}

// InFlight returns the number of operations between Begin and End.
func (g *Gate) InFlight() int {
	g.opMu.Lock()
	defer g.opMu.Unlock()
	return g.inflight
}

// EmergencyStop stops the run from any goroutine: it latches the emergency-stop halt, so every
// new decision is a Deny until Reset, and cancels the context of every operation in flight
// (context.Cause reports ErrEmergencyStop), so work that honours its context stops too. It is
// recorded like any halt. Calling it again while halted cancels operations begun since.
func (g *Gate) EmergencyStop(ctx context.Context, reason string) {
	g.latch(ctx, &Halt{Cause: CauseEmergency, Reason: "emergency stop: " + reason}, g.st.Load().name)
	g.opMu.Lock()
	ops := make([]*Op, 0, len(g.ops))
	for op := range g.ops {
		ops = append(ops, op)
	}
	g.opMu.Unlock()
	for _, op := range ops {
		op.cancel(ErrEmergencyStop)
	}
}

// Record writes r to the audit sink as a record about action a and its decision d, taken in this
// operation: it fills the time (when zero), the decision and correlation ids, the operation's
// profile and hash, the action's fields and, where r leaves them empty, the decision's layer,
// rule, obligations, risk and reason. It writes even when ctx is done (a record of what happened
// must not be lost to a cancellation).
func (op *Op) Record(ctx context.Context, a policy.Action, d Decision, r audit.Record) error {
	if r.Time.IsZero() {
		r.Time = op.g.clock()
	}
	r.DecisionID, r.CorrelationID = d.DecisionID, d.CorrelationID
	r.Profile, r.ProfileHash, r.Operation, r.Tool, r.Command, r.Host, r.Targets = op.st.name, op.st.hash, string(a.Operation), a.Tool, a.Command, a.Host, a.Targets
	if len(a.Targets) > 0 {
		r.Target = a.Targets[0]
	}
	if r.Layer == policy.LayerNone {
		r.Layer = d.Layer
	}
	if r.RuleMatched == "" {
		r.RuleMatched = d.RuleID
	}
	if r.Obligations == 0 {
		r.Obligations = d.Obligations
	}
	if r.Risk == 0 {
		r.Risk = d.Risk
	}
	if r.Reason == "" {
		r.Reason = d.Reason
	}
	if err := op.g.sink.Write(context.WithoutCancel(ctx), r); err != nil {
		return fmt.Errorf("gate: audit: %w", err)
	}
	return nil
}

// ProfileHash returns the content hash of the operation's profile.
func (op *Op) ProfileHash() string { return op.st.hash }

// Record writes r to the audit sink, outside any operation: it fills the time and decision id
// (when zero), the correlation id (the decision id, when zero) and the active profile and its
// hash (when empty).
func (g *Gate) Record(ctx context.Context, r audit.Record) error {
	if r.Time.IsZero() {
		r.Time = g.clock()
	}
	if r.DecisionID == [16]byte{} {
		r.DecisionID = newV7(r.Time)
	}
	if r.CorrelationID == [16]byte{} {
		r.CorrelationID = r.DecisionID
	}
	if r.Profile == "" {
		st := g.st.Load()
		r.Profile, r.ProfileHash = st.name, st.hash
	}
	if err := g.sink.Write(context.WithoutCancel(ctx), r); err != nil {
		return fmt.Errorf("gate: audit: %w", err)
	}
	return nil
}

// NewDecisionID returns a fresh decision id (a UUIDv7 at the gate's clock).
func (g *Gate) NewDecisionID() uuid.UUID { return newV7(g.clock()) }
