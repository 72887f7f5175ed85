package policy

import "github.com/reins-go/reins/risk"

// Names of the lists that rules reference as "@name" and that a profile supplies when it
// compiles its rules (see [Env]).
const (
	ListShellAllowlist      = "shell_allowlist"
	ListShellBlocklist      = "shell_blocklist"
	ListNetworkAllowlist    = "network_allowlist"
	ListAllowedTools        = "allowed_tools"
	ListAutoApprovePatterns = "auto_approve_patterns"
)

// DevRules returns the policy spec's default rules of PROFILE-DEV, as data (a fresh copy):
//
//	Priority  Rule ID                  Condition                     Action
//	1         deny-outside-sandbox     target outside project root   DENY
//	2         deny-dangerous-commands  command matches blocklist     DENY
//	3         confirm-high-risk        risk level = HIGH             CONFIRM
//	4         confirm-delete-ops       operation = DELETE            CONFIRM
//	5         allow-low-med-risk       risk level = LOW or MEDIUM    ALLOW
//	99        default-confirm          * (catch-all)                 CONFIRM
//
// "Command matches blocklist" is the "@shell_blocklist" list, which the profile supplies.
func DevRules() []Rule {
	return []Rule{
		{ID: "deny-outside-sandbox", Priority: 1, Action: Deny,
			Condition: Condition{OutsideWorkspace: true},
			Reason:    "the target is outside the project root"},
		{ID: "deny-dangerous-commands", Priority: 2, Action: Deny,
			Condition: Condition{Commands: []string{"@" + ListShellBlocklist}},
			Reason:    "the command is on the shell blocklist"},
		{ID: "confirm-high-risk", Priority: 3, Action: Confirm,
			Condition: Condition{Risk: MatchSeverities(risk.High)},
			Reason:    "high-risk actions need confirmation"},
		{ID: "confirm-delete-ops", Priority: 4, Action: Confirm,
			Condition: Condition{OperationType: []Operation{OpDelete}},
			Reason:    "deletions need confirmation"},
		{ID: "allow-low-med-risk", Priority: 5, Action: Allow,
			Condition: Condition{Risk: MatchSeverities(risk.Low, risk.Medium)},
			Reason:    "low- and medium-risk actions run automatically"},
		{ID: "default-confirm", Priority: 99, Action: Confirm,
			Reason: "no other rule matched; ask"},
	}
}
