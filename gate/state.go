package gate

import (
	"time"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// State is the run state a decision reads: a snapshot the run takes before it decides. Decide
// reads it and never changes it. The zero State is a run with nothing latched, no budget
// exhausted and no standing grants.
type State struct {
	// Halt is the latched hard stop, if any: while it is set every decision is a Deny.
	Halt *Halt
	// Exhausted, when not empty, says that a budget meter reached its limit (its text is the
	// reason): the budget hard stop decides, and the run latches it.
	Exhausted string
	// Grants answers, with standing grants, the parts of an action the rules and the matrix would
	// CONFIRM. Nil means no grants.
	Grants GrantSource
}

// Cause says why a run halted.
type Cause string

// The hard stops of the autonomy seed, plus the ones a host or operator latches.
const (
	CauseBudget        Cause = "budget"         // a budget meter reached its limit
	CauseSandboxEscape Cause = "sandbox_escape" // a sandbox reported a violation
	CauseToolFailures  Cause = "tool_failures"  // a tool failed too many times in a row
	CauseExternalWrite Cause = "external_write" // an action would write outside the workspace
	CauseManual        Cause = "manual"         // the host halted the run
	CauseEmergency     Cause = "emergency_stop" // the host or an operator called an emergency stop
)

// Halt describes a latched hard stop. While one is latched, every decision is a Deny until the
// run is reset.
type Halt struct {
	Cause  Cause     `json:"cause"`
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// GrantSource holds standing grants: answers a human already gave to a CONFIRM ("allow this for
// the session", "always allow this"). The gate consults it at the rule layer, for a part of an
// action that layers 5 and 6 decided as CONFIRM, and nowhere else, so a grant
//
//   - never outranks layers 1 to 4: the halt latch, the hard stops, protected paths and the
//     permission mode decide before it is asked (a plan-mode run never sees a grant);
//   - never turns a DENY into an ALLOW: it only answers the question a CONFIRM would have asked;
//   - keeps the part's obligations (a checkpoint, a notification, the sandbox);
//   - does not lift the opaque-command rule: a command line the analysis cannot see through is
//     asked about again.
//
// MatchGrant is called from Decide, concurrently, and must be fast and must not block. It
// returns the rule id the decision names (by convention [CheckGrantPrefix] and the grant's id)
// and a reason for a human.
type GrantSource interface {
	MatchGrant(scope GrantScope, sub policy.Subject) (ruleID, reason string, ok bool)
}

// GrantScope is what a GrantSource needs to know of the decision it is asked about beyond the
// part: the profile in force and its content hash (a grant made under one profile must not apply
// under a more restrictive one), and the action as written: its whole command line, the
// directory it runs in and the environment it runs with (a grant covers the line as approved,
// in the directory and with the environment it was approved with, nothing wider).
type GrantScope struct {
	Profile *profile.Compiled
	Hash    string
	// Line is the action's command line ("" for an action without one).
	Line string
	// Dir is the resolved working directory of the command ("" for an action without a
	// command).
	Dir string
	// Env lists the environment assignments the action runs with (policy.Action.Env).
	Env []string
}
