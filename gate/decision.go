package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// Layer is the step of the decision order that decided.
type Layer uint8

// The layers, in the order Check walks them. The first layer that decides wins.
const (
	// LayerInput: the action itself is malformed (an invalid risk value, an unreadable target).
	LayerInput Layer = iota
	// LayerHalted: a latched hard stop or the emergency-stop mode denies everything until reset.
	LayerHalted
	// LayerHardStop: budget exceeded, a sandbox escape signal, repeated tool failure, or a
	// write outside the workspace. Each latches the halt.
	LayerHardStop
	// LayerBoundary: a protected path.
	LayerBoundary
	// LayerMode: the permission mode (plan denies all; read-only denies all but ReadOnly).
	LayerMode
	// LayerRule: a policy rule of the active profile.
	LayerRule
	// LayerMatrix: the autonomy matrix.
	LayerMatrix
	// LayerAudit: the decision could not be recorded, so it is a Deny.
	LayerAudit
	// LayerApproval: after the decision order, the approval of a CONFIRM: refused, timed out,
	// parked, or nobody to ask (the run discipline of package session).
	LayerApproval
	// LayerObligation: after the decision order, an obligation that could not be honoured (no
	// checkpointer, a notification that failed, no sandbox runner).
	LayerObligation
)

var layerNames = [...]string{"input", "halted", "hard_stop", "boundary", "mode", "rule", "matrix", "audit", "approval", "obligation"}

// String returns the layer's name as audit records write it ("hard_stop", "rule", ...).
func (l Layer) String() string {
	if int(l) < len(layerNames) {
		return layerNames[l]
	}
	return fmt.Sprintf("Layer(%d)", uint8(l))
}

// Decision is the gate's answer for one action.
type Decision struct {
	// Verdict is Allow, Deny or Confirm. A Decision returned with a non-nil error is always Deny.
	Verdict policy.Verdict
	// Obligations must be honoured when the action goes ahead (after approval, for Confirm).
	Obligations policy.Obligations
	// Layer is the step of the decision order that decided.
	Layer Layer
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
