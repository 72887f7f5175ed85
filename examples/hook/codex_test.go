package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
)

// TestCodexContract feeds Codex CLI's PreToolUse payloads (PreToolUseCommandInput of
// codex-rs/hooks/src/schema.rs; tool names Bash, apply_patch, mcp__server__tool) and checks what
// Codex CLI makes of each answer (codexReads, after openai/codex 2219e3df's output parser): no
// answer is one Codex CLI rejects (it would then run the tool), a refusal blocks with its reason,
// and what reins would ask about is refused, since Codex CLI ignores "ask".
func TestCodexContract(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.go\n+package a\n*** End Patch\n"
	for _, tc := range []struct {
		name, tool string
		input      map[string]any
		dev        bool
		block      bool
		reasonHas  string
	}{
		{"block: a shell command under PROFILE-SAFE", "Bash", map[string]any{"command": "ls"}, false, true, "PROFILE-SAFE"},
		{"block: a shell line reins cannot confine", "Bash", map[string]any{"command": "ls"}, true, true, "-codex-updated-input"},
		{"block: a destructive line", "Bash", map[string]any{"command": "rm -rf /"}, true, true, "reins:"},
		{"block: a patch reins would ask about", "apply_patch", map[string]any{"command": patch}, false, true, "cannot ask"},
		{"block: a patch of a secret", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: .env\n@@\n-a\n+b\n*** End Patch\n"}, true, true, "reins:"},
		{"block: an MCP tool", "mcp__github__create_issue", map[string]any{"title": "x"}, true, true, "reins:"},
		{"block: an unknown tool", "SomeFutureTool", map[string]any{"x": 1}, true, true, "reins:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.dev {
				w.dev()
			}
			r := w.run("codex", w.codex("PreToolUse", tc.tool, "call_1", tc.input, nil))
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			block, reason, invalid, _ := codexReads(r.code, r.stdout, r.stderr, false)
			assert.Empty(t, invalid, "Codex CLI must accept the answer: %s", r.stdout)
			assert.Equal(t, tc.block, block, r.stdout)
			assert.Contains(t, reason, tc.reasonHas)
		})
	}
}

// TestCodexAllowSaysNothing: an allowed call that carries no obligation the hook must enforce
// (a patch in the project under PROFILE-DEV: its checkpoint is taken here) is answered with no
// output, which Codex CLI reads as "no objection" (a bare allow is rejected as unsupported).
func TestCodexAllowSaysNothing(t *testing.T) {
	w := newWorld(t).dev()
	patch := "*** Begin Patch\n*** Add File: src/b.go\n+package main\n*** End Patch\n"
	r := w.run("codex", w.codex("PreToolUse", "apply_patch", "call_2", map[string]any{"command": patch}, nil))
	require.Equal(t, 0, r.code, r.stderr)
	block, _, invalid, _ := codexReads(r.code, r.stdout, r.stderr, false)
	assert.False(t, block, r.stdout)
	assert.Empty(t, invalid, r.stdout)
	assert.NotContains(t, r.stdout, `"allow"`, "Codex CLI rejects a bare allow")
}

// TestCodexUnreadableInputBlocks: exit 2 with the reason on stderr, which Codex CLI reads as a
// block (exit 2 without a reason would not block).
func TestCodexUnreadableInputBlocks(t *testing.T) {
	w := newWorld(t)
	for name, stdin := range map[string]string{
		"garbage":        "{",
		"huge":           strings.Repeat(" ", maxInput+1),
		"no tool_use_id": w.codex("PreToolUse", "Bash", "", map[string]any{"command": "ls"}, nil),
		"empty patch":    w.codex("PreToolUse", "apply_patch", "c", map[string]any{"command": "not a patch"}, nil),
		"null session":   w.codex("PreToolUse", "Bash", "c", map[string]any{"command": "ls"}, map[string]any{"session_id": 7}),
	} {
		r := w.run("codex", stdin)
		block, reason, invalid, _ := codexReads(r.code, r.stdout, r.stderr, false)
		assert.Empty(t, invalid, name)
		assert.True(t, block, name)
		assert.Contains(t, reason, "blocking the call", name)
	}
}

// TestCodexProjectIsTheSessionDirectory: Codex CLI sets no project variable; the project is the
// payload's cwd, whatever CLAUDE_PROJECT_DIR says.
func TestCodexProjectIsTheSessionDirectory(t *testing.T) {
	w := newWorld(t).dev()
	t.Setenv("CLAUDE_PROJECT_DIR", t.TempDir())
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".reins"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".reins", "project-profile.json"), []byte(`{"denied_paths": ["notes.md"]}`), 0o644))
	patch := "*** Begin Patch\n*** Add File: notes.md\n+x\n*** End Patch\n"
	r := w.run("codex", w.codex("PreToolUse", "apply_patch", "c1", map[string]any{"command": patch}, nil))
	block, reason, _, _ := codexReads(r.code, r.stdout, r.stderr, false)
	assert.True(t, block, "the project profile of the payload's cwd applies: %s", r.stdout)
	assert.Contains(t, reason, "notes.md")
}

// TestCodexPostToolUse: a halted session tells the model through decision "block" with a
// reason (a block without one is rejected), and the next call is blocked.
func TestCodexPostToolUse(t *testing.T) {
	w := newWorld(t).dev()
	r := w.run("codex", w.codex("PreToolUse", "Bash", "c1", map[string]any{"command": "rm -rf ~"}, nil))
	block, _, _, _ := codexReads(r.code, r.stdout, r.stderr, false)
	require.True(t, block)
	r = w.run("codex", w.codex("PostToolUse", "Bash", "c0", map[string]any{"command": "ls"},
		map[string]any{"tool_response": map[string]any{"exit_code": 0, "output": "x"}}))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "block", r.out["decision"])
	assert.NotEmpty(t, strings.TrimSpace(r.out["reason"].(string)))
	assert.Nil(t, r.out["suppressOutput"])
	r = w.run("codex", w.codex("PreToolUse", "apply_patch", "c2", map[string]any{"command": "*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\n"}, nil))
	block, reason, _, _ := codexReads(r.code, r.stdout, r.stderr, false)
	assert.True(t, block)
	assert.Contains(t, reason, "halted")
}

// TestCodexUpdatedInputOptIn: with -codex-updated-input, an allowed shell line is answered with
// permissionDecision "allow" and updatedInput (the rewritten, confined line), which a Codex CLI
// that applies updatedInput runs; one that does not would reject it (and run the original line),
// which is why the hook rewrites only when told to.
func TestCodexUpdatedInputOptIn(t *testing.T) {
	w := newWorld(t).dev()
	r := w.run("codex", w.codex("PreToolUse", "Bash", "c1", map[string]any{"command": "ls"}, nil), "-codex-updated-input")
	require.Equal(t, 0, r.code, r.stderr)
	block, reason, invalid, updated := codexReads(r.code, r.stdout, r.stderr, true)
	if block && strings.Contains(reason, "no enforcing sandbox") {
		assert.Empty(t, invalid)
		testenv.Missing(t, "the hardened sandbox cannot run here: %s", reason)
	}
	require.Empty(t, invalid, r.stdout)
	require.False(t, block, r.stdout)
	require.NotNil(t, updated, r.stdout)
	assert.Contains(t, updated["command"], " exec -state ")
	assert.Contains(t, updated["command"], "-- bash -c ls")
	_, _, invalid, _ = codexReads(r.code, r.stdout, r.stderr, false)
	assert.Equal(t, "updatedInput", invalid, "an older Codex CLI rejects it")
}
