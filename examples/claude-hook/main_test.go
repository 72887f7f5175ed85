package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

// world is a project directory, an empty user configuration and a state directory.
type world struct {
	t     *testing.T
	ws    string
	state string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user profile file: PROFILE-SAFE
	w := &world{t: t, ws: t.TempDir(), state: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("# hi\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".env"), []byte("TOKEN=x\n"), 0o600))
	return w
}

// payload builds a realistic hook input.
func (w *world) payload(event, tool, useID string, input any, extra map[string]any) string {
	in, err := json.Marshal(input)
	require.NoError(w.t, err)
	m := map[string]any{
		"session_id": "abc123", "transcript_path": filepath.Join(w.state, "t.jsonl"), "cwd": w.ws,
		"permission_mode": "default", "hook_event_name": event, "tool_name": tool,
		"tool_input": json.RawMessage(in), "tool_use_id": useID,
		"some_future_field": map[string]any{"x": 1},
	}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(w.t, err)
	return string(b)
}

// hookRun runs the hook once, as Claude Code would, and returns the exit code, the decision
// (for PreToolUse) and both outputs.
func (w *world) hookRun(stdin string, args ...string) (int, string, string, string) {
	w.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"-state", w.state}, args...), strings.NewReader(stdin), &out, &errb)
	var ans answer
	decision := ""
	if out.Len() > 0 {
		require.NoError(w.t, json.Unmarshal(out.Bytes(), &ans), out.String())
		if ans.HookSpecificOutput != nil {
			decision = ans.HookSpecificOutput.PermissionDecision
		}
	}
	return code, decision, out.String(), errb.String()
}

func (w *world) pre(tool string, input any) string {
	w.t.Helper()
	code, decision, out, stderr := w.hookRun(w.payload("PreToolUse", tool, "toolu_"+tool, input, nil))
	require.Equal(w.t, 0, code, "stderr: %s", stderr)
	assert.Contains(w.t, out, `"hookEventName":"PreToolUse"`)
	assert.Contains(w.t, out, `"permissionDecisionReason":"reins: `)
	return decision
}

func TestEveryToolIsDecided(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		tool  string
		input any
		want  []string // acceptable decisions
	}{
		{"Read", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, []string{"allow"}},
		{"Read", map[string]any{"file_path": filepath.Join(w.ws, ".env")}, []string{"deny"}},
		{"Bash", map[string]any{"command": "cat .env", "description": "show env"}, []string{"deny"}},
		{"Bash", map[string]any{"command": "ls -la"}, []string{"deny"}}, // PROFILE-SAFE runs no shell
		{"Write", map[string]any{"file_path": filepath.Join(w.ws, ".env"), "content": "X=1"}, []string{"deny"}},
		{"Write", map[string]any{"file_path": filepath.Join(w.ws, "main.go"), "content": "package main"}, []string{"ask", "allow"}},
		{"Edit", map[string]any{"file_path": filepath.Join(w.ws, "README.md"), "old_string": "hi", "new_string": "ho"}, []string{"ask", "allow"}},
		{"MultiEdit", map[string]any{"file_path": filepath.Join(w.ws, "README.md"), "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}, []string{"ask", "allow"}},
		{"NotebookEdit", map[string]any{"notebook_path": filepath.Join(w.ws, "n.ipynb"), "new_source": "print(1)"}, []string{"ask", "allow"}},
		{"Grep", map[string]any{"pattern": "TODO", "path": w.ws}, []string{"allow"}},
		{"Glob", map[string]any{"pattern": "**/*.go"}, []string{"allow"}},
		{"WebFetch", map[string]any{"url": "https://example.com/docs", "prompt": "summarise"}, []string{"ask", "deny"}},
		{"WebSearch", map[string]any{"query": "reins go"}, []string{"ask", "deny"}},
		{"Agent", map[string]any{"description": "explore", "prompt": "find the tests", "subagent_type": "Explore"}, []string{"allow"}},
		{"Task", map[string]any{"description": "explore", "prompt": "find the tests"}, []string{"allow"}},
		{"Monitor", map[string]any{"command": "rm -rf /"}, []string{"deny"}},
		{"mcp__github__create_issue", map[string]any{"title": "x"}, []string{"ask", "deny"}},
		{"SomeFutureTool", map[string]any{"x": 1}, []string{"ask", "deny"}},
	} {
		got := w.pre(tc.tool, tc.input)
		assert.Contains(t, tc.want, got, "%s %v", tc.tool, tc.input)
	}
	// A write outside the workspace is a hard stop: it latches in the session's run state, so
	// the next call, in another hook process, is denied too.
	assert.Equal(t, "deny", w.pre("Bash", map[string]any{"command": "go test ./... && rm -rf ~", "timeout": 120000}))
	assert.Equal(t, "deny", w.pre("Read", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}), "the hard stop latched")
}

