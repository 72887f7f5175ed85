package mcpgo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/policy"
)

// ElicitedBy is who an answer given through elicitation is recorded as having come from.
const ElicitedBy = "mcp-client-user"

// Elicit returns an approver that puts a CONFIRM to the user of the client whose call is being
// decided, through MCP elicitation (the server needs server.WithElicitation): the question names
// the tool, the operation and what it touches, and says why it is asked. The user approves by
// accepting with "approve" true; a decline, a cancel, an accept without it, or a client that
// cannot be asked (no session, no elicitation capability, a protocol version that forbids a
// server's request during a call) is a refusal. Every answer is recorded by the run with
// ElicitedBy as who gave it, for this call only (reins.Once).
func Elicit(s *server.MCPServer) reins.Approver {
	return reins.ApproverFunc(func(ctx context.Context, req reins.Request) (reins.Answer, error) {
		if s == nil {
			return reins.Answer{}, errors.New("mcpgo: Elicit has no server to ask through")
		}
		res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Message: question(req),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"approve": map[string]any{"type": "boolean", "title": "Allow this call", "default": false},
				},
				"required": []string{"approve"},
			},
		}})
		if err != nil {
			return reins.Answer{}, fmt.Errorf("mcpgo: the client could not be asked: %w", err)
		}
		ans := reins.Answer{Verdict: policy.Deny, By: ElicitedBy, Note: "elicitation: " + string(res.Action)}
		if res.Action == mcp.ElicitationResponseActionAccept {
			if c, ok := res.Content.(map[string]any); ok && c["approve"] == true {
				ans.Verdict = policy.Allow
			}
		}
		return ans, nil
	})
}

// question is what the user is asked: the tool, the operation, what it touches, and why.
func question(req reins.Request) string {
	a := req.Action
	var b strings.Builder
	fmt.Fprintf(&b, "Allow %s to %s", a.Tool, a.Operation)
	switch {
	case a.Command != "":
		fmt.Fprintf(&b, " the command line %q", clip(a.Command))
	case len(a.Targets) > 0:
		shown := a.Targets
		if len(shown) > 5 {
			shown = shown[:5]
		}
		quoted := make([]string, len(shown))
		for i, t := range shown {
			quoted[i] = fmt.Sprintf("%q", clip(t))
		}
		b.WriteString(" " + strings.Join(quoted, ", "))
		if n := len(a.Targets) - len(shown); n > 0 {
			fmt.Fprintf(&b, " and %d more", n)
		}
	}
	if a.Host != "" {
		fmt.Fprintf(&b, " reaching %s", a.Host)
	}
	b.WriteString("?")
	if req.Decision.Reason != "" {
		b.WriteString(" reins asks because: " + req.Decision.Reason)
	}
	return b.String()
}

// clip bounds what one value adds to the question.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
