// Command claude-hook puts the reins gate in front of Claude Code's tools, as a PreToolUse and
// PostToolUse hook. Before a tool runs, it maps the call to a reins action, decides it under the
// user's and the project's reins profiles, and answers allow, deny or ask; after the tool, it
// records the outcome and feeds the failure counter. Each call is a separate process, so the run
// state of a Claude Code session (halt latch, consecutive failures, session grants, the action
// budget) lives in a small locked state file.
//
// # Installing it
//
// Build it (go build -o ~/bin/reins-claude-hook ./examples/claude-hook) and add to
// ~/.claude/settings.json (or the project's .claude/settings.json):
//
//	{
//	  "hooks": {
//	    "PreToolUse":  [{"matcher": "*", "hooks": [{"type": "command", "command": "~/bin/reins-claude-hook"}]}],
//	    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "~/bin/reins-claude-hook"}]}],
//	    "PostToolUseFailure": [{"matcher": "*", "hooks": [{"type": "command", "command": "~/bin/reins-claude-hook"}]}]
//	  }
//	}
//
// # Failing closed the way the client understands it
//
// Claude Code blocks a call only on a "deny" answer or exit status 2 (the reason on standard
// error); exit 1, a crash, a timeout or malformed output let the tool run. So every internal
// error and every input the hook cannot read ends in exit 2 with a reason, never in exit 1 or a
// panic that escapes.
//
// # What it decides
//
// Bash (and Monitor with a command) is a shell action whose command line the gate analyses; Read,
// Grep and Glob read their path; Write, Edit, MultiEdit and NotebookEdit write theirs; WebFetch
// reaches its URL's host and WebSearch the network; Agent (formerly Task) starts a subagent whose
// own tool calls pass this hook one by one; an MCP tool (mcp__server__tool) or any tool this hook
// does not know is decided as an unknown action with no declared risk, which the gate treats as
// destructive. When the user approves an "ask" (the tool then runs and PostToolUse arrives), the
// approval becomes a session grant: the narrowest rule that covers it, so the same command is not
// asked about again in this session. Claude Code's plan mode runs under reins' plan profile.
//
// Flags: -state DIR (default: the user state directory's reins/claude-hook, or
// $REINS_CLAUDE_HOOK_STATE), -max-actions N (the session's action budget; 0, the default, means
// none), -max-failures N (consecutive failures of one tool that halt the session; default 3).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

// maxInput bounds the hook's standard input; a larger payload is refused.
const maxInput = 4 << 20

// exitBlock is the exit status Claude Code reads as "block this call".
const exitBlock = 2

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// injectPanic lets a test prove that a panic anywhere in the hook ends in exit 2.
var injectPanic func()

// run is main with its inputs and outputs passed in. It never panics and never returns 1.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "reins hook: internal error, blocking the call: %v\n", r)
			code = exitBlock
		}
	}()
	h, err := newHook(args)
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v\n", err)
		return exitBlock
	}
	if injectPanic != nil {
		injectPanic()
	}
	in, err := readPayload(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v; blocking the call\n", err)
		return exitBlock
	}
	out, err := h.handle(ctx, in)
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v; blocking the call\n", err)
		return exitBlock
	}
	if out != nil {
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			fmt.Fprintf(stderr, "reins hook: writing the answer: %v\n", err)
			return exitBlock
		}
	}
	return 0
}

// hook holds the flags.
type hook struct {
	stateDir    string
	maxActions  int
	maxFailures int
}

func newHook(args []string) (*hook, error) {
	fs := flag.NewFlagSet("claude-hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	h := &hook{}
	fs.StringVar(&h.stateDir, "state", os.Getenv("REINS_CLAUDE_HOOK_STATE"), "the state directory")
	fs.IntVar(&h.maxActions, "max-actions", 0, "the session's action budget (0: none)")
	fs.IntVar(&h.maxFailures, "max-failures", 3, "consecutive failures of one tool that halt the session")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("bad arguments: %v (flags: -state DIR, -max-actions N, -max-failures N)", err)
	}
	if fs.NArg() > 0 || h.maxActions < 0 || h.maxFailures < 1 {
		return nil, errors.New("bad arguments (flags: -state DIR, -max-actions N >= 0, -max-failures N >= 1)")
	}
	if h.stateDir == "" {
		dir, err := stateHome()
		if err != nil {
			return nil, fmt.Errorf("no state directory (pass -state DIR): %v", err)
		}
		h.stateDir = filepath.Join(dir, "reins", "claude-hook")
	}
	return h, nil
}

// stateHome is the user state directory: $XDG_STATE_HOME, else ~/.local/state (on Windows the
// local application data directory).
func stateHome() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	if d := os.Getenv("LOCALAPPDATA"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}

// payload is what Claude Code sends on standard input. Unknown fields are accepted.
type payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Error          json.RawMessage `json:"error"`
}

