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
package profile
