package mcpgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/examples/mcpgo"
	"github.com/reins-go/reins/host"
	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// fixture is an mcp-go server with file tools, governed by a run over a git workspace, and an
// in-process client of it: every call goes through mcp-go's own tools/call path.
type fixture struct {
	ws     string
	run    *host.Run
	srv    *server.MCPServer
	cli    *client.Client
	audit  *audit.Memory
	called map[string]*atomic.Int32 // handler calls by tool
	// checkpointsSeen is how many checkpoints existed when write_file's handler ran.
	checkpointsSeen atomic.Int32
}

type setup struct {
	approver  reins.Approver
	untrusted bool // the server's annotations are not the host's (Options.TrustAnnotations false)
	elicit    client.ElicitationHandler
	tools     func(f *fixture) // extra tools, added before Govern
	specs     map[string]reins.ToolSpec
	outer     server.ToolHandlerMiddleware // added before Govern, so outside reins'
}

func newFixture(t *testing.T, st setup) *fixture {
	t.Helper()
	testenv.RequireTool(t, "git", "checkpoints are git snapshots (apt-get install git)")
	ctx := context.Background()
	f := &fixture{ws: t.TempDir(), audit: audit.NewMemory(0), called: map[string]*atomic.Int32{}}
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, "README.md"), []byte("hello from the workspace\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".env"), []byte("SECRET=canary-6f1d\n"), 0o600))
	out, err := exec.Command("git", "-C", f.ws, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)

	f.srv = server.NewMCPServer("files", "1.0.0", server.WithToolCapabilities(false), server.WithElicitation())
	approver := st.approver
	if st.elicit != nil {
		approver = mcpgo.Elicit(f.srv)
	}
	f.run, err = host.New(ctx, f.ws, profile.Dev, &host.Options{Approver: approver, Audit: f.audit,
		Logger: slog.New(slog.DiscardHandler), ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.run.Close() })

	f.addTool("read_file", mcp.NewTool("read_file", mcp.WithString("path", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := os.ReadFile(filepath.Join(f.ws, req.GetString("path", "")))
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(string(b)), nil
		})
	f.addTool("write_file", mcp.NewTool("write_file", mcp.WithString("path", mcp.Required()), mcp.WithString("content")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			list, err := f.run.Checkpointer.List(ctx)
			if err != nil {
				return nil, err
			}
			f.checkpointsSeen.Store(int32(len(list)))
			var in struct{ Path, Content string }
			if err := req.BindArguments(&in); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(f.ws, in.Path), []byte(in.Content), 0o644); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			if strings.Contains(in.Content, "FAIL") {
				return mcp.NewToolResultError("the tool failed after writing"), nil
			}
			return mcp.NewToolResultText("wrote " + in.Path), nil
		})
	f.addTool("delete_file", mcp.NewTool("delete_file", mcp.WithString("path", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := os.Remove(filepath.Join(f.ws, req.GetString("path", ""))); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText("deleted"), nil
		})
	if st.tools != nil {
		st.tools(f)
	}

	if st.outer != nil {
		f.srv.Use(st.outer)
	}
	specs := map[string]reins.ToolSpec{
		"read_file":   {Operation: policy.OpRead, Reads: []string{"path"}},
		"write_file":  {Operation: policy.OpWrite, Writes: []string{"path"}},
		"delete_file": {Operation: policy.OpDelete, Writes: []string{"path"}},
	}
	maps.Copy(specs, st.specs)
	g, err := mcpgo.Govern(f.srv, f.run, mcpgo.Options{TrustAnnotations: !st.untrusted, Specs: specs})
	require.NoError(t, err)
	f.srv.AddTool(g.Shell("bash", "Runs a bash command line in the workspace."))

	var opts []client.ClientOption
	if st.elicit != nil {
		opts = append(opts, client.WithElicitationHandler(st.elicit))
	}
	f.cli, err = client.NewInProcessClientWithOptions(f.srv, opts...)
	require.NoError(t, err)
	require.NoError(t, f.cli.Start(ctx))
	t.Cleanup(func() { _ = f.cli.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "reins-test", Version: "1"}
	if st.elicit != nil {
		init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
	}
	_, err = f.cli.Initialize(ctx, init)
	require.NoError(t, err)
	return f
}

func (f *fixture) addTool(name string, tool mcp.Tool, h server.ToolHandlerFunc) {
	n := &atomic.Int32{}
	f.called[name] = n
	f.srv.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n.Add(1)
		return h(ctx, req)
	})
}

func (f *fixture) calls(name string) int32 {
	if n := f.called[name]; n != nil {
		return n.Load()
	}
	return 0
}

