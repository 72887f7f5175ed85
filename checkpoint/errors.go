package checkpoint

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors callers can branch on with errors.Is.
var (
	// ErrGitNotFound: the git binary does not exist or is not executable.
	ErrGitNotFound = errors.New("checkpoint: git binary not found")
	// ErrGitTooOld: the git binary is older than the minimum supported release.
	ErrGitTooOld = errors.New("checkpoint: git binary too old")
	// ErrNotFound: no checkpoint of this workspace has the given id or position.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrInvalidID: the id is not a canonical UUID.
	ErrInvalidID = errors.New("checkpoint: invalid checkpoint id")
	// ErrInvalidPath: a path given for a path-scoped snapshot is unusable.
	ErrInvalidPath = errors.New("checkpoint: invalid path")
	// ErrLocked: the workspace lock could not be taken in time.
	ErrLocked = errors.New("checkpoint: workspace locked")
	// ErrConflict: a restore would have to overwrite or remove something the
	// snapshot does not cover (an ignored, oversized or untracked file or a
	// non-empty directory in the way). Nothing was changed.
	ErrConflict = errors.New("checkpoint: restore conflict")
	// ErrFileTooLarge: a file exceeds the size cap and the policy is
	// OversizeFail.
	ErrFileTooLarge = errors.New("checkpoint: file too large")
)

// FileTooLargeError names the file that exceeded [Options.MaxFileSize].
type FileTooLargeError struct {
	Path  string // workspace-relative, slash-separated
	Size  int64
	Limit int64
}

// Error names the file, its size and the cap.
func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("checkpoint: %s: %d bytes exceeds the %d-byte cap (set Options.MaxFileSize or Options.Oversize)", e.Path, e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrFileTooLarge) true.
func (e *FileTooLargeError) Is(target error) bool { return target == ErrFileTooLarge }

// ConflictError names the path that blocked a restore.
type ConflictError struct {
	Path   string // workspace-relative, slash-separated
	Reason string
}

// Error names the path and why it blocks the restore.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("checkpoint: restore conflict at %s: %s; nothing was changed", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// BatchError reports a failed batch: the function's error (or panic) and
// what happened to the rollback. It unwraps to both errors.
type BatchError struct {
	Checkpoint  Checkpoint // the checkpoint taken before the batch
	Err         error      // the function's error, or a *PanicError
	RolledBack  bool       // the workspace was restored to Checkpoint
	Undo        string     // id of the checkpoint of the failed state, when rolled back
	RollbackErr error      // why the rollback failed, if it did
}

// Error reports the batch failure and the outcome of the rollback.
func (e *BatchError) Error() string {
	if e.RolledBack {
		return fmt.Sprintf("checkpoint: batch %q failed and was rolled back to %s: %v", e.Checkpoint.Label, e.Checkpoint.ID, e.Err)
	}
	return fmt.Sprintf("checkpoint: batch %q failed: %v; rollback to %s failed: %v", e.Checkpoint.Label, e.Err, e.Checkpoint.ID, e.RollbackErr)
}

// Unwrap returns the function's error and the rollback error, if any.
func (e *BatchError) Unwrap() []error {
	errs := []error{e.Err}
	if e.RollbackErr != nil {
		errs = append(errs, e.RollbackErr)
	}
	return errs
}

// PanicError records a panic inside a batch function. Batch re-raises the
// original value after the rollback; PanicError is what the event and
// [BatchError] carry.
type PanicError struct {
	Value any
}

// Error renders the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// ErrRestoreFailed matches every [*RestoreError]: a restore that was not
// carried out.
var ErrRestoreFailed = errors.New("checkpoint: restore not carried out")

// RestoreFailure says why a restore was not carried out.
type RestoreFailure uint8

// Restore failures; the zero value is not used.
const (
	// RestoreSnapshotFailed: the current state could not be checkpointed
	// first, so nothing was changed.
	RestoreSnapshotFailed RestoreFailure = iota + 1
	// RestoreUnreadable: the target's tree, objects or record of uncovered
	// paths are missing, unreadable or unsafe (a forged or damaged
	// checkpoint). Nothing was changed.
	RestoreUnreadable
	// RestoreConflict: something the snapshots do not cover is in the way
	// (see [*ConflictError]). Nothing was changed.
	RestoreConflict
	// RestoreInterrupted: writing the workspace failed midway (a disk
	// error, a concurrent change); the workspace was then returned to the
	// state checkpointed before the restore, see RolledBack.
	RestoreInterrupted
)

// String returns a short description of the failure.
func (f RestoreFailure) String() string {
	switch f {
	case RestoreSnapshotFailed:
		return "the current state could not be checkpointed"
	case RestoreUnreadable:
		return "the checkpoint is unreadable or unsafe"
	case RestoreConflict:
		return "something the snapshots do not cover is in the way"
	case RestoreInterrupted:
		return "applying the restore failed midway"
	}
	return fmt.Sprintf("RestoreFailure(%d)", uint8(f))
}

// RestoreError reports a restore that was not carried out: planned and
// checked before anything is changed, a restore either completes, or
// changes nothing, or (failing midway) returns the workspace to the state
// it checkpointed first. It matches [ErrRestoreFailed] and unwraps to the
// cause (a [*ConflictError], a git error, ...).
type RestoreError struct {
	ID      string         // the checkpoint that was to be restored
	Undo    string         // the checkpoint of the state before the restore; "" if it could not be taken
	Failure RestoreFailure // why
	Path    string         // the workspace-relative path involved, when there is one
	// RolledBack is set for RestoreInterrupted when the workspace was
	// returned to Undo; RollbackErr says why not otherwise.
	RolledBack  bool
	RollbackErr error
	Err         error // the cause
}

// Error says which restore failed, why, and what state the workspace is in.
func (e *RestoreError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint: restore of %s not carried out: %s", e.ID, e.Failure)
	if e.Path != "" {
		fmt.Fprintf(&b, " (at %s)", e.Path)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	switch {
	case e.Failure != RestoreInterrupted:
		b.WriteString("; nothing was changed")
	case e.RolledBack:
		fmt.Fprintf(&b, "; the workspace was returned to checkpoint %s", e.Undo)
	default:
		fmt.Fprintf(&b, "; returning the workspace to checkpoint %s failed too (%v): restore that checkpoint by hand", e.Undo, e.RollbackErr)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrRestoreFailed) true.
func (e *RestoreError) Is(target error) bool { return target == ErrRestoreFailed }

// Unwrap returns the cause and, if returning to Undo failed, why.
func (e *RestoreError) Unwrap() []error {
	errs := []error{e.Err}
	if e.RollbackErr != nil {
		errs = append(errs, e.RollbackErr)
	}
	return errs
}
