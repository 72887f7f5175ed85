// Package policy describes what an agent asks to do and the rules that decide it: the [Action],
// the [Verdict] (Deny, Allow, Confirm; the zero value is Deny), the prioritized [Rule] with its
// [Condition], and the compiled [RuleSet] that evaluates them. It also holds the autonomy dial's
// bands and the autonomy matrix of the autonomy seed ([Matrix]).
//
// In the decision flow, policy is layers 5 and 6 of the gate: after the hard stops, protected
// paths and permission mode have had their say, the active profile's rules are evaluated by
// priority (lower first, ties in declaration order, first match wins), and when no rule matches
// the autonomy matrix decides.
//
// # Rules
//
// A rule's JSON form follows the policy spec's PolicyRule (id, priority, condition, action,
// reason). A condition is the conjunction of its set fields: operation types, risk levels or
// severities, a target glob, a command regular expression, command prefixes, and globs over the
// tool, host, provider and surface. Lists may reference named lists with "@name" (a profile's
// shell_blocklist, a host group). [DevRules] returns the spec's PROFILE-DEV defaults as data.
//
// # Compound actions
//
// Rules see one part of an action at a time (a [Subject]: one risk level, one target, one simple
// command), and an action is decided as the strictest of its parts. So an ALLOW rule for
// read-only actions never covers the destructive half of an action that is both, and an
// allowlisted command never covers the command chained after it.
//
// # Fail-closed semantics
//
// Unknown verdict text is an error and decodes to Deny; unknown risk levels, invalid globs and
// regular expressions, duplicate ids and references to unknown lists are compile errors that
// name the rule. An invalid band or level in the matrix is Deny.
//
// # Performance
//
// [Compile] sorts the rules and gives each a header of a few bits: what its condition needs of
// a subject (a target inside or outside the workspace, a command, a tool...), the risk levels
// and severities and the operations it lists, and a byte prefilter for its tool, program or
// command pattern. Evaluating a subject reduces it to the same bits once; a rule whose header
// does not fit is rejected with a few bit tests, and the others run
// their field matchers cheapest first, the command regular expression last. A small rule set is
// evaluated as that first-match loop. A large one tries its first rules the same way, then looks
// only at the rules its index files under the subject's own values (a literal target prefix,
// basename or extension, a whole word its command regex requires, a program name, a literal or
// prefixed tool or host name, an operation type, a risk level), so its cost does not grow with
// the size of the rule set. Evaluation does not allocate. Target patterns of the common shapes
// ("src/**", "**/.env", "**/*.pem", "/etc/**", a literal path) are matched on the path as a
// string; others segment by segment. Regular expressions run only after a literal prefilter,
// and with a [LineMemo] a pattern runs on a whole command line at most once for all the parts
// of an action. Compiling a large rule set uses the available processors.
//
// # Security model and limitations
//
// A rule set decides on what the action says: its declared risk, its resolved target paths, its
// command text. It cannot see what a program does at run time. Target patterns match the paths
// the gate resolved (symlinks followed); used on its own, a RuleSet trusts the Subject it is
// given. Glob matching compares bytes (no Unicode normalization, case-sensitive); protected paths,
// which the gate matches case-insensitively, are the place for case-insensitive denials.
package policy
