package policy

import "slices"

// Rule is one prioritized policy rule, as in the policy spec's PolicyRule: when its condition
// holds for an action, the rule's verdict is the decision (the first matching rule wins, by
// ascending priority, ties in declaration order).
type Rule struct {
	// ID names the rule in decisions, audit records and errors ("deny-dangerous-commands").
	// It must be non-empty and unique within a rule set.
	ID string `json:"id"`
	// Priority orders evaluation: lower first. Rules with equal priority keep declaration order.
	Priority int `json:"priority"`
	// Condition says when the rule applies. The zero Condition matches every action.
	Condition Condition `json:"condition"`
	// Action is the verdict the rule gives: ALLOW, DENY or CONFIRM.
	Action Verdict `json:"action"`
	// Reason explains the rule to a human; it is shown with every decision the rule makes.
	Reason string `json:"reason,omitempty"`
	// Obligations are added to the decision when the rule allows or confirms (for example a rule
	// that allows self-upgrades with a checkpoint and a notification).
	Obligations Obligations `json:"obligations,omitempty"`
}

// Condition is the conjunction of its non-empty fields: every field that is set must hold.
// Within a list field, any one entry suffices. Lists of names (commands, tools, hosts,
// providers, surfaces) may hold "@name" references to named lists (a profile's shell_blocklist,
// a host group), expanded when the rules are compiled; an unknown reference is a compile error.
//
// A rule sees one part of an action at a time: a single risk level with its severity, a single
// target and a single simple command (see [Subject]); a compound action is decided as the
// strictest of its parts. So "risk_level": ["read_only"] on an ALLOW rule never covers the
// destructive half of an action that is both.
type Condition struct {
	// OperationType lists operation types, e.g. ["shell", "file_write"] (aliases accepted; see
	// [Operation.Canonical]).
	OperationType []Operation `json:"operation_type,omitempty"`
	// Risk lists risk levels and severities: the condition holds when the part's level or its
	// severity is listed. In JSON it is the "risk_level" array of names, e.g. ["high", "exec"]
	// (see [RiskMatch]). The zero RiskMatch is unset.
	Risk RiskMatch `json:"risk_level,omitzero"`
	// TargetPattern is a doublestar glob over the part's target path. A pattern starting with
	// "/" or "~/" is matched against the absolute resolved path; any other pattern against the
	// path relative to the workspace root that holds the target, and never matches a target
	// outside every workspace root.
	TargetPattern string `json:"target_pattern,omitempty"`
	// CommandPattern is an RE2 regular expression searched in the text of one simple command
	// (unanchored: use ^ and $ to anchor). In a DENY or CONFIRM rule it also matches when the
	// whole command line matches, so a pattern may span a pipe or a list (`curl .*\| *sh`); in an
	// ALLOW rule it never does, so "^go test" does not cover `go test ./... && rm -rf ~`, and it
	// never covers a command run with raised privileges (`sudo go test`; see Subject.Elevated).
	CommandPattern string `json:"command_pattern,omitempty"`
	// Commands lists command prefixes matched on the argument tokens of one simple command, with
	// word boundaries: "go test" matches `go test ./...` and `go test -run X`, not `go testify`.
	// In a DENY or CONFIRM rule the program may be written with a directory (`./rm` and `/bin/rm`
	// match "rm"); in an ALLOW rule it must be spelled as the entry spells it, so "cat" does not
	// cover a local script `./cat` (the shell analysis reports `/bin/cat` as "cat"). In an ALLOW rule an
	// entry never covers a command that redirects its output to a file or contains a command
	// substitution, unless the entry ends with the token ">" (redirections allowed) or "$()"
	// (substitutions allowed): "go test >" allows `go test ./... > out.txt`. An ALLOW entry
	// never covers a command run with raised privileges (`sudo go test`; see Subject.Elevated).
	Commands []string `json:"commands,omitempty"`
	// Tools lists glob patterns over the tool name.
	Tools []string `json:"tools,omitempty"`
	// Hosts lists glob patterns over the network host (compared in lower case).
	Hosts []string `json:"hosts,omitempty"`
	// Providers lists glob patterns over the model provider label.
	Providers []string `json:"providers,omitempty"`
	// Surfaces lists glob patterns over the surface label.
	Surfaces []string `json:"surfaces,omitempty"`
	// OutsideWorkspace, when true, holds only for a target outside every workspace root.
	OutsideWorkspace bool `json:"outside_workspace,omitempty"`
}

// Clone returns a deep copy of r: the copy shares no slice with r.
func (r Rule) Clone() Rule {
	c := &r.Condition
	c.OperationType = slices.Clone(c.OperationType)
	c.Commands = slices.Clone(c.Commands)
	c.Tools = slices.Clone(c.Tools)
	c.Hosts = slices.Clone(c.Hosts)
	c.Providers = slices.Clone(c.Providers)
	c.Surfaces = slices.Clone(c.Surfaces)
	return r
}
