package reins

import (
	"context"
	"fmt"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// Checkpointer snapshots the workspace before mutating work and restores it after a failure.
// *checkpoint.Checkpointer satisfies it.
type Checkpointer interface {
	// Snapshot records the workspace and returns the checkpoint's id.
	Snapshot(ctx context.Context, label, correlationID string) (id string, err error)
	// Restore makes the workspace exactly the checkpoint again.
	Restore(ctx context.Context, id string) error
}

// PathSnapshotter is a Checkpointer that can also record just some paths (*checkpoint.Checkpointer
// is one): a confined command can change only what its sandbox lets it write, so its checkpoint
// covers just that, at about what the write set costs instead of a workspace snapshot. Restore
// of such a checkpoint puts back exactly those paths.
type PathSnapshotter interface {
	SnapshotPaths(ctx context.Context, label, correlationID string, paths []string) (id string, err error)
}

// Runner runs one command under confinement. Every backend of package sandbox satisfies it (it
// is sandbox.Sandbox's method set, declared here by its consumer). A Result with violations is
// a sandbox escape signal: DoCommand latches the run's hard stop.
type Runner interface {
	Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error)
}

// NoticeKind says what a Notice is about.
type NoticeKind uint8

// The notices.
const (
	// NoticeAction: an action is going ahead (the Notify obligation).
	NoticeAction NoticeKind = iota
	// NoticeBudgetWarning: a meter passed its warning fraction.
	NoticeBudgetWarning
	// NoticeBudgetExceeded: a meter reached its limit; the run halted.
	NoticeBudgetExceeded
)

// String returns "action", "budget_warning" or "budget_exceeded".
func (k NoticeKind) String() string {
	switch k {
	case NoticeAction:
		return "action"
	case NoticeBudgetWarning:
		return "budget_warning"
	case NoticeBudgetExceeded:
		return "budget_exceeded"
	}
	return fmt.Sprintf("NoticeKind(%d)", uint8(k))
}

// Notice is what a Notifier is told.
type Notice struct {
	Kind NoticeKind
	// Action and Decision are set for NoticeAction.
	Action   policy.Action
	Decision gate.Decision
	// Meter is set for the budget notices.
	Meter MeterStatus
	// Message says it to a human.
	Message string
}

// Notifier tells the user something: that an action goes ahead (the Notify obligation), that a
// budget meter is running out. An error for a NoticeAction stops the action: an obligation
// that cannot be honoured is not honoured.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// NotifierFunc adapts a function to a Notifier.
type NotifierFunc func(ctx context.Context, n Notice) error

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, n Notice) error { return f(ctx, n) }
