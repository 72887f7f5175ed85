package reins_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
)

type pathArgs struct {
	Path string `json:"path"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

var (
	readSpec  = reins.ToolSpec{Tool: "read_file", Operation: policy.OpRead, Reads: []string{"path"}}
	writeSpec = reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{"path"}}
)

// writeTool is a write tool over ws that counts its calls.
func writeTool(ws string, calls *int) func(context.Context, writeArgs) (string, error) {
	return func(_ context.Context, in writeArgs) (string, error) {
		*calls++
		return "wrote " + in.Path, os.WriteFile(filepath.Join(ws, in.Path), []byte(in.Content), 0o644)
	}
}

func decisionsOf(m *audit.Memory) []audit.Record {
	var out []audit.Record
	for _, r := range m.Records() {
		if r.Kind == audit.KindDecision {
			out = append(out, r)
		}
	}
	return out
}

func TestGuardAllowsAndRecords(t *testing.T) {
	f := newPlain(t, profile.Dev.Profile(), nil)
	read := reins.Guard(f.r, readSpec, func(_ context.Context, in pathArgs) (string, error) {
		b, err := os.ReadFile(filepath.Join(f.ws, in.Path))
		return string(b), err
	}, reins.Denial.Message)
	out, err := read(context.Background(), pathArgs{Path: "README.md"})
	require.NoError(t, err)
	assert.Equal(t, "x\n", out)
	ds := decisionsOf(f.sink)
	require.Len(t, ds, 1)
	assert.Equal(t, "read_file", ds[0].Tool)
	assert.Equal(t, []string{"README.md"}, ds[0].Targets)
	assert.Equal(t, policy.Allow, ds[0].Decision)
	assert.JSONEq(t, `{"path":"README.md"}`, ds[0].Input)
}

// TestGuardDenialIsAMessageForTheModel: a refusal becomes the denied output with a nil error
// (the model reads it as the tool's result), or, without denied, the Go refusal; the tool never
// runs.
func TestGuardDenialIsAMessageForTheModel(t *testing.T) {
	f := newPlain(t, profile.Dev.Profile(), nil)
	calls := 0
	write := reins.Guard(f.r, writeSpec, writeTool(f.ws, &calls), reins.Denial.Message)
	out, err := write(context.Background(), writeArgs{Path: ".env", Content: "TOKEN=x"})
	require.NoError(t, err, "a denial is the model's to read, not a Go error")
	assert.Contains(t, out, "reins denied this call of write_file; it did not run")
	assert.Contains(t, out, `target ".env" is protected`)
	assert.Equal(t, 0, calls)
	assert.NoFileExists(t, filepath.Join(f.ws, ".env"))

	plain := reins.Guard(f.r, writeSpec, writeTool(f.ws, &calls), nil)
	out, err = plain(context.Background(), writeArgs{Path: ".env"})
	require.ErrorIs(t, err, gate.ErrDenied)
	de, ok := errors.AsType[*gate.DeniedError](err)
	require.True(t, ok)
	assert.Equal(t, gate.CheckProtectedPath, de.Decision.RuleID)
	assert.Empty(t, out)
	assert.Equal(t, 0, calls)
}

// TestGuardDenialCarriesTheAlternatives: the ways forward the engine knows reach the model.
func TestGuardDenialCarriesTheAlternatives(t *testing.T) {
	f := newPlain(t, profile.Dev.Profile(), nil)
	fetch := reins.Guard(f.r, reins.ToolSpec{Tool: "fetch", Operation: policy.OpNetwork, Host: "url"},
		func(context.Context, json.RawMessage) (string, error) { return "page", nil }, reins.Denial.Message)
	out, err := fetch(context.Background(), json.RawMessage(`{"url":"https://example.com/x"}`))
	require.NoError(t, err)
	assert.Contains(t, out, "reins denied this call of fetch")
	assert.Contains(t, out, "PROFILE-DEV reaches AI APIs and package managers only")
	assert.Contains(t, out, "Instead, you could try: under profile")
	ds := decisionsOf(f.sink)
	require.Len(t, ds, 1)
	assert.Equal(t, "example.com", ds[0].Host)
}

func TestGuardConfirmGoesToTheApprover(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer reins.Answer
		ran    bool
	}{
		{"approved", reins.Answer{Verdict: policy.Allow, By: "alice", Scope: reins.Once}, true},
		{"refused", reins.Answer{Verdict: policy.Deny, By: "alice", Note: "not now"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{answers: []reins.Answer{tc.answer}}
			f := newPlain(t, profile.Supervised.Profile(), func(o *reins.Options) { o.Approver = s })
			ran := false
			fetch := reins.Guard(f.r, reins.ToolSpec{Tool: "fetch", Operation: policy.OpNetwork, Host: reins.WholeInput},
				func(context.Context, string) (string, error) { ran = true; return "page", nil }, reins.Denial.Message)
			out, err := fetch(context.Background(), "example.com")
			require.NoError(t, err)
			assert.Equal(t, tc.ran, ran)
			require.Equal(t, 1, s.count())
			assert.Equal(t, "example.com", s.asked[0].Action.Host, "the approver sees what the call does")
			var approvals []audit.Record
			for _, r := range f.sink.Records() {
				if r.Kind == audit.KindApproval {
					approvals = append(approvals, r)
				}
			}
			require.Len(t, approvals, 1)
			assert.Equal(t, "alice", approvals[0].Approver)
			if tc.ran {
				assert.Equal(t, "page", out)
				assert.Equal(t, "once", approvals[0].ApprovalScope)
			} else {
				assert.Contains(t, out, "the user did not approve: not now")
			}
		})
	}
}

// TestGuardCarriesOutTheObligations: a write under PROFILE-DEV is checkpointed and notified
// before it runs; a failing tool is rolled back, and its error stays the tool's (an
// *ActionError, never a denial message).
func TestGuardCarriesOutTheObligations(t *testing.T) {
	f := newFixture(t, profile.Dev.Name(), nil)
	ctx := context.Background()
	calls := 0
	write := reins.Guard(f.r, writeSpec, writeTool(f.ws, &calls), reins.Denial.Message)
	out, err := write(ctx, writeArgs{Path: "notes.txt", Content: "hello"})
	require.NoError(t, err)
	assert.Equal(t, "wrote notes.txt", out)
	assert.Contains(t, f.kinds(), audit.KindCheckpointCreated)
	require.Len(t, f.notices(), 1)
	assert.Equal(t, "write_file", f.notices()[0].Action.Tool)

	toolErr := errors.New("disk full")
	failing := reins.Guard(f.r, writeSpec, func(_ context.Context, in writeArgs) (string, error) {
		require.NoError(t, os.WriteFile(filepath.Join(f.ws, in.Path), []byte("half"), 0o644))
		return "partial", toolErr
	}, func(reins.Denial) string { t.Error("a tool error is not a denial"); return "" })
	out, err = failing(ctx, writeArgs{Path: "main.go"})
	require.Error(t, err)
	assert.Equal(t, "partial", out, "the tool's own output is kept")
	ae, ok := errors.AsType[*reins.ActionError](err)
	require.True(t, ok, "%T", err)
	assert.True(t, ae.RolledBack)
	assert.ErrorIs(t, err, toolErr)
	assert.NotErrorIs(t, err, gate.ErrDenied)
	b, err := os.ReadFile(filepath.Join(f.ws, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, "package main\n", string(b), "rolled back")
}

// TestGuardToolErrorThatIsADenialStaysTheToolsError: a tool that itself went through a gate
// and was refused failed; the model is not told that reins refused this call.
func TestGuardToolErrorThatIsADenialStaysTheToolsError(t *testing.T) {
	f := newPlain(t, profile.Dev.Profile(), nil)
	inner := &gate.DeniedError{Decision: gate.Decision{Verdict: policy.Deny, Reason: "inner"}}
	read := reins.Guard(f.r, readSpec, func(context.Context, pathArgs) (string, error) { return "", inner },
		func(reins.Denial) string { return "DENIED" })
	out, err := read(context.Background(), pathArgs{Path: "README.md"})
	require.Error(t, err)
	assert.NotEqual(t, "DENIED", out)
	assert.NotErrorIs(t, err, gate.ErrDenied)
	_, isDenial := reins.DenialOf("read_file", err)
	assert.False(t, isDenial)
	ae, ok := errors.AsType[*reins.ActionError](err)
	require.True(t, ok)
	assert.Same(t, inner, ae.Err)
}

// TestGuardDeniesInputItCannotRead: strict decoding through the middleware: the call is
// denied, recorded as a decision of the input layer, and the tool never runs.
func TestGuardDeniesInputItCannotRead(t *testing.T) {
	for name, input := range map[string]string{
		"a number for the path":    `{"path":42,"content":"x"}`,
		"the path in another case": `{"path":"notes.txt","PATH":".env"}`,
		"the path given twice":     `{"path":"notes.txt","path":".env"}`,
		"not an object":            `[".env"]`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newPlain(t, profile.Dev.Profile(), nil)
			calls := 0
			write := reins.Guard(f.r, writeSpec, func(context.Context, json.RawMessage) (string, error) { calls++; return "", nil }, reins.Denial.Message)
			out, err := write(context.Background(), json.RawMessage(input))
			require.NoError(t, err)
			assert.Contains(t, out, "reins denied this call of write_file")
			assert.Contains(t, out, "input")
			assert.Equal(t, 0, calls)
			ds := decisionsOf(f.sink)
			require.Len(t, ds, 1)
			assert.Equal(t, policy.Deny, ds[0].Decision)
			assert.Equal(t, policy.LayerInput, ds[0].Layer)
			assert.Equal(t, reins.CheckToolInput, ds[0].RuleMatched)
		})
	}
}

// TestGuardAnnotationsThroughTheRun: an untrusted server's readOnlyHint does not let an
// undescribed tool run without asking; the host's own (trusted) annotation does.
func TestGuardAnnotationsThroughTheRun(t *testing.T) {
	ro := &reins.ToolAnnotations{ReadOnlyHint: yes(), OpenWorldHint: no()}
	for _, tc := range []struct {
		name    string
		trusted bool
		want    policy.Verdict
	}{
		{"untrusted", false, policy.Deny}, // unknown: destructive, which supervised denies
		{"trusted", true, policy.Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPlain(t, profile.Supervised.Profile(), nil)
			ran := false
			search := reins.Guard(f.r, reins.ToolSpec{Tool: "mcp__docs__search", Annotations: ro, TrustAnnotations: tc.trusted},
				func(context.Context, json.RawMessage) (string, error) { ran = true; return "hits", nil }, reins.Denial.Message)
			_, err := search(context.Background(), json.RawMessage(`{"q":"x"}`))
			require.NoError(t, err)
			ds := decisionsOf(f.sink)
			require.Len(t, ds, 1)
			assert.Equal(t, tc.want, ds[0].Decision, ds[0].Reason)
			assert.Equal(t, tc.want == policy.Allow, ran)
		})
	}
}

func TestGuardParkedCall(t *testing.T) {
	f := newPlain(t, profile.Supervised.Profile(), func(o *reins.Options) { o.Headless = reins.HeadlessPark })
	write := reins.Guard(f.r, writeSpec, func(context.Context, writeArgs) (string, error) { return "ran", nil }, reins.Denial.Message)
	out, err := write(context.Background(), writeArgs{Path: "notes.txt"})
	require.NoError(t, err)
	assert.Contains(t, out, "waits for a human's review (parked as parked-1)")
	_, err = reins.Guard(f.r, writeSpec, func(context.Context, writeArgs) (string, error) { return "ran", nil }, nil)(context.Background(), writeArgs{Path: "b.txt"})
	assert.ErrorIs(t, err, reins.ErrParked)
	d, ok := reins.DenialOf("write_file", err)
	require.True(t, ok)
	assert.Equal(t, "parked-2", d.Parked)
}

func TestGuardPanicsOnASpecThatReadsNothing(t *testing.T) {
	f := newPlain(t, profile.Dev.Profile(), nil)
	noop := func(context.Context, writeArgs) (string, error) { return "", nil }
	assert.PanicsWithValue(t, `reins: Guard: tool spec "write_file" names field "file", which reins_test.writeArgs does not have`, func() {
		reins.Guard(f.r, reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{"file"}}, noop, nil)
	})
	assert.Panics(t, func() {
		reins.Guard(f.r, reins.ToolSpec{Tool: "x", Operation: policy.OpRead, Reads: []string{reins.WholeInput}}, noop, nil)
	})
	assert.Panics(t, func() { reins.Guard(f.r, reins.ToolSpec{Tool: "x", Operation: policy.OpRead, Command: "c"}, noop, nil) })
	assert.Panics(t, func() { reins.Guard[writeArgs, string](nil, writeSpec, noop, nil) })
	assert.Panics(t, func() {
		reins.GuardCommand[string](f.r, reins.ToolSpec{Tool: "bash"}, reins.CommandOutput, nil)
	})
}

// TestGuardCommandRunsThroughDoCommand: a shell tool's line runs in the run's runner (here the
// plain one, the analysis trusted); a failing line keeps its output and is the tool's error; a
// denied line never runs.
func TestGuardCommandRunsThroughDoCommand(t *testing.T) {
	f := newFixture(t, profile.Dev.Name(), func(o *reins.Options) {
		local, err := sandbox.NewLocal(sandbox.LocalConfig{Root: o.Workspace[0], Scripts: shellanalysis.Read})
		require.NoError(t, err)
		o.Sandbox = local
	})
	ctx := context.Background()
	bash := reins.GuardCommand[json.RawMessage](f.r, reins.ToolSpec{Tool: "bash", Command: "command", WorkDir: "cwd"},
		reins.CommandOutput, reins.Denial.Message)
	out, err := bash(ctx, json.RawMessage(`{"command":"cat main.go","cwd":"."}`))
	require.NoError(t, err)
	assert.Equal(t, "package main\n", out)

	out, err = bash(ctx, json.RawMessage(`{"command":"grep -r nothing-matches-this docs"}`))
	require.Error(t, err)
	assert.Contains(t, out, "[exit status 1]")
	ce, ok := errors.AsType[*reins.CommandError](err)
	require.True(t, ok, "%T: %v", err, err)
	assert.Equal(t, 1, ce.Result.ExitCode)

	out, err = bash(ctx, json.RawMessage(`{"command":"cat .env"}`))
	require.NoError(t, err)
	assert.Contains(t, out, "reins denied this call of bash")

	s := reins.GuardCommand[string](f.r, reins.ToolSpec{Tool: "sh", Command: reins.WholeInput},
		func(r sandbox.Result) int { return r.ExitCode }, nil)
	code, err := s(ctx, "true")
	require.NoError(t, err)
	assert.Equal(t, 0, code)
}
