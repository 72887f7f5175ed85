package policy

import (
	"strings"

	"github.com/google/uuid"

	"github.com/reins-go/reins/risk"
)

// Operation is the kind of thing an action does. It is an open set of lower-case strings: the
// constants below are the ones reins knows about, and a host may use its own (a rule can
// condition on any operation name). The aliases of the policy spec ("file_read", "file_write",
// "file_delete", "exec", "http") mean the same as their canonical forms; see [Operation.Canonical].
type Operation string

// The operations reins knows. Each implies a default risk level (see [Operation.DefaultRisk]).
const (
	// OpRead reads files, searches code, lists directories.
	OpRead Operation = "read"
	// OpWrite creates or modifies files.
	OpWrite Operation = "write"
	// OpDelete removes files or directories.
	OpDelete Operation = "delete"
	// OpShell runs a shell command line (Action.Command).
	OpShell Operation = "shell"
	// OpNetwork reaches another host (Action.Host).
	OpNetwork Operation = "network"
	// OpPlan approves an agent's plan; its risk is what the plan declares.
	OpPlan Operation = "plan"
	// OpSelfUpgrade replaces the agent's own code or configuration.
	OpSelfUpgrade Operation = "self_upgrade"
	// OpTool calls a tool whose effect is described only by its declared risk (an MCP tool).
	OpTool Operation = "tool"
)

// Canonical returns the canonical form of an operation: ASCII lower case, with the spec's
// aliases mapped ("file_read" to read, "file_write" and "edit" to write, "file_delete" to delete,
// "exec" and "command" to shell, "http" and "fetch" to network). It does not allocate for names
// that are already canonical.
func (op Operation) Canonical() Operation {
	if hasUpper(string(op)) {
		op = Operation(strings.ToLower(string(op)))
	}
	switch op {
	case "file_read", "list", "search":
		return OpRead
	case "file_write", "edit", "create":
		return OpWrite
	case "file_delete", "remove":
		return OpDelete
	case "exec", "command", "bash":
		return OpShell
	case "http", "fetch":
		return OpNetwork
	case "plan_approval":
		return OpPlan
	}
	return op
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// DefaultRisk returns the risk an operation implies when the action does not declare one:
// read is ReadOnly, write Mutating, delete Destructive, shell Exec (the shell analysis refines
// it), network Network, self_upgrade Exec and Destructive. Plan, tool and unknown operations
// imply nothing (the empty set); the gate treats an action whose risk is still empty as
// Destructive, so nothing undeclared passes as harmless.
func (op Operation) DefaultRisk() risk.Set {
	switch op.Canonical() {
	case OpRead:
		return risk.Of(risk.ReadOnly)
	case OpWrite:
		return risk.Of(risk.Mutating)
	case OpDelete:
		return risk.Of(risk.Destructive)
	case OpShell:
		return risk.Of(risk.Exec)
	case OpNetwork:
		return risk.Of(risk.Network)
	case OpSelfUpgrade:
		return risk.Of(risk.Exec, risk.Destructive)
	}
	return 0
}

// MaxInput is how much of [Action.Input] an audit record keeps; the rest is cut and marked.
const MaxInput = 8 << 10

// Action is what an agent wants to do, as the host describes it to the gate. Only the fields
// that apply need be set: a file edit has a tool, an operation and a target; a shell call has a
// command; a fetch has a host.
type Action struct {
	// Tool is the name of the tool the agent called ("write_file", "mcp__github__create_issue").
	Tool string `json:"tool,omitempty"`
	// Operation is the kind of action; see the Op constants.
	Operation Operation `json:"operation_type,omitempty"`
	// Risk is the set of risk levels the tool declares. The gate adds the operation's default
	// risk (and, for commands, what the shell analysis finds); it never removes any.
	Risk risk.Set `json:"risk_levels,omitempty"`
	// Severity is the severity the tool declares for its declared levels; zero means each level's
	// default ([risk.Level.Severity]).
	Severity risk.Severity `json:"severity,omitempty"`
	// Targets are the paths the action reads, writes or deletes, absolute or relative to the
	// workspace root. The gate resolves them (symlinks followed) before any rule sees them.
	Targets []string `json:"targets,omitempty"`
	// Command is the shell command line, for shell actions. The gate analyses it (see the
	// risk/shell package): what it reads, writes, runs and reaches becomes part of the action.
	Command string `json:"command,omitempty"`
	// WorkDir is the directory the command runs in: absolute, or relative to the first workspace
	// root. Empty means the first workspace root.
	WorkDir string `json:"workdir,omitempty"`
	// Env lists KEY=VALUE environment assignments the command runs with, besides the host's
	// base environment. The gate decides them with the command: an assignment not known to be
	// inert (anything that may change what a program runs, loads or reads) makes the command
	// opaque, so it is never auto-approved, and a standing grant covers only the assignments it
	// was approved with.
	Env []string `json:"env,omitempty"`
	// Host is the network host the action reaches ("api.example.com"), for network actions.
	Host string `json:"host,omitempty"`
	// Provider is the model provider the agent runs on, for rules that filter by provider.
	Provider string `json:"provider,omitempty"`
	// Surface is where the agent runs (e.g. "cli", "ide", "ci"), for rules that filter by surface.
	Surface string `json:"surface,omitempty"`
	// Input is the tool call's input as the host received it (the JSON arguments of an MCP tool
	// call, say), for the audit trail: the gate records it, redacted and cut to MaxInput bytes,
	// and decides nothing on it; rules see the fields above, which the host fills from it.
	Input string `json:"input,omitempty"`
	// CorrelationID groups the decisions of one agent turn or run. Zero means the gate generates
	// a UUIDv7 for the decision.
	CorrelationID uuid.UUID `json:"correlation_id,omitzero"`
}
