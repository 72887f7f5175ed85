package reins

import (
	"context"
	"fmt"
	"sync"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// Op is one operation: a unit of agent work (a tool call, a plan step, a batch) between two
// boundaries. The profile is fixed for the whole operation: a profile switch requested
// meanwhile waits until no operation is in flight. At most the profile's max_concurrent_ops
// operations run at once, and an operation's context ends after the profile's timeout.
type Op struct {
	r      *Run
	act    *active
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   func() bool // the timeout's timer, when the profile has one
	once   sync.Once
}

// Begin starts an operation: it waits (as long as ctx allows) for a pending profile switch to be
// applied and for a free slot under the profile's concurrency limit, then returns the operation.
// The caller must call End. The operation's Context carries the profile's timeout.
func (r *Run) Begin(ctx context.Context) (*Op, error) {
	var act *active
	for {
		r.opMu.Lock()
		if r.pending != nil {
			if r.inflight == 0 {
				r.applyPendingLocked(ctx)
			} else {
				// A switch is waiting for the boundary: start nothing new until it is applied,
				// so a busy run cannot postpone it forever.
				ch := r.drained
				r.opMu.Unlock()
				select {
				case <-ch:
					continue
				case <-ctx.Done():
					return nil, fmt.Errorf("reins: begin: %w", ctx.Err())
				}
			}
		}
		act = r.act.Load()
		r.inflight++
		r.opMu.Unlock()
		break
	}
	if act.sem != nil {
		if err := act.sem.Acquire(ctx, 1); err != nil {
			r.leave(ctx)
			return nil, fmt.Errorf("reins: begin: waiting for a free operation slot (max %d): %w",
				act.g.Profile().Limits().MaxConcurrentOps, err)
		}
	}
	op := &Op{r: r, act: act}
	op.ctx, op.cancel = context.WithCancelCause(ctx)
	if t := act.g.Profile().Limits().Timeout; t > 0 {
		op.stop = r.clock.AfterFunc(t, func() { op.cancel(context.DeadlineExceeded) })
	}
	// Register the operation so EmergencyStop can cancel it. EmergencyStop latches before it
	// sweeps, so an operation registered after the sweep decides after the latch: its decision
	// is a Deny (everything new is denied, not cancelled).
	r.opMu.Lock()
	if r.ops == nil {
		r.ops = map[*Op]struct{}{}
	}
	r.ops[op] = struct{}{}
	r.opMu.Unlock()
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
		op.r.opMu.Lock()
		delete(op.r.ops, op)
		op.r.opMu.Unlock()
		if op.act.sem != nil {
			op.act.sem.Release(1)
		}
		// The records of a switch applied here are written whatever the context (Run.record).
		op.r.leave(op.ctx)
	})
}

func (r *Run) leave(ctx context.Context) {
	r.opMu.Lock()
	defer r.opMu.Unlock()
	r.inflight--
	if r.inflight == 0 && r.pending != nil {
		r.applyPendingLocked(ctx)
	}
}

// Context returns the operation's context: the one Begin was given, with the profile's timeout.
func (op *Op) Context() context.Context { return op.ctx }

// Gate returns the decider of the profile the operation runs under.
func (op *Op) Gate() *gate.Gate { return op.act.g }

// Check decides an action under the operation's profile (see Run.Check).
func (op *Op) Check(ctx context.Context, a policy.Action) (gate.Decision, error) {
	return op.r.check(ctx, op.act, a, nil)
}

// Do runs one action within the operation (see Run.Do).
func (op *Op) Do(ctx context.Context, a policy.Action, fn Func) (Outcome, error) {
	return op.r.do(ctx, op, a, fn, nil, nil)
}

// DoCommand runs one command within the operation (see Run.DoCommand).
func (op *Op) DoCommand(ctx context.Context, a policy.Action, cmd sandbox.Command) (Outcome, sandbox.Result, error) {
	return op.r.doCommand(ctx, op, a, cmd, nil)
}

// InFlight returns the number of operations between Begin and End.
func (r *Run) InFlight() int {
	r.opMu.Lock()
	defer r.opMu.Unlock()
	return r.inflight
}

// cancelOps cancels the context of every operation in flight with ErrEmergencyStop.
func (r *Run) cancelOps() {
	r.opMu.Lock()
	ops := make([]*Op, 0, len(r.ops))
	for op := range r.ops {
		ops = append(ops, op)
	}
	r.opMu.Unlock()
	for _, op := range ops {
		op.cancel(ErrEmergencyStop)
	}
}