// call calls a tool through the client, with args as the client sends them.
func (f *fixture) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := f.cli.CallTool(context.Background(), req)
	require.NoError(t, err, "a refusal is a tool result, never a protocol error")
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (f *fixture) records(kind audit.Kind, tool string) []audit.Record {
	var out []audit.Record
	for _, r := range f.audit.Records() {
		if r.Kind == kind && r.Tool == tool {
			out = append(out, r)
		}
	}
	return out
}

func yes(by string) reins.Approver {
	return reins.ApproverFunc(func(context.Context, reins.Request) (reins.Answer, error) {
		return reins.Answer{Verdict: policy.Allow, By: by}, nil
	})
}

func no(by string) reins.Approver {
	return reins.ApproverFunc(func(context.Context, reins.Request) (reins.Answer, error) {
		return reins.Answer{Verdict: policy.Deny, By: by}, nil
	})
}

func TestAllowRunsTheHandler(t *testing.T) {
	f := newFixture(t, setup{})
	res := f.call(t, "read_file", map[string]any{"path": "README.md"})
	assert.False(t, res.IsError, text(res))
	assert.Equal(t, "hello from the workspace\n", text(res))
	assert.EqualValues(t, 1, f.calls("read_file"))
	require.Len(t, f.records(audit.KindDecision, "read_file"), 1)
	assert.Equal(t, policy.Allow, f.records(audit.KindDecision, "read_file")[0].Decision)
}

// TestDenyIsAToolResult: a refusal reaches the model as the call's result, with IsError, the
// reason and the alternatives, never as a JSON-RPC error, and the handler never runs.
func TestDenyIsAToolResult(t *testing.T) {
	for name, c := range map[string]struct {
		tool string
		args any
		want []string
	}{
		"protected path": {"read_file", map[string]any{"path": ".env"}, []string{"reins denied this call of read_file", "protected"}},
		"outside the workspace": {"write_file", map[string]any{"path": "../escape.txt", "content": "x"},
			[]string{"reins denied this call of write_file"}},
		// mcp-go hands the handler both keys (GetString reads "path", a struct binding either):
		// the spec reads the input strictly and denies.
		"field in another case": {"read_file", map[string]any{"path": "README.md", "PATH": ".env"}, []string{`is also given as "PATH"`}},
		// Sent as raw JSON: the same field twice (encoding/json would hand the tool the last).
		"field given twice":         {"read_file", json.RawMessage(`{"path": "README.md", "path": ".env"}`), []string{"is given twice"}},
		"field of the wrong type":   {"read_file", map[string]any{"path": []any{1}}, []string{`field "path"`}},
		"network through the shell": {"bash", map[string]any{"command": "curl https://example.com"}, []string{"reins denied this call of bash"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, setup{}) // a hard stop latches the run: one run per case
			before := f.calls(c.tool)
			res := f.call(t, c.tool, c.args)
			require.True(t, res.IsError, text(res))
			for _, w := range c.want {
				assert.Contains(t, text(res), w)
			}
			assert.NotContains(t, text(res), "canary")
			assert.Equal(t, before, f.calls(c.tool), "the handler ran")
			require.NotNil(t, res.Meta)
			d, ok := res.Meta.AdditionalFields["reins/denial"].(map[string]any)
			require.True(t, ok, "the denial as data: %v", res.Meta.AdditionalFields)
			assert.NotEmpty(t, d["reason"])
			assert.NoFileExists(t, filepath.Join(filepath.Dir(f.ws), "escape.txt"))
		})
	}
}

// TestHardStopLatches: after a hard stop every call is refused, as a tool result, until the
// host resets the run.
func TestHardStopLatches(t *testing.T) {
	f := newFixture(t, setup{})
	res := f.call(t, "write_file", map[string]any{"path": "../escape.txt", "content": "x"})
	require.True(t, res.IsError, text(res))
	res = f.call(t, "read_file", map[string]any{"path": "README.md"})
	require.True(t, res.IsError, text(res))
	assert.Contains(t, text(res), "halted")
	assert.EqualValues(t, 0, f.calls("read_file"))

	require.NoError(t, f.run.Reset(context.Background(), "test: the operator looked"))
	res = f.call(t, "read_file", map[string]any{"path": "README.md"})
	require.False(t, res.IsError, text(res))
}

