package checkpoint

import "fmt"

// EventKind says what happened to a checkpoint.
type EventKind uint8

// Event kinds. The zero value is not a valid kind.
const (
	// CheckpointCreated: a snapshot was stored (by Create, by Batch, or
	// before a restore).
	CheckpointCreated EventKind = iota + 1
	// CheckpointRestored: the workspace was restored to a snapshot (by
	// Restore, Rewind, RewindN or a Batch rollback).
	CheckpointRestored
	// CheckpointPruned: a snapshot was deleted by Prune.
	CheckpointPruned
)

// String returns the event name, e.g. "CheckpointCreated".
func (k EventKind) String() string {
	switch k {
	case CheckpointCreated:
		return "CheckpointCreated"
	case CheckpointRestored:
		return "CheckpointRestored"
	case CheckpointPruned:
		return "CheckpointPruned"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is delivered to [Options.OnEvent]; the gate turns events into
// audit records.
type Event struct {
	Kind       EventKind
	Workspace  string     // the workspace directory
	Checkpoint Checkpoint // the checkpoint created, restored or pruned
	// Undo is set for CheckpointRestored: the id of the checkpoint holding
	// the state the restore replaced (rewinding to it undoes the restore).
	Undo string
	// Changes is set for CheckpointRestored: the number of paths written or
	// removed.
	Changes int
	// Cause is set for CheckpointRestored by a Batch rollback: the batch
	// function's error, or a *PanicError.
	Cause error
}
