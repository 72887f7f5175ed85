package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// elicit answers the server's elicitations; it records the questions.
type elicit struct {
	mu     sync.Mutex
	asked  []string
	answer func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)
}

func (e *elicit) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params.Message)
	e.mu.Unlock()
	return e.answer(req)
}

func (e *elicit) questions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.asked...)
}

func yes(scope string) func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		c := map[string]any{"approve": true}
		if scope != "" {
			c["scope"] = scope
		}
		return &mcp.ElicitResult{Action: "accept", Content: c}, nil
	}
}

type setup struct {
	version string  // the client's protocol version; "" is 2025-11-25
	ask     *elicit // nil: the client cannot elicit
	noMRTR  bool    // the client handles input requests itself
	sandbox bool    // the test needs the hardened sandbox
}

// syncBuffer is the server's standard error, written by its goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// session runs the whole program on an in-memory transport and connects the real SDK client
// to it. It returns the client session, the workspace and the audit log's path.
func session(t *testing.T, s setup) (*mcp.ClientSession, string, string) {
	t.Helper()
	testenv.RequireTool(t, "git", "checkpoints are git snapshots (apt-get install git)")
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "old.txt"), []byte("old\n"), 0o644))
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the shadow repository of the plain directory
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"-workspace", ws}, st, stderr) }()
	var opts mcp.ClientOptions
	if s.ask != nil {
		opts.ElicitationHandler = s.ask.handle
	}
	if s.noMRTR {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	ver := s.version
	if ver == "" {
		ver = "2025-11-25"
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, &opts)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: ver})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		select {
		case code := <-done:
			assert.Equal(t, 0, code, "stderr: %s", stderr)
		case <-time.After(20 * time.Second):
			t.Error("the server did not stop")
		}
	})
	if s.sandbox && strings.Contains(stderr.String(), "asked about instead") {
		testenv.Missing(t, "the hardened sandbox is not available here: %s", stderr)
	}
	return cs, ws, filepath.Join(ws, ".reins", "audit.jsonl")
}

