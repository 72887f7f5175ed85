package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// Options describe a server's tools to Govern.
type Options struct {
	// Specs describe the server's tools by the name they are registered under: which input
	// fields hold the paths a tool reads and writes, the host it reaches, its operation and risk
	// (see reins.ToolSpec). A spec's Tool, when empty, is the tool's name. A tool without a spec
	// is decided as an unknown tool (destructive), raised further by its annotations. A spec
	// that names a Command field makes the tool a shell tool: see Governor.Shell.
	Specs map[string]reins.ToolSpec
	// TrustAnnotations says that the tools' MCP annotations are the host's own (it wrote them),
	// so that they may describe a tool without a spec (reins.ToolSpec.TrustAnnotations). Leave
	// it false for a server that registers tools it does not control (a proxy of other
	// servers' tools): their annotations then only ever raise the risk.
	TrustAnnotations bool
}

// Governor is the reins middleware of one mcp-go server: Govern returns it.
type Governor struct {
	srv   *server.MCPServer
	run   reins.RunProvider
	trust bool

	mu    sync.RWMutex
	specs map[string]reins.ToolSpec
}

// Govern puts every tool call of s through run. It adds the middleware to s (s.Use), so call it
// after any middleware of your own that may rewrite a call's arguments: what runs inside reins'
// middleware is what reins decided on. It also hides, from tools/list and tools/call, the tools
// registered with s.AddTaskTool, whose handlers mcp-go runs without its tool middleware (a
// regular tool run as a task does pass it). An invalid spec is an error.
func Govern(s *server.MCPServer, run reins.RunProvider, opts Options) (*Governor, error) {
	if s == nil || run == nil {
		return nil, errors.New("mcpgo: Govern needs a server and a run")
	}
	if err := checkRun(run); err != nil {
		return nil, err
	}
	g := &Governor{srv: s, run: run, trust: opts.TrustAnnotations, specs: map[string]reins.ToolSpec{}}
	for name, spec := range opts.Specs {
		if err := g.add(name, spec); err != nil {
			return nil, err
		}
	}
	server.WithToolFilter(g.filter)(s)
	s.Use(g.middleware)
	return g, nil
}

// checkRun reports a provider that holds no run (reins.Guard would panic on every call).
func checkRun(rp reins.RunProvider) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("mcpgo: Govern needs a run, and the provider holds none")
		}
	}()
	reins.Guard(rp, reins.ToolSpec{Tool: "mcpgo-probe"}, func(context.Context, json.RawMessage) (struct{}, error) { return struct{}{}, nil }, nil)
	return nil
}

func (g *Governor) add(name string, spec reins.ToolSpec) error {
	if name == "" {
		return errors.New("mcpgo: a spec for a tool without a name")
	}
	if spec.Tool == "" {
		spec.Tool = name
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("mcpgo: tool %s: %w", name, err)
	}
	g.mu.Lock()
	g.specs[name] = spec
	g.mu.Unlock()
	return nil
}

// Shell returns a shell tool for s.AddTool: its input is {"command": "...", "workdir": "..."}
// (workdir optional, relative to the workspace), and each call's command line goes through
// Run.DoCommand, which runs it in the run's sandbox, confined to what the gate's analysis
// claims for it, when the decision says so. The middleware runs it: the handler returned here
// refuses every call that reaches it without passing the middleware. (Any tool whose spec
// names a Command field is run so: its command line goes through Run.DoCommand, and its own
// handler is never called.) Shell panics when name is empty.
func (g *Governor) Shell(name, description string) (mcp.Tool, server.ToolHandlerFunc) {
	spec := reins.ToolSpec{Tool: name, Operation: policy.OpShell, Command: "command", WorkDir: "workdir"}
	if err := g.add(name, spec); err != nil {
		panic(err)
	}
	tool := mcp.NewTool(name, mcp.WithDescription(description),
		mcp.WithString("command", mcp.Required(), mcp.Description("The bash command line to run.")),
		mcp.WithString("workdir", mcp.Description("The directory to run it in, relative to the workspace (default: the workspace).")),
		mcp.WithDestructiveHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(true))
	return tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("reins: " + name + " runs only through reins' middleware (mcpgo.Govern), which did not see this call"), nil
	}
}

// middleware is the tool-handler middleware Govern adds: each call is described by its
// tool's spec and annotations, then goes through the run. The handler receives the arguments
// the run decided on (RawArguments and Arguments both rebuilt from them). A refusal is the
// call's result, with IsError set and a message that gives the reason and the alternatives
// (its _meta["reins/denial"] holds them as data). A shell tool's command runs through
// Run.DoCommand instead of the handler. A handler's result with IsError set counts as a
// failure: the workspace is rolled back to the checkpoint taken before the call, and the
// result says so.
func (g *Governor) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		spec := g.spec(ctx, req.Params.Name)
		args, err := rawArguments(req)
		if err != nil {
			return nil, fmt.Errorf("mcpgo: the arguments of %s: %w", req.Params.Name, err)
		}
		if spec.Command != "" {
			return g.command(ctx, spec, args)
		}
		var failed *mcp.CallToolResult
		call := reins.Guard(g.run, spec, func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			req := withArguments(req, args)
			res, err := next(ctx, req)
			if err == nil && res != nil && res.IsError {
				failed = res
				return res, errToolResult
			}
			return res, err
		}, denialResult)
		res, err := call(ctx, args)
		var ae *reins.ActionError
		if errors.As(err, &ae) && errors.Is(ae.Err, errToolResult) {
			return withRollback(failed, ae), nil
		}
		return res, err
	}
}

// errToolResult marks a handler's IsError result as a failure for the run.
var errToolResult = errors.New("the tool returned an error result")

