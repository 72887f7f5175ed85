package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

// TestClaudeContract feeds Claude Code's payloads and checks each answer against its contract
// (Claude Code 2.1.332: exit 0 with hookSpecificOutput.permissionDecision allow|ask|deny and a
// reason, or exit 2 with the reason on stderr; nothing else on stdout).
func TestClaudeContract(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		name, tool string
		input      any
		want       string // the decision
	}{
		{"allow: a read inside the project", "Read", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, "allow"},
		{"deny: a secret", "Read", map[string]any{"file_path": filepath.Join(w.ws, ".env")}, "deny"},
		{"deny: a shell command under PROFILE-SAFE", "Bash", map[string]any{"command": "ls", "description": "list"}, "deny"},
		{"ask: a write under PROFILE-SAFE", "Write", map[string]any{"file_path": filepath.Join(w.ws, "a.go"), "content": "package a"}, "ask"},
		{"ask: an edit", "Edit", map[string]any{"file_path": filepath.Join(w.ws, "README.md"), "old_string": "hi", "new_string": "ho"}, "ask"},
		{"ask: a notebook", "NotebookEdit", map[string]any{"notebook_path": filepath.Join(w.ws, "n.ipynb"), "new_source": "1"}, "ask"},
		{"allow: a search", "Grep", map[string]any{"pattern": "TODO", "path": w.ws, "output_mode": "content", "-n": true}, "allow"},
		{"deny: a search whose glob matches a secret", "Grep", map[string]any{"pattern": "TOKEN", "glob": ".env*"}, "deny"},
		{"allow: a glob of Go files", "Glob", map[string]any{"pattern": "**/*.go"}, "allow"},
		{"deny: a glob that lists secrets", "Glob", map[string]any{"pattern": "**/.env*"}, "deny"},
		{"deny: the network under PROFILE-SAFE", "WebFetch", map[string]any{"url": "https://example.com/x", "prompt": "p"}, "deny"},
		{"allow: a subagent", "Agent", map[string]any{"description": "d", "prompt": "p", "subagent_type": "Explore"}, "allow"},
		{"allow: the to-do list", "TodoWrite", map[string]any{"todos": []any{}}, "allow"},
		{"not allow: an MCP tool", "mcp__github__create_issue", map[string]any{"title": "x"}, "!allow"},
		{"not allow: an unknown tool", "SomeFutureTool", map[string]any{"x": 1}, "!allow"},
		{"deny: Monitor running a destructive command", "Monitor", map[string]any{"command": "rm -rf /", "description": "d", "timeout_ms": 1000}, "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.run("claude", w.claude("PreToolUse", tc.tool, "toolu_"+tc.tool, tc.input, nil))
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			assert.Equal(t, "PreToolUse", r.spec()["hookEventName"])
			assert.True(t, strings.HasPrefix(r.spec()["permissionDecisionReason"].(string), "reins: "), r.stdout)
			if strings.HasPrefix(tc.want, "!") {
				assert.NotEqual(t, tc.want[1:], r.decision(), r.stdout)
				assert.Contains(t, []string{"ask", "deny"}, r.decision())
			} else {
				assert.Equal(t, tc.want, r.decision(), r.stdout)
			}
			assert.Nil(t, r.spec()["updatedInput"], "nothing is rewritten under PROFILE-SAFE")
		})
	}
}

