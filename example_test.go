package session_test

import (
	"context"
	"fmt"
	"os"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// A supervised run asks before reaching the network. The human approves for the session, so
// the same request goes ahead the second time without a question, and a request to another
// host is asked about again.
func ExampleSession_Do() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "reins-example-")
	defer os.RemoveAll(ws)
	g, err := gate.New(profile.MustBuiltin(profile.PermissionSupervised), &gate.Options{Workspace: []string{ws}, Audit: audit.Discard})
	if err != nil {
		fmt.Println(err)
		return
	}
	asked := 0
	s, err := session.New(ctx, g, &session.Options{
		Approver: session.ApproverFunc(func(_ context.Context, req session.Request) (session.Answer, error) {
			asked++
			if req.Action.Host == "example.com" {
				return session.Answer{Verdict: policy.Allow, Scope: session.ForSession, By: "alice"}, nil
			}
			return session.Answer{Verdict: policy.Deny, By: "alice"}, nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fetch := func(host string) {
		a := policy.Action{Tool: "fetch", Operation: policy.OpNetwork, Host: host}
		out, err := s.Do(ctx, a, func(context.Context, gate.Decision) error { return nil })
		fmt.Printf("%s: ran=%v denied=%v asked=%d\n", host, out.Ran, err != nil, asked)
	}
	fetch("example.com")
	fetch("example.com")
	fetch("example.org")
	fmt.Println("grants:", len(s.Grants()))
	// Output:
	// example.com: ran=true denied=false asked=1
	// example.com: ran=true denied=false asked=1
	// example.org: ran=false denied=true asked=2
	// grants: 1
}
