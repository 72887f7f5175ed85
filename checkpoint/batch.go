package checkpoint

import (
	"context"
	"fmt"
)

// BatchResult reports a successful batch, or the checkpoint and rollback
// of a failed one (together with a [*BatchError]).
type BatchResult struct {
	// Checkpoint is the snapshot taken before the function ran.
	Checkpoint Checkpoint
	// RolledBack is true when the function failed and the workspace was
	// restored to Checkpoint.
	RolledBack bool
	// Rollback is the restore's report when RolledBack; its Undo holds the
	// failed state, for inspection.
	Rollback RewindResult
}

// Batch checkpoints the workspace, runs fn, and rolls the workspace back to
// the checkpoint when fn returns an error or panics. It is BatchWith with
// only a label.
func (c *Checkpointer) Batch(ctx context.Context, label string, fn func(context.Context) error) (BatchResult, error) {
	return c.BatchWith(ctx, CreateOptions{Label: label}, fn)
}

// BatchWith is Batch with full [CreateOptions] (correlation id, or Paths
// for a path-scoped checkpoint when the host knows what fn will touch).
//
// If the checkpoint cannot be taken, fn is not run and the error is
// returned. If fn fails, the error is a [*BatchError] carrying fn's error
// and the outcome of the rollback. If fn panics (or calls
// runtime.Goexit), the workspace is rolled back and then the panic
// continues with its original value; the rollback is reported through a
// [Restored] event whose Cause is a [*PanicError]. The rollback
// runs even when ctx has been cancelled. The workspace lock is not held
// while fn runs.
func (c *Checkpointer) BatchWith(ctx context.Context, o CreateOptions, fn func(context.Context) error) (res BatchResult, err error) {
	if fn == nil {
		return BatchResult{}, fmt.Errorf("checkpoint: Batch: nil function")
	}
	cp, err := c.createWith(ctx, o, ReasonBatch)
	if err != nil {
		return BatchResult{}, fmt.Errorf("checkpoint: batch %q not run: %w", o.Label, err)
	}
	res.Checkpoint = cp
	rollback := func(cause error) (RewindResult, error) {
		return c.rewind(context.WithoutCancel(ctx), func(ctx context.Context) (Checkpoint, error) {
			return c.lookup(ctx, cp.ID)
		}, cause)
	}
	finished := false
	defer func() {
		if finished {
			return
		}
		r := recover()
		var cause error = &PanicError{Value: r}
		if r == nil {
			cause = fmt.Errorf("checkpoint: batch %q: function exited without returning (runtime.Goexit)", o.Label)
		}
		_, _ = rollback(cause)
		if r != nil {
			panic(r)
		}
	}()
	ferr := fn(ctx)
	finished = true
	if ferr == nil {
		return res, nil
	}
	rr, rerr := rollback(ferr)
	berr := &BatchError{Checkpoint: cp, Err: ferr}
	if rerr != nil {
		berr.RollbackErr = rerr
	} else {
		berr.RolledBack = true
		berr.Undo = rr.Undo.ID
		res.RolledBack = true
		res.Rollback = rr
	}
	return res, berr
}
