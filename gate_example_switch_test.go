package gate_test

import (
	"context"
	"fmt"
	"os"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Explain shows why: every layer the action passed, and for a command line each simple command
// with the verdict it got. The line takes the strictest.
func ExampleGate_Explain() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	e, err := g.Explain(context.Background(), policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "ls -la && rm -rf build"})
	if err != nil && e.Decision.Verdict != policy.Deny {
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
func ExampleGate_SwitchTo() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	ctx := context.Background()
	if _, err := g.SwitchTo(ctx, profile.ProfileFullAuto); err != nil {
		fmt.Println("loosening without confirmation: refused")
	}
	sw, err := g.SwitchTo(ctx, profile.ProfileSafe)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(sw.From, "->", sw.To, "applied:", sw.Applied)
	fmt.Println("active:", g.Profile().Profile().Name)
	// Output:
	// loosening without confirmation: refused
	// PROFILE-DEV -> PROFILE-SAFE applied: true
	// active: PROFILE-SAFE
}