// TestHandlerReadsWhatWasDecided: the handler receives the arguments reins decided on, in both
// the forms mcp-go offers (GetString reads the decoded map, BindArguments the raw bytes), even
// when an outer middleware left the two disagreeing.
func TestHandlerReadsWhatWasDecided(t *testing.T) {
	f := newFixture(t, setup{outer: func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.RawArguments) == 0 {
				req.Params.RawArguments, _ = json.Marshal(req.Params.Arguments)
			}
			req.Params.Arguments = map[string]any{"path": ".env"} // the map says .env, the bytes README.md
			return next(ctx, req)
		}
	}})
	res := f.call(t, "read_file", map[string]any{"path": "README.md"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "hello from the workspace\n", text(res), "the handler read what reins decided on")
	d := f.records(audit.KindDecision, "read_file")
	require.Len(t, d, 1)
	assert.Equal(t, []string{"README.md"}, d[0].Targets)
}

// TestDenialCarriesAlternatives: the gate's alternatives reach the model in the message and
// as data.
func TestDenialCarriesAlternatives(t *testing.T) {
	f := newFixture(t, setup{tools: func(f *fixture) {
		f.addTool("fetch", mcp.NewTool("fetch", mcp.WithString("url", mcp.Required())),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("fetched"), nil
			})
	}, specs: map[string]reins.ToolSpec{"fetch": {Operation: policy.OpNetwork, Host: "url"}}})
	res := f.call(t, "fetch", map[string]any{"url": "https://example.com/x"})
	require.True(t, res.IsError, text(res))
	assert.EqualValues(t, 0, f.calls("fetch"))
	d := res.Meta.AdditionalFields["reins/denial"].(map[string]any)
	alts, _ := d["alternatives"].([]any)
	require.NotEmpty(t, alts, text(res))
	assert.Contains(t, text(res), "Instead, you could try: ")
	assert.Contains(t, text(res), alts[0])
	decisions := f.records(audit.KindDecision, "fetch")
	require.Len(t, decisions, 1)
	assert.Equal(t, "example.com", decisions[0].Host)
}

// TestConfirmAsksTheApprover: a delete is high risk under PROFILE-DEV, so the approver is asked;
// a yes runs the handler (after a checkpoint) and is recorded with who said it, a no is a
// denial the model reads.
func TestConfirmAsksTheApprover(t *testing.T) {
	t.Run("yes", func(t *testing.T) {
		f := newFixture(t, setup{approver: yes("alice")})
		res := f.call(t, "delete_file", map[string]any{"path": "README.md"})
		require.False(t, res.IsError, text(res))
		assert.EqualValues(t, 1, f.calls("delete_file"))
		_, err := os.Stat(filepath.Join(f.ws, "README.md"))
		assert.ErrorIs(t, err, os.ErrNotExist)
		appr := f.records(audit.KindApproval, "delete_file")
		require.Len(t, appr, 1)
		assert.Equal(t, "alice", appr[0].Approver)
		assert.Equal(t, policy.Allow, appr[0].Decision)
		list, err := f.run.Checkpointer.List(context.Background())
		require.NoError(t, err)
		assert.Len(t, list, 1, "a checkpoint before the delete")
	})
	t.Run("no", func(t *testing.T) {
		f := newFixture(t, setup{approver: no("bob")})
		res := f.call(t, "delete_file", map[string]any{"path": "README.md"})
		require.True(t, res.IsError, text(res))
		assert.Contains(t, text(res), "reins denied this call of delete_file")
		assert.EqualValues(t, 0, f.calls("delete_file"))
		assert.FileExists(t, filepath.Join(f.ws, "README.md"))
		appr := f.records(audit.KindApproval, "delete_file")
		require.Len(t, appr, 1)
		assert.Equal(t, "bob", appr[0].Approver)
	})
	t.Run("nobody to ask", func(t *testing.T) {
		f := newFixture(t, setup{})
		res := f.call(t, "delete_file", map[string]any{"path": "README.md"})
		require.True(t, res.IsError, text(res))
		assert.EqualValues(t, 0, f.calls("delete_file"))
	})
}

// TestElicitApprover: the client's user is asked through MCP elicitation, with a question that
// names the tool and the file; the answer is recorded as the client user's.
func TestElicitApprover(t *testing.T) {
	for name, c := range map[string]struct {
		answer *mcp.ElicitationResult
		ran    bool
	}{
		"accepted":              {&mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}, true},
		"accepted, not approve": {&mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": false}}}, false},
		"declined":              {&mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Value
			f := newFixture(t, setup{elicit: elicitFunc(func(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				asked.Store(req.Params.Message)
				return c.answer, nil
			})})
			res := f.call(t, "delete_file", map[string]any{"path": "README.md"})
			assert.Equal(t, !c.ran, res.IsError, text(res))
			assert.Equal(t, c.ran, f.calls("delete_file") == 1)
			q, _ := asked.Load().(string)
			assert.Contains(t, q, "delete_file")
			assert.Contains(t, q, `"README.md"`)
			appr := f.records(audit.KindApproval, "delete_file")
			require.Len(t, appr, 1)
			assert.Equal(t, mcpgo.ElicitedBy, appr[0].Approver)
			assert.Contains(t, appr[0].Note, string(c.answer.Action))
		})
	}
}

type elicitFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, req)
}

// TestCheckpointBeforeWrite: the write's checkpoint exists when the handler runs; a handler that
// reports a failure (IsError) has the workspace rolled back, and its result says so.
func TestCheckpointBeforeWrite(t *testing.T) {
	f := newFixture(t, setup{})
	res := f.call(t, "write_file", map[string]any{"path": "notes.txt", "content": "first\n"})
	require.False(t, res.IsError, text(res))
	assert.EqualValues(t, 1, f.checkpointsSeen.Load(), "the checkpoint is taken before the handler runs")
	got, err := os.ReadFile(filepath.Join(f.ws, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "first\n", string(got))

	res = f.call(t, "write_file", map[string]any{"path": "notes.txt", "content": "FAIL\n"})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "the tool failed after writing")
	assert.Contains(t, text(res), "rolled back")
	got, err = os.ReadFile(filepath.Join(f.ws, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "first\n", string(got), "the failed write was rolled back")
	out := f.records(audit.KindOutcome, "write_file")
	require.Len(t, out, 2)
	assert.Equal(t, audit.OutcomeSucceeded, out[0].Outcome)
	assert.Equal(t, audit.OutcomeRolledBack, out[1].Outcome)
}

// TestAnnotationsOnlyRaise: a tool without a spec is unknown (destructive: asked about) even
// when an untrusted server says it is read-only; only the host's own annotations describe it.
// An untrusted server's hints raise a spec'd tool (mcp.NewTool's defaults, destructive and
// open-world, included), while the defaults mcp.NewTool writes into the host's own tools do not
// override its spec.
func TestAnnotationsOnlyRaise(t *testing.T) {
	readOnly := []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false), mcp.WithString("q")}
	tools := map[string]mcp.Tool{
		"lookup": mcp.NewTool("lookup", readOnly...),
		// mcp.NewTool's defaults: readOnlyHint false, destructiveHint true, openWorldHint true.
		"read_default": mcp.NewTool("read_default", mcp.WithString("path")),
		// Says it destroys, and reaches nothing outside.
		"read_destructive": mcp.NewTool("read_destructive", mcp.WithDestructiveHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false), mcp.WithString("path")),
	}
	for name, c := range map[string]struct {
		untrusted bool
		tool      string
		args      map[string]any
		asked     bool // CONFIRM
		ran       bool
	}{
		"untrusted read-only hints leave a tool without a spec unknown": {true, "lookup", map[string]any{"q": "x"}, true, false},
		"trusted read-only hints describe a tool without a spec":        {false, "lookup", map[string]any{"q": "x"}, false, true},
		"untrusted default hints raise a read to network: denied":       {true, "read_default", map[string]any{"path": "README.md"}, false, false},
		"trusted default hints leave the spec as it is":                 {false, "read_default", map[string]any{"path": "README.md"}, false, true},
		"untrusted destructive hint raises a read: asked":               {true, "read_destructive", map[string]any{"path": "README.md"}, true, false},
	} {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Int32
			f := newFixture(t, setup{untrusted: c.untrusted, approver: reins.ApproverFunc(func(context.Context, reins.Request) (reins.Answer, error) {
				asked.Add(1)
				return reins.Answer{Verdict: policy.Deny, By: "test"}, nil
			}), tools: func(f *fixture) {
				for n, tl := range tools {
					f.addTool(n, tl, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return mcp.NewToolResultText("ran"), nil
					})
				}
			}, specs: map[string]reins.ToolSpec{
				"read_default":     {Operation: policy.OpRead, Reads: []string{"path"}},
				"read_destructive": {Operation: policy.OpRead, Reads: []string{"path"}},
			}})
			res := f.call(t, c.tool, c.args)
			assert.Equal(t, c.asked, asked.Load() == 1, text(res))
			assert.Equal(t, c.ran, !res.IsError, text(res))
			assert.Equal(t, c.ran, f.calls(c.tool) == 1)
		})
	}
}

