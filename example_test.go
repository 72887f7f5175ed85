package reins_test

import (
	"context"
	"fmt"
	"os"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// A supervised run asks before reaching the network. The human approves for the session, so
// the same request goes ahead the second time without a question, and a request to another
// host is asked about again.
func ExampleRun_Do() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "reins-example-")
	defer os.RemoveAll(ws)
	asked := 0
	r, err := reins.New(ctx, profile.Supervised.Profile(), &reins.Options{
		Workspace: []string{ws},
		Approver: reins.ApproverFunc(func(_ context.Context, req reins.Request) (reins.Answer, error) {
			asked++
			if req.Action.Host == "example.com" {
				return reins.Answer{Verdict: policy.Allow, Scope: reins.ForSession, By: "alice"}, nil
			}
			return reins.Answer{Verdict: policy.Deny, By: "alice"}, nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fetch := func(host string) {
		a := policy.Action{Tool: "fetch", Operation: policy.OpNetwork, Host: host}
		out, err := r.Do(ctx, a, func(context.Context, gate.Decision) error { return nil })
		fmt.Printf("%s: ran=%v denied=%v asked=%d\n", host, out.Ran, err != nil, asked)
	}
	fetch("example.com")
	fetch("example.com")
	fetch("example.org")
	grants, _ := r.Grants(ctx)
	fmt.Println("grants:", len(grants))
	// Output:
	// example.com: ran=true denied=false asked=1
	// example.com: ran=true denied=false asked=1
	// example.org: ran=false denied=true asked=2
	// grants: 1
}

// Explain shows why: every layer the action passed, and for a command line each simple command
// with the verdict it got. The line takes the strictest.
func ExampleRun_Explain() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	ctx := context.Background()
	r, err := reins.New(ctx, profile.Dev.Profile(), &reins.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer r.Close()
	e, err := r.Explain(ctx, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "ls -la && rm -rf build"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(e.Decision.Verdict, "by", e.Decision.Layer)
	for _, c := range e.Commands {
		fmt.Printf("%-7s %s\n", c.Verdict, c.Command.Text)
	}
	// Output:
	// CONFIRM by rule
	// ALLOW   ls -la
	// CONFIRM rm -rf build
}

// Switching follows the policy spec: a stricter profile applies at once, a looser one only when
// ConfirmSwitch says yes.
func ExampleRun_SwitchTo() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	ctx := context.Background()
	r, err := reins.New(ctx, profile.Dev.Profile(), &reins.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer r.Close()
	if _, err := r.SwitchTo(ctx, profile.ProfileFullAuto); err != nil {
		fmt.Println("loosening without confirmation: refused")
	}
	sw, err := r.SwitchTo(ctx, profile.ProfileSafe)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(sw.From, "->", sw.To, "applied:", sw.Applied)
	fmt.Println("active:", r.Profile().Profile().Name)
	// Output:
	// loosening without confirmation: refused
	// PROFILE-DEV -> PROFILE-SAFE applied: true
	// active: PROFILE-SAFE
}
