package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/examples/hook/internal/hookwire"
	"github.com/reins-go/reins/internal/testenv"
)

// TestAllowWithCheckpointIsCarriedOut: a write the gate allows with a checkpoint gets one before
// the tool runs (the checkpoint store `reins timeline` lists has it, under the call's
// correlation, and the audit log records it); when Claude Code reports the tool failed, the
// file is restored from it.
func TestAllowWithCheckpointIsCarriedOut(t *testing.T) {
	w := newWorld(t).dev()
	readme := filepath.Join(w.ws, "README.md")
	in := map[string]any{"file_path": readme, "content": "changed\n"}
	r := w.run("claude", w.claude("PreToolUse", "Write", "toolu_w1", in, nil))
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "allow", r.decision(), r.stdout)

	cp, err := checkpoint.New(t.Context(), w.ws, nil)
	require.NoError(t, err)
	list, err := cp.List(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1, "one checkpoint before the write")
	assert.Contains(t, list[0].Label, "README.md")
	assert.NotEmpty(t, list[0].CorrelationID)
	var created int
	for _, rec := range records(t, w) {
		if rec.Kind == audit.KindCheckpointCreated {
			created++
			assert.Equal(t, list[0].ID, rec.CheckpointID)
		}
	}
	assert.Equal(t, 1, created, "the checkpoint is recorded")

	// The tool runs, and fails half-way.
	require.NoError(t, os.WriteFile(readme, []byte("half-written"), 0o644))
	r = w.run("claude", w.claude("PostToolUseFailure", "Write", "toolu_w1", in, map[string]any{"error": "disk full"}))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.out["systemMessage"], "rolled back to checkpoint "+list[0].ID)
	b, err := os.ReadFile(readme)
	require.NoError(t, err)
	assert.Equal(t, "# hi\n", string(b), "restored from the checkpoint")
}

// TestAllowedShellLineRunsConfined: a shell line the gate allows is rewritten into this hook's
// exec subcommand, which runs it in the hardened sandbox with the policy the gate derived; the
// client runs the rewritten line (here: bash -c, as Claude Code does) and the line's effect
// happens; the ticket cannot be reused for another line or directory. Where the hardened sandbox
// cannot run, the line is asked about instead (checked here), and the rest is skipped (a failure
// under REINS_TEST_STRICT=1).
func TestAllowedShellLineRunsConfined(t *testing.T) {
	w := newWorld(t)
	w.profile(`{"active_profile": "PROFILE-DEV", "shell_allowlist": ["tee"]}`)
	line := "echo hi | tee out.txt"
	r := w.binary(w.ws, w.claude("PreToolUse", "Bash", "toolu_s1", map[string]any{"command": line, "description": "d", "timeout": 1000}, nil),
		nil, "claude", "-state", w.state)
	require.Equal(t, 0, r.code, r.stderr)
	if r.decision() == "ask" && strings.Contains(r.spec()["permissionDecisionReason"].(string), "no enforcing sandbox") {
		testenv.Missing(t, "the hardened sandbox cannot run here, so the line is asked about: %s", r.spec()["permissionDecisionReason"])
	}
	require.Equal(t, "allow", r.decision(), r.stdout)
	ui, _ := r.spec()["updatedInput"].(map[string]any)
	require.NotNil(t, ui, "the command is rewritten: %s", r.stdout)
	assert.Equal(t, "d", ui["description"], "the other fields stay")
	rewritten, _ := ui["command"].(string)
	bin, _ := hookBinary()
	core := filepath.Join(filepath.Dir(bin), hookwire.CoreName)
	require.True(t, strings.HasPrefix(rewritten, core+" exec -state "), "the line runs through the core: %s", rewritten)
	assert.Contains(t, r.out["systemMessage"], "tee out.txt", "the Notify obligation: a message the user sees")

	// A checkpoint of what the line may write was taken.
	cp, err := checkpoint.New(t.Context(), w.ws, nil)
	require.NoError(t, err)
	list, err := cp.List(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, []string{"out.txt"}, list[0].Paths, "scoped to the line's writable paths")

	sh := func(dir, cmdline string) (int, string) {
		c := exec.Command("bash", "-c", cmdline)
		c.Dir = dir
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err)
		return 0, string(out)
	}
	code, out := sh(w.ws, rewritten)
	require.Equal(t, 0, code, out)
	b, err := os.ReadFile(filepath.Join(w.ws, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(b))

	// The ticket is for that line in that directory only.
	other := strings.Replace(rewritten, "tee out.txt", "tee ../escape.txt", 1)
	code, out = sh(w.ws, other)
	assert.Equal(t, 126, code, out)
	assert.Contains(t, out, "issued for another command line")
	code, out = sh(filepath.Join(w.ws, "src"), rewritten)
	assert.Equal(t, 126, code, out)
	assert.Contains(t, out, "issued for the directory")
}

