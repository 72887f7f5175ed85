package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// Gate puts the tools of an MCP server built with the official Go SDK behind a reins run: the
// part of this program to copy. Each tool added with [AddTool] or [AddCommandTool] runs every
// call through the run (reins.Guard, reins.GuardCommand), so the gate decides on what the call
// does (its ToolSpec), and the run carries out the decision's obligations: a checkpoint before
// the tool runs (rolled back when it fails), a shell line in the run's sandbox, confined to what
// the analysis claims, and a notification, which the tool's result shows (see [Gate.Notifier]).
//
// A refusal is the tool's result, with isError set, the reason and the ways forward, as the MCP
// specification asks for tool errors: the model reads it and can change course. A CONFIRM is
// put to the client's user by elicitation, as an input request of the tool's result
// (multi round-trip requests, which the SDK turns into a plain elicitation for clients on
// protocol versions before 2026-07-28): the run parks the call (reins.Run.Park), the answer
// resolves it (reins.Run.Resolve, recorded with who answered and the scope), and the retried
// call runs under the one-use grant the approval made. A client that cannot elicit gets the
// refusal.
//
// Gating happens in the tool handlers, so a call of a tool the server does not have is
// answered "unknown tool" by the SDK before reins, or anybody, is asked anything.
//
// The run should have no Approver and Headless reins.HeadlessPark: then every CONFIRM reaches
// the client's user. With an Approver, the run asks that approver instead.
type Gate struct {
	run    *reins.Run
	server string
	log    *slog.Logger

	mu      sync.Mutex
	pending map[string]question // by request state
	order   []string            // request states, oldest first
}

// question is a CONFIRM put to a client: the parked call and the call's identity (tool and
// input), which its retry must repeat for the answer to count.
type question struct {
	parked string
	call   string
}

// maxPending bounds the questions waiting for an answer; the oldest is refused past it.
const maxPending = 256

// approvalInput is the id of the input request that asks for an approval.
const approvalInput = "reins_approval"

// NewGate returns a Gate over run for the server named server (tool calls reach the gate as
// "mcp__<server>__<tool>", the naming agents use, so a rule can match a server's tools with
// one glob). log receives what cannot be returned (a notice outside a tool call); nil discards.
func NewGate(run *reins.Run, server string, log *slog.Logger) *Gate {
	if run == nil {
		panic("mcp: NewGate: nil run")
	}
	if server == "" {
		server = "server"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Gate{run: run, server: server, log: log, pending: map[string]question{}}
}

// AddTool adds tool t to server s, with fn behind the gate: spec says what a call does (its
// Tool defaults to "mcp__<server>__<t.Name>"; t's annotations are the server's own, so they
// describe a tool the spec leaves undeclared, and only ever raise the risk it declares). fn's
// error is the tool's error result; a nil result with a nil error is an empty result.
func AddTool[In any](g *Gate, s *mcp.Server, t *mcp.Tool, spec reins.ToolSpec, fn func(context.Context, In) (*mcp.CallToolResult, error)) {
	spec = g.spec(t, spec)
	guarded := reins.Guard(g.run, spec, fn, nil)
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		return serve(g, ctx, req, spec, in, guarded)
	})
}

// AddCommandTool adds tool t to server s as a shell tool: the command line in the field
// spec.Command names (and the directory in spec.WorkDir) runs through reins.Run.DoCommand, in
// the run's sandbox when the decision says so. Its result is the command's output; a non-zero
// exit status makes it an error result.
func AddCommandTool[In any](g *Gate, s *mcp.Server, t *mcp.Tool, spec reins.ToolSpec) {
	spec = g.spec(t, spec)
	guarded := reins.GuardCommand[In](g.run, spec, commandResult, nil)
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		return serve(g, ctx, req, spec, in, guarded)
	})
}

func (g *Gate) spec(t *mcp.Tool, spec reins.ToolSpec) reins.ToolSpec {
	if spec.Tool == "" {
		spec.Tool = "mcp__" + g.server + "__" + t.Name
	}
	if a := t.Annotations; a != nil && spec.Annotations == nil {
		ann := &reins.ToolAnnotations{DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
		if a.ReadOnlyHint {
			// The SDK's ReadOnlyHint cannot tell false from absent: only true says anything.
			ann.ReadOnlyHint = &a.ReadOnlyHint
		}
		spec.Annotations, spec.TrustAnnotations = ann, true
	}
	return spec
}

func commandResult(res sandbox.Result) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reins.CommandOutput(res)}}, IsError: res.ExitCode != 0}
}

