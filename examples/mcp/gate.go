package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
// the analysis claims, and a notification, which the tool's result shows (see [Notifier]).
//
// A refusal is the tool's result, with isError set, the reason and the ways forward, as the MCP
// specification asks for tool errors: the model reads it and can change course. A CONFIRM is
// put to the client's user by elicitation, as an input request of the tool's result (multi
// round-trip requests, which the SDK turns into a plain elicitation for clients on protocol
// versions before 2026-07-28); the retried call carries the answer, which the run's approver
// ([Approver]) gives the run, so it is recorded as any approval is, with who answered and the
// scope (this call, or the same call again for the session). The first pass is recorded too:
// its approval record says that the question went to the client. A client that cannot elicit
// gets the refusal.
//
// Gating happens in the tool handlers, so a call of a tool the server does not have is
// answered "unknown tool" by the SDK before reins, or anybody, is asked anything.
//
// The run must be made with Options.Approver set to [Approver]() and Options.Notifier to
// [Notifier] (host.Options has both).
type Gate struct {
	run    *reins.Run
	server string

	mu      sync.Mutex
	pending map[string]string // the call a question asked about (a hash of tool and input), by request state
	order   []string          // request states, oldest first
}

// maxPending bounds the questions waiting for an answer; the oldest is forgotten past it.
const maxPending = 256

// approvalInput is the id of the input request that asks for an approval.
const approvalInput = "reins_approval"

