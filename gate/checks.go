package gate

import "strings"

// The ids of the built-in checks, as [Decision.RuleID] (and the audit record's rule_matched)
// names them when no rule of the profile decided; a policy rule's id is the rule's own. Every
// check id has one spelling: lower-case words joined by '-', after a group and ':' for the
// checks that come in families ("hard-stop:", "mode:", "approval:", "obligation:", "grant:").
// Layer names are a different thing, spelled as audit records write them ("hard_stop"); see
// [Layer.String]. The ids are listed in the package documentation, "Check ids".
const (
	// CheckContext: the context was done before the decision (layer input), or before the action
	// ran (layer halted, in package session).
	CheckContext = "context"
	// CheckInvalidRisk: the action declares a risk level or severity that does not exist.
	CheckInvalidRisk = "invalid-risk"
	// CheckUnparsableCommand: the command line does not parse, so it cannot run as written.
	CheckUnparsableCommand = "unparsable-command"

	// CheckHalted: a hard stop is latched.
	CheckHalted = "halted"
	// CheckEmergencyStop: the permission mode is emergency-stop.
	CheckEmergencyStop = "emergency-stop"

	// CheckHardStopBudget: the reported spend exceeds the budget.
	CheckHardStopBudget = "hard-stop:budget"
	// CheckHardStopExternalWrite: the action would write outside the workspace.
	CheckHardStopExternalWrite = "hard-stop:external-write"
	// CheckHardStopSandboxEscape: a sandbox reported a violation (the halt record's id).
	CheckHardStopSandboxEscape = "hard-stop:sandbox-escape"
	// CheckHardStopToolFailures: a tool failed too many times in a row (the halt record's id).
	CheckHardStopToolFailures = "hard-stop:tool-failures"
	// CheckHardStopManual: the host called [Gate.Halt] (the halt record's id).
	CheckHardStopManual = "hard-stop:manual"
	// CheckHardStopEmergencyStop: the host called [Gate.EmergencyStop] (the halt record's id).
	CheckHardStopEmergencyStop = "hard-stop:emergency-stop"
	// CheckReset: the host cleared a latched hard stop with [Gate.Reset] (the reset record's id).
	CheckReset = "reset"

	// CheckUnresolvablePath: a target cannot be resolved (a loop, a NUL byte, too many links).
	CheckUnresolvablePath = "unresolvable-path"
	// CheckAmbiguousPath: the kernel and a lexical join read a target differently.
	CheckAmbiguousPath = "ambiguous-path"
	// CheckProtectedPath: a target is a secret, or a write-protected path that would be written.
	CheckProtectedPath = "protected-path"

	// CheckModePlan: the permission mode is plan.
	CheckModePlan = "mode:plan"
	// CheckModeReadOnly: the permission mode is read-only and the action is not.
	CheckModeReadOnly = "mode:read-only"

	// CheckMatrix: no rule matched; the autonomy matrix decided.
	CheckMatrix = "matrix"
	// CheckOpaqueCommand: part of the command line cannot be analysed, so an Allow becomes a
	// Confirm.
	CheckOpaqueCommand = "opaque-command"
	// CheckMaxFilesPerPlan: a plan touches more files than the profile allows, so an Allow
	// becomes a Confirm.
	CheckMaxFilesPerPlan = "max-files-per-plan"

	// CheckAudit: the decision could not be recorded, so it is a Deny.
	CheckAudit = "audit"

	// The approval of a CONFIRM (layer approval; package session).

	// CheckApprovalNone: nobody to ask, so the CONFIRM is a Deny.
	CheckApprovalNone = "approval:none"
	// CheckApprovalRefused: the approver refused.
	CheckApprovalRefused = "approval:refused"
	// CheckApprovalTimeout: no answer within the approval timeout, which counts as a refusal.
	CheckApprovalTimeout = "approval:timeout"
	// CheckApprovalError: asking failed, which counts as a refusal.
	CheckApprovalError = "approval:error"
	// CheckApprovalOnce: approved for this action.
	CheckApprovalOnce = "approval:once"
	// CheckApprovalSession: approved, and granted for the rest of the session.
	CheckApprovalSession = "approval:session"
	// CheckApprovalAlways: approved, and granted from now on.
	CheckApprovalAlways = "approval:always"

	// An obligation that could not be honoured (layer obligation; package session).

	// CheckObligationCheckpoint: no checkpointer, or the checkpoint failed.
	CheckObligationCheckpoint = "obligation:checkpoint"
	// CheckObligationNotify: no notifier, or the notification failed.
	CheckObligationNotify = "obligation:notify"
	// CheckObligationSandbox: no sandbox runner, or the action is not a command it can run.
	CheckObligationSandbox = "obligation:sandbox"

	// CheckGrantPrefix begins the id of a standing grant that answered a CONFIRM: "grant:" and
	// the grant's id (see [GrantSource]).
	CheckGrantPrefix = "grant:"
)

// CheckID returns the id of the check a hard stop with this cause is recorded under:
// [CheckHardStopBudget] for [CauseBudget] and so on; for a cause of the host's own,
// "hard-stop:" and the cause with '_' spelled '-'.
func (c Cause) CheckID() string {
	switch c {
	case CauseBudget:
		return CheckHardStopBudget
	case CauseSandboxEscape:
		return CheckHardStopSandboxEscape
	case CauseToolFailures:
		return CheckHardStopToolFailures
	case CauseExternalWrite:
		return CheckHardStopExternalWrite
	case CauseManual:
		return CheckHardStopManual
	case CauseEmergency:
		return CheckHardStopEmergencyStop
	}
	return "hard-stop:" + strings.ReplaceAll(string(c), "_", "-")
}
