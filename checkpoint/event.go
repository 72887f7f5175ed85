package checkpoint

import (
	"fmt"
	"strconv"
)

// EventKind says what happened to a checkpoint. Its text form is the
// audit log's record kind for the event ("checkpoint_created",
// "checkpoint_restored", "checkpoint_pruned", the values of package
// audit's KindCheckpointCreated, KindCheckpointRestored and
// KindCheckpointPruned), so a host records an event with
// audit.Kind(ev.Kind.String()) and no table of its own.
type EventKind uint8

// Event kinds. The zero value is not a valid kind.
const (
	// Created: a snapshot was stored (by Create, CreateWith, Snapshot,
	// SnapshotPaths, by Batch, or before a restore).
	Created EventKind = iota + 1
	// Restored: the workspace was restored to a snapshot (by Restore,
	// Rewind, RewindN or a Batch rollback).
	Restored
	// Pruned: a snapshot was deleted by Prune.
	Pruned
)

var eventNames = [...]string{Created: "checkpoint_created", Restored: "checkpoint_restored", Pruned: "checkpoint_pruned"}

// String returns the audit record kind of the event: "checkpoint_created",
// "checkpoint_restored" or "checkpoint_pruned"; "EventKind(n)" for a value
// that is not a kind.
func (k EventKind) String() string {
	if k >= Created && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText returns the text of [EventKind.String]; a value that is not a
// kind is an error.
func (k EventKind) MarshalText() ([]byte, error) {
	if k < Created || int(k) >= len(eventNames) {
		return nil, fmt.Errorf("checkpoint: EventKind(%d) is not an event kind", uint8(k))
	}
	return []byte(eventNames[k]), nil
}

// UnmarshalText parses the text MarshalText writes; any other text is an
// error and leaves k unchanged.
func (k *EventKind) UnmarshalText(b []byte) error {
	for i := Created; int(i) < len(eventNames); i++ {
		if string(b) == eventNames[i] {
			*k = i
			return nil
		}
	}
	return fmt.Errorf("checkpoint: %q is not an event kind", truncate(string(b), 80))
}

// Event is delivered to [Options.OnEvent]; a host records it in the audit
// log as a record of kind audit.Kind(ev.Kind.String()).
type Event struct {
	Kind       EventKind
	Workspace  string     // the workspace directory
	Checkpoint Checkpoint // the checkpoint created, restored or pruned
	// Undo is set for Restored: the id of the checkpoint holding the
	// state the restore replaced (rewinding to it undoes the restore).
	Undo string
	// Changes is set for Restored: the number of paths written or removed.
	Changes int
	// Cause is set for Restored by a Batch rollback: the batch function's
	// error, or a *PanicError.
	Cause error
}