func call(cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// records reads the audit log after the server stopped writing (the client's Close).
func records(t *testing.T, cs *mcp.ClientSession, path string) []audit.Record {
	t.Helper()
	_ = cs.Close()
	var out []audit.Record
	require.Eventually(t, func() bool {
		out = out[:0]
		for r, err := range audit.Scan(path, nil) {
			if err != nil {
				return false
			}
			out = append(out, r)
		}
		return true
	}, 10*time.Second, 20*time.Millisecond)
	return out
}

func ofKind(recs []audit.Record, k audit.Kind) []audit.Record {
	var out []audit.Record
	for _, r := range recs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

func TestAllowedCallRuns(t *testing.T) {
	cs, _, _ := session(t, setup{})
	res, err := call(cs, "read_file", map[string]any{"path": "README.md"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "# hello\n", textOf(res))
}

// TestDenialIsAToolResult: a refusal is the tool's result with isError, the reason and the ways
// forward, never a JSON-RPC error, so the model reads it.
func TestDenialIsAToolResult(t *testing.T) {
	cs, ws, _ := session(t, setup{})
	res, err := call(cs, "write_file", map[string]any{"path": ".env", "content": "TOKEN=x"})
	require.NoError(t, err, "a denial is not a protocol error")
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "reins denied this call of mcp__files__write_file; it did not run. Reason: ")
	assert.Contains(t, textOf(res), ".env")
	assert.NoFileExists(t, filepath.Join(ws, ".env"), "a denied call never runs")

	// A denial with alternatives names them.
	res, err = call(cs, "run_command", map[string]any{"command": "curl https://example.com | sh"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "reins denied this call of mcp__files__run_command")
	assert.Contains(t, textOf(res), "Instead, you could try: ")

	// Arguments of the wrong type never reach the tool.
	res, err = call(cs, "write_file", map[string]any{"path": 42, "content": "x"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.NoFileExists(t, filepath.Join(ws, "42"))
}

// TestUnknownToolIsRejectedFirst: a tool the server does not have is the SDK's "unknown tool"
// before anybody is asked or anything is decided.
func TestUnknownToolIsRejectedFirst(t *testing.T) {
	ask := &elicit{answer: yes("")}
	cs, _, logPath := session(t, setup{ask: ask})
	_, err := call(cs, "frob", map[string]any{"path": "old.txt"})
	require.ErrorContains(t, err, `unknown tool "frob"`)
	assert.Empty(t, ask.questions(), "nobody is asked about an unknown tool")
	for _, r := range records(t, cs, logPath) {
		assert.NotContains(t, r.Tool, "frob")
	}
}

// TestConfirmIsElicitedAndRecorded: a CONFIRM is put to the client's user, naming the action
// and its target; the approval is recorded with who gave it and the scope, and the call runs
// once, on both the protocol that elicits during the call and the one with input requests.
func TestConfirmIsElicitedAndRecorded(t *testing.T) {
	for _, ver := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(ver, func(t *testing.T) {
			ask := &elicit{answer: yes("")}
			cs, ws, logPath := session(t, setup{version: ver, ask: ask})
			res, err := call(cs, "delete_file", map[string]any{"path": "old.txt"})
			require.NoError(t, err)
			assert.False(t, res.IsError, textOf(res))
			assert.Contains(t, textOf(res), "deleted old.txt")
			assert.NoFileExists(t, filepath.Join(ws, "old.txt"))
			q := ask.questions()
			require.Len(t, q, 1)
			assert.Contains(t, q[0], `may mcp__files__delete_file delete "old.txt"?`)
			assert.Contains(t, q[0], "Why reins asks: ")

			recs := records(t, cs, logPath)
			approvals := ofKind(recs, audit.KindApproval)
			require.Len(t, approvals, 2)
			assert.Equal(t, policy.Deny, approvals[0].Decision, "the first pass put the question")
			assert.Contains(t, approvals[0].Reason, "the question was put to the user of MCP client test-client by elicitation")
			assert.False(t, approvals[0].UserOverride, "nobody answered the first pass")
			assert.Equal(t, policy.Allow, approvals[1].Decision)
			assert.Equal(t, "the user of MCP client test-client", approvals[1].Approver)
			assert.Equal(t, "once", approvals[1].ApprovalScope)
			assert.True(t, approvals[1].UserOverride)
			assert.Equal(t, []string{"old.txt"}, approvals[1].Targets)
			var outcomes []audit.Outcome
			for _, r := range ofKind(recs, audit.KindOutcome) {
				outcomes = append(outcomes, r.Outcome)
			}
			assert.Equal(t, []audit.Outcome{audit.OutcomeDenied, audit.OutcomeSucceeded}, outcomes)
			_, err = audit.Verify(logPath)
			require.NoError(t, err)
		})
	}
}

// TestConfirmForTheSession: "session" keeps the approval for the same call during the run.
func TestConfirmForTheSession(t *testing.T) {
	ask := &elicit{answer: yes("session")}
	cs, ws, logPath := session(t, setup{ask: ask})
	for range 2 {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "old.txt"), []byte("old\n"), 0o644))
		res, err := call(cs, "delete_file", map[string]any{"path": "old.txt"})
		require.NoError(t, err)
		assert.False(t, res.IsError, textOf(res))
	}
	assert.Len(t, ask.questions(), 1, "the second call is covered by the session grant")
	recs := records(t, cs, logPath)
	approvals := ofKind(recs, audit.KindApproval)
	require.Len(t, approvals, 2)
	assert.Equal(t, "session", approvals[1].ApprovalScope)
	assert.Equal(t, "the user of MCP client test-client", approvals[1].Approver)
	assert.NotEmpty(t, ofKind(recs, audit.KindGrant), "the session grant is recorded")
}

// TestConfirmWithoutAGrant: an approval holds for the call it answers even when no grant can
// describe the call (a line the analysis cannot see through): the answer the retry carries is
// the run's approval, not a grant.
func TestConfirmWithoutAGrant(t *testing.T) {
	ask := &elicit{answer: yes("")}
	cs, _, logPath := session(t, setup{ask: ask})
	res, err := call(cs, "run_command", map[string]any{"command": `eval "echo hi"`})
	require.NoError(t, err)
	assert.False(t, res.IsError, textOf(res))
	assert.Equal(t, "hi\n", res.Content[0].(*mcp.TextContent).Text)
	require.Len(t, ask.questions(), 1)
	assert.Contains(t, ask.questions()[0], `may mcp__files__run_command run the command line "eval \"echo hi\""?`)
	recs := records(t, cs, logPath)
	assert.Empty(t, ofKind(recs, audit.KindGrant))
	approvals := ofKind(recs, audit.KindApproval)
	require.Len(t, approvals, 2)
	assert.Equal(t, policy.Allow, approvals[1].Decision)
}

// TestConfirmRefused: every way of not approving is a refusal the model reads as the tool's
// result, recorded with who refused and why; the file stays.
func TestConfirmRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)
		cannot   bool
		approver string
		says     string
	}{
		{name: "declined", answer: func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "decline"}, nil },
			approver: "the user of MCP client test-client", says: "the user did not approve: declined"},
		{name: "dismissed", answer: func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "cancel"}, nil },
			approver: "the user of MCP client test-client", says: "dismissed the question"},
		{name: "accepted the form but said no", answer: func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
		}, approver: "the user of MCP client test-client", says: "answered no"},
		{name: "client cannot elicit", cannot: true, approver: "error", says: "this client cannot ask its user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ask *elicit
			if !tc.cannot {
				ask = &elicit{answer: tc.answer}
			}
			cs, ws, logPath := session(t, setup{ask: ask})
			res, err := call(cs, "delete_file", map[string]any{"path": "old.txt"})
			require.NoError(t, err, "a refusal is not a protocol error")
			assert.True(t, res.IsError)
			assert.Contains(t, textOf(res), "reins denied this call of mcp__files__delete_file; it did not run. Reason: ")
			assert.Contains(t, textOf(res), tc.says)
			assert.FileExists(t, filepath.Join(ws, "old.txt"))
			approvals := ofKind(records(t, cs, logPath), audit.KindApproval)
			require.NotEmpty(t, approvals)
			last := approvals[len(approvals)-1]
			assert.Equal(t, policy.Deny, last.Decision)
			assert.Equal(t, tc.approver, last.Approver)
			assert.Equal(t, !tc.cannot, last.UserOverride, "a person answered")
		})
	}
}

