package profile_test

import (
	"fmt"
	"strings"

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
	p := profile.Dev.Profile().
		WithHostGroup(profile.GroupPackageManagers, "registry.internal.example", "*.mirror.internal.example")
	c, err := p.Compile()
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(c.Name(), c.Band(), len(p.HostGroups[profile.GroupPackageManagers]))
	// Output: PROFILE-DEV trusted 2
}

// Describe prints a profile for "profile show". (The hash line is left out here: it changes
// whenever the profile format grows.)
func ExampleProfile_Describe() {
	for _, line := range strings.Split(profile.AutoApproval.Profile().Describe(), "\n") {
		if !strings.Contains(line, "sha256:") {
			fmt.Println(line)
		}
	}
	// Output:
	// profile auto (approval-mode)
	//   full workspace access, approval for external operations
	// settings
	//   permission mode        default
	//   autonomy               0.67 (autonomous band)
	//   external writes        policy
	//   exec checkpoints       on
	// limits
	//   max concurrent ops     5
	//   max files per plan     200
	//   timeout                30m0s
	// lists
	//   denied paths           ".env", ".env.local", ".ssh", "id_rsa", "id_ed25519", ".env.*", "id_ecdsa",
	//                          "id_dsa", ".netrc", ".git-credentials", "~/.aws", "~/.azure",
	//                          "~/.config/gcloud", "~/.kube", "~/.docker/config.json", "~/.npmrc",
	//                          "~/.pypirc", "~/.gnupg", "~/.config/gh", "~/.config/hub",
	//                          "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials",
	//                          "~/.terraform.d/credentials.tfrc.json", "~/.vault-token", "~/.pgpass",
	//                          "~/.ssh", "/etc"
	//   write-protected paths  ".git", ".gitmodules", ".gitconfig", ".bashrc", ".bash_profile",
	//                          ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
	//                          ".zshenv", ".zlogin", ".zlogout", ".config/fish", ".envrc", ".mcp.json",
	//                          ".vscode", ".idea", ".claude", ".codex", ".cursor", ".gemini", ".reins",
	//                          ".ripgreprc", ".npmrc", ".yarnrc", ".yarnrc.yml",
	//                          ".pre-commit-config.yaml", ".husky", ".github/workflows"
	//   trusted paths          none
	//   shell allowlist        none
	//   shell blocklist        none
	//   network allowlist      none
	//   allowed tools          none
	//   auto-approve patterns  none
	// host groups
	//   ai-apis                none
	//   configured-hosts       none
	//   package-managers       none
	// registries: none
	// rules (6, in evaluation order)
	//      1  ALLOW   allow-allowed-tools: tools=["@allowed_tools"]
	//         the tool is on allowed_tools
	//      2  ALLOW   allow-auto-approve-patterns: operation=shell commands=["@auto_approve_patterns"]
	//         the command matches auto_approve_patterns
	//     10  ALLOW   allow-reads: risk=read_only
	//         reads are always allowed
	//     20  ALLOW   allow-workspace-writes: risk=mutating|destructive target="**"
	//         auto: writes inside the workspace are allowed
	//     30  ALLOW   allow-shell: risk=exec
	//         auto: shell commands are allowed
	//     99  CONFIRM default-confirm: any action
	//         auto: everything else asks
	//
}
