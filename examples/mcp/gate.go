package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// CodeDenied is the JSON-RPC error code of a tool call the gate refused (in the range JSON-RPC
// leaves to servers). The error's message is the gate's reason; its data carries the decision id
// and verdict, so a client can find the audit record.
const CodeDenied = -32001

// ToolSpec tells the middleware what one of the server's tools does, so that the gate decides
// on what the call does, not on its name. A tool the middleware has no spec for is decided as an
// unknown tool: operation "tool" with no declared risk, which the gate treats as destructive.
type ToolSpec struct {
	// Operation is the kind of action (policy.OpRead, OpWrite, OpShell, OpNetwork, ...).
	Operation policy.Operation
	// Risk is the risk the tool declares on top of the operation's default.
	Risk risk.Set
	// PathArgs name the string arguments that hold paths the tool reads or writes.
	PathArgs []string
	// CommandArg names the string argument that holds a shell command line (for OpShell).
	CommandArg string
	// HostArg names the string argument that holds the host or URL the tool reaches.
	HostArg string
}

// Approver answers a CONFIRM for a tool call: true lets it run; an error counts as no. req is the
// call's request, whose session can ask the user (elicitation). Nil means nobody can be asked, so
// a CONFIRM is a denial.
type Approver func(ctx context.Context, req mcp.Request, a policy.Action, d gate.Decision) (bool, error)

// Options configure Middleware.
type Options struct {
	// Server is the MCP server's name; tool calls reach the gate as "mcp__<Server>__<tool>",
	// the naming agents use, so rules can match a server's tools with one glob.
	Server string
	// Tools describes the server's tools by name.
	Tools map[string]ToolSpec
	// Approve answers CONFIRM decisions. Nil denies them.
	Approve Approver
}

// Checker decides an action and records the decision: a *reins.Run.
type Checker interface {
	Check(ctx context.Context, a policy.Action) (gate.Decision, error)
}

// Middleware returns MCP receiving middleware that puts every tools/call through g before the
// tool runs: ALLOW runs it, DENY answers with a JSON-RPC error (code CodeDenied) carrying the
// reason, CONFIRM asks opts.Approve and runs the tool only on a yes. Other methods pass through.
// A call whose arguments cannot be read is denied: the middleware fails closed.
func Middleware(g Checker, opts Options) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			params, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok {
				return nil, denied("the tool call's parameters could not be read", gate.Decision{})
			}
			a, err := opts.action(params)
			if err != nil {
				return nil, denied(err.Error(), gate.Decision{})
			}
			d, err := g.Check(ctx, a)
			if err != nil && d.Verdict != policy.Deny {
				return nil, denied(err.Error(), d)
			}
			switch d.Verdict {
			case policy.Allow:
			case policy.Confirm:
				if opts.Approve == nil {
					return nil, denied("needs approval and nobody can be asked: "+d.Reason, d)
				}
				yes, err := opts.Approve(ctx, req, a, d)
				if err != nil {
					return nil, denied(fmt.Sprintf("not approved (%v): %s", err, d.Reason), d)
				}
				if !yes {
					return nil, denied("not approved: "+d.Reason, d)
				}
			default:
				return nil, denied(d.Reason, d)
			}
			return next(ctx, method, req)
		}
	}
}

// action maps a tool call to the action the gate decides.
func (o Options) action(p *mcp.CallToolParamsRaw) (policy.Action, error) {
	server := o.Server
	if server == "" {
		server = "server"
	}
	// The arguments go into the audit record (redacted there), whatever the gate decides on.
	a := policy.Action{Tool: "mcp__" + server + "__" + p.Name, Operation: policy.OpTool, Input: string(p.Arguments)}
	spec, known := o.Tools[p.Name]
	if !known {
		return a, nil
	}
	a.Operation, a.Risk = spec.Operation, spec.Risk
	var args map[string]json.RawMessage
	if len(p.Arguments) > 0 {
		if err := json.Unmarshal(p.Arguments, &args); err != nil {
			return a, fmt.Errorf("the arguments of %s are not a JSON object: %v", p.Name, err)
		}
	}
	str := func(name string) (string, error) {
		raw, ok := args[name]
		if !ok {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("argument %q of %s is not a string", name, p.Name)
		}
		return s, nil
	}
	for _, name := range spec.PathArgs {
		s, err := str(name)
		if err != nil {
			return a, err
		}
		if s != "" {
			a.Targets = append(a.Targets, s)
		}
	}
	var err error
	if spec.CommandArg != "" {
		if a.Command, err = str(spec.CommandArg); err != nil {
			return a, err
		}
	}
	if spec.HostArg != "" {
		if a.Host, err = str(spec.HostArg); err != nil {
			return a, err
		}
	}
	return a, nil
}

func denied(reason string, d gate.Decision) error {
	data, _ := json.Marshal(map[string]string{"verdict": d.Verdict.String(), "decision_id": d.DecisionID.String(), "layer": d.Layer.String(), "rule_id": d.RuleID})
	return &jsonrpc.Error{Code: CodeDenied, Message: "reins: " + reason, Data: data}
}