// TestClaudeUnreadableInputBlocks: what the hook cannot read ends in exit 2 with the reason on
// stderr and nothing on stdout (Claude Code reads exit 2 as a block).
func TestClaudeUnreadableInputBlocks(t *testing.T) {
	w := newWorld(t)
	for name, stdin := range map[string]string{
		"garbage":          "this is not json",
		"empty":            "",
		"no session":       `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		"session id path":  `{"session_id":"../../etc/x","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		"relative cwd":     `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"rel","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		"no tool_use_id":   w.claude("PreToolUse", "Read", "", map[string]any{"file_path": "/x"}, nil),
		"input not object": w.claude("PreToolUse", "Bash", "t", "ls", nil),
		"command not text": w.claude("PreToolUse", "Bash", "t", map[string]any{"command": 42}, nil),
		"missing path":     w.claude("PreToolUse", "Write", "t", map[string]any{"content": "x"}, nil),
		"unknown event":    w.claude("Stop", "Bash", "t", map[string]any{"command": "ls"}, nil),
		"huge":             `{"session_id":"s","x":"` + strings.Repeat("a", maxInput) + `"}`,
		"tool name path":   w.claude("PreToolUse", "../../x", "t", map[string]any{}, nil),
	} {
		r := w.run("claude", stdin)
		assert.Equal(t, exitBlock, r.code, name)
		assert.Empty(t, r.stdout, name)
		assert.Contains(t, r.stderr, "blocking the call", name)
	}
	for _, args := range [][]string{{"-max-failures", "0"}, {"-project", "relative"}, {"extra"}} {
		r := w.run("claude", "{}", args...)
		assert.Equal(t, exitBlock, r.code, "%v", args)
		assert.Contains(t, r.stderr, "bad arguments")
	}
}

func TestPanicBlocks(t *testing.T) {
	w := newWorld(t)
	injectPanic = func() { panic("injected") }
	defer func() { injectPanic = nil }()
	r := w.run("claude", w.claude("PreToolUse", "Read", "t", map[string]any{"file_path": "README.md"}, nil))
	assert.Equal(t, exitBlock, r.code)
	assert.Contains(t, r.stderr, "internal error, blocking the call: injected")
}

// TestClaudeShellUnderSafeSaysToChooseAProfile: the default profile runs no shell command, and
// the denial says how to choose another.
func TestClaudeShellUnderSafeSaysToChooseAProfile(t *testing.T) {
	w := newWorld(t)
	r := w.run("claude", w.claude("PreToolUse", "Bash", "t1", map[string]any{"command": "ls"}, nil))
	assert.Equal(t, "deny", r.decision())
	assert.Contains(t, r.spec()["permissionDecisionReason"], `{"active_profile": "PROFILE-DEV"}`)
	w.dev()
	r = w.run("claude", w.claude("PreToolUse", "Bash", "t2", map[string]any{"command": "rm -rf src"}, nil))
	assert.NotContains(t, r.spec()["permissionDecisionReason"], "active_profile", "a profile file exists: no hint")
}

// TestClaudeProjectFromTheProjectVariable: from a subdirectory, the project is
// CLAUDE_PROJECT_DIR, not the payload's cwd: the project profile applies and reads of the
// project are reads inside it.
func TestClaudeProjectFromTheProjectVariable(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".reins"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".reins", "project-profile.json"),
		[]byte(`{"denied_paths": ["secret-notes.md"]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "secret-notes.md"), []byte("x"), 0o644))
	sub := filepath.Join(w.ws, "src")
	for name, path := range map[string]string{"README": "README.md", "notes": "secret-notes.md"} {
		p := w.claude("PreToolUse", "Read", "t-"+name, map[string]any{"file_path": filepath.Join(w.ws, path)}, map[string]any{"cwd": sub})
		r := w.run("claude", p)
		require.Equal(t, 0, r.code, r.stderr)
		if name == "README" {
			assert.Equal(t, "allow", r.decision(), "a read of the project from a subdirectory is inside the project")
		} else {
			assert.Equal(t, "deny", r.decision(), "the project profile (found through CLAUDE_PROJECT_DIR) applies")
		}
	}
}

// TestClaudePlanModeIsReadOnly: Claude Code's plan mode allows reads and nothing else.
func TestClaudePlanModeIsReadOnly(t *testing.T) {
	w := newWorld(t).dev()
	plan := map[string]any{"permission_mode": "plan"}
	r := w.run("claude", w.claude("PreToolUse", "Read", "p1", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, plan))
	assert.Equal(t, "allow", r.decision(), r.stdout)
	r = w.run("claude", w.claude("PreToolUse", "Grep", "p2", map[string]any{"pattern": "x"}, plan))
	assert.Equal(t, "allow", r.decision(), r.stdout)
	r = w.run("claude", w.claude("PreToolUse", "Write", "p3", map[string]any{"file_path": filepath.Join(w.ws, "x.go"), "content": ""}, plan))
	assert.Equal(t, "deny", r.decision(), r.stdout)
	assert.Contains(t, r.spec()["permissionDecisionReason"], "read-only")
}

// TestClaudeDangerouslyDisableSandboxIsAsked: a line the gate would allow is asked about when
// it asks Claude Code to drop its own sandbox.
func TestClaudeDangerouslyDisableSandboxIsAsked(t *testing.T) {
	w := newWorld(t).dev()
	r := w.run("claude", w.claude("PreToolUse", "Bash", "d1", map[string]any{"command": "ls", "dangerouslyDisableSandbox": true}, nil))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "ask", r.decision(), r.stdout)
	assert.Contains(t, r.spec()["permissionDecisionReason"], "dangerouslyDisableSandbox")
	assert.Nil(t, r.spec()["updatedInput"])
}

// TestClaudeHardStopLatches: a write outside the project latches the halt; the next call, in
// another process, is denied too; the post event tells Claude; reset clears it.
func TestClaudeHardStopLatches(t *testing.T) {
	w := newWorld(t).dev()
	r := w.run("claude", w.claude("PreToolUse", "Bash", "h1", map[string]any{"command": "go test ./... && rm -rf ~"}, nil))
	assert.Equal(t, "deny", r.decision())
	r = w.run("claude", w.claude("PreToolUse", "Read", "h2", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil))
	assert.Equal(t, "deny", r.decision(), "the hard stop latched")
	assert.Contains(t, r.spec()["permissionDecisionReason"], "halted")
	r = w.run("claude", w.claude("PostToolUse", "Read", "h0", map[string]any{"file_path": filepath.Join(w.ws, "README.md")},
		map[string]any{"tool_response": map[string]any{"type": "text"}}))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "block", r.out["decision"])
	assert.Contains(t, r.out["reason"], "reset claude "+w.session)

	var out, errb strings.Builder
	code := run(t.Context(), []string{"reset", "-state", w.state, "claude", w.session}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	r = w.run("claude", w.claude("PreToolUse", "Read", "h3", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil))
	assert.Equal(t, "allow", r.decision(), "reset by the human")
}

// TestClaudeApprovalIsRecordedAndCoversTheCallOnly: an ask the user approved in Claude Code
// (its tool result arrives) is recorded as the user's approval; it does not allow the next
// identical call without asking.
func TestClaudeApprovalIsRecordedAndCoversTheCallOnly(t *testing.T) {
	w := newWorld(t)
	edit := map[string]any{"file_path": filepath.Join(w.ws, "main.go"), "content": "package main"}
	r := w.run("claude", w.claude("PreToolUse", "Write", "toolu_1", edit, nil))
	require.Equal(t, "ask", r.decision())
	r = w.run("claude", w.claude("PostToolUse", "Write", "toolu_1", edit, map[string]any{"tool_response": map[string]any{"success": true, "filePath": "main.go"}}))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stdout)
	r = w.run("claude", w.claude("PreToolUse", "Write", "toolu_2", edit, nil))
	assert.Equal(t, "ask", r.decision(), "the user's yes was for that call")

	recs := records(t, w)
	kinds := map[audit.Kind]int{}
	for _, rec := range recs {
		kinds[rec.Kind]++
	}
	assert.Equal(t, 2, kinds[audit.KindDecision], "every pre-decision is recorded")
	assert.Equal(t, 1, kinds[audit.KindParkedResolved], "the approval is recorded")
	assert.Equal(t, 1, kinds[audit.KindOutcome], "the outcome is recorded")
	for _, rec := range recs {
		if rec.Kind == audit.KindParkedResolved {
			assert.Equal(t, "Claude Code user", rec.Approver)
		}
		if rec.Kind == audit.KindOutcome {
			assert.Equal(t, audit.OutcomeSucceeded, rec.Outcome, "a success is recorded as one")
		}
	}
}

// TestClaudeFailuresHaltTheSession: three failures in a row of one tool latch the halt.
func TestClaudeFailuresHaltTheSession(t *testing.T) {
	w := newWorld(t).dev()
	for i := 0; i < 3; i++ {
		r := w.run("claude", w.claude("PostToolUseFailure", "Bash", "f", map[string]any{"command": "false"},
			map[string]any{"error": "Exit code 1", "is_interrupt": false, "duration_ms": 3}))
		require.Equal(t, 0, r.code, r.stderr)
		if i == 2 {
			assert.Contains(t, r.out["systemMessage"], "halted")
		}
	}
	r := w.run("claude", w.claude("PreToolUse", "Read", "x", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil))
	assert.Equal(t, "deny", r.decision(), "halted: everything is denied")
	res, err := audit.Verify(filepath.Join(w.state, "audit.jsonl"))
	require.NoError(t, err)
	assert.Positive(t, res.Records)
}

func TestActionBudget(t *testing.T) {
	w := newWorld(t)
	read := map[string]any{"file_path": filepath.Join(w.ws, "README.md")}
	for i := 0; i < 2; i++ {
		r := w.run("claude", w.claude("PreToolUse", "Read", "b", read, nil), "-max-actions", "2")
		assert.Equal(t, "allow", r.decision(), "call %d", i)
	}
	r := w.run("claude", w.claude("PreToolUse", "Read", "b", read, nil), "-max-actions", "2")
	assert.Equal(t, "deny", r.decision(), "the budget is spent")
}

// TestClaudeProfileCache: the loaded profile is cached by file identity: an unchanged file is
// not read again, a changed one is.
func TestClaudeProfileCache(t *testing.T) {
	w := newWorld(t).dev()
	bash := func(id string) string {
		return w.run("claude", w.claude("PreToolUse", "Bash", id, map[string]any{"command": "rm -rf src"}, nil)).decision()
	}
	assert.Equal(t, "ask", bash("c1"), "PROFILE-DEV asks before a deletion")
	entries, err := os.ReadDir(filepath.Join(w.state, "profiles"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the loaded profile is cached")
	w.profile(`{"active_profile": "PROFILE-SAFE"}`)
	assert.Equal(t, "deny", bash("c2"), "a changed profile file is loaded again")
	w.profile(`{"active_profile": "PROFILE-DEV", "oops": 1}`)
	r := w.run("claude", w.claude("PreToolUse", "Read", "c3", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil))
	assert.Equal(t, exitBlock, r.code, "a profile file that does not load blocks")
	assert.Contains(t, r.stderr, "oops")
}

// records reads the audit log.
func records(t *testing.T, w *world) []audit.Record {
	t.Helper()
	var recs []audit.Record
	for rec, err := range audit.Scan(filepath.Join(w.state, "audit.jsonl"), nil) {
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	return recs
}
