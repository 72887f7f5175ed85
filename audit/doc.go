// Package audit is reins' decision log: every decision the gate makes becomes a [Record], handed
// to a [Sink] before the decision is returned.
//
// It sits beside the gate in the decision flow: the gate evaluates an action, builds the record
// (the policy spec's PolicyDecisionLog fields plus the deciding layer, reason, obligations and
// risk), and writes it. A decision whose record cannot be written is a DENY, so nothing happens
// unrecorded.
//
// # Sinks
//
// [Discard] keeps nothing (the gate's default), [Memory] keeps the last records in memory (tests,
// UIs), and [SinkFunc] adapts a function. Durable, tamper-evident sinks build on the same
// interface.
//
// # Record fields
//
// The JSON names are stable: timestamp, correlation_id, active_profile, operation_type, target,
// decision, rule_matched, user_override (the spec's PolicyDecisionLog), then kind, decision_id,
// layer, reason, obligations, risk_levels, tool, command, host and targets.
package audit
