package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

var timeNow = time.Now

// Batch is a group of actions run under one checkpoint, as one gate operation (so under one
// profile). Its checkpoint honours the Checkpoint obligation of every action in it.
type Batch struct {
	s  *Session
	op *gate.Op
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
func (s *Session) Batch(ctx context.Context, label string, fn func(ctx context.Context, b *Batch) error) (out BatchOutcome, err error) {
	if s.opts.Checkpointer == nil {
		return out, fmt.Errorf("%w", &gate.DeniedError{Decision: gate.Decision{Verdict: policy.Deny, Layer: policy.LayerObligation,
			RuleID: gate.CheckObligationCheckpoint, Reason: "a batch needs a checkpointer and none is configured"}})
	}
	op, err := s.g.Begin(ctx)
	if err != nil {
		return out, err
	}
	defer op.End()
	ctx = op.Context()
	corr := s.g.NewDecisionID()
	id, err := s.opts.Checkpointer.Snapshot(ctx, "batch: "+label, corr.String())
	if err != nil {
		return out, fmt.Errorf("session: batch %q not run: checkpoint: %w", label, err)
	}
	out.CheckpointID = id
	s.recordEvent(ctx, audit.KindCheckpointCreated, id, "batch: "+label, corr)
	b := &Batch{s: s, op: op, st: batchState{checkpoint: id}}
	finished := false
	defer func() {
		if finished {
			return
		}
		r := recover()
		rerr := s.opts.Checkpointer.Restore(context.WithoutCancel(ctx), id)
		if rerr == nil {
			out.RolledBack = true
			s.recordEvent(ctx, audit.KindCheckpointRestored, id, fmt.Sprintf("batch %q rolled back after a panic", label), corr)
		}
		if r != nil {
			panic(r)
		}
	}()
	ferr := fn(ctx, b)
	finished = true
	if ferr == nil {
		return out, nil
	}
	if rerr := s.opts.Checkpointer.Restore(context.WithoutCancel(ctx), id); rerr != nil {
		return out, errors.Join(ferr, fmt.Errorf("session: batch %q: rollback to %s failed: %w", label, id, rerr))
	}
	out.RolledBack = true
	s.recordEvent(ctx, audit.KindCheckpointRestored, id, fmt.Sprintf("batch %q rolled back: %v", label, ferr), corr)
	return out, ferr
}

// Do runs one action of the batch (see Session.Do); a failure is not rolled back on its own:
// return it from the batch function to roll back the group.
func (b *Batch) Do(ctx context.Context, a policy.Action, fn Func) (Outcome, error) {
	return b.s.do(ctx, b.op, a, fn, &b.st, "")
}

// DoCommand runs one command of the batch (see Session.DoCommand).
func (b *Batch) DoCommand(ctx context.Context, a policy.Action, cmd sandbox.Command) (Outcome, sandbox.Result, error) {
	a, cmd, err := commandPair(a, cmd)
	if err != nil {
		return Outcome{}, sandbox.Result{ExitCode: sandbox.ExitDenied}, err
	}
	var res sandbox.Result
	out, err := b.s.do(ctx, b.op, a, func(ctx context.Context, d gate.Decision) error {
		var rerr error
		res, rerr = b.s.runCommand(ctx, d, cmd)
		return rerr
	}, &b.st, "command")
	return out, res, err
}

func (s *Session) recordEvent(ctx context.Context, k audit.Kind, id, label string, corr [16]byte) {
	if err := s.g.Record(ctx, audit.Record{Kind: k, Decision: policy.Allow, DecidedBy: audit.DecidedByHook,
		RuleMatched: "checkpoint", CheckpointID: id, Reason: label, CorrelationID: corr}); err != nil {
		s.log.Error("session: checkpoint event could not be recorded", "err", err)
	}
}

// RecordCheckpoint writes a checkpoint event that happened outside Do and Batch (a rewind from a
// UI, a prune) to the audit log, typed: pass it as checkpoint.Options.OnEvent's body. Do and
// Batch record their own checkpoints; hand only the others here.
func (s *Session) RecordCheckpoint(ctx context.Context, ev checkpoint.Event) error {
	var k audit.Kind
	switch ev.Kind {
	case checkpoint.CheckpointCreated:
		k = audit.KindCheckpointCreated
	case checkpoint.CheckpointRestored:
		k = audit.KindCheckpointRestored
	case checkpoint.CheckpointPruned:
		k = audit.KindCheckpointPruned
	default:
		return fmt.Errorf("session: RecordCheckpoint: unknown event kind %v", ev.Kind)
	}
	reason := ev.Checkpoint.Label
	if ev.Undo != "" {
		reason += " (undo with " + ev.Undo + ")"
	}
	if ev.Cause != nil {
		reason += ": " + ev.Cause.Error()
	}
	return s.g.Record(ctx, audit.Record{Kind: k, Decision: policy.Allow, DecidedBy: audit.DecidedByHook, RuleMatched: "checkpoint",
		CheckpointID: ev.Checkpoint.ID, Target: ev.Workspace, Reason: reason})
}
