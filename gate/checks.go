package gate

// The ids of the gate's built-in checks, as [Decision.RuleID] (and the audit record's
// rule_matched) names them when no rule of the profile decided. A policy rule's id is the rule's
// own. The list is in doc.go, "Check ids".
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
)