func TestTheIssueCases(t *testing.T) {
	w := newWorld(t)
	assert.Equal(t, "deny", w.pre("Bash", map[string]any{"command": "cat .env"}))
	assert.Equal(t, "allow", w.pre("Read", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}))
	assert.NotEqual(t, "allow", w.pre("Bash", map[string]any{"command": "go test ./... && rm -rf ~"}))
}

// TestUnderTheUsersProfile: the user's profile file selects PROFILE-DEV, where everyday
// commands run and the same refusals hold.
func TestUnderTheUsersProfile(t *testing.T) {
	w := newWorld(t)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "reins")
	require.NoError(t, os.MkdirAll(cfg, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "profile.json"), []byte(`{"active_profile": "PROFILE-DEV"}`), 0o600))
	assert.Equal(t, "allow", w.pre("Bash", map[string]any{"command": "ls -la"}))
	assert.Equal(t, "allow", w.pre("Write", map[string]any{"file_path": filepath.Join(w.ws, "main.go"), "content": "package main"}))
	assert.Equal(t, "deny", w.pre("Bash", map[string]any{"command": "cat .env"}))
	assert.NotEqual(t, "allow", w.pre("Bash", map[string]any{"command": "go test ./... && rm -rf ~"}))
}

func TestUnreadableInputBlocks(t *testing.T) {
	w := newWorld(t)
	for name, stdin := range map[string]string{
		"garbage":          "this is not json",
		"empty":            "",
		"no session":       `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"ls"}}`,
		"session id path":  `{"session_id":"../../etc/x","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"ls"}}`,
		"relative cwd":     `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"rel","tool_input":{"command":"ls"}}`,
		"input not object": w.payload("PreToolUse", "Bash", "t", "ls", nil),
		"command not text": w.payload("PreToolUse", "Bash", "t", map[string]any{"command": 42}, nil),
		"missing path":     w.payload("PreToolUse", "Write", "t", map[string]any{"content": "x"}, nil),
		"unknown event":    w.payload("Stop", "Bash", "t", map[string]any{"command": "ls"}, nil),
		"huge":             `{"session_id":"s","x":"` + strings.Repeat("a", maxInput) + `"}`,
	} {
		code, _, out, stderr := w.hookRun(stdin)
		assert.Equal(t, exitBlock, code, name)
		assert.Empty(t, out, name)
		assert.Contains(t, stderr, "blocking the call", name)
	}
	code, _, _, stderr := w.hookRun("{}", "-max-failures", "0")
	assert.Equal(t, exitBlock, code)
	assert.Contains(t, stderr, "bad arguments")
}

func TestPanicBlocks(t *testing.T) {
	w := newWorld(t)
	injectPanic = func() { panic("injected") }
	defer func() { injectPanic = nil }()
	code, _, _, stderr := w.hookRun(w.payload("PreToolUse", "Read", "t", map[string]any{"file_path": "README.md"}, nil))
	assert.Equal(t, exitBlock, code)
	assert.Contains(t, stderr, "internal error, blocking the call: injected")
}

