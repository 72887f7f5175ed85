package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// event is the point of a tool call a hook runs at.
type event uint8

const (
	evPre         event = iota // before the tool runs
	evPost                     // after it ran
	evPostFailure              // after it failed (Claude Code's own event)
)

// client is one agent CLI's hook protocol: its event names, where it says the project is,
// which tools it lets a hook rewrite, and how it reads an answer. Each field cites the client's
// shipped code it follows.
type client struct {
	name    string // the subcommand: claude, gemini, codex
	display string // for messages
	events  map[string]event
	// projectEnv is the variable the client sets for hooks to the project directory ("" when
	// it sets none: the payload's cwd, which for Codex is the session's working directory).
	projectEnv string
	// canAsk: an "ask" answer makes the client ask its user. Codex CLI ignores it (it logs
	// "unsupported permissionDecision:ask" and runs the tool), so there the hook denies what
	// reins would ask about.
	canAsk bool
	// rewrites lists the tools whose input a hook can replace, and the field holding the
	// command line.
	rewrites map[string]string
	// rewriteOptIn: the client applies a rewrite only in some versions (Codex CLI), so the hook
	// rewrites only when its flag -codex-updated-input says this one does.
	rewriteOptIn bool
	// mcpPrefix starts the name of an MCP server's tool.
	mcpPrefix string
	// render writes the answer as the client reads it (JSON on standard output, exit 0).
	render func(ev event, eventName string, ans *answer) any
}

// The three clients. Contracts as read in their shipped code:
//
//   - Claude Code 2.1.332 (npm @anthropic-ai/claude-code, its settings schema and the agent SDK
//     0.3.332's sdk.d.ts: PreToolUseHookInput, PreToolUseHookSpecificOutput, SyncHookJSONOutput,
//     the command hook's onFailure): exit 2 blocks (stderr to Claude); any other non-zero exit, a
//     crash, a timeout or bad JSON lets the tool run unless the hook entry sets
//     "onFailure": "block". permissionDecision allow/deny/ask with updatedInput (the whole new
//     input), systemMessage shown to the user. A hook's allow does not lift Claude Code's own
//     deny or ask rules, and its ask does not lift a deny rule.
//   - Gemini CLI 0.56.0-nightly.20260806 (google-gemini/gemini-cli at 5411f113: packages/core/src/
//     hooks/hookRunner.ts, hookAggregator.ts, hookRegistry.ts, types.ts, hookEventHandler.ts,
//     scheduler/hook-utils.ts, scheduler/scheduler.ts): the command runs through the shell with
//     GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR) set to the payload's cwd, the working
//     directory Gemini CLI was started for; exit 0 parses stdout (or stderr when stdout is
//     empty) as JSON, exit 1 is a warning and the tool runs, any other exit (2, 127 for a
//     missing binary, a Go panic's 2) with text is a deny with that text; a timeout (60 s
//     default), a hook killed by a signal or one that cannot be spawned lets the tool run.
//     decision allow/deny/block/ask with reason; hookSpecificOutput.tool_input replaces the
//     tool's arguments (the tool validates them again); systemMessage is shown (and is the
//     prompt's text for an ask). An "ask" replaces Gemini CLI's own policy decision, its deny
//     included. No hook runs, user-level ones included, in a folder Gemini CLI does not trust.
//     AfterTool's tool_response is {llmContent, returnDisplay, error}.
//   - Codex CLI (openai/codex at 2219e3df: codex-rs/hooks/src/engine/output_parser.rs, at 54ea2bfe:
//     events/pre_tool_use.rs; later versions' tool registry with with_updated_hook_input): the
//     command runs as $SHELL -lc; exit 0 with hookSpecificOutput.permissionDecision "deny" and
//     a non-empty reason blocks; "ask" is rejected as unsupported and the tool runs; exit 2 with
//     a reason on stderr blocks; any other exit, a missing binary or a timeout (600 s default)
//     lets the tool run. updatedInput: at 2219e3df it is rejected as unsupported (and the
//     ORIGINAL input runs), later versions apply it with permissionDecision "allow"; the hook
//     cannot tell which version calls it, so it rewrites a Codex CLI call only when told to
//     (-codex-updated-input) and otherwise refuses a line it cannot confine. Tool names: Bash
//     (tool_input {"command"}), apply_patch ({"command": the patch}), MCP tools as
//     mcp__server__tool. The payload's cwd is the session's working directory: Codex CLI sets
//     no project variable.
var clients = map[string]*client{
	"claude": {
		name: "claude", display: "Claude Code",
		events:     map[string]event{"PreToolUse": evPre, "PostToolUse": evPost, "PostToolUseFailure": evPostFailure},
		projectEnv: "CLAUDE_PROJECT_DIR",
		canAsk:     true,
		rewrites:   map[string]string{"Bash": "command", "Monitor": "command"},
		mcpPrefix:  "mcp__",
		render:     renderClaude,
	},
	"gemini": {
		name: "gemini", display: "Gemini CLI",
		events:     map[string]event{"BeforeTool": evPre, "AfterTool": evPost},
		projectEnv: "GEMINI_PROJECT_DIR",
		canAsk:     true,
		rewrites:   map[string]string{"run_shell_command": "command"},
		mcpPrefix:  "mcp_",
		render:     renderGemini,
	},
	"codex": {
		name: "codex", display: "Codex CLI",
		events:       map[string]event{"PreToolUse": evPre, "PostToolUse": evPost},
		canAsk:       false,
		rewrites:     map[string]string{"Bash": "command"},
		rewriteOptIn: true,
		mcpPrefix:    "mcp__",
		render:       renderCodex,
	},
}

