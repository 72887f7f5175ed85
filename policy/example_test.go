package policy_test

import (
	"fmt"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// Compile the policy spec's PROFILE-DEV rules and evaluate two parts of an action.
func ExampleCompile() {
	rules, err := policy.Compile(policy.DevRules(), &policy.Env{
		Lists: map[string][]string{policy.ListShellBlocklist: {"mkfs", "rm -rf /"}},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	edit := policy.Subject{Operation: policy.OpWrite, Level: risk.Mutating, Severity: risk.Medium, Root: "/w", Target: "src/main.go"}
	if m, ok := rules.Evaluate(&edit); ok {
		fmt.Println(m.Rule.ID, m.Verdict)
	}
	format := policy.Subject{Operation: policy.OpShell, Level: risk.Exec, Severity: risk.Medium,
		Command: "mkfs /dev/sda1", Argv: []string{"mkfs", "/dev/sda1"}}
	if m, ok := rules.Evaluate(&format); ok {
		fmt.Println(m.Rule.ID, m.Verdict)
	}
	// Output:
	// allow-low-med-risk ALLOW
	// deny-dangerous-commands DENY
}

// Unknown verdict text never becomes Allow.
func ExampleParseVerdict() {
	v, err := policy.ParseVerdict("ask")
	fmt.Println(v, err)
	v, err = policy.ParseVerdict("permit")
	fmt.Println(v, err != nil)
	// Output:
	// CONFIRM <nil>
	// DENY true
}

// The autonomy matrix, cell by cell.
func ExampleMatrix() {
	for _, b := range []policy.Band{policy.BandSupervised, policy.BandTrusted, policy.BandAutonomous} {
		fmt.Println(b, policy.Matrix(b, risk.Mutating))
	}
	// Output:
	// supervised CONFIRM
	// trusted ALLOW+checkpoint+notify
	// autonomous ALLOW+checkpoint
}

// Explain says, for every rule, whether it matched and why not.
func ExampleRuleSet_Explain() {
	rules := policy.MustCompile([]policy.Rule{
		{ID: "deny-secrets", Priority: 1, Action: policy.Deny, Condition: policy.Condition{TargetPattern: "**/*.pem"}},
		{ID: "allow-src", Priority: 2, Action: policy.Allow, Condition: policy.Condition{TargetPattern: "src/**"}},
	}, nil)
	s := policy.Subject{Operation: policy.OpRead, Level: risk.ReadOnly, Severity: risk.Low, Root: "/w", Target: "src/app.go"}
	for _, t := range rules.Explain(&s) {
		fmt.Printf("%s matched=%v decisive=%v: %s\n", t.RuleID, t.Matched, t.Decisive, t.Why)
	}
	// Output:
	// deny-secrets matched=false decisive=false: target_pattern does not match src/app.go
	// allow-src matched=true decisive=true: all conditions hold
}