// NewGate returns a Gate over run for the server named server (tool calls reach the gate as
// "mcp__<server>__<tool>", the naming agents use, so a rule can match a server's tools with
// one glob).
func NewGate(run *reins.Run, server string) *Gate {
	if run == nil {
		panic("mcp: NewGate: nil run")
	}
	if server == "" {
		server = "server"
	}
	return &Gate{run: run, server: server, pending: map[string]string{}}
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

// serve answers one call: the call goes through the run (with the answer its retry carries,
// when it answers a question this Gate asked about this very call); a question the run's
// approver had to put becomes an input request, a refusal an error result.
func serve[In any](g *Gate, ctx context.Context, req *mcp.CallToolRequest, spec reins.ToolSpec, in In,
	call func(context.Context, In) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, any, error) {
	id, err := json.Marshal(in)
	if err != nil {
		return nil, nil, fmt.Errorf("reins: the input of %s cannot be encoded: %w", spec.Tool, err)
	}
	sum := sha256.Sum256(append([]byte(spec.Tool+"\x00"), id...))
	st := &callState{session: req.Session, call: hex.EncodeToString(sum[:])}
	if state := req.Params.RequestState; state != "" && g.take(state, st.call) {
		if ans, ok := answerOf(req); ok {
			st.answer = &ans
		}
	}
	out, err := call(context.WithValue(ctx, callKey{}, st), in)
	if q := st.question(); q != nil {
		return g.ask(q, st.call), nil, nil
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
	st.show(out)
	return out, nil, nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

// ask turns the question the approver had to put into an input request that elicits the
// answer, and a request state, unguessable, that the retry carries back. Past maxPending
// questions waiting, the oldest is forgotten: its retry is decided, and asked, afresh.
func (g *Gate) ask(q *reins.Request, call string) *mcp.CallToolResult {
	var b [16]byte
	_, _ = rand.Read(b[:])
	state := "reins-" + hex.EncodeToString(b[:])
	g.mu.Lock()
	if len(g.order) >= maxPending {
		delete(g.pending, g.order[0])
		g.order = g.order[1:]
	}
	g.pending[state] = call
	g.order = append(g.order, state)
	g.mu.Unlock()
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: &mcp.ElicitParams{
			Message: prompt(q.Action, q.Decision),
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

// take spends a request state: it reports whether state names a question this Gate asked
// about call. A state that is unknown, spent, or was given for another call answers nothing
// (and is spent all the same).
func (g *Gate) take(state, call string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	asked, ok := g.pending[state]
	if !ok {
		return false
	}
	delete(g.pending, state)
	if i := slices.Index(g.order, state); i >= 0 {
		g.order = slices.Delete(g.order, i, i+1)
	}
	return asked == call
}

// answerOf reads the user's answer from a retried call: yes with a scope, or no saying how;
// false when the call carries none (it is then asked again).
func answerOf(req *mcp.CallToolRequest) (reins.Answer, bool) {
	ans := reins.Answer{Verdict: policy.Deny, By: whoAnswers(req.Session)}
	er, ok := req.Params.InputResponses[approvalInput].(*mcp.ElicitResult)
	switch {
	case !ok || er == nil:
		return ans, false
	case er.Action == "accept":
		if yes, _ := er.Content["approve"].(bool); !yes {
			ans.Note = "answered no"
			break
		}
		ans.Verdict = policy.Allow
		if s, _ := er.Content["scope"].(string); s == "session" {
			ans.Scope = reins.ForSession
		}
	case er.Action == "decline":
		ans.Note = "declined"
	default:
		ans.Note = "dismissed the question"
	}
	return ans, true
}

// callKey is the context key of the call being served.
type callKey struct{}

// callState is what the run's approver and notifier know of the call being served: the
// session, the answer the call carries, the question to put, the notices to show.
type callState struct {
	session *mcp.ServerSession
	call    string
	answer  *reins.Answer

	mu      sync.Mutex
	asked   *reins.Request
	notices []string
}

func (st *callState) question() *reins.Request {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.asked
}

// show adds the notices to the tool's result, after its content.
func (st *callState) show(res *mcp.CallToolResult) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, m := range st.notices {
		res.Content = append(res.Content, &mcp.TextContent{Text: "reins notice: " + m})
	}
}

// errAsked is the approver's answer on a call's first pass: the question goes to the client's
// user, and the call is decided again when the answer comes back.
type errAsked struct{ who string }

func (e errAsked) Error() string {
	return "the question was put to " + e.who + " by elicitation; the call is decided again when the answer comes back"
}

// Approver returns the approver to give the run (reins.Options.Approver): it answers a CONFIRM
// of a call a Gate serves with the answer the call carries, when it answers a question about
// this very call; otherwise it has the Gate ask the client's user and refuses this pass (the
// refusal's record says so). A client that cannot elicit is refused, and so is a CONFIRM
// outside a call a Gate serves. Asked to keep a grant for the session (reins.Request's
// Proposal), it says yes only when the user chose the session scope.
func Approver() reins.Approver {
	return reins.ApproverFunc(func(ctx context.Context, req reins.Request) (reins.Answer, error) {
		st, ok := ctx.Value(callKey{}).(*callState)
		if !ok {
			return reins.Answer{}, errors.New("no MCP tool call to ask through")
		}
		if st.answer != nil {
			if req.Proposal != nil {
				keep := reins.Answer{Verdict: policy.Deny, By: st.answer.By}
				if st.answer.Verdict == policy.Allow && st.answer.Scope == reins.ForSession {
					keep.Verdict = policy.Allow
				}
				return keep, nil
			}
			return *st.answer, nil
		}
		if !canElicit(st.session) {
			return reins.Answer{}, errors.New("this client cannot ask its user: it declared no elicitation capability")
		}
		st.mu.Lock()
		if st.asked == nil {
			q := req
			st.asked = &q
		}
		st.mu.Unlock()
		return reins.Answer{}, errAsked{who: whoAnswers(st.session)}
	})
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
		name = strings.ToValidUTF8(name[:64], "")
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

// Notifier returns the notifier to give the run (reins.Options.Notifier): a notice during a
// call a Gate serves is added to the call's result, which the client shows (not as an MCP log
// message: clients drop those until they set a level, and the protocol deprecates them from
// 2026-07-28 on); a notice outside such a call (a budget's) goes to log. It never fails a
// call: the result carries the notice.
func Notifier(log *slog.Logger) reins.Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return reins.NotifierFunc(func(ctx context.Context, n reins.Notice) error {
		st, ok := ctx.Value(callKey{}).(*callState)
		if !ok {
			log.InfoContext(ctx, "reins: "+n.Message, "kind", n.Kind.String())
			return nil
		}
		st.mu.Lock()
		st.notices = append(st.notices, n.Message)
		st.mu.Unlock()
		return nil
	})
}
