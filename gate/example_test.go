package gate_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// A gate compiles a built-in profile over a workspace and decides each action: a pure function
// of the gate, the run state (here none) and the action.
func Example() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)

	g, err := gate.New(profile.Dev.Profile(), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, a := range []policy.Action{
		{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"main.go"}},
		{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{".env"}},
		{Tool: "bash", Operation: policy.OpShell, Command: "go test ./..."},
		{Tool: "bash", Operation: policy.OpShell, Command: "shutdown -h now"},
	} {
		fmt.Println(g.Decide(nil, a, nil))
	}
	// Output:
	// ALLOW+checkpoint+notify by rule allow-low-med-risk: low- and medium-risk actions run automatically
	// DENY by boundary protected-path: target ".env" is protected (.env)
	// ALLOW+checkpoint+notify+sandbox by rule allow-shell-allowlist: the command is on the shell allowlist
	// DENY by rule deny-dangerous-commands: the command is on the shell blocklist
}

// The autonomy matrix decides when a profile has no rules: here the seed's Trusted band.
func ExampleGate_Decide() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	g, err := gate.New(profile.Trusted.Profile(), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, l := range risk.Levels() {
		d := g.Decide(nil, policy.Action{Tool: "tool", Operation: policy.OpTool, Risk: risk.Of(l)}, nil)
		fmt.Printf("%-11s %s\n", l, strings.TrimSpace(d.Verdict.String()+" "+d.Obligations.String()))
	}
	// Output:
	// read_only   ALLOW
	// mutating    ALLOW checkpoint+notify
	// exec        ALLOW checkpoint+notify+sandbox
	// destructive CONFIRM checkpoint
	// network     ALLOW
}

// The run state is an input: a latched halt denies everything, and a hard stop the decision
// finds is named for the run to latch. Nothing is latched by the gate itself.
func ExampleState() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	g, err := gate.New(profile.Autonomous.Profile(), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	read := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"go.mod"}}
	halted := &gate.State{Halt: &gate.Halt{Cause: gate.CauseToolFailures, Reason: "bash failed 3 times in a row"}}
	fmt.Println(g.Decide(halted, read, nil))
	fmt.Println(g.Decide(nil, read, nil).Verdict)
	d := g.Decide(nil, policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"/etc/motd"}}, nil)
	fmt.Println(d.Verdict, d.Layer, d.Latch)
	// Output:
	// DENY by halted: the run is halted: bash failed 3 times in a row
	// ALLOW
	// DENY hard_stop external_write
}

// A trace collected while deciding explains the decision without deciding again.
func ExampleTrace_Explanation() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	g, err := gate.New(profile.Dev.Profile(), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	var tr gate.Trace
	d := g.Decide(nil, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "rm -rf build"}, &tr)
	e := tr.Explanation(d)
	fmt.Println(e.Decision.Verdict, e.Decision.RuleID)
	for _, c := range e.Commands {
		fmt.Println(c.Command.Text, c.Verdict, c.RuleID)
	}
	// Output:
	// CONFIRM confirm-high-risk
	// rm -rf build CONFIRM confirm-high-risk
}
