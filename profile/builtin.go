package profile

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// Family says which seed vocabulary a profile comes from. Its value is the string a profile
// file and [Profile.Describe] show ("policy-spec"); a profile changed by files, or built by the
// host, is [FamilyCustom].
type Family string

// Families of built-in profiles, one per seed vocabulary, and FamilyCustom.
const (
	FamilyPolicySpec     Family = "policy-spec"     // PROFILE-SAFE, PROFILE-DEV, PROFILE-FULL-AUTO
	FamilyPermissionMode Family = "permission-mode" // read-only, plan, supervised, trusted, autonomous, emergency-stop
	FamilyApprovalMode   Family = "approval-mode"   // ask, safe, auto, yolo
	FamilyCustom         Family = "custom"          // changed by files or built by the host
)

// Names of the built-in profiles.
const (
	// The policy spec's profiles.
	ProfileSafe     = "PROFILE-SAFE"
	ProfileDev      = "PROFILE-DEV"
	ProfileFullAuto = "PROFILE-FULL-AUTO"
	// The autonomy seed's permission modes (the last three are its dial bands).
	PermissionReadOnly      = "read-only"
	PermissionPlan          = "plan"
	PermissionSupervised    = "supervised"
	PermissionTrusted       = "trusted"
	PermissionAutonomous    = "autonomous"
	PermissionEmergencyStop = "emergency-stop"
	// The approval-mode seed's modes.
	ApprovalAsk  = "ask"
	ApprovalSafe = "safe"
	ApprovalAuto = "auto"
	ApprovalYolo = "yolo"
)

// DefaultProtectedPaths returns the read-and-write protected paths (secrets) every built-in
// profile protects: the autonomy seed's .env, .env.local, .ssh, id_rsa and id_ed25519, every
// .env.* file, the other OpenSSH private key names, .netrc and .git-credentials wherever they
// are, and the user's credential stores (~/.aws, ~/.azure, ~/.config/gcloud, ~/.kube,
// ~/.docker/config.json, ~/.npmrc, ~/.pypirc, ~/.gnupg, ~/.config/gh, ~/.config/hub, cargo,
// gem, terraform and vault credentials, ~/.pgpass). The list is the one the gate and the sandbox
// use too.
func DefaultProtectedPaths() []string { return fspath.Defaults().ReadWrite }

// DefaultWriteProtectedPaths returns the write-protected paths every built-in profile protects:
// what makes other programs run code or changes what an agent may do. .git (the git commands the
// gate allows still write it), .gitmodules, .gitconfig; shell rc and profile files (.bashrc,
// .bash_profile, .bash_login, .bash_logout, .profile, .zshrc, .zprofile, .zshenv, .zlogin,
// .zlogout, .config/fish); .envrc; .mcp.json; editor and agent configuration (.vscode, .idea,
// .claude, .codex, .cursor, .gemini); reins' own project configuration (.reins); .ripgreprc;
// package manager configuration that runs programs (.npmrc, .yarnrc, .yarnrc.yml); commit hooks
// (.pre-commit-config.yaml, .husky); CI workflows (.github/workflows). The gate also always
// write-protects the user configuration directory it loads profiles from.
func DefaultWriteProtectedPaths() []string { return fspath.Defaults().Write }

// ApprovalDeniedPaths are the sensitive directories the approval-mode seed denies by default, on
// top of [DefaultProtectedPaths].
func ApprovalDeniedPaths() []string { return []string{"~/.ssh", "~/.aws", "/etc"} }

// appendNew appends the entries of add that list lacks (compared ignoring ASCII case).
func appendNew(list []string, add ...string) []string {
	for _, e := range add {
		if !slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, e) }) {
			list = append(list, e)
		}
	}
	return list
}

// DefaultShellBlocklist returns the commands PROFILE-* deny outright (matched on argument tokens:
// "rm -rf /" matches `rm -rf / --no-preserve-root`, `/bin/rm -rf /`).
func DefaultShellBlocklist() []string {
	return []string{
		"rm -rf /", "rm -rf /*", "rm -rf ~", "rm -fr /", "rm -fr ~",
		"mkfs", "mke2fs", "fdisk", "sfdisk", "parted", "wipefs", "dd",
		"shutdown", "reboot", "halt", "poweroff", "init 0", "init 6",
		"chmod -R 777 /",
	}
}