// TestShellRunsThroughDoCommand: the shell tool's command line runs through Run.DoCommand (in
// the hardened sandbox, where this machine has it), its output is the result, a failing
// command is an IsError result, and the registered handler is never what runs it.
func TestShellRunsThroughDoCommand(t *testing.T) {
	f := newFixture(t, setup{approver: yes("carol")})
	if !f.run.Sandboxed {
		testenv.Missing(t, "the hardened sandbox is not available: %v", f.run.SandboxErr)
	}
	res := f.call(t, "bash", map[string]any{"command": "cat README.md"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "hello from the workspace\n", text(res))
	d := f.records(audit.KindDecision, "bash")
	require.Len(t, d, 1)
	assert.NotZero(t, d[0].Obligations&policy.Sandbox, "the allow carries the sandbox obligation: %+v", d[0])
	assert.Empty(t, f.records(audit.KindApproval, "bash"), "nobody was asked")

	res = f.call(t, "bash", map[string]any{"command": "ls no-such-file"})
	require.True(t, res.IsError, text(res))
	assert.Contains(t, text(res), "[exit status 2]")

	// A line the analysis cannot prove read-only is asked about; approved, it runs and its
	// write lands in the workspace.
	res = f.call(t, "bash", map[string]any{"command": "echo made > made.txt", "workdir": "."})
	require.False(t, res.IsError, text(res))
	assert.FileExists(t, filepath.Join(f.ws, "made.txt"))
}

// TestShellHandlerRefusesWithoutTheMiddleware: the shell tool's own handler fails closed.
func TestShellHandlerRefusesWithoutTheMiddleware(t *testing.T) {
	f := newFixture(t, setup{})
	g, err := mcpgo.Govern(server.NewMCPServer("other", "1"), f.run, mcpgo.Options{})
	require.NoError(t, err)
	_, h := g.Shell("bash", "")
	req := mcp.CallToolRequest{}
	req.Params.Name = "bash"
	req.Params.Arguments = map[string]any{"command": "touch pwned"}
	res, err := h(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.NoFileExists(t, filepath.Join(f.ws, "pwned"))
}

// TestTaskToolsAreHidden: a task tool's handler runs outside mcp-go's middleware, so a governed
// server neither lists nor runs it.
func TestTaskToolsAreHidden(t *testing.T) {
	var ran atomic.Int32
	f := newFixture(t, setup{tools: func(f *fixture) {
		f.srv.AddTaskTool(mcp.NewTool("slow_write", mcp.WithString("path")),
			func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
				ran.Add(1)
				return &mcp.CreateTaskResult{}, nil
			})
	}})
	list, err := f.cli.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"read_file", "write_file", "delete_file", "bash"}, names)
	req := mcp.CallToolRequest{}
	req.Params.Name = "slow_write"
	_, err = f.cli.CallTool(context.Background(), req)
	assert.Error(t, err)
	assert.EqualValues(t, 0, ran.Load())
}

// TestUnknownToolIsMcpGos: mcp-go rejects a tool it does not know before reins is asked.
func TestUnknownToolIsMcpGos(t *testing.T) {
	f := newFixture(t, setup{approver: yes("dave")})
	req := mcp.CallToolRequest{}
	req.Params.Name = "no_such_tool"
	_, err := f.cli.CallTool(context.Background(), req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found")
	assert.Empty(t, f.audit.Records())
}

func TestGovernRejectsBadInput(t *testing.T) {
	_, err := mcpgo.Govern(nil, nil, mcpgo.Options{})
	assert.Error(t, err)
	_, err = mcpgo.Govern(server.NewMCPServer("s", "1"), (*reins.Run)(nil), mcpgo.Options{})
	assert.Error(t, err)
	f := newFixture(t, setup{})
	_, err = mcpgo.Govern(server.NewMCPServer("s", "1"), f.run, mcpgo.Options{Specs: map[string]reins.ToolSpec{
		"x": {Operation: policy.OpRead, Reads: []string{"path", "path"}},
	}})
	assert.ErrorContains(t, err, "named twice")
}

// TestConcurrentCalls: calls served at once each pass the run (run with -race).
func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t, setup{})
	const n = 8
	results := make(chan *mcp.CallToolResult, 2*n)
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"read_file", map[string]any{"path": "README.md"}},
				{"write_file", map[string]any{"path": fmt.Sprintf("out-%d.txt", i), "content": "x"}},
			} {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = c.tool, c.args
				res, err := f.cli.CallTool(context.Background(), req)
				if err != nil {
					errs <- err
					continue
				}
				results <- res
			}
		})
	}
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	count := 0
	for res := range results {
		assert.False(t, res.IsError, text(res))
		count++
	}
	assert.Equal(t, 2*n, count)
	assert.EqualValues(t, n, f.calls("read_file"))
	assert.EqualValues(t, n, f.calls("write_file"))
	assert.Len(t, f.records(audit.KindDecision, "write_file"), n)
}
