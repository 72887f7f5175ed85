package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/examples/hook/internal/hookwire"
)

// world is a project directory, a user configuration directory (no profile file unless a test
// writes one: PROFILE-SAFE) and a state directory.
type world struct {
	t       *testing.T
	ws      string // the project
	cfg     string // XDG_CONFIG_HOME
	state   string
	session string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, ws: realDir(t), cfg: t.TempDir(), state: filepath.Join(t.TempDir(), "state"), session: "abc123"}
	t.Setenv("XDG_CONFIG_HOME", w.cfg)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // checkpoints of workspaces outside git land here
	t.Setenv("CLAUDE_PROJECT_DIR", w.ws)
	t.Setenv("GEMINI_PROJECT_DIR", w.ws)
	t.Setenv("REINS_HOOK_STATE", "")
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("# hi\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".env"), []byte("TOKEN=x\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "src", "main.go"), []byte("package main\n"), 0o644))
	return w
}

// realDir is a temporary directory with symbolic links resolved (macOS's /var is a link).
func realDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// dev makes the user's profile file choose PROFILE-DEV.
func (w *world) dev() *world {
	w.profile(`{"active_profile": "PROFILE-DEV"}`)
	return w
}

func (w *world) profile(body string) {
	dir := filepath.Join(w.cfg, "reins")
	require.NoError(w.t, os.MkdirAll(dir, 0o700))
	require.NoError(w.t, os.WriteFile(filepath.Join(dir, "profile.json"), []byte(body), 0o600))
}

// claude builds a Claude Code payload (the fields of sdk.d.ts's PreToolUseHookInput,
// PostToolUseHookInput and PostToolUseFailureHookInput, 0.3.332).
func (w *world) claude(event, tool, id string, input any, extra map[string]any) string {
	m := map[string]any{"session_id": w.session, "transcript_path": filepath.Join(w.state, "t.jsonl"), "cwd": w.ws,
		"permission_mode": "default", "hook_event_name": event, "tool_name": tool, "tool_input": input, "tool_use_id": id,
		"prompt_id": "p-1", "effort": map[string]any{"level": "high"}}
	return w.encode(m, extra)
}

// gemini builds a Gemini CLI payload (HookInput and BeforeToolInput/AfterToolInput of
// packages/core/src/hooks/types.ts): no tool_use_id, no permission mode.
func (w *world) gemini(event, tool string, input any, extra map[string]any) string {
	m := map[string]any{"session_id": w.session, "transcript_path": filepath.Join(w.state, "g.json"), "cwd": w.ws,
		"hook_event_name": event, "timestamp": "2026-01-02T03:04:05.000Z", "tool_name": tool, "tool_input": input}
	return w.encode(m, extra)
}

// codex builds a Codex CLI payload (PreToolUseCommandInput of codex-rs/hooks/src/schema.rs).
func (w *world) codex(event, tool, id string, input any, extra map[string]any) string {
	m := map[string]any{"session_id": w.session, "turn_id": "turn-1", "transcript_path": nil, "cwd": w.ws,
		"hook_event_name": event, "model": "gpt-5", "permission_mode": "default", "tool_name": tool, "tool_input": input, "tool_use_id": id}
	return w.encode(m, extra)
}

func (w *world) encode(m, extra map[string]any) string {
	for k, v := range extra {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(w.t, err)
	return string(b)
}

// result is one hook run.
type result struct {
	code           int
	stdout, stderr string
	out            map[string]any // stdout decoded, nil when empty
}

// run runs the hook in this process, as the client would: the payload on stdin.
func (w *world) run(client, stdin string, args ...string) result {
	w.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{client, "-state", w.state}, args...), strings.NewReader(stdin), &out, &errb)
	r := result{code: code, stdout: out.String(), stderr: errb.String()}
	if out.Len() > 0 {
		require.NoError(w.t, json.Unmarshal(out.Bytes(), &r.out), "stdout is not one JSON object: %s", out.String())
	}
	return r
}

// spec returns the hookSpecificOutput of a Claude Code or Codex CLI answer.
func (r result) spec() map[string]any {
	s, _ := r.out["hookSpecificOutput"].(map[string]any)
	return s
}

// decision is Claude Code's or Codex CLI's permissionDecision.
func (r result) decision() string {
	d, _ := r.spec()["permissionDecision"].(string)
	return d
}

// buildEnv is the environment the test binary started with: builds run in it, not in a test's
// (whose XDG_CACHE_HOME would move Go's build cache to an empty directory).
var buildEnv = os.Environ()

// hookBinary builds reins-hook (the front program), reins-hook-core and reins-hook-load into
// one directory, as README.md installs them, once per test binary. It returns the front
// program's path.
var hookBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "reins-hook-bin-")
	if err != nil {
		return "", err
	}
	for pkg, name := range map[string]string{"./front": "reins-hook", ".": hookwire.CoreName, "./load": loaderName} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(buildEnv, "CGO_ENABLED=0") // as README.md says to build it
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", &buildError{string(b), err}
		}
	}
	return filepath.Join(dir, "reins-hook"), nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// binary runs the built hook as the client does, in dir, with extra environment.
func (w *world) binary(dir, stdin string, env []string, args ...string) result {
	w.t.Helper()
	bin, err := hookBinary()
	require.NoError(w.t, err)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else {
		require.NoError(w.t, err)
	}
	if out.Len() > 0 && strings.HasPrefix(strings.TrimSpace(out.String()), "{") {
		_ = json.Unmarshal(out.Bytes(), &r.out)
	}
	return r
}