var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func readPayload(r io.Reader) (*payload, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook input: %v", err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("the hook input is larger than %d bytes", maxInput)
	}
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("the hook input is not the JSON Claude Code sends: %v", err)
	}
	switch {
	case !sessionIDPattern.MatchString(p.SessionID):
		return nil, fmt.Errorf("the hook input has no usable session_id (%q)", p.SessionID)
	case !filepath.IsAbs(p.Cwd):
		return nil, fmt.Errorf("the hook input's cwd %q is not an absolute path", p.Cwd)
	case p.ToolName == "":
		return nil, errors.New("the hook input names no tool")
	}
	return &p, nil
}

// answer is the hook's reply on standard output.
type answer struct {
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
	Decision           string    `json:"decision,omitempty"` // PostToolUse: "block" feeds Reason back to Claude
	Reason             string    `json:"reason,omitempty"`
}

type specific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

func (h *hook) handle(ctx context.Context, in *payload) (*answer, error) {
	switch in.HookEventName {
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
	default:
		return nil, fmt.Errorf("unsupported hook event %q (install the hook for PreToolUse, PostToolUse and PostToolUseFailure)", in.HookEventName)
	}
	a, err := actionOf(in)
	if err != nil {
		return nil, err
	}
	r, err := h.runtime(ctx, in)
	if err != nil {
		return nil, err
	}
	defer r.close(ctx)
	var out *answer
	if in.HookEventName == "PreToolUse" {
		out, err = r.pre(ctx, in, a)
	} else {
		out, err = r.post(ctx, in, a)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// actionOf maps a tool call to the action the gate decides.
func actionOf(in *payload) (policy.Action, error) {
	a := policy.Action{Tool: in.ToolName, WorkDir: in.Cwd, Input: string(in.ToolInput)}
	var input map[string]any
	if len(in.ToolInput) > 0 && string(in.ToolInput) != "null" {
		if err := json.Unmarshal(in.ToolInput, &input); err != nil {
			return a, fmt.Errorf("tool_input of %s is not a JSON object: %v", in.ToolName, err)
		}
	}
	str := func(key string) (string, error) {
		v, ok := input[key]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("tool_input.%s of %s is not a string", key, in.ToolName)
		}
		return s, nil
	}
	need := func(key string) (string, error) {
		s, err := str(key)
		if err == nil && s == "" {
			err = fmt.Errorf("tool_input.%s of %s is missing", key, in.ToolName)
		}
		return s, err
	}
	target := func(p string, err error) error {
		if err == nil && p != "" {
			a.Targets = append(a.Targets, p)
		}
		return err
	}
	var err error
	switch in.ToolName {
	case "Bash":
		a.Operation = policy.OpShell
		a.Command, err = need("command")
	case "Monitor":
		// A command it runs is a shell action; otherwise it only watches output.
		if a.Command, err = str("command"); a.Command != "" {
			a.Operation = policy.OpShell
		} else {
			a.Operation, a.Risk = policy.OpRead, risk.Of(risk.ReadOnly)
		}
	case "Read":
		a.Operation = policy.OpRead
		err = target(need("file_path"))
	case "Grep", "Glob":
		a.Operation = policy.OpRead
		p, perr := str("path")
		if p == "" {
			p = in.Cwd
		}
		err = target(p, perr)
	case "Write", "Edit", "MultiEdit":
		a.Operation = policy.OpWrite
		err = target(need("file_path"))
	case "NotebookEdit":
		a.Operation = policy.OpWrite
		err = target(need("notebook_path"))
	case "WebFetch":
		a.Operation = policy.OpNetwork
		var raw string
		if raw, err = need("url"); err == nil {
			u, perr := url.Parse(raw)
			if perr != nil || u.Hostname() == "" {
				return a, fmt.Errorf("tool_input.url of WebFetch is not a URL with a host: %q", raw)
			}
			a.Host = u.Hostname()
		}
	case "WebSearch":
		a.Operation = policy.OpNetwork
	case "Agent", "Task":
		// A subagent's own tool calls pass this hook one by one; starting it does nothing else.
		a.Operation, a.Risk = policy.Operation("agent"), risk.Of(risk.ReadOnly)
	case "TodoWrite":
		a.Operation, a.Risk = policy.Operation("todo"), risk.Of(risk.ReadOnly)
	default:
		// mcp__server__tool and anything unknown: no declared risk, which the gate treats as
		// destructive.
		a.Operation = policy.OpTool
	}
	return a, err
}

// runtime is the run of one invocation. The session's run state (halt, failures, the action
// budget, session grants, questions asked and not yet answered) lives in a reins.FileStore, one
// file per Claude Code session, which the hook's processes share and take turns on.
type runtime struct {
	h   *hook
	r   *reins.Run
	log *audit.JSONL
}

func (h *hook) runtime(ctx context.Context, in *payload) (*runtime, error) {
	loaded, err := loader.Load(ctx, &loader.Options{ProjectDir: in.Cwd})
	if err != nil {
		return nil, fmt.Errorf("loading the reins profiles: %v", err)
	}
	p := loaded.Profile
	if in.PermissionMode == "plan" {
		// Claude Code's plan mode: reins' plan profile, which denies every tool that acts.
		p = profile.Plan.Profile()
	}
	log, err := audit.OpenJSONL(filepath.Join(h.stateDir, "audit.jsonl"), nil)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %v", err)
	}
	var meters []reins.Meter
	if h.maxActions > 0 {
		meters = append(meters, reins.Meter{Name: meterToolCalls, Limit: float64(h.maxActions)})
	}
	store := reins.NewFileStore(filepath.Join(h.stateDir, in.SessionID+".json"))
	r, err := reins.New(ctx, p, &reins.Options{Workspace: []string{in.Cwd}, Audit: log, Store: store,
		MaxConsecutiveFailures: h.maxFailures, Meters: meters})
	if err != nil {
		_ = log.Close(ctx)
		return nil, err
	}
	return &runtime{h: h, r: r, log: log}, nil
}