// serve answers one call: an answer to a question asked before is resolved first, then the
// call goes through the run; a parked call becomes a question, a refusal an error result.
func serve[In any](g *Gate, ctx context.Context, req *mcp.CallToolRequest, spec reins.ToolSpec, in In,
	call func(context.Context, In) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, any, error) {
	id, err := json.Marshal(in)
	if err != nil {
		return nil, nil, fmt.Errorf("reins: the input of %s cannot be encoded: %w", spec.Tool, err)
	}
	callID := spec.Tool + "\x00" + string(id)
	if state := req.Params.RequestState; state != "" {
		if res := g.answer(ctx, req, state, callID, spec.Tool); res != nil {
			return res, nil, nil
		}
	}
	box := &notices{session: req.Session}
	out, err := call(context.WithValue(ctx, noticeKey{}, box), in)
	if pe, ok := errors.AsType[*reins.ParkedError](err); ok {
		return g.ask(ctx, req, pe, callID, spec.Tool), nil, nil
	}
	if d, ok := reins.DenialOf(spec.Tool, err); ok {
		return errorResult(d.Message()), nil, nil
	}
	if err != nil {
		// The tool ran and failed (an *reins.ActionError, its workspace rolled back where a
		// checkpoint was taken), or the run could not decide: the SDK makes the error the
		// tool's error result. A shell tool's failing command keeps its output.
		if _, ran := errors.AsType[*reins.ActionError](err); !ran || out == nil {
			return nil, nil, err
		}
		out.IsError = true
	}
	if out == nil {
		out = &mcp.CallToolResult{}
	}
	box.show(out)
	return out, nil, nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

// ask turns a parked call into a question for the client's user: an input request that
// elicits the approval, and a request state, unguessable, that the retry carries back.
func (g *Gate) ask(ctx context.Context, req *mcp.CallToolRequest, pe *reins.ParkedError, callID, tool string) *mcp.CallToolResult {
	a, ok := g.parkedAction(ctx, pe.ID)
	if !ok {
		return errorResult(fmt.Sprintf("reins did not run this call of %s: it needs a human's approval, and the question was lost.", tool))
	}
	if !canElicit(req.Session) {
		g.refuse(ctx, pe.ID, "the client cannot ask its user: it declared no elicitation capability")
		return errorResult(fmt.Sprintf("reins did not run this call of %s: it needs a human's approval (%s), and this client cannot ask its user (no elicitation).",
			tool, strings.TrimSuffix(pe.Decision.Reason, ".")))
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	state := "reins-" + hex.EncodeToString(b[:])
	g.mu.Lock()
	var evicted string
	if len(g.order) >= maxPending {
		evicted = g.pending[g.order[0]].parked
		delete(g.pending, g.order[0])
		g.order = g.order[1:]
	}
	g.pending[state] = question{parked: pe.ID, call: callID}
	g.order = append(g.order, state)
	g.mu.Unlock()
	if evicted != "" {
		g.refuse(ctx, evicted, fmt.Sprintf("more than %d questions waited for an answer", maxPending))
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: &mcp.ElicitParams{
			Message: prompt(a, pe.Decision),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"approve": map[string]any{"type": "boolean", "title": "Allow this call"},
					"scope": map[string]any{"type": "string", "enum": []string{"once", "session"}, "default": "once",
						"title": "For this call only, or for the same call again during this session"},
				},
				"required": []string{"approve"},
			},
		}},
		RequestState: state,
	}
}

// answer takes the user's answer that a retried call carries: it resolves the parked call
// (recorded with who answered and the scope). It returns the result for a refusal, and nil
// when the call is to go ahead: approved (the grant the approval made lets the retry through),
// or not an answer to a question of this server (an unknown or spent state, another call),
// which goes through the gate as a new call.
func (g *Gate) answer(ctx context.Context, req *mcp.CallToolRequest, state, callID, tool string) *mcp.CallToolResult {
	g.mu.Lock()
	q, ok := g.pending[state]
	if ok {
		delete(g.pending, state)
		if i := indexOf(g.order, state); i >= 0 {
			g.order = append(g.order[:i], g.order[i+1:]...)
		}
	}
	g.mu.Unlock()
	if !ok {
		return nil
	}
	if q.call != callID {
		g.refuse(ctx, q.parked, "the retried call was not the call asked about")
		return nil
	}
	who := whoAnswers(req.Session)
	er, ok := req.Params.InputResponses[approvalInput].(*mcp.ElicitResult)
	if !ok {
		g.refuse(ctx, q.parked, "the retried call carried no answer")
		return errorResult(fmt.Sprintf("reins did not run this call of %s: it needs a human's approval, and no answer came back.", tool))
	}
	ans := reins.Answer{Verdict: policy.Deny, By: who}
	switch er.Action {
	case "accept":
		if yes, _ := er.Content["approve"].(bool); yes {
			ans.Verdict = policy.Allow
			if s, _ := er.Content["scope"].(string); s == "session" {
				ans.Scope = reins.ForSession
			}
		} else {
			ans.Note = "answered no"
		}
	case "decline":
		ans.Note = "declined"
	default:
		ans.Note = "dismissed the question"
	}
	ap, err := g.run.Resolve(ctx, q.parked, ans)
	switch {
	case errors.Is(err, reins.ErrNotParked):
		return nil // resolved elsewhere: decide the call afresh
	case err != nil:
		return errorResult(fmt.Sprintf("reins did not run this call of %s: the answer could not be recorded: %v.", tool, err))
	case !ap.Approved:
		return errorResult(fmt.Sprintf("reins did not run this call of %s: %s %s it.", tool, who, ans.Note))
	}
	return nil
}