// call is one hook invocation, read from the client's payload.
type call struct {
	c         *client
	ev        event
	eventName string
	session   string
	// key names the tool call across its pre and post events: the client's tool_use_id, or,
	// for Gemini CLI, which sends none, a digest of the tool and its input.
	key     string
	tool    string
	input   map[string]any // nil when the tool has no input
	raw     json.RawMessage
	cwd     string // the client's current directory, absolute
	project string // the project directory, absolute
	mode    string // the client's permission mode ("" when it sends none)
	// failed says the tool failed (post events), failure what the client said about it.
	failed  bool
	failure string
}

// payload is the union of the fields the three clients send; unknown fields are accepted.
type payload struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Error          json.RawMessage `json:"error"`
}

// isName reports whether s is a usable identifier of at most max bytes: letters, digits and
// "_.:-" only (a session, tool-use or tool name). Not a regular expression: a counted repetition
// compiles to a program of that many copies, which every call would pay for at start-up.
func isName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

func isID(s string) bool { return isName(s, 200) }

// parse reads one payload. env looks up the environment (the project variable).
func (c *client) parse(b []byte, env func(string) string, projectFlag string) (*call, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("the hook input is not the JSON %s sends: %v", c.display, err)
	}
	ev, ok := c.events[p.HookEventName]
	if !ok {
		return nil, fmt.Errorf("unsupported hook event %q (install the hook for %s)", p.HookEventName, strings.Join(c.eventNames(), ", "))
	}
	switch {
	case !isID(p.SessionID) || strings.Contains(p.SessionID, ".."):
		return nil, fmt.Errorf("the hook input has no usable session_id (%q)", cut(p.SessionID, 80))
	case !filepath.IsAbs(p.Cwd) || strings.ContainsRune(p.Cwd, 0):
		return nil, fmt.Errorf("the hook input's cwd %q is not an absolute path", cut(p.Cwd, 200))
	case !isName(p.ToolName, 256):
		return nil, fmt.Errorf("the hook input names no usable tool (%q)", cut(p.ToolName, 80))
	}
	k := &call{c: c, ev: ev, eventName: p.HookEventName, session: p.SessionID, tool: p.ToolName, raw: p.ToolInput,
		cwd: filepath.Clean(p.Cwd), mode: p.PermissionMode}
	if len(p.ToolInput) > 0 && string(p.ToolInput) != "null" {
		if err := json.Unmarshal(p.ToolInput, &k.input); err != nil {
			return nil, fmt.Errorf("tool_input of %s is not a JSON object: %v", p.ToolName, err)
		}
	}
	switch {
	case p.ToolUseID != "":
		if !isID(p.ToolUseID) {
			return nil, fmt.Errorf("the hook input's tool_use_id %q is not usable", cut(p.ToolUseID, 80))
		}
		k.key = p.ToolUseID
	case c.name == "gemini":
		k.key = inputKey(p.ToolName, k.input)
	default:
		return nil, errors.New("the hook input has no tool_use_id")
	}
	// The project: the flag, else the client's project variable, else (a client that sets
	// none, or an old version) the payload's cwd.
	k.project = projectFlag
	if k.project == "" && c.projectEnv != "" {
		k.project = env(c.projectEnv)
	}
	if k.project == "" {
		k.project = k.cwd
	}
	if !filepath.IsAbs(k.project) || strings.ContainsRune(k.project, 0) {
		return nil, fmt.Errorf("the project directory %q is not an absolute path", cut(k.project, 200))
	}
	k.project = filepath.Clean(k.project)
	switch ev {
	case evPostFailure:
		k.failed, k.failure = true, errorText(p.Error)
	case evPost:
		k.failed, k.failure = responseFailed(p.ToolResponse)
	}
	return k, nil
}

