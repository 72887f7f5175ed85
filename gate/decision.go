package gate

import (
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// Decision is the gate's answer for one action.
type Decision struct {
	// Verdict is Allow, Deny or Confirm. A Decision returned with a non-nil error is always Deny.
	Verdict policy.Verdict
	// Obligations must be honoured when the action goes ahead (after approval, for Confirm).
	Obligations policy.Obligations
	// Layer is the step of the decision order that decided.
	Layer policy.Layer
	// RuleID is the id of the deciding rule, or the id of the built-in check that decided when
	// no rule did ([CheckMatrix], [CheckProtectedPath], [CheckHardStopBudget], ...; see the
	// package documentation, "Check ids").
	RuleID string
	// Reason explains the decision to a human.
	Reason string
	// Profile is the name of the active profile.
	Profile string
	// Risk is the action's risk set: declared, implied by its operation, and derived.
	Risk risk.Set
	// Latch, when not empty, is the hard stop this decision found (layer hard_stop): the run
	// latches it, with Reason as the halt's reason, when it records the decision.
	Latch Cause
	// CorrelationID groups the decisions of one agent turn or run: the action's, or a fresh
	// UUIDv7 (then equal to DecisionID).
	CorrelationID uuid.UUID
	// DecisionID identifies this decision and its audit record.
	DecisionID uuid.UUID
}

// String renders the decision on one line, e.g. "ALLOW+checkpoint+notify by rule allow-low-med-risk".
func (d Decision) String() string {
	var b strings.Builder
	b.WriteString(d.Verdict.String())
	if d.Obligations != 0 {
		b.WriteByte('+')
		b.WriteString(d.Obligations.String())
	}
	b.WriteString(" by ")
	b.WriteString(d.Layer.String())
	if d.RuleID != "" && d.RuleID != d.Layer.String() {
		b.WriteByte(' ')
		b.WriteString(d.RuleID)
	}
	if d.Reason != "" {
		b.WriteString(": ")
		b.WriteString(d.Reason)
	}
	return b.String()
}

// ErrDenied is matched (with errors.Is) by a [*DeniedError]; hosts that turn a Deny into an error
// use it to branch.
var ErrDenied = errors.New("gate: denied")

// DeniedError carries the decision that denied an action, and the ways forward the engine knows.
// It matches [ErrDenied].
type DeniedError struct {
	Decision Decision
	// Alternatives lists what could go ahead instead (see [Gate.Alternatives]); may be empty.
	Alternatives []Alternative
}

// Error implements error.
func (e *DeniedError) Error() string { return "gate: denied: " + e.Decision.String() }

// Is reports whether target is ErrDenied.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }
