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

// TestGeminiContract feeds Gemini CLI's BeforeTool payloads (types.ts BeforeToolInput, tool names
// and fields of packages/core/src/tools, gemini-cli 5411f113) and checks what Gemini CLI makes
// of each answer (geminiReads): exit 0 with decision allow|ask|deny, the reason given.
func TestGeminiContract(t *testing.T) {
	w := newWorld(t)
	mcp := map[string]any{"mcp_context": map[string]any{"server_name": "github", "tool_name": "create_issue", "command": "gh-mcp"}}
	for _, tc := range []struct {
		name, tool string
		input      map[string]any
		extra      map[string]any
		want       string
	}{
		{"allow: a read inside the project", "read_file", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil, "allow"},
		{"allow: a relative read", "read_file", map[string]any{"file_path": "README.md"}, nil, "allow"},
		{"deny: a secret", "read_file", map[string]any{"file_path": ".env"}, nil, "deny"},
		{"deny: a shell command under PROFILE-SAFE", "run_shell_command", map[string]any{"command": "ls", "description": "list"}, nil, "deny"},
		{"ask: a write under PROFILE-SAFE", "write_file", map[string]any{"file_path": "a.go", "content": "package a"}, nil, "ask"},
		{"ask: a replace", "replace", map[string]any{"file_path": "README.md", "old_string": "hi", "new_string": "ho"}, nil, "ask"},
		{"allow: a listing", "list_directory", map[string]any{"dir_path": "src"}, nil, "allow"},
		{"allow: a glob of Go files", "glob", map[string]any{"pattern": "**/*.go"}, nil, "allow"},
		{"deny: a glob that lists secrets", "glob", map[string]any{"pattern": ".env*"}, nil, "deny"},
		{"allow: a search", "grep_search", map[string]any{"pattern": "TODO"}, nil, "allow"},
		{"deny: a search whose include pattern matches a secret", "grep_search", map[string]any{"pattern": "TOKEN", "include_pattern": "*.env*"}, nil, "deny"},
		{"deny: read_many_files naming a secret", "read_many_files", map[string]any{"include": []any{"README.md", ".env"}}, nil, "deny"},
		{"deny: read_many_files with a pattern matching a secret", "read_many_files", map[string]any{"include": []any{"**/.env"}}, nil, "deny"},
		{"deny: the network under PROFILE-SAFE", "web_fetch", map[string]any{"prompt": "summarise https://example.com/x"}, nil, "deny"},
		{"allow: the to-do list", "write_todos", map[string]any{"todos": []any{}}, nil, "allow"},
		{"not allow: an MCP tool", "mcp_github_create_issue", map[string]any{"title": "x"}, mcp, "!allow"},
		{"not allow: an unknown tool", "some_future_tool", map[string]any{"x": 1}, nil, "!allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.run("gemini", w.gemini("BeforeTool", tc.tool, tc.input, tc.extra))
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			d, reason, ti := geminiReads(r.code, r.stdout, r.stderr)
			if strings.HasPrefix(tc.want, "!") {
				assert.Contains(t, []string{"ask", "deny"}, d, r.stdout)
			} else {
				assert.Equal(t, tc.want, d, r.stdout)
			}
			if d != "allow" {
				assert.True(t, strings.HasPrefix(reason, "reins: "), "the reason reaches the user or the model: %s", r.stdout)
			}
			assert.Nil(t, ti, "nothing is rewritten under PROFILE-SAFE")
		})
	}
}

// TestGeminiUnreadableInputBlocks: an input the hook cannot read ends in exit 2 with the reason
// on stderr and nothing on stdout, which Gemini CLI reads as a deny with that text.
func TestGeminiUnreadableInputBlocks(t *testing.T) {
	w := newWorld(t)
	for name, stdin := range map[string]string{
		"garbage":          "not json",
		"huge":             `{"session_id":"s","x":"` + strings.Repeat("a", maxInput) + `"}`,
		"no tool name":     w.gemini("BeforeTool", "", map[string]any{}, nil),
		"input not object": w.gemini("BeforeTool", "run_shell_command", nil, map[string]any{"tool_input": []any{"ls"}}),
		"no include":       w.gemini("BeforeTool", "read_many_files", map[string]any{"include": "README.md"}, nil),
		"claude's event":   w.gemini("PreToolUse", "read_file", map[string]any{"file_path": "README.md"}, nil),
	} {
		r := w.run("gemini", stdin)
		assert.Equal(t, exitBlock, r.code, name)
		assert.Empty(t, r.stdout, name)
		d, reason, _ := geminiReads(r.code, r.stdout, r.stderr)
		assert.Equal(t, "deny", d, name)
		assert.Contains(t, reason, "blocking the call", name)
	}
}

