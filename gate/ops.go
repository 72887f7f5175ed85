package gate

import (
	"context"
	"fmt"
	"sync"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Op is one operation: a unit of agent work (a tool call, a plan step) between two boundaries.
// The profile is fixed for the whole operation: a profile switch requested meanwhile waits until
// no operation is in flight. At most the profile's max_concurrent_ops operations run at once, and
// an operation's context ends after the profile's timeout.
type Op struct {
	g      *Gate
	st     *state
	ctx    context.Context
	cancel context.CancelFunc
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
	if t := st.limits.Timeout; t > 0 {
		op.ctx, op.cancel = context.WithTimeout(ctx, t)
	} else {
		op.ctx, op.cancel = context.WithCancel(ctx)
	}
	return op, nil
}

// End ends the operation; it is safe to call more than once. When it was the last operation in
// flight, a pending profile switch is applied.
func (op *Op) End() {
	op.once.Do(func() {
		op.cancel()
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
