// Package profile holds reins' named policy bundles: how autonomous the agent is (the dial and
// the permission mode), what it may never touch (protected paths), the lists its rules refer to
// (shell allow and block lists, host groups) and the prioritized rules themselves.
//
// In the decision flow, the gate compiles one [Profile] (see [Profile.Compile]) and walks it for
// every action: its mode is layer 4, its rules layer 5, its dial selects the column of the
// autonomy matrix in layer 6, and its protected paths feed layer 3.
//
// # Built-in profiles
//
// Every vocabulary of the seeds has its profiles, under distinct names ([Names]):
//
//	policy-spec       PROFILE-SAFE, PROFILE-DEV, PROFILE-FULL-AUTO
//	permission-mode   read-only, plan, supervised, trusted, autonomous, emergency-stop
//	approval-mode     ask, safe, auto, yolo
//
// PROFILE-SAFE and the approval mode "safe" are different profiles. Lookups ([Builtin]) ignore
// case but are otherwise exact.
//
// The policy-spec profiles reproduce the spec's capability matrix with rules: PROFILE-DEV is the
// spec's six default rules plus, at the same priorities and in declaration order, the rules its
// column needs (only allowlisted shell commands run without asking, network reaches the AI API
// and package-manager host groups, self-upgrade is blocked). Where the spec says "Allowlist
// Only", other commands ask (CONFIRM) rather than fail; where it says "Blocked", they are denied.
// Network access outside the allowed host groups is denied. PROFILE-FULL-AUTO allows self-upgrade
// with a checkpoint and a notification ("allowed with gates").
//
// The permission-mode profiles have no rules: supervised, trusted and autonomous are the dial at
// 0.0, 0.5 and 1.0 and defer to the autonomy matrix; read-only, plan and emergency-stop are modes.
//
// The approval-mode profiles reproduce the approval seed's table (reads, workspace writes,
// shell, network, external writes) with rules; external writes are left to those rules instead of
// halting the run, and ~/.ssh, ~/.aws and /etc are protected on top of the defaults.
//
// # Presets
//
// Each built-in profile is also a value, a [Preset]: profile.Dev.Profile() is
// MustBuiltin("PROFILE-DEV"), as a fresh copy. A preset is named after its profile; the approval
// modes, whose "safe" would collide with PROFILE-SAFE's [Safe], carry the suffix Approval.
// Three kinds of names never share a spelling: presets (profile.Trusted, a [Preset]), profile
// names as configuration spells them (profile.PermissionTrusted, "trusted", a string), permission
// modes (profile.ModePlan, a [Mode]); the autonomy bands are policy.BandTrusted and its siblings.
//
//	Preset                 Profile name (Builtin)   Family
//	Safe                   PROFILE-SAFE             policy-spec
//	Dev                    PROFILE-DEV              policy-spec
//	FullAuto               PROFILE-FULL-AUTO        policy-spec
//	ReadOnly               read-only                permission-mode
//	Plan                   plan                     permission-mode
//	Supervised             supervised               permission-mode
//	Trusted                trusted                  permission-mode
//	Autonomous             autonomous               permission-mode
//	EmergencyStop          emergency-stop           permission-mode
//	AskApproval            ask                      approval-mode
//	SafeApproval           safe                     approval-mode
//	AutoApproval           auto                     approval-mode
//	YoloApproval           yolo                     approval-mode
//
// profile.Trusted is the permission-mode profile; policy.Trusted is the autonomy band it sits
// in. Names that come from configuration are looked up with [Builtin] and [MustBuiltin]; the
// name constants (ProfileDev, ModeTrusted, ApprovalYolo...) are those names.
//
// # Host groups
//
// reins ships no host names. The built-in profiles refer to the groups "ai-apis",
// "package-managers" and "configured-hosts", which are empty until the host fills them
// ([Profile.WithHostGroup]); until then, network rules that need them allow nothing.
//
// # Defaults
//
// Resource limits per band: supervised 1 operation at a time, 10 files per plan, 2 minutes per
// operation; trusted 3, 50, 10 minutes; autonomous 5, 200, 30 minutes. The zero Mode is Default,
// the zero ExternalWrites halts the run.
//
// # Files
//
// Package [github.com/reins-go/reins/profile/loader] loads a profile from files: a user file
// and a project file, each optional, validated against a JSON Schema and applied in that order
// on top of a built-in profile, with the provenance of every setting and the project's trust.
// It is a separate package so that a host that uses only built-in profiles links no file
// decoder or schema validator.
//
// # Managed tier
//
// An organisation's managed tier travels with the profile ([Profile.Managed], a [Managed]): its
// caps on the autonomy band and the permission mode, whether it allows managed rules only, and
// its floor (DENY and CONFIRM rules, protected paths, the list entries they refer to).
// [Managed.Impose] puts the floor ahead of every other rule of a profile; [Profile.Compile]
// refuses a profile that carries a tier it does not honour (its floor missing or outranked, its
// dial or mode past the caps), so a run cannot be handed one, and [AtLeastAsRestrictive] counts
// leaving the tier, or raising a cap, as a loosening. Package loader builds the tier from the
// managed file or a signed policy bundle; package reins keeps it through every switch.
//
// # Where the seeds disagree
//
// The seeds contradict each other in a few places; reins makes one explicit choice for each, and
// a test (loader/seedconflict_test.go) pins it:
//
//   - Supervised and destructive actions. 000_fb07db2e33b12ef6.txt says of the Supervised band
//     "Every mutating/exec/destructive action asks the user"; the autonomy gate table of
//     001_83794bc07ce6a245.txt gives "Destructive | Deny" under Supervised. reins follows the
//     table: the matrix denies, and a profile that wants to ask says so with a CONFIRM rule.
//   - Switching to a stricter profile. 003_db46da1bf4b524c5.txt says "Switching to a more
//     restrictive profile is always allowed", but names no order between its PROFILE-* profiles
//     and the other seeds' profiles, nor what "more restrictive" means once files change them.
//     reins has one order ([AtLeastAsRestrictive]), used by switching, the loader and replay: a
//     profile is at least as restrictive when it provably decides no action less strictly and
//     keeps every resource limit at least as tight. It proves each family's own order for the
//     built-in profiles (PROFILE-SAFE, PROFILE-DEV, PROFILE-FULL-AUTO; emergency-stop, plan,
//     read-only, supervised, trusted, autonomous; ask, safe, auto, yolo) and some orders across
//     families (PROFILE-SAFE is at least as restrictive as trusted), and a switch to plan or
//     emergency-stop never needs confirmation. The same switch with files applied to both
//     profiles can need confirmation: a user's ALLOW rule keeps allowing under supervised
//     without the notification and sandbox the trusted band adds.
//   - The approval block's default mode. 004_3116849cacc14deb.txt gives "Safe default (ModeSafe)";
//     the policy spec's default profile is PROFILE-SAFE. With no file naming a profile, reins
//     starts from PROFILE-SAFE; a user file's approval block without a mode selects safe (a
//     project file never selects a profile implicitly).
//   - Commands that execute programs. The autonomy gate table of 000_fb07db2e33b12ef6.txt gives
//     "Exec | Ask | Notify (sandbox) | Allow (sandbox)", with no checkpoint, while its rollback
//     model says "Every run is reversible. Autonomous runs are safe *because* every batch is
//     checkpointed." A command such as "go test" or "npm install" can rewrite the workspace, so
//     reins follows the promise: [ExecCheckpoints] is on by default and every exec part that
//     goes ahead is checkpointed too, unless the shell analysis proves the command read-only.
//     A profile that wants the table exactly sets exec_checkpoints to "off" (a loosening). The
//     gate's seed-table test runs the table both ways.
//
// # Security model and limitations
//
// Switching ([AtLeastAsRestrictive]) compares whole profiles by their effect on decisions, and
// conservatively: a switch it cannot prove harmless needs confirmation even when it is
// harmless. It compares what a profile decides, not what a program does once allowed. See
// package loader for the trust model of profile files.
package profile