// TestGeminiProjectFromTheProjectVariable: the project is GEMINI_PROJECT_DIR (which Gemini CLI
// sets to the directory it was started for), not the hook's own current directory.
func TestGeminiProjectFromTheProjectVariable(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".reins"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".reins", "project-profile.json"), []byte(`{"denied_paths": ["notes.md"]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "notes.md"), []byte("x"), 0o644))
	r := w.run("gemini", w.gemini("BeforeTool", "read_file", map[string]any{"file_path": filepath.Join(w.ws, "notes.md")},
		map[string]any{"cwd": filepath.Join(w.ws, "src")}))
	d, _, _ := geminiReads(r.code, r.stdout, r.stderr)
	assert.Equal(t, "deny", d, "the project profile applies: %s", r.stdout)
	t.Setenv("GEMINI_PROJECT_DIR", "relative/dir")
	r = w.run("gemini", w.gemini("BeforeTool", "read_file", map[string]any{"file_path": "README.md"}, nil))
	assert.Equal(t, exitBlock, r.code, "a project variable that is not an absolute path blocks")
}

// TestGeminiAdditionalPermissionsAreAsked: a shell call asking Gemini CLI to widen its own
// sandbox is never allowed as it is.
func TestGeminiAdditionalPermissionsAreAsked(t *testing.T) {
	w := newWorld(t).dev()
	r := w.run("gemini", w.gemini("BeforeTool", "run_shell_command",
		map[string]any{"command": "ls", "additional_permissions": map[string]any{"network": true}}, nil))
	require.Equal(t, 0, r.code, r.stderr)
	d, reason, ti := geminiReads(r.code, r.stdout, r.stderr)
	assert.Equal(t, "ask", d)
	assert.Contains(t, reason, "additional_permissions")
	assert.Nil(t, ti)
}

// TestGeminiAfterTool: the approval of a question reins asked is recorded when the tool result
// comes (Gemini CLI sends no tool_use_id: the call is named by its tool and input); failures
// reported in tool_response.error count towards the halt, which the model is told through
// additionalContext; a hard stop denies the next call.
func TestGeminiAfterTool(t *testing.T) {
	w := newWorld(t)
	in := map[string]any{"file_path": "a.go", "content": "package a"}
	r := w.run("gemini", w.gemini("BeforeTool", "write_file", in, nil))
	d, _, _ := geminiReads(r.code, r.stdout, r.stderr)
	require.Equal(t, "ask", d)
	ok := map[string]any{"tool_response": map[string]any{"llmContent": "Successfully created a.go", "returnDisplay": "a.go"}}
	r = w.run("gemini", w.gemini("AfterTool", "write_file", in, ok))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stdout)
	approvals := 0
	for _, rec := range records(t, w) {
		if rec.Kind == audit.KindParkedResolved {
			approvals++
			assert.Equal(t, "Gemini CLI user", rec.Approver)
		}
	}
	assert.Equal(t, 1, approvals, "the approval is recorded")

	failed := map[string]any{"tool_response": map[string]any{"llmContent": "", "returnDisplay": "",
		"error": map[string]any{"message": "command failed", "type": "execution_failed"}}}
	for i := 0; i < 3; i++ {
		r = w.run("gemini", w.gemini("AfterTool", "run_shell_command", map[string]any{"command": "false"}, failed))
		require.Equal(t, 0, r.code, r.stderr)
	}
	spec, _ := r.out["hookSpecificOutput"].(map[string]any)
	require.NotNil(t, spec, r.stdout)
	assert.Contains(t, spec["additionalContext"], "halted")
	r = w.run("gemini", w.gemini("BeforeTool", "read_file", map[string]any{"file_path": "README.md"}, nil))
	d, reason, _ := geminiReads(r.code, r.stdout, r.stderr)
	assert.Equal(t, "deny", d)
	assert.Contains(t, reason, "halted")
}

// TestGeminiHardStopLatches: after a denied rm -rf ~ the next call, in another process, is denied.
func TestGeminiHardStopLatches(t *testing.T) {
	w := newWorld(t).dev()
	r := w.run("gemini", w.gemini("BeforeTool", "run_shell_command", map[string]any{"command": "rm -rf ~"}, nil))
	d, _, _ := geminiReads(r.code, r.stdout, r.stderr)
	require.Equal(t, "deny", d)
	r = w.run("gemini", w.gemini("BeforeTool", "read_file", map[string]any{"file_path": "README.md"}, nil))
	d, reason, _ := geminiReads(r.code, r.stdout, r.stderr)
	assert.Equal(t, "deny", d, "the hard stop latched")
	assert.Contains(t, reason, "halted")
}