func (c *client) eventNames() []string {
	var out []string
	for _, n := range []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"} {
		if _, ok := c.events[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// inputKey names a Gemini CLI tool call by its tool and input (Go's encoder sorts map keys, so
// the same input gives the same key).
func inputKey(tool string, input map[string]any) string {
	b, _ := json.Marshal(input)
	sum := sha256.Sum256(append([]byte(tool+"\x00"), b...))
	return "g-" + hex.EncodeToString(sum[:16])
}

// errorText renders a failure event's error field.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return cut(s, 500)
	}
	return cut(string(raw), 500)
}

// responseFailed reads the failure markers of a tool_response: Gemini CLI's error field, and
// the exit status, success and interruption fields tools report.
func responseFailed(raw json.RawMessage) (bool, string) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return false, ""
	}
	if e, ok := m["error"]; ok && e != nil && e != "" && e != false {
		b, _ := json.Marshal(e)
		return true, cut(string(b), 500)
	}
	for _, k := range []string{"is_error", "interrupted"} {
		if b, ok := m[k].(bool); ok && b {
			return true, k
		}
	}
	if b, ok := m["success"].(bool); ok && !b {
		return true, "success: false"
	}
	for _, k := range []string{"exit_code", "exitCode", "returnCode"} {
		if n, ok := m[k].(float64); ok && n != 0 {
			return true, fmt.Sprintf("%s %v", k, n)
		}
	}
	return false, ""
}

// cut bounds a string for messages.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// verdict is what the hook answers before a tool runs.
type verdict uint8

const (
	vNone verdict = iota // no opinion (after a tool ran)
	vAllow
	vAsk
	vDeny
)

// answer is the hook's reply, before the client's rendering.
type answer struct {
	v      verdict
	reason string
	// notice is shown to the user (the Notify obligation, a rollback, a halt).
	notice string
	// rewrite replaces the tool input (Claude Code: the whole input; the others merge it).
	rewrite map[string]any
	// block, after a tool ran: tell the model the session is halted.
	block string
}

func renderClaude(ev event, eventName string, a *answer) any {
	out := map[string]any{}
	if a.notice != "" {
		out["systemMessage"] = a.notice
	}
	if ev == evPre {
		spec := map[string]any{"hookEventName": eventName, "permissionDecisionReason": a.reason}
		switch a.v {
		case vAllow:
			spec["permissionDecision"] = "allow"
			if a.rewrite != nil {
				spec["updatedInput"] = a.rewrite
			}
		case vAsk:
			spec["permissionDecision"] = "ask"
		default:
			spec["permissionDecision"] = "deny"
		}
		out["hookSpecificOutput"] = spec
	} else if a.block != "" && ev == evPost {
		out["decision"], out["reason"] = "block", a.block
	} else if a.block != "" {
		out["systemMessage"] = strings.TrimSpace(a.notice + "\n" + a.block)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func renderGemini(ev event, _ string, a *answer) any {
	out := map[string]any{}
	if a.notice != "" {
		out["systemMessage"] = a.notice
	}
	if ev == evPre {
		switch a.v {
		case vAllow:
			out["decision"] = "allow"
			if a.rewrite != nil {
				out["hookSpecificOutput"] = map[string]any{"tool_input": a.rewrite}
			}
		case vAsk:
			// The confirmation shows systemMessage.
			out["decision"], out["systemMessage"] = "ask", strings.TrimSpace(a.reason+"\n"+a.notice)
		default:
			out["decision"], out["reason"] = "deny", a.reason
		}
		return out
	}
	if a.block != "" {
		// Appended to the tool's result for the model; the result itself stays.
		out["hookSpecificOutput"] = map[string]any{"additionalContext": a.block}
		out["systemMessage"] = strings.TrimSpace(a.notice + "\n" + a.block)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func renderCodex(ev event, eventName string, a *answer) any {
	out := map[string]any{}
	if a.notice != "" {
		out["systemMessage"] = a.notice
	}
	if ev == evPre {
		switch a.v {
		case vAllow:
			// A bare allow is rejected as unsupported: say nothing unless the input changes.
			if a.rewrite != nil {
				out["hookSpecificOutput"] = map[string]any{"hookEventName": eventName, "permissionDecision": "allow", "updatedInput": a.rewrite}
			}
		default:
			reason := strings.TrimSpace(a.reason)
			if reason == "" {
				reason = "reins refused the call"
			}
			out["hookSpecificOutput"] = map[string]any{"hookEventName": eventName, "permissionDecision": "deny", "permissionDecisionReason": reason}
		}
	} else if a.block != "" {
		out["decision"], out["reason"] = "block", a.block
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
