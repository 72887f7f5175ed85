package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParse: any input is either refused or read into a call whose session, key, directories
// and tool are usable, and whose action maps without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		`{"session_id":"s","cwd":"/p","hook_event_name":"BeforeTool","tool_name":"read_many_files","tool_input":{"include":["a","**/*.go"]}}`,
		`{"session_id":"s","cwd":"/p/../q","hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a\n"},"tool_use_id":"t","tool_response":{"exit_code":1}}`,
		`{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"x","glob":"../**/.env*"},"tool_use_id":"t"}`,
		`{"session_id":"..","cwd":"/","hook_event_name":"AfterTool","tool_name":"x","tool_input":null,"tool_response":{"error":{"message":"m"}}}`,
		`[]`, `null`, `{"tool_input":7}`,
	} {
		f.Add(s, "claude")
		f.Add(s, "gemini")
		f.Add(s, "codex")
	}
	env := func(string) string { return "" }
	f.Fuzz(func(t *testing.T, in, name string) {
		c := clients[name]
		if c == nil {
			return
		}
		k, err := c.parse([]byte(in), env, "")
		if err != nil {
			return
		}
		require.True(t, isID(k.session) && !strings.Contains(k.session, ".."), "session %q", k.session)
		require.True(t, filepath.IsAbs(k.project) && filepath.IsAbs(k.cwd), "%q %q", k.project, k.cwd)
		require.Equal(t, filepath.Clean(k.cwd), k.cwd)
		require.True(t, isName(k.tool, 256), "tool %q", k.tool)
		require.NotEmpty(t, k.key)
		m, err := k.action()
		if err == nil {
			require.LessOrEqual(t, len(m.a.Targets), maxTargets)
			for _, p := range m.a.Targets {
				require.True(t, filepath.IsAbs(p), "target %q", p)
			}
		}
	})
}

// FuzzPatchFiles: a patch's files are non-empty paths without NUL, at most maxTargets, or the
// patch is refused.
func FuzzPatchFiles(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a.go\n+x\n*** Update File: b\n*** Move to: c\n*** Delete File: d\n*** End Patch")
	f.Add("*** Begin Patch\r\n*** Add File: \r\n")
	f.Add("nope")
	f.Fuzz(func(t *testing.T, patch string) {
		files, err := patchFiles(patch)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(files), maxTargets)
		for _, p := range files {
			require.NotEmpty(t, p)
			require.NotContains(t, p, "\x00")
		}
	})
}

// FuzzVerifyTicket: nothing but a ticket the hook issued verifies.
func FuzzVerifyTicket(f *testing.F) {
	dir := f.TempDir()
	require.NoError(f, prepareState(dir))
	h := &hook{stateDir: dir}
	good, err := h.issue(ticket{Client: "claude", Session: "s", Project: "/p", Dir: "/p", Line: lineHash("ls")}, []string{"/x"})
	require.NoError(f, err)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add("e30." + strings.Repeat("A", 43))
	f.Add(".")
	f.Fuzz(func(t *testing.T, s string) {
		tk, _, err := verifyTicket(dir, s, time.Now())
		if s == good {
			assert.NoError(t, err)
			return
		}
		if err == nil {
			// Another encoding of the same signed payload would be a forgery only if it named
			// another policy.
			assert.Equal(t, lineHash("ls"), tk.Line)
			assert.Equal(t, "/p", tk.Dir)
		}
	})
}

// FuzzSplitPattern: the walk starts at or below the search directory unless the pattern is
// absolute or climbs out.
func FuzzSplitPattern(f *testing.F) {
	for _, p := range []string{"*.go", "src/**/*.go", "/etc/*", "../x/*", "a/b/c", "[", "**"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		if strings.ContainsRune(pattern, 0) {
			return
		}
		base, _ := splitPattern("/work/p", pattern)
		require.True(t, filepath.IsAbs(base), base)
		if !filepath.IsAbs(pattern) && !strings.Contains(pattern, "..") {
			require.True(t, base == "/work/p" || strings.HasPrefix(base, "/work/p/"), "%q -> %q", pattern, base)
		}
	})
}