func (rt *runtime) close(ctx context.Context) {
	_ = rt.r.Close()
	_ = rt.log.Close(ctx)
}

func (rt *runtime) pre(ctx context.Context, in *payload, a policy.Action) (*answer, error) {
	d, err := rt.r.Check(ctx, a)
	if err != nil && d.Verdict != policy.Deny {
		return nil, err
	}
	out := &answer{HookSpecificOutput: &specific{HookEventName: in.HookEventName, PermissionDecisionReason: "reins: " + d.String()}}
	switch d.Verdict {
	case policy.Allow:
		out.HookSpecificOutput.PermissionDecision = "allow"
	case policy.Confirm:
		out.HookSpecificOutput.PermissionDecision = "ask"
		// If the user says yes, PostToolUse arrives for this call: the question waits in the
		// run state under the tool call's id, and its approval becomes a session grant covering
		// what was asked about, and nothing wider.
		if in.ToolUseID != "" {
			if _, err := rt.r.Park(ctx, in.ToolUseID, a, d); err != nil {
				return nil, fmt.Errorf("keeping the question: %v", err)
			}
		}
	default:
		out.HookSpecificOutput.PermissionDecision = "deny"
	}
	if d.Verdict != policy.Deny && rt.h.maxActions > 0 {
		if err := rt.r.Use(ctx, meterToolCalls, 1); err != nil {
			out.HookSpecificOutput.PermissionDecision = "deny"
			out.HookSpecificOutput.PermissionDecisionReason = "reins: " + err.Error()
		}
	}
	return out, nil
}

func (rt *runtime) post(ctx context.Context, in *payload, a policy.Action) (*answer, error) {
	failed := in.HookEventName == "PostToolUseFailure" || responseFailed(in.ToolResponse)
	if in.ToolUseID != "" {
		// The tool ran: if reins had asked about it, the user said yes in Claude Code.
		if _, err := rt.r.Resolve(ctx, in.ToolUseID, reins.Answer{Verdict: policy.Allow, Scope: reins.ForSession,
			By: "claude-code user", Note: "approved in Claude Code"}); err != nil && !errors.Is(err, reins.ErrNotParked) {
			return nil, fmt.Errorf("recording the approval: %v", err)
		}
	}
	var cause error
	if failed {
		cause = errors.New("the tool reported a failure")
	}
	// The tool ran, so it was allowed (by reins, or by the user in Claude Code's dialog).
	if err := rt.r.RecordResult(ctx, a, gate.Decision{Verdict: policy.Allow, Layer: policy.LayerApproval}, cause); err != nil {
		return nil, err
	}
	if h, ok := rt.r.Halted(ctx); ok {
		return &answer{Decision: "block", Reason: "reins halted this session: " + h.Reason + " (a human resets it)"}, nil
	}
	return nil, nil
}

// responseFailed reads the usual failure markers of a tool_response.
func responseFailed(raw json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	if b, ok := m["is_error"].(bool); ok && b {
		return true
	}
	if b, ok := m["success"].(bool); ok && !b {
		return true
	}
	for _, k := range []string{"exit_code", "exitCode", "returnCode"} {
		if n, ok := m[k].(float64); ok && n != 0 {
			return true
		}
	}
	if b, ok := m["interrupted"].(bool); ok && b {
		return true
	}
	return strings.TrimSpace(fmt.Sprint(m["error"])) != "<nil>" && m["error"] != nil && m["error"] != ""
}

// meterToolCalls counts the tool calls a session lets through, against -max-actions.
const meterToolCalls = "tool_calls"