// DefaultShellAllowlist returns the commands PROFILE-DEV runs without asking besides reading:
// the common build, test and dependency-install commands. Reading needs no entry: PROFILE-DEV's
// allow-read-only-shell rule allows every part of a command line the shell analysis proves
// read-only and not opaque (ls, cat, find, sort, stat, grep, rg, jq, git status, git log, git
// blame, version queries, ...), so an option that writes, runs a program or reaches the network
// still asks. An entry covers its command with any arguments (a token prefix), so it lists no
// read-only program that has options that write.
func DefaultShellAllowlist() []string {
	return []string{
		"ls", // no option of ls writes or runs a program
		"go build", "go test", "go vet", "go fmt", "go mod download", "go mod tidy", "go mod verify",
		"npm test", "npm install", "npm ci", "npm i", "npm run build", "npm run lint", "npm run test",
		"pnpm test", "pnpm install", "pnpm run build", "pnpm run lint", "pnpm run test",
		"yarn install", "yarn test",
		"pip install", "pip3 install", "python -m pip install", "python3 -m pip install",
		"python -m pytest", "python3 -m pytest", "pytest",
		"cargo build", "cargo test", "cargo check", "cargo fetch", "cargo clippy",
		"make",
	}
}

// Builtin returns the built-in profile with the given name, matched case-insensitively, as a
// fresh copy the caller may modify.
func Builtin(name string) (Profile, error) {
	for _, p := range builtins() {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("profile: no built-in profile %q (have %s)", name, strings.Join(Names(), ", "))
}

// MustBuiltin is like [Builtin] but panics if there is no such profile.
func MustBuiltin(name string) Profile {
	p, err := Builtin(name)
	if err != nil {
		panic(err)
	}
	return p
}

// Names returns the names of the built-in profiles, family by family.
func Names() []string {
	var names []string
	for _, p := range builtins() {
		names = append(names, p.Name)
	}
	return names
}

// All returns fresh copies of every built-in profile.
func All() []Profile { return builtins() }

// builtins builds every built-in profile afresh and deep-copies it ([Profile.Clone]): the
// builders share condition slices (networkRisk, onShell...) between rules and profiles, and no
// caller's change to one profile may reach another or the next call.
func builtins() []Profile {
	ps := []Profile{
		policySafe(), policyDev(), policyFullAuto(),
		permission(PermissionReadOnly, ModeReadOnly, 0, "allows read-only tools; denies mutating, exec, network and destructive tools"),
		permission(PermissionPlan, ModePlan, 0, "denies tool execution entirely; for planning-only sessions"),
		permission(PermissionSupervised, ModeDefault, policy.BandSupervised.Dial(), "defers to the supervised autonomy gate unless an explicit permission rule matches"),
		permission(PermissionTrusted, ModeDefault, policy.BandTrusted.Dial(), "defers to the trusted autonomy gate, still protected by denied paths and checkpoints"),
		permission(PermissionAutonomous, ModeDefault, policy.BandAutonomous.Dial(), "defers to the autonomous autonomy gate, still protected by denied paths and budget hard stops"),
		permission(PermissionEmergencyStop, ModeEmergencyStop, 0, "denies every tool execution"),
		approval(ApprovalAsk), approval(ApprovalSafe), approval(ApprovalAuto), approval(ApprovalYolo),
	}
	for i := range ps {
		ps[i] = ps[i].Clone()
	}
	return ps
}

func emptyGroups() map[string][]string {
	return map[string][]string{GroupAIAPIs: {}, GroupPackageManagers: {}, GroupConfiguredHosts: {}}
}

func rule(id string, prio int, v policy.Verdict, reason string, c policy.Condition) policy.Rule {
	return policy.Rule{ID: id, Priority: prio, Action: v, Reason: reason, Condition: c}
}

var (
	onShell       = []policy.Operation{policy.OpShell}
	onSelfUpgrade = []policy.Operation{policy.OpSelfUpgrade}
	onPlan        = []policy.Operation{policy.OpPlan}
	networkRisk   = policy.MatchLevels(risk.Network)
)

func policySpecBase(name, desc string, autonomy float64, limits Limits) Profile {
	return Profile{
		Name: name, Description: desc, Family: FamilyPolicySpec, Autonomy: autonomy,
		ProtectedPaths:      DefaultProtectedPaths(),
		WriteProtectedPaths: DefaultWriteProtectedPaths(),
		ShellBlocklist:      DefaultShellBlocklist(),
		HostGroups:          emptyGroups(),
		Limits:              limits,
	}
}

// policySafe: near-manual. File modifications confirm, shell blocked, network to AI APIs only,
// self-upgrade blocked, plans never auto-approved, one operation at a time.
func policySafe() Profile {
	p := policySpecBase(ProfileSafe, "near-manual operation: most actions require explicit approval", policy.BandSupervised.Dial(),
		Limits{MaxConcurrentOps: 1, MaxFilesPerPlan: 10, Timeout: 2 * time.Minute})
	dev := policy.DevRules()
	p.Rules = []policy.Rule{
		dev[0], dev[1],
		rule("deny-shell", 2, policy.Deny, "shell execution is blocked in PROFILE-SAFE", policy.Condition{OperationType: onShell}),
		rule("deny-self-upgrade", 2, policy.Deny, "self-upgrade is blocked in PROFILE-SAFE", policy.Condition{OperationType: onSelfUpgrade}),
		rule("allow-ai-apis", 3, policy.Allow, "AI API hosts are reachable", policy.Condition{Risk: networkRisk, Hosts: []string{"@" + GroupAIAPIs, "@" + policy.ListNetworkAllowlist}}),
		rule("deny-network", 3, policy.Deny, "PROFILE-SAFE reaches AI APIs only", policy.Condition{Risk: networkRisk}),
		rule("confirm-plans", 3, policy.Confirm, "PROFILE-SAFE never auto-approves a plan", policy.Condition{OperationType: onPlan}),
		// PROFILE-DEV's confirm-high-risk and confirm-delete-ops: a high-severity read, and the
		// read-only part of a deletion, ask here too, so that PROFILE-SAFE is at least as strict
		// as PROFILE-DEV part by part, which is what AtLeastAsRestrictive proves (a deletion
		// always has a destructive part, which asks, so the action's decision is the same).
		dev[2], dev[3],
		rule("allow-reads", 4, policy.Allow, "reading inside the project is allowed", policy.Condition{Risk: policy.MatchLevels(risk.ReadOnly)}),
		dev[5],
	}
	return p
}

// policyDev: the spec's default DEV rules plus the capability matrix's DEV column: shell commands
// run automatically only from the allowlist, network reaches AI APIs and package managers (and
// nothing else, whatever the severity: the network rules come before confirm-high-risk),
// self-upgrade is blocked.
func policyDev() Profile {
	p := policySpecBase(ProfileDev, "semi-autonomous: low and medium risk actions run automatically; high risk asks", policy.BandTrusted.Dial(),
		Limits{MaxConcurrentOps: 3, MaxFilesPerPlan: 50, Timeout: 10 * time.Minute})
	p.ShellAllowlist = DefaultShellAllowlist()
	dev := policy.DevRules()
	p.Rules = []policy.Rule{
		dev[0], dev[1],
		rule("deny-self-upgrade", 2, policy.Deny, "self-upgrade is blocked in PROFILE-DEV", policy.Condition{OperationType: onSelfUpgrade}),
		rule("allow-network-hosts", 2, policy.Allow, "AI API and package-manager hosts are reachable",
			policy.Condition{Risk: networkRisk, Hosts: []string{"@" + GroupAIAPIs, "@" + GroupPackageManagers, "@" + policy.ListNetworkAllowlist}}),
		rule("deny-network", 2, policy.Deny, "PROFILE-DEV reaches AI APIs and package managers only", policy.Condition{Risk: networkRisk}),
		dev[2], dev[3],
		rule("allow-read-only-shell", 4, policy.Allow, "the shell analysis proves this part read-only",
			policy.Condition{OperationType: onShell, Risk: policy.MatchLevels(risk.ReadOnly)}),
		rule("allow-shell-allowlist", 4, policy.Allow, "the command is on the shell allowlist",
			policy.Condition{OperationType: onShell, Commands: []string{"@" + policy.ListShellAllowlist}}),
		rule("confirm-shell", 4, policy.Confirm, "PROFILE-DEV runs only allowlisted commands without asking", policy.Condition{OperationType: onShell}),
		dev[4], dev[5],
	}
	return p
}

// policyFullAuto: every policy-compliant action runs without prompting; the blocklist and the
// network host groups still filter; self-upgrade is allowed with a checkpoint and a notification.
func policyFullAuto() Profile {
	p := policySpecBase(ProfileFullAuto, "fully autonomous: every policy-compliant action runs without prompting", policy.BandAutonomous.Dial(),
		Limits{MaxConcurrentOps: 5, MaxFilesPerPlan: 200, Timeout: 30 * time.Minute})
	dev := policy.DevRules()
	selfUpgrade := rule("allow-self-upgrade", 4, policy.Allow, "self-upgrade is allowed with gates: checkpoint first, notify the user", policy.Condition{OperationType: onSelfUpgrade})
	selfUpgrade.Obligations = policy.Checkpoint | policy.Notify
	p.Rules = []policy.Rule{
		dev[0], dev[1],
		rule("allow-network-hosts", 3, policy.Allow, "AI API, package-manager and configured hosts are reachable",
			policy.Condition{Risk: networkRisk, Hosts: []string{"@" + GroupAIAPIs, "@" + GroupPackageManagers, "@" + GroupConfiguredHosts, "@" + policy.ListNetworkAllowlist}}),
		rule("deny-network", 3, policy.Deny, "PROFILE-FULL-AUTO reaches AI APIs, package managers and configured hosts only", policy.Condition{Risk: networkRisk}),
		selfUpgrade,
		rule("default-allow", 99, policy.Allow, "policy-compliant actions run without prompting", policy.Condition{}),
	}
	return p
}

func bandLimits(dial float64) Limits {
	switch b, _ := policy.BandOf(dial); b {
	case policy.BandAutonomous:
		return Limits{MaxConcurrentOps: 5, MaxFilesPerPlan: 200, Timeout: 30 * time.Minute}
	case policy.BandTrusted:
		return Limits{MaxConcurrentOps: 3, MaxFilesPerPlan: 50, Timeout: 10 * time.Minute}
	}
	return Limits{MaxConcurrentOps: 1, MaxFilesPerPlan: 10, Timeout: 2 * time.Minute}
}

func permission(name string, mode Mode, dial float64, desc string) Profile {
	return Profile{
		Name: name, Description: desc, Family: FamilyPermissionMode, Autonomy: dial, Mode: mode,
		ProtectedPaths:      DefaultProtectedPaths(),
		WriteProtectedPaths: DefaultWriteProtectedPaths(),
		HostGroups:          emptyGroups(),
		Limits:              bandLimits(dial),
	}
}

// approval builds the approval-mode seed's profiles:
//
//	Mode  Reads  Workspace writes  Shell   Network  External writes
//	ask   yes    prompt            prompt  prompt   prompt
//	safe  yes    yes               prompt  prompt   prompt
//	auto  yes    yes               yes     prompt   prompt
//	yolo  yes    yes               yes     yes      yes
//
// allowed_tools and auto_approve_patterns allow their tools and commands in every mode; denied
// paths (the defaults plus ~/.ssh, ~/.aws, /etc) hold even in yolo.
func approval(name string) Profile {
	dial := map[string]float64{ApprovalAsk: 0, ApprovalSafe: policy.TrustedFrom, ApprovalAuto: policy.AutonomousFrom, ApprovalYolo: 1}[name]
	desc := map[string]string{
		ApprovalAsk:  "explicit approval for all writes and commands",
		ApprovalSafe: "read anything, write to the workspace only",
		ApprovalAuto: "full workspace access, approval for external operations",
		ApprovalYolo: "full autonomy (dangerous); denied paths still hold",
	}[name]
	p := Profile{
		Name: name, Description: desc, Family: FamilyApprovalMode, Autonomy: dial,
		ProtectedPaths:      appendNew(DefaultProtectedPaths(), ApprovalDeniedPaths()...),
		WriteProtectedPaths: DefaultWriteProtectedPaths(),
		HostGroups:          emptyGroups(),
		ExternalWrites:      ExternalWritesByPolicy,
		Limits:              bandLimits(dial),
	}
	rules := []policy.Rule{
		rule("allow-allowed-tools", 1, policy.Allow, "the tool is on allowed_tools", policy.Condition{Tools: []string{"@" + policy.ListAllowedTools}}),
		rule("allow-auto-approve-patterns", 2, policy.Allow, "the command matches auto_approve_patterns",
			policy.Condition{OperationType: onShell, Commands: []string{"@" + policy.ListAutoApprovePatterns}}),
	}
	if name == ApprovalYolo {
		rules = append(rules, rule("default-allow", 99, policy.Allow, "yolo: full autonomy", policy.Condition{}))
		p.Rules = rules
		return p
	}
	rules = append(rules, rule("allow-reads", 10, policy.Allow, "reads are always allowed", policy.Condition{Risk: policy.MatchLevels(risk.ReadOnly)}))
	if name != ApprovalAsk {
		rules = append(rules, rule("allow-workspace-writes", 20, policy.Allow, name+": writes inside the workspace are allowed",
			policy.Condition{Risk: policy.MatchLevels(risk.Mutating, risk.Destructive), TargetPattern: "**"}))
	}
	if name == ApprovalAuto {
		rules = append(rules, rule("allow-shell", 30, policy.Allow, "auto: shell commands are allowed",
			policy.Condition{Risk: policy.MatchLevels(risk.Exec)}))
	}
	rules = append(rules, rule("default-confirm", 99, policy.Confirm, name+": everything else asks", policy.Condition{}))
	p.Rules = rules
	return p
}
