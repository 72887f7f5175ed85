package audit

import (
	"time"

	"github.com/google/uuid"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// Kind says what a record is about.
type Kind string

// Record kinds.
const (
	// KindDecision records one gate decision (the policy spec's PolicyDecisionLog).
	KindDecision Kind = "decision"
	// KindHalt records a hard stop latching the gate.
	KindHalt Kind = "halt"
	// KindReset records the halt latch being reset.
	KindReset Kind = "reset"
)

// Record is one entry of the audit trail. The JSON field names are stable; the first eight are
// the policy spec's PolicyDecisionLog (timestamp, correlation_id, active_profile, operation_type,
// target, decision, rule_matched, user_override).
//
// A Record handed to [Sink.Write] may share its slices with the caller: a sink that keeps a
// record beyond Write must copy them (see [Record.Clone]).
type Record struct {
	// Time is when the decision was made.
	Time time.Time `json:"timestamp"`
	// CorrelationID groups the decisions of one agent turn or run.
	CorrelationID uuid.UUID `json:"correlation_id"`
	// Profile is the name of the active profile.
	Profile string `json:"active_profile"`
	// Operation is the action's operation type.
	Operation string `json:"operation_type"`
	// Target is the action's first target path as the agent gave it ("" if none); Targets has
	// all of them.
	Target string `json:"target"`
	// Decision is the verdict.
	Decision policy.Verdict `json:"decision"`
	// RuleMatched is the id of the rule that decided, or the layer's own name when no rule did
	// ("matrix", "protected-path", "hard-stop:budget", ...).
	RuleMatched string `json:"rule_matched"`
	// UserOverride reports that a human answered a CONFIRM (approved or refused).
	UserOverride bool `json:"user_override"`

	// Kind is what the record is about; decisions are "decision".
	Kind Kind `json:"kind"`
	// DecisionID identifies this record's decision (a UUIDv7).
	DecisionID uuid.UUID `json:"decision_id"`
	// Layer is the decision-order layer that decided: halted, hard_stop, boundary, mode, rule,
	// matrix, input or audit.
	Layer string `json:"layer"`
	// Reason explains the decision to a human.
	Reason string `json:"reason"`
	// Obligations are what must happen around the action (checkpoint, notify, sandbox).
	Obligations policy.Obligations `json:"obligations"`
	// Risk is the action's full risk set (declared and derived).
	Risk risk.Set `json:"risk_levels"`
	// Tool, Command, Host and Targets describe the action.
	Tool    string   `json:"tool,omitempty"`
	Command string   `json:"command,omitempty"`
	Host    string   `json:"host,omitempty"`
	Targets []string `json:"targets,omitempty"`
}

// Clone returns a copy of r that shares no memory with it.
func (r Record) Clone() Record {
	if r.Targets != nil {
		r.Targets = append([]string(nil), r.Targets...)
	}
	return r
}
