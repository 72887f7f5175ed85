package gate_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// A host wires a gate with a built-in profile and checks each action before running it.
func Example() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)

	sink := audit.NewMemory(100)
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{ws}, Audit: sink})
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
		d, err := g.Check(context.Background(), a)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(d)
	}
	fmt.Println(sink.Len(), "records")
	// Output:
	// ALLOW+checkpoint+notify by rule allow-low-med-risk: low- and medium-risk actions run automatically
	// DENY by boundary protected-path: target ".env" is protected (.env)
	// ALLOW+checkpoint+notify+sandbox by rule allow-shell-allowlist: the command is on the shell allowlist
	// DENY by rule deny-dangerous-commands: the command is on the shell blocklist
	// 4 records
}

// The autonomy matrix decides when a profile has no rules: here the seed's Trusted band.
func ExampleGate_Check() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	g, err := gate.New(profile.MustBuiltin(profile.PermissionTrusted), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, l := range risk.Levels() {
		d, err := g.Check(context.Background(), policy.Action{Tool: "tool", Operation: policy.OpTool, Risk: risk.Of(l)})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("%-11s %s\n", l, strings.TrimSpace(d.Verdict.String()+" "+d.Obligations.String()))
	}
	// Output:
	// read_only   ALLOW
	// mutating    ALLOW checkpoint+notify
	// exec        ALLOW checkpoint+notify+sandbox
	// destructive CONFIRM checkpoint
	// network     ALLOW
}

// A hard stop latches: after three failures of one tool in a row every action is denied until
// the host resets the gate.
func ExampleGate_RecordResult() {
	ws, err := os.MkdirTemp("", "reins-example-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(ws)
	ctx := context.Background()
	g, err := gate.New(profile.MustBuiltin(profile.PermissionAutonomous), &gate.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for range 3 {
		g.RecordResult(ctx, "bash", fmt.Errorf("exit status 1"))
	}
	read := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"go.mod"}}
	d, _ := g.Check(ctx, read)
	fmt.Println(d.Verdict, d.Layer)
	if err := g.Reset(ctx, "operator looked at the failures"); err != nil {
		fmt.Println("error:", err)
		return
	}
	d, _ = g.Check(ctx, read)
	fmt.Println(d.Verdict, d.Layer)
	// Output:
	// DENY halted
	// ALLOW matrix
}
