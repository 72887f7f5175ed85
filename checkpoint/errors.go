package checkpoint

import (
	"errors"
	"fmt"
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