// refuse resolves a parked call as refused by reins itself, saying why.
func (g *Gate) refuse(ctx context.Context, parked, why string) {
	if _, err := g.run.Resolve(ctx, parked, reins.Answer{Verdict: policy.Deny, By: "reins", Note: why}); err != nil && !errors.Is(err, reins.ErrNotParked) {
		g.log.Error("reins: a parked call could not be resolved", "parked", parked, "err", err)
	}
}

func (g *Gate) parkedAction(ctx context.Context, id string) (policy.Action, bool) {
	parked, err := g.run.Parked(ctx)
	if err != nil {
		return policy.Action{}, false
	}
	for _, p := range parked {
		if p.ID == id {
			return p.Action, true
		}
	}
	return policy.Action{}, false
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// canElicit reports whether the client can put a question to its user. A session without
// initialization parameters (a stateless request of the newest protocol) is asked: its
// client fulfils input requests itself, and one that cannot fails the call.
func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	if ip == nil {
		return true
	}
	return ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// whoAnswers names the one who answers a question put through the client: its user, and the
// client by the name it gave (bounded, printable).
func whoAnswers(ss *mcp.ServerSession) string {
	name := ""
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			name = ip.ClientInfo.Name
		}
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, name)
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "the user of the MCP client"
	}
	return "the user of MCP client " + name
}

// Bounds of what a question shows.
const (
	maxShown     = 8   // targets named
	maxShownText = 400 // bytes of a command line or a path
)

// prompt says the question: the action, its targets, command or host, and why reins asks.
func prompt(a policy.Action, d gate.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "reins asks: may %s %s", a.Tool, verb(a.Operation))
	switch {
	case a.Command != "":
		fmt.Fprintf(&b, " the command line %q", clip(a.Command))
		if a.WorkDir != "" {
			fmt.Fprintf(&b, " in %q", clip(a.WorkDir))
		}
	case len(a.Targets) > 0:
		for i, t := range a.Targets {
			if i == maxShown {
				fmt.Fprintf(&b, " and %d more", len(a.Targets)-maxShown)
				break
			}
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %q", clip(t))
		}
	}
	if a.Host != "" {
		fmt.Fprintf(&b, " reaching %s", clip(a.Host))
	}
	b.WriteString("?")
	if d.Reason != "" {
		fmt.Fprintf(&b, " Why reins asks: %s", strings.TrimSuffix(clip(d.Reason), "."))
		b.WriteString(".")
	}
	return b.String()
}

func verb(op policy.Operation) string {
	switch op {
	case policy.OpRead:
		return "read"
	case policy.OpWrite:
		return "write"
	case policy.OpDelete:
		return "delete"
	case policy.OpShell:
		return "run"
	case policy.OpNetwork:
		return "connect, for"
	}
	return "act (" + string(op) + ") on"
}

func clip(s string) string {
	if len(s) <= maxShownText {
		return s
	}
	return strings.ToValidUTF8(s[:maxShownText], "") + "…"
}

// noticeKey is the context key of the notices of the call being served.
type noticeKey struct{}

// notices collects what the Notify obligation tells the user during one call.
type notices struct {
	session *mcp.ServerSession
	mu      sync.Mutex
	list    []string
}

// show adds the notices to the tool's result, after its content.
func (n *notices) show(res *mcp.CallToolResult) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.list {
		res.Content = append(res.Content, &mcp.TextContent{Text: "reins notice: " + m})
	}
}

// Notifier returns the notifier to give the run (reins.Options.Notifier): a notice during a
// tool call is added to the call's result, which the client shows, and sent to the client as a
// log message (level notice) too, for a client that set a log level; a notice outside a call (a
// budget's) goes to the Gate's logger. It never fails a call: the result carries the notice.
func Notifier(log *slog.Logger) reins.Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return reins.NotifierFunc(func(ctx context.Context, n reins.Notice) error {
		box, ok := ctx.Value(noticeKey{}).(*notices)
		if !ok {
			log.InfoContext(ctx, "reins: "+n.Message, "kind", n.Kind.String())
			return nil
		}
		box.mu.Lock()
		box.list = append(box.list, n.Message)
		box.mu.Unlock()
		if box.session != nil {
			_ = box.session.Log(ctx, &mcp.LoggingMessageParams{Level: "notice", Logger: "reins", Data: n.Message})
		}
		return nil
	})
}
