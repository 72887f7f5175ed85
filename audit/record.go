package audit

import (
	"encoding/hex"
	"fmt"
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
	// KindOutcome records how an action that was decided ended, as the host reports it: its
	// DecisionID is the decision's, Outcome says succeeded, failed or rolled_back.
	KindOutcome Kind = "outcome"
	// KindProfileSwitchRequested records a request to switch to RequestedProfile.
	KindProfileSwitchRequested Kind = "profile_switch_requested"
	// KindProfileSwitchApplied records a switch taking effect (at an operation boundary).
	KindProfileSwitchApplied Kind = "profile_switch_applied"
	// KindProfileSwitchRefused records a switch that was refused (an upgrade the user did not
	// confirm, an invalid profile); Reason says why.
	KindProfileSwitchRefused Kind = "profile_switch_refused"
	// KindRecovery is written by [JSONL] when it reopens a log whose last line was torn by a
	// crash: it truncated the torn bytes (never an acknowledged record) and says so in Reason.
	KindRecovery Kind = "recovery"
	// KindCheckpointCreated, KindCheckpointRestored and KindCheckpointPruned record the
	// checkpoint events a host hands to the gate: CheckpointID names the checkpoint, Target the
	// workspace, Reason its label (and, for a restore, what it undid and why).
	KindCheckpointCreated  Kind = "checkpoint_created"
	KindCheckpointRestored Kind = "checkpoint_restored"
	KindCheckpointPruned   Kind = "checkpoint_pruned"
	// KindApproval records a human's (or the timeout's) answer to a CONFIRM: DecidedBy user (or
	// default for a timeout or an error), UserOverride when a human answered, RuleMatched
	// "approval:<scope>", Reason who, the scope and the note.
	KindApproval Kind = "approval"
	// KindParked records a CONFIRM queued for later review; KindParkedResolved its resolution.
	KindParked         Kind = "parked"
	KindParkedResolved Kind = "parked_resolved"
	// KindGrant records a grant made (RuleMatched its rule id); KindGrantRevoked its revocation.
	KindGrant        Kind = "grant"
	KindGrantRevoked Kind = "grant_revoked"
	// KindBudget records a meter's warning, its exhaustion, or its reset.
	KindBudget Kind = "budget"
	// KindSandboxWaived records that a decision's Sandbox obligation was not enforced, and why
	// (the host trusts the analysis: RuleMatched "obligation:sandbox-trusted").
	KindSandboxWaived Kind = "sandbox_waived"
	// KindRunState records a run-state store starting or ending a grace period in which it
	// serves its last known state because its backend cannot be reached (RuleMatched
	// "run-state:stale" or "run-state:current"; Reason says why and since when).
	KindRunState Kind = "run_state"
)

// DecidedBy says who or what made a decision, coarser than Layer and stable across gate
// versions: the question an auditor asks ("did a rule allow this, or a human?").
type DecidedBy string

// The deciders.
const (
	// DecidedByRule: a policy rule of the active profile.
	DecidedByRule DecidedBy = "rule"
	// DecidedByMatrix: the autonomy matrix (no rule matched).
	DecidedByMatrix DecidedBy = "matrix"
	// DecidedByHardStop: a hard stop, or the halt latch a hard stop left.
	DecidedByHardStop DecidedBy = "hard_stop"
	// DecidedByBoundary: a protected path or another boundary no setting can lift.
	DecidedByBoundary DecidedBy = "boundary"
	// DecidedByMode: the permission mode (plan, read-only).
	DecidedByMode DecidedBy = "mode"
	// DecidedByUser: a human (answered a CONFIRM, reset a halt, switched a profile).
	DecidedByUser DecidedBy = "user"
	// DecidedByHook: a host hook or checker.
	DecidedByHook DecidedBy = "hook"
	// DecidedByDefault: a fail-closed default (malformed input, a context that was done, a
	// decision that could not be recorded).
	DecidedByDefault DecidedBy = "default"
)

// DecidedByLayer maps a decision's layer to a [DecidedBy]: rule, matrix, boundary and mode map
// to themselves, hard_stop and halted to hard_stop, and every other layer to default. It does
// not allocate.
func DecidedByLayer(layer policy.Layer) DecidedBy {
	switch layer {
	case policy.LayerRule:
		return DecidedByRule
	case policy.LayerMatrix:
		return DecidedByMatrix
	case policy.LayerHardStop, policy.LayerHalted:
		return DecidedByHardStop
	case policy.LayerBoundary:
		return DecidedByBoundary
	case policy.LayerMode:
		return DecidedByMode
	}
	return DecidedByDefault
}

// Outcome is how an action ended, as the host reports it.
type Outcome string

// The outcomes.
const (
	// OutcomeSucceeded: the action ran and succeeded.
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeFailed: the action ran and failed; the workspace was left as the action left it.
	OutcomeFailed Outcome = "failed"
	// OutcomeRolledBack: the action failed and the workspace was restored to CheckpointID.
	OutcomeRolledBack Outcome = "rolled_back"
	// OutcomeDenied: the action did not run: the gate denied it, its approval was refused or
	// timed out, or an obligation could not be honoured.
	OutcomeDenied Outcome = "denied"
	// OutcomeParked: the action waits for review.
	OutcomeParked Outcome = "parked"
)