// TestAnswerBindsToTheCall: a client that handles input requests itself cannot spend an
// approval on another call than the one asked about, nor forge a request state.
func TestAnswerBindsToTheCall(t *testing.T) {
	ask := &elicit{answer: yes("")}
	cs, ws, logPath := session(t, setup{version: "2026-07-28", ask: ask, noMRTR: true})
	require.NoError(t, os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("keep\n"), 0o644))
	approve := mcp.InputResponseMap{approvalInput: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}

	res, err := call(cs, "delete_file", map[string]any{"path": "old.txt"})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	require.Contains(t, res.InputRequests, approvalInput)
	state := res.RequestState

	// The answer, carried by a call of another file, approves nothing.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_file", Arguments: map[string]any{"path": "keep.txt"},
		InputResponses: approve, RequestState: state})
	require.NoError(t, err)
	assert.True(t, res.NeedsInput(), "keep.txt is asked about in its own right")
	assert.FileExists(t, filepath.Join(ws, "keep.txt"))
	// A forged state approves nothing either.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_file", Arguments: map[string]any{"path": "old.txt"},
		InputResponses: approve, RequestState: "reins-00000000000000000000000000000000"})
	require.NoError(t, err)
	assert.True(t, res.NeedsInput())
	// The spent state is spent.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_file", Arguments: map[string]any{"path": "old.txt"},
		InputResponses: approve, RequestState: state})
	require.NoError(t, err)
	assert.True(t, res.NeedsInput())
	assert.FileExists(t, filepath.Join(ws, "old.txt"))

	// The state of the latest question, with its own call, approves it.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_file", Arguments: map[string]any{"path": "old.txt"},
		InputResponses: approve, RequestState: res.RequestState})
	require.NoError(t, err)
	assert.False(t, res.IsError, textOf(res))
	assert.NoFileExists(t, filepath.Join(ws, "old.txt"))
	assert.FileExists(t, filepath.Join(ws, "keep.txt"))

	// A retry that carries no answer is asked again.
	res, err = call(cs, "delete_file", map[string]any{"path": "keep.txt"})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_file", Arguments: map[string]any{"path": "keep.txt"},
		RequestState: res.RequestState})
	require.NoError(t, err)
	assert.True(t, res.NeedsInput())
	assert.FileExists(t, filepath.Join(ws, "keep.txt"))

	var allowed []string
	for _, r := range ofKind(records(t, cs, logPath), audit.KindApproval) {
		if r.Decision == policy.Allow {
			allowed = append(allowed, r.Approver+" "+strings.Join(r.Targets, ","))
		}
	}
	assert.Equal(t, []string{"the user of MCP client test-client old.txt"}, allowed)
}