// TestExecEnforcesTheTicket: a line run through exec can write only the ticket's writable paths
// and cannot read the state directory (its signing key), whatever the line does.
func TestExecEnforcesTheTicket(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, prepareState(w.state))
	h := &hook{stateDir: w.state}
	run := func(line string) result {
		tk, err := h.issue(ticket{Client: "claude", Session: w.session, Project: w.ws, Dir: w.ws, Line: lineHash(line),
			Writable: []string{filepath.Join(w.ws, "allowed.txt")}}, []string{w.state})
		require.NoError(t, err)
		return w.binary(w.ws, "", nil, "exec", "-state", w.state, "-ticket", tk, "--", "bash", "-c", line)
	}
	r := run("echo ok > allowed.txt")
	if r.code == 127 {
		testenv.Missing(t, "the hardened sandbox cannot run here: %s", r.stderr)
	}
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(filepath.Join(w.ws, "allowed.txt"))
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(b), "the ticket's writable path is writable")

	for _, line := range []string{
		"echo x > other.txt",
		"cd src && echo x > ../other.txt",
		"cat " + shellQuote(filepath.Join(w.state, "exec.key")) + " | base64",
		"cat " + shellQuote(filepath.Dir(w.state)) + "/st*/exec.key | base64",
	} {
		r := run(line)
		assert.NotEqual(t, 0, r.code, "%s: %s", line, r.stderr)
		assert.NoFileExists(t, filepath.Join(w.ws, "other.txt"), "nothing but the ticket's paths is writable: %s", line)
		assert.Empty(t, strings.TrimSpace(r.stdout), "the signing key is not readable in the sandbox: %s", line)
	}
	line := "echo ok > allowed.txt"
	tk, err := h.issue(ticket{Client: "claude", Session: w.session, Project: w.ws, Dir: w.ws, Line: lineHash(line)}, []string{w.state})
	require.NoError(t, err)

	// A forged ticket does nothing.
	forged := tk[:len(tk)-4] + "AAAA"
	r = w.binary(w.ws, "", nil, "exec", "-state", w.state, "-ticket", forged, "--", "bash", "-c", line)
	assert.Equal(t, 126, r.code)
	assert.Contains(t, r.stderr, "signature")
}

// TestBinaryLoadsProfilesThroughTheLoader: the built hook loads the profiles through
// reins-hook-load on a cache miss, reuses the cache while the files keep their identity, blocks
// with the file's error when a file does not load, and blocks, naming the program, when
// reins-hook-load is missing.
func TestBinaryLoadsProfilesThroughTheLoader(t *testing.T) {
	w := newWorld(t).dev()
	read := w.claude("PreToolUse", "Read", "l1", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil)
	r := w.binary(w.ws, read, nil, "claude", "-state", w.state)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "allow", r.decision())
	bash := w.claude("PreToolUse", "Bash", "l2", map[string]any{"command": "rm -rf src"}, nil)
	r = w.binary(w.ws, bash, nil, "claude", "-state", w.state)
	assert.Equal(t, "ask", r.decision(), "PROFILE-DEV, from the cache: %s", r.stdout)

	w.profile(`{"active_profile": "PROFILE-DEV", "oops": 1}`)
	r = w.binary(w.ws, read, nil, "claude", "-state", w.state)
	assert.Equal(t, exitBlock, r.code, "a profile file that does not load blocks")
	assert.Contains(t, r.stderr, "oops")
	assert.Empty(t, r.stdout)

	// A copy of the hook without reins-hook-load beside it.
	bin, err := hookBinary()
	require.NoError(t, err)
	aloneDir := t.TempDir()
	for _, name := range []string{"reins-hook", hookwire.CoreName} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(bin), name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(aloneDir, name), b, 0o755))
	}
	alone := filepath.Join(aloneDir, "reins-hook")
	w.profile(`{"active_profile": "PROFILE-DEV"}`)
	cmd := exec.Command(alone, "claude", "-state", w.state)
	cmd.Dir, cmd.Stdin = w.ws, strings.NewReader(read)
	out, err := cmd.Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitBlock, ee.ExitCode())
	assert.Empty(t, out)
	assert.Contains(t, string(ee.Stderr), loaderName)
}
