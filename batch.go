package reins

import (
	"context"
	"errors"
	"fmt"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// Batch is a group of actions run under one checkpoint, as one operation (so under one
// profile). Its checkpoint honours the Checkpoint obligation of every action in it.
type Batch struct {
	r  *Run
	op *Op
	st batchState
}

// BatchOutcome reports how a batch ended.
type BatchOutcome struct {
	CheckpointID string
	RolledBack   bool
}

// Batch takes one checkpoint, runs fn (which runs actions through the *Batch), and when fn
// returns an error (or panics) restores the checkpoint, undoing every action of the group. The
// checkpoint and the rollback are recorded. Without a Checkpointer nothing runs.
func (r *Run) Batch(ctx context.Context, label string, fn func(ctx context.Context, b *Batch) error) (out BatchOutcome, err error) {
	if r.opts.Checkpointer == nil {
		return out, &gate.DeniedError{Decision: gate.Decision{Verdict: policy.Deny, Layer: policy.LayerObligation,
			RuleID: gate.CheckObligationCheckpoint, Reason: "a batch needs a checkpointer and none is configured"}}
	}
	op, err := r.Begin(ctx)
	if err != nil {
		return out, err
	}
	defer op.End()
	ctx = op.Context()
	corr := newV7(r.clock.Now())
	id, err := r.opts.Checkpointer.Snapshot(ctx, "batch: "+label, corr.String())
	if err != nil {
		return out, fmt.Errorf("reins: batch %q not run: checkpoint: %w", label, err)
	}
	out.CheckpointID = id
	r.recordEvent(ctx, audit.KindCheckpointCreated, id, "batch: "+label, corr)
	b := &Batch{r: r, op: op, st: batchState{checkpoint: id}}
	finished := false
	defer func() {
		if finished {
			return
		}
		p := recover()
		if rerr := r.opts.Checkpointer.Restore(context.WithoutCancel(ctx), id); rerr == nil {
			out.RolledBack = true
			r.recordEvent(ctx, audit.KindCheckpointRestored, id, fmt.Sprintf("batch %q rolled back after a panic", label), corr)
		}
		if p != nil {
			panic(p)
		}
	}()
	ferr := fn(ctx, b)
	finished = true
	if ferr == nil {
		return out, nil
	}
	if rerr := r.opts.Checkpointer.Restore(context.WithoutCancel(ctx), id); rerr != nil {
		return out, errors.Join(ferr, fmt.Errorf("reins: batch %q: rollback to %s failed: %w", label, id, rerr))
	}
	out.RolledBack = true
	r.recordEvent(ctx, audit.KindCheckpointRestored, id, fmt.Sprintf("batch %q rolled back: %v", label, ferr), corr)
	return out, ferr
}

// Do runs one action of the batch (see Run.Do); a failure is not rolled back on its own:
// return it from the batch function to roll back the group.
func (b *Batch) Do(ctx context.Context, a policy.Action, fn Func) (Outcome, error) {
	return b.r.do(ctx, b.op, a, fn, &b.st, nil)
}

// DoCommand runs one command of the batch (see Run.DoCommand).
func (b *Batch) DoCommand(ctx context.Context, a policy.Action, cmd sandbox.Command) (Outcome, sandbox.Result, error) {
	return b.r.doCommand(ctx, b.op, a, cmd, &b.st)
}

func (r *Run) recordEvent(ctx context.Context, k audit.Kind, id, label string, corr [16]byte) {
	if err := r.record(ctx, audit.Record{Kind: k, Decision: policy.Allow, DecidedBy: audit.DecidedByHook,
		RuleMatched: "checkpoint", CheckpointID: id, Reason: label, CorrelationID: corr}); err != nil {
		r.log.Error("reins: checkpoint event could not be recorded", "err", err)
	}
}

// RecordCheckpoint writes a checkpoint event that happened outside the run's own actions (a
// rewind from a UI, a prune) to the audit log, typed: kind is the event's kind, whose String is
// the audit record kind ("checkpoint_created", "checkpoint_restored" or "checkpoint_pruned";
// package checkpoint's event kinds spell themselves so), id the checkpoint, workspace the
// workspace and reason what happened. Pass it from checkpoint.Options.OnEvent; the run records
// its own checkpoints itself.
func (r *Run) RecordCheckpoint(ctx context.Context, kind fmt.Stringer, id, workspace, reason string) error {
	k := audit.Kind(kind.String())
	switch k {
	case audit.KindCheckpointCreated, audit.KindCheckpointRestored, audit.KindCheckpointPruned:
	default:
		return fmt.Errorf("reins: RecordCheckpoint: %q is not a checkpoint event kind", k)
	}
	return r.record(ctx, audit.Record{Kind: k, Decision: policy.Allow, DecidedBy: audit.DecidedByHook, RuleMatched: "checkpoint",
		CheckpointID: id, Target: workspace, Reason: reason})
}