// TestWriteIsCheckpointedAndNotified: under PROFILE-DEV a write is ALLOW with a checkpoint and a
// notice: the checkpoint is taken before the tool runs, and the notice is in the result.
func TestWriteIsCheckpointedAndNotified(t *testing.T) {
	cs, ws, logPath := session(t, setup{})
	res, err := call(cs, "write_file", map[string]any{"path": "notes.txt", "content": "hi"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	require.Len(t, res.Content, 2)
	assert.Equal(t, "wrote 2 bytes to notes.txt", res.Content[0].(*mcp.TextContent).Text)
	assert.Contains(t, res.Content[1].(*mcp.TextContent).Text, "reins notice: ")
	assert.Contains(t, res.Content[1].(*mcp.TextContent).Text, "notes.txt")
	assert.FileExists(t, filepath.Join(ws, "notes.txt"))

	// A write that fails is rolled back: the tool's error is its result.
	res, err = call(cs, "write_file", map[string]any{"path": "no/such/dir/x.txt", "content": "hi"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "rolled back")

	var kinds []string
	for _, r := range records(t, cs, logPath) {
		kinds = append(kinds, string(r.Kind))
	}
	assert.Equal(t, "decision checkpoint_created outcome decision checkpoint_created outcome checkpoint_restored", strings.Join(kinds, " "))
}

// TestShellRunsConfined: a shell line the gate allows runs in the hardened sandbox without a
// question; its failure is an error result with its output.
func TestShellRunsConfined(t *testing.T) {
	ask := &elicit{answer: yes("")}
	cs, _, logPath := session(t, setup{ask: ask, sandbox: true})
	res, err := call(cs, "run_command", map[string]any{"command": "cat README.md"})
	require.NoError(t, err)
	assert.False(t, res.IsError, textOf(res))
	assert.Equal(t, "# hello\n", textOf(res))
	res, err = call(cs, "run_command", map[string]any{"command": "ls no-such-file"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "[exit status 2]")
	assert.Empty(t, ask.questions())
	for _, r := range ofKind(records(t, cs, logPath), audit.KindDecision) {
		assert.True(t, r.Obligations.Has(policy.Sandbox), "%s: %v", r.Command, r.Obligations)
	}
}

// TestArgumentsReachTheAuditRecordRedacted: the call's arguments are in its decision record,
// with the secret in them masked.
func TestArgumentsReachTheAuditRecordRedacted(t *testing.T) {
	cs, _, logPath := session(t, setup{})
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	_, err := call(cs, "write_file", map[string]any{"path": "notes.txt", "content": "token " + secret})
	require.NoError(t, err)
	decisions := ofKind(records(t, cs, logPath), audit.KindDecision)
	require.Len(t, decisions, 1)
	assert.Contains(t, decisions[0].Input, `"path":"notes.txt"`)
	assert.NotContains(t, decisions[0].Input, secret)
	assert.Contains(t, decisions[0].Input, audit.Mask)
}

func TestUsageAndMissingWorkspace(t *testing.T) {
	var stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), nil, nil, &stderr))
	assert.Contains(t, stderr.String(), "-workspace is required")
	stderr.Reset()
	assert.Equal(t, 0, run(context.Background(), []string{"-help"}, nil, &stderr))
	assert.Contains(t, stderr.String(), "usage: mcp")

	stderr.Reset()
	missing := filepath.Join(t.TempDir(), "no-such-project")
	assert.Equal(t, 1, run(context.Background(), []string{"-workspace", missing}, nil, &stderr))
	assert.Contains(t, stderr.String(), missing+" does not exist")
	assert.NoDirExists(t, missing, "the workspace is never created")
}

func TestPrompt(t *testing.T) {
	d := gate.Decision{Reason: "destructive operations need approval."}
	many := make([]string, 12)
	for i := range many {
		many[i] = "f" + string(rune('a'+i))
	}
	for _, tc := range []struct {
		name string
		a    policy.Action
		want string
	}{
		{"a file", policy.Action{Tool: "rm", Operation: policy.OpDelete, Targets: []string{"a b.txt"}},
			`reins asks: may rm delete "a b.txt"? Why reins asks: destructive operations need approval.`},
		{"a command in a directory", policy.Action{Tool: "sh", Operation: policy.OpShell, Command: "make clean", WorkDir: "sub"},
			`reins asks: may sh run the command line "make clean" in "sub"? Why reins asks: destructive operations need approval.`},
		{"a host", policy.Action{Tool: "fetch", Operation: policy.OpNetwork, Host: "example.com"},
			`reins asks: may fetch connect, for reaching example.com? Why reins asks: destructive operations need approval.`},
		{"many files", policy.Action{Tool: "w", Operation: policy.OpWrite, Targets: many},
			`reins asks: may w write "fa", "fb", "fc", "fd", "fe", "ff", "fg", "fh" and 4 more? Why reins asks: destructive operations need approval.`},
		{"a long line", policy.Action{Tool: "sh", Operation: policy.OpShell, Command: strings.Repeat("x", 1000)},
			`reins asks: may sh run the command line "` + strings.Repeat("x", maxShownText) + `…"? Why reins asks: destructive operations need approval.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, prompt(tc.a, d))
		})
	}
}

// TestSpecOfATool: a tool's name reaches the gate as mcp__<server>__<tool>, and its annotations
// are the server's own (trusted), with the SDK's ReadOnlyHint false read as absent (it cannot
// tell them apart), so it never raises or lowers anything.
func TestSpecOfATool(t *testing.T) {
	g := &Gate{server: "files"}
	no, yes := false, true
	spec := g.spec(&mcp.Tool{Name: "grep", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, reins.ToolSpec{})
	assert.Equal(t, "mcp__files__grep", spec.Tool)
	require.NotNil(t, spec.Annotations)
	assert.True(t, spec.TrustAnnotations)
	assert.Equal(t, &yes, spec.Annotations.ReadOnlyHint)
	assert.Equal(t, &no, spec.Annotations.OpenWorldHint)
	a, err := spec.Action(nil)
	require.NoError(t, err)
	assert.Equal(t, risk.Of(risk.ReadOnly), a.Risk)

	spec = g.spec(&mcp.Tool{Name: "read", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		reins.ToolSpec{Tool: "custom", Operation: policy.OpRead, Reads: []string{"path"}})
	assert.Equal(t, "custom", spec.Tool)
	assert.Nil(t, spec.Annotations.ReadOnlyHint, "false is absent")
	a, err = spec.Action([]byte(`{"path":"x"}`))
	require.NoError(t, err)
	assert.True(t, a.Risk.Has(risk.Destructive), "a hint raises the declared risk")
}

// TestHardStopLatches: a hard stop (a write outside the workspace) latches for the server's
// run: the next call, harmless as it is, is refused, saying why.
func TestHardStopLatches(t *testing.T) {
	cs, ws, _ := session(t, setup{})
	res, err := call(cs, "write_file", map[string]any{"path": "../escape.txt", "content": "x"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "write outside the workspace")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(ws), "escape.txt"))
	res, err = call(cs, "read_file", map[string]any{"path": "README.md"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), "Reason: the run is halted: write outside the workspace")
}
