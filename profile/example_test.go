package profile_test

import (
	"fmt"

	"github.com/reins-go/reins/profile"
)

// The built-in profiles, by seed vocabulary.
func ExampleAll() {
	for _, p := range profile.All() {
		fmt.Printf("%-16s %-18s %s\n", p.Family, p.Name, p.Description)
	}
	// Output:
	// policy-spec      PROFILE-SAFE       near-manual operation: most actions require explicit approval
	// policy-spec      PROFILE-DEV        semi-autonomous: low and medium risk actions run automatically; high risk asks
	// policy-spec      PROFILE-FULL-AUTO  fully autonomous: every policy-compliant action runs without prompting
	// permission-mode  read-only          allows read-only tools; denies mutating, exec, network and destructive tools
	// permission-mode  plan               denies tool execution entirely; for planning-only sessions
	// permission-mode  supervised         defers to the supervised autonomy gate unless an explicit permission rule matches
	// permission-mode  trusted            defers to the trusted autonomy gate, still protected by denied paths and checkpoints
	// permission-mode  autonomous         defers to the autonomous autonomy gate, still protected by denied paths and budget hard stops
	// permission-mode  emergency-stop     denies every tool execution
	// approval-mode    ask                explicit approval for all writes and commands
	// approval-mode    safe               read anything, write to the workspace only
	// approval-mode    auto               full workspace access, approval for external operations
	// approval-mode    yolo               full autonomy (dangerous); denied paths still hold
}

// Host groups come from configuration: the library ships no host names.
func ExampleProfile_WithHostGroup() {
	p := profile.MustBuiltin(profile.ProfileDev).
		WithHostGroup(profile.GroupPackageManagers, "registry.internal.example", "*.mirror.internal.example")
	c, err := p.Compile()
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(c.Name(), c.Band(), len(p.HostGroups[profile.GroupPackageManagers]))
	// Output: PROFILE-DEV trusted 2
}