// TestSessionGrantCarriesOver: the user approves an "ask"; the tool runs; the next identical
// call, in another process, is allowed without asking. A different file is still asked about.
func TestSessionGrantCarriesOver(t *testing.T) {
	w := newWorld(t)
	edit := map[string]any{"file_path": filepath.Join(w.ws, "main.go"), "content": "package main"}
	code, decision, _, stderr := w.hookRun(w.payload("PreToolUse", "Write", "toolu_1", edit, nil))
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "ask", decision, "PROFILE-SAFE asks before a write")
	code, _, out, stderr := w.hookRun(w.payload("PostToolUse", "Write", "toolu_1", edit, map[string]any{"tool_response": map[string]any{"success": true}}))
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, out)

	code, decision, _, _ = w.hookRun(w.payload("PreToolUse", "Write", "toolu_2", edit, nil))
	require.Equal(t, 0, code)
	assert.Equal(t, "allow", decision, "the session grant carries over to the next invocation")
	other := map[string]any{"file_path": filepath.Join(w.ws, "other.go"), "content": "package main"}
	_, decision, _, _ = w.hookRun(w.payload("PreToolUse", "Write", "toolu_3", other, nil))
	assert.Equal(t, "ask", decision, "the grant is narrow")

	// Another session does not see it.
	p := strings.Replace(w.payload("PreToolUse", "Write", "toolu_4", edit, nil), `"abc123"`, `"other-session"`, 1)
	_, decision, _, _ = w.hookRun(p)
	assert.Equal(t, "ask", decision)
}

// TestFailuresHaltTheSession: three failures in a row of one tool latch the halt, which persists.
func TestFailuresHaltTheSession(t *testing.T) {
	w := newWorld(t)
	ls := map[string]any{"command": "ls"}
	for i := 0; i < 3; i++ {
		event := "PostToolUse"
		extra := map[string]any{"tool_response": map[string]any{"stdout": "", "stderr": "boom", "exit_code": 1}}
		if i == 2 {
			event, extra = "PostToolUseFailure", map[string]any{"error": "Command failed"}
		}
		code, _, out, stderr := w.hookRun(w.payload(event, "Bash", "f", ls, extra))
		require.Equal(t, 0, code, stderr)
		if i == 2 {
			assert.Contains(t, out, `"decision":"block"`)
			assert.Contains(t, out, "halted")
		}
	}
	assert.Equal(t, "deny", w.pre("Read", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}), "halted: everything is denied")

	// Every decision and outcome is in the audit log, which verifies.
	res, err := audit.Verify(filepath.Join(w.state, "audit.jsonl"))
	require.NoError(t, err)
	assert.Positive(t, res.Records)
}

func TestActionBudget(t *testing.T) {
	w := newWorld(t)
	read := map[string]any{"file_path": filepath.Join(w.ws, "README.md")}
	for i := 0; i < 2; i++ {
		code, decision, _, _ := w.hookRun(w.payload("PreToolUse", "Read", "b", read, nil), "-max-actions", "2")
		require.Equal(t, 0, code)
		assert.Equal(t, "allow", decision, "call %d", i)
	}
	_, decision, _, _ := w.hookRun(w.payload("PreToolUse", "Read", "b", read, nil), "-max-actions", "2")
	assert.Equal(t, "deny", decision, "the budget is spent")
}

func TestPlanMode(t *testing.T) {
	w := newWorld(t)
	code, decision, _, _ := w.hookRun(w.payload("PreToolUse", "Write", "p", map[string]any{"file_path": filepath.Join(w.ws, "x.go"), "content": ""},
		map[string]any{"permission_mode": "plan"}))
	require.Equal(t, 0, code)
	assert.Equal(t, "deny", decision)
}

// TestBinary runs the built hook as Claude Code does: JSON on stdin, the answer on stdout.
func TestBinary(t *testing.T) {
	w := newWorld(t)
	bin := filepath.Join(t.TempDir(), "hook")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(bin, "-state", w.state)
	cmd.Stdin = strings.NewReader(w.payload("PreToolUse", "Bash", "b1", map[string]any{"command": "cat .env"}, nil))
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	b, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"permissionDecision":"deny"`)

	cmd = exec.Command(bin, "-state", w.state)
	cmd.Stdin = strings.NewReader("garbage")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee))
	assert.Equal(t, exitBlock, ee.ExitCode())
	assert.Contains(t, stderr.String(), "not the JSON Claude Code sends")
}
