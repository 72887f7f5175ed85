// Package session is the run discipline around a [gate.Gate]: where a decision becomes work.
//
// The gate decides (Check walks the decision order: halted, hard stops, protected paths,
// permission mode, the profile's rules, the autonomy matrix). A Session takes each decision to
// its end: it asks a human about a CONFIRM, keeps the answer as a grant when the human says so,
// honours the obligations (a checkpoint first, a notification, a sandbox runner), runs the
// action, rolls the workspace back when it fails, meters the run's budgets, and records each step
// in the gate's audit log. The decision order stays in package gate, where DESIGN.md puts it;
// this package only calls the gate's public API (Begin, Op.Check, Explain, Latch,
// RecordResult, Record) plus one hook, gate.GrantSource, through which grants take part in
// the decision at the rule layer.
//
// # Approvals
//
// An [Approver] gets the action, the decision and its explanation, and answers with a verdict,
// a scope ([Once], [ForSession], [Always]), an optional note and who decided. An answer that does
// not come within Options.ApprovalTimeout (300 s by default, the gate spec's) is a denial, and
// so is an error. Without an approver, Options.Headless decides: [HeadlessDeny] (the default)
// or [HeadlessPark], which queues the action for review ([Session.Parked], [Session.Resolve])
// and returns a [*ParkedError]. Every answer is an audit record of kind "approval"
// (user_override set when a human answered).
//
// # Grants
//
// A session or always answer becomes a [Grant]: the narrowest rules covering what was asked
// about (for a command line, the literal argument vector of each simple command as a token
// prefix; never a blanket rule). Before an always grant is saved (Options.Grants, for example a
// [FileStore] beside the user profile file), the approver is asked again with a [Proposal]: the
// rules and samples of what they would and would not match. Grants carry an expiry and a use
// count, can be listed and revoked, and never outrank the halt latch, hard stops, protected
// paths or the permission mode (see gate.GrantSource); a grant made under one profile does not
// apply under a more restrictive one.
//
// # Errors
//
// A refusal matches gate.ErrDenied: a [*gate.DeniedError] whose decision is the gate's Deny or
// a fresh Deny of the approval or obligation layer (no stale rule or obligations), with the
// alternatives the engine knows; or a [*ParkedError]. The action's own failure is an
// [*ActionError], which never matches gate.ErrDenied.
//
// # Budgets
//
// [Meter]s are named budgets (cost, tokens, wall time, actions, or any other) with a limit: a
// notice at the warning fraction, the gate's budget hard stop at the limit. Resets are explicit
// and recorded ([Session.ResetMeter], [Session.Reset]). Repeated failures latch or de-escalate
// as gate.Options.OnRepeatedFailure says; an emergency stop is gate.EmergencyStop.
//
// # Replay
//
// [Replay] re-decides the actions of an audit log under another profile and reports every
// decision that would change, with both explanations.
package session