// Digest is a SHA-256 digest, written as 64 lower-case hex digits. The zero Digest means "none"
// (the first record of a chain has no prev; a record outside a chain has no hash).
type Digest [32]byte

// IsZero reports whether d is the zero Digest.
func (d Digest) IsZero() bool { return d == Digest{} }

// String returns d as 64 lower-case hex digits.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// AppendText implements [encoding.TextAppender].
func (d Digest) AppendText(b []byte) ([]byte, error) { return hex.AppendEncode(b, d[:]), nil }

// MarshalText implements [encoding.TextMarshaler].
func (d Digest) MarshalText() ([]byte, error) { return d.AppendText(make([]byte, 0, 64)) }

// UnmarshalText implements [encoding.TextUnmarshaler]: exactly 64 lower-case hex digits.
func (d *Digest) UnmarshalText(text []byte) error {
	if len(text) != 64 {
		return fmt.Errorf("audit: digest %q is not 64 hex digits", text)
	}
	for _, c := range text {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("audit: digest %q is not lower-case hex", text)
		}
	}
	_, err := hex.Decode(d[:], text)
	return err
}

// Record is one entry of the audit trail. The JSON field names are stable and listed in the
// package documentation; the first eight are the policy spec's PolicyDecisionLog (timestamp,
// correlation_id, active_profile, operation_type, target, decision, rule_matched,
// user_override). Field order is the encoding order of [AppendJSON].
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
	// Decision is the verdict. Records that are not decisions carry the verdict of the event
	// they record (a halt denies, a reset allows, an applied switch allows, a refused one
	// denies); outcome and recovery records leave it zero (DENY).
	Decision policy.Verdict `json:"decision"`
	// RuleMatched is the id of the rule that decided, or the layer's own name when no rule did
	// ("matrix", "protected-path", "hard-stop:budget", ...).
	RuleMatched string `json:"rule_matched"`
	// UserOverride reports that a human answered a CONFIRM (approved or refused).
	UserOverride bool `json:"user_override"`

	// Kind is what the record is about; decisions are "decision".
	Kind Kind `json:"kind"`
	// DecisionID identifies this record's decision (a UUIDv7). An outcome record carries the
	// id of the decision whose action it reports on.
	DecisionID uuid.UUID `json:"decision_id"`
	// Layer is the decision-order layer that decided: halted, hard_stop, boundary, mode, rule,
	// matrix, input, audit, approval or obligation; LayerNone ("") for records that are not
	// decisions.
	Layer policy.Layer `json:"layer"`
	// DecidedBy says who decided: rule, matrix, hard_stop, boundary, mode, user, hook or
	// default (see [DecidedByLayer]). Empty for records that are not decisions.
	DecidedBy DecidedBy `json:"decided_by,omitempty"`
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

	// ProfileHash is the content hash of the active profile, so a record names exactly the
	// policy that decided, not only its name.
	ProfileHash string `json:"profile_hash,omitempty"`
	// BundleVersion is the version of the signed policy bundle the active profile's managed
	// tier came from (profile.Managed.Bundle); 0, and omitted from the encoding, when there is
	// none, so records without one are what they were before the field existed.
	BundleVersion uint64 `json:"bundle_version,omitempty"`
	// RequestedProfile and RequestedProfileHash name the profile a switch record asks for (the
	// profile_switch_* kinds); Profile and ProfileHash name the one in force before the switch.
	RequestedProfile     string `json:"requested_profile,omitempty"`
	RequestedProfileHash string `json:"requested_profile_hash,omitempty"`
	// Outcome is how the action ended (outcome records).
	Outcome Outcome `json:"outcome,omitempty"`
	// CheckpointID is the checkpoint taken before the action, or restored by a rollback.
	CheckpointID string `json:"checkpoint_id,omitempty"`
	// Error is the error text of a failed or rolled-back action.
	Error string `json:"error,omitempty"`
	// Approver names who answered a CONFIRM ("timeout" when nobody did in time), ApprovalScope
	// how far the answer reaches (once, session, always) and Note what the approver wrote
	// (approval records of the run, package reins).
	Approver      string `json:"approver,omitempty"`
	ApprovalScope string `json:"approval_scope,omitempty"`
	Note          string `json:"note,omitempty"`
	// Input is the tool call's input as the host gave it to the gate (policy.Action.Input),
	// redacted like Command and cut to policy.MaxInput bytes.
	Input string `json:"input,omitempty"`

	// Seq is the record's position in its hash chain, from 1. Sinks without a chain leave it 0.
	Seq uint64 `json:"seq,omitempty"`
	// Prev is the hash of the previous record of the chain (zero for the first record).
	Prev Digest `json:"prev,omitzero"`
	// Hash is the SHA-256 of this record's canonical encoding without the hash field (see
	// [AppendJSON]). A chained sink fills Seq, Prev and Hash; what the caller sets is ignored.
	Hash Digest `json:"hash,omitzero"`
}

// Clone returns a copy of r that shares no memory with it.
func (r Record) Clone() Record {
	if r.Targets != nil {
		r.Targets = append([]string(nil), r.Targets...)
	}
	return r
}