// command runs a shell tool's call through Run.DoCommand.
func (g *Governor) command(ctx context.Context, spec reins.ToolSpec, args json.RawMessage) (*mcp.CallToolResult, error) {
	run := reins.GuardCommand[json.RawMessage](g.run, spec, func(res sandbox.Result) *mcp.CallToolResult {
		r := mcp.NewToolResultText(reins.CommandOutput(res))
		r.IsError = res.ExitCode != 0
		return r
	}, denialResult)
	res, err := run(ctx, args)
	var ae *reins.ActionError
	if res != nil && errors.As(err, &ae) {
		// The command ran and failed (a non-zero exit status): its output is the result.
		res.IsError = true
		return withRollback(res, ae), nil
	}
	return res, err
}

// spec returns the spec of a call of the named tool, with the annotations of the tool that
// mcp-go runs for it (a session's own tool before the server's).
func (g *Governor) spec(ctx context.Context, name string) reins.ToolSpec {
	g.mu.RLock()
	spec, ok := g.specs[name]
	g.mu.RUnlock()
	if !ok {
		spec = reins.ToolSpec{Tool: name}
	}
	if tool, found := g.tool(ctx, name); found && spec.Annotations == nil {
		spec.TrustAnnotations = spec.TrustAnnotations || g.trust
		spec.Annotations = annotations(tool.Annotations, spec.TrustAnnotations && ok)
	}
	return spec
}

// tool finds the tool mcp-go runs for a call, as it does: the session's, then the server's.
func (g *Governor) tool(ctx context.Context, name string) (mcp.Tool, bool) {
	if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithTools); ok {
		if t, ok := sess.GetSessionTools()[name]; ok {
			return t.Tool, true
		}
	}
	if t := g.srv.GetTool(name); t != nil {
		return t.Tool, true
	}
	return mcp.Tool{}, false
}

// filter keeps the tools whose calls pass the middleware: those of the session and the
// server's regular tools, not its task-only tools.
func (g *Governor) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	out := tools[:0:0]
	for _, t := range tools {
		if _, ok := g.tool(ctx, t.Name); ok {
			out = append(out, t)
		}
	}
	return out
}

// annotations maps mcp-go's annotations to reins'; nil when the tool gives no hint.
//
// mcp.NewTool writes the specification's defaults into every tool (readOnlyHint false,
// destructiveHint true, idempotentHint false, openWorldHint true), so a hint at its default
// cannot be told from no hint at all. For a tool of a trusted server (the host's own) that the
// host describes with a spec (declared), such a hint is taken as what it most likely is,
// silence, and the spec describes the tool. Everywhere else every hint counts as said: a tool
// without a spec is described by them with those defaults (trusted) or only raised by them
// (untrusted), and an untrusted server's hints raise a spec'd tool too.
func annotations(a mcp.ToolAnnotation, declared bool) *reins.ToolAnnotations {
	out := reins.ToolAnnotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
		IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
	if declared {
		out.ReadOnlyHint = unlessDefault(a.ReadOnlyHint, false)
		out.DestructiveHint = unlessDefault(a.DestructiveHint, true)
		out.IdempotentHint = unlessDefault(a.IdempotentHint, false)
		out.OpenWorldHint = unlessDefault(a.OpenWorldHint, true)
	}
	if out == (reins.ToolAnnotations{}) {
		return nil
	}
	return &out
}

// unlessDefault returns hint, or nil when it says what the specification assumes without it.
func unlessDefault(hint *bool, def bool) *bool {
	if hint == nil || *hint == def {
		return nil
	}
	return hint
}

// rawArguments returns a call's arguments as JSON: the bytes the client sent when mcp-go kept
// them, else the decoded arguments encoded again.
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	if raw, ok := req.Params.Arguments.(json.RawMessage); ok {
		return raw, nil
	}
	if req.Params.Arguments == nil {
		return nil, nil
	}
	return json.Marshal(req.Params.Arguments)
}

// withArguments returns req carrying args (the arguments the run decided on) in both its raw
// and its decoded form, so that a handler reads the same whichever it reads.
func withArguments(req mcp.CallToolRequest, args json.RawMessage) mcp.CallToolRequest {
	req.Params.RawArguments = args
	req.Params.Arguments = nil
	if len(args) > 0 {
		var v any
		if json.Unmarshal(args, &v) == nil {
			req.Params.Arguments = v
		}
	}
	return req
}

// denialResult is the result of a call the run refused: the model-facing message, with the
// reason and alternatives also as data in _meta["reins/denial"].
func denialResult(d reins.Denial) *mcp.CallToolResult {
	res := mcp.NewToolResultError(d.Message())
	meta := map[string]any{"reason": d.Reason, "decisionId": d.Decision.DecisionID}
	if len(d.Alternatives) > 0 {
		meta["alternatives"] = d.Alternatives
	}
	if d.Parked != "" {
		meta["parked"] = d.Parked
	}
	res.Meta = &mcp.Meta{AdditionalFields: map[string]any{"reins/denial": meta}}
	return res
}

// withRollback adds to a failed call's result what became of the workspace.
func withRollback(res *mcp.CallToolResult, ae *reins.ActionError) *mcp.CallToolResult {
	out := *res
	out.Content = append([]mcp.Content(nil), res.Content...)
	switch {
	case ae.RolledBack:
		out.Content = append(out.Content, mcp.NewTextContent("reins: the workspace was rolled back to the checkpoint taken before this call."))
	case ae.RollbackErr != nil:
		out.Content = append(out.Content, mcp.NewTextContent("reins: the workspace could not be rolled back: "+ae.RollbackErr.Error()))
	}
	if res.Meta != nil {
		m := *res.Meta
		m.AdditionalFields = maps.Clone(res.Meta.AdditionalFields)
		out.Meta = &m
	}
	return &out
}
