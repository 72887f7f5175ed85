package loader_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile/loader"
)

// TestReplacementJudgedByEffect: a project rule that replaces a rule is judged by what it does
// to decisions. Under PROFILE-FULL-AUTO, allow-self-upgrade is ALLOW+checkpoint+notify at
// priority 4 (operation self_upgrade) and default-allow is ALLOW at 99; the user adds
// allow-docs (ALLOW+notify) and confirm-ci (CONFIRM+checkpoint).
func TestReplacementJudgedByEffect(t *testing.T) {
	t.Parallel()
	const user = `{"active_profile": "PROFILE-FULL-AUTO", "custom_rules": [
		{"id": "allow-docs", "priority": 5, "condition": {"target_pattern": "docs/**"}, "action": "ALLOW", "obligations": ["notify"]},
		{"id": "allow-cat", "priority": 5, "condition": {"commands": ["cat"]}, "action": "ALLOW"},
		{"id": "confirm-ci", "priority": 3, "condition": {"target_pattern": ".ci/**", "tools": ["edit"]}, "action": "CONFIRM", "obligations": ["checkpoint"]}
	]}`
	const upgrade = `"allow-self-upgrade"`
	for _, tc := range []struct {
		name, rule string // the project's rule
		reason     string // "" means it applies without trust
	}{
		{"issue 12: a DENY that never matches", `{"id": ` + upgrade + `, "priority": 4, "condition": {"tools": ["never-matches"]}, "action": "DENY"}`,
			`replaces the ALLOW rule "allow-self-upgrade", which adds checkpoint+notify, with a DENY rule that does not cover every action it allowed: those fall through to later rules or the autonomy matrix, without its obligations`},
		{"a DENY on another operation", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["write"]}, "action": "DENY"}`,
			`replaces the ALLOW rule "allow-self-upgrade", which adds checkpoint+notify, with a DENY rule that does not cover every action it allowed: those fall through to later rules or the autonomy matrix, without its obligations`},
		{"a DENY that covers it, in place", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["self_upgrade"]}, "action": "DENY"}`, ""},
		{"a DENY that covers it, in another spelling and more", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["edit", "SELF_UPGRADE"]}, "action": "DENY"}`, ""},
		{"a DENY that covers everything, earlier", `{"id": ` + upgrade + `, "priority": 0, "condition": {}, "action": "DENY"}`, ""},
		{"a covering DENY, later", `{"id": ` + upgrade + `, "priority": 5, "condition": {}, "action": "DENY"}`,
			`replaces the ALLOW rule "allow-self-upgrade", which adds checkpoint+notify, with a DENY rule that does not cover every action it allowed: those fall through to later rules or the autonomy matrix, without its obligations`},
		{"CONFIRM without the obligations", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["self_upgrade"]}, "action": "CONFIRM"}`,
			`drops obligations of the ALLOW rule "allow-self-upgrade"`},
		{"CONFIRM with the obligations", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["self_upgrade"]}, "action": "CONFIRM", "obligations": ["notify", "checkpoint"]}`, ""},
		{"ALLOW with one obligation less", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["self_upgrade"]}, "action": "ALLOW", "obligations": ["checkpoint"]}`,
			`drops obligations of the ALLOW rule "allow-self-upgrade"`},
		{"ALLOW narrowed", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["self_upgrade"], "tools": ["x"]}, "action": "ALLOW", "obligations": ["notify", "checkpoint"]}`,
			`narrows the ALLOW rule "allow-self-upgrade", which adds checkpoint+notify: the actions it no longer matches fall through to later rules or the autonomy matrix, without its obligations`},
		{"ALLOW with more obligations", `{"id": ` + upgrade + `, "priority": 4, "condition": {"operation_type": ["self_upgrade"]}, "action": "ALLOW", "obligations": ["notify", "checkpoint", "sandbox"]}`, ""},
		{"the user's ALLOW+notify narrowed", `{"id": "allow-docs", "priority": 5, "condition": {"target_pattern": "docs/**", "tools": ["x"]}, "action": "ALLOW", "obligations": ["notify"]}`,
			`narrows the ALLOW rule "allow-docs", which adds notify: the actions it no longer matches fall through to later rules or the autonomy matrix, without its obligations`},
		{"an ALLOW without obligations narrowed", `{"id": "allow-cat", "priority": 5, "condition": {"commands": ["cat"], "tools": ["bash"]}, "action": "ALLOW"}`, ""},
		{"an ALLOW without obligations replaced by a DENY anywhere", `{"id": "allow-cat", "priority": 50, "condition": {"tools": ["x"]}, "action": "DENY"}`, ""},
		// The CONFIRM rule also matches /bin/cat, which the ALLOW rule did not; here every such
		// part falls through to default-allow otherwise, so asking is stricter (the pair-by-pair
		// proof of profile.AtLeastAsRestrictive).
		{"an ALLOW on commands to CONFIRM: matches /bin/cat too", `{"id": "allow-cat", "priority": 5, "condition": {"commands": ["cat"]}, "action": "CONFIRM"}`, ""},
		{"a CONFIRM to a covering DENY", `{"id": "confirm-ci", "priority": 3, "condition": {"target_pattern": ".ci/**"}, "action": "DENY"}`, ""},
		{"a CONFIRM to a narrower DENY", `{"id": "confirm-ci", "priority": 3, "condition": {"target_pattern": ".ci/**", "tools": ["edit"], "hosts": ["x"]}, "action": "DENY"}`,
			`changes the condition or priority of the CONFIRM rule "confirm-ci"`},
		{"a CONFIRM broadened", `{"id": "confirm-ci", "priority": 3, "condition": {"target_pattern": ".ci/**"}, "action": "CONFIRM", "obligations": ["checkpoint"]}`,
			`changes the condition or priority of the CONFIRM rule "confirm-ci"`},
		{"a CONFIRM to ALLOW", `{"id": "confirm-ci", "priority": 3, "condition": {"target_pattern": ".ci/**", "tools": ["edit"]}, "action": "ALLOW", "obligations": ["checkpoint"]}`,
			`turns the CONFIRM rule "confirm-ci" into ALLOW`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFiles(t)
			f.writeUser(user)
			f.writeProject(`{"custom_rules": [` + tc.rule + `]}`)
			l := f.mustLoad()
			if tc.reason == "" {
				assert.Empty(t, l.Skipped)
				return
			}
			require.Len(t, l.Skipped, 1, "%v", l.Skipped)
			assert.Equal(t, tc.reason, l.Skipped[0].Reason)
			assert.Equal(t, loader.Setting{Field: "rules", Key: l.Skipped[0].Setting.Key}, l.Skipped[0].Setting)
		})
	}
}

// TestBandChangeJudgedByEffect: the rule layer adds the autonomy matrix cell's obligations to
// what a rule allows, so a project file that moves the dial to a lower band can take the
// sandbox from allowlisted commands (trusted exec is ALLOW+notify+sandbox, supervised exec
// CONFIRM without obligations, and allow-shell-allowlist keeps allowing). That needs trust.
// Within a band, towards a band whose cells keep the obligations, or in a mode where no action
// of the affected levels reaches the rules, it does not.
func TestBandChangeJudgedByEffect(t *testing.T) {
	t.Parallel()
	const lost = "moves the autonomy dial from the trusted band to the supervised band, where actions that a rule allows or confirms, or the matrix decides, lose obligations or get a looser verdict: " +
		"mutating (ALLOW+checkpoint+notify, now CONFIRM); exec (ALLOW+notify+sandbox, now CONFIRM)"
	for _, tc := range []struct {
		name, user, project string
		reason              string
		pointer             string
	}{
		{"dial into the supervised band", `{"active_profile": "PROFILE-DEV"}`, `{"autonomy": 0.2}`, "", "/autonomy"},
		{"band name", `{"active_profile": "PROFILE-DEV"}`, `{"permission_mode": "supervised"}`, "", "/permission_mode"},
		{"lower within the band", `{"active_profile": "PROFILE-DEV"}`, `{"autonomy": 0.34}`, "-", ""},
		{"autonomous to trusted keeps every obligation", `{"active_profile": "PROFILE-FULL-AUTO"}`, `{"autonomy": 0.5}`, "-", ""},
		{"read-only: only reads reach the rules", `{"active_profile": "PROFILE-DEV"}`, `{"autonomy": 0, "permission_mode": "read-only"}`, "-", ""},
		{"no rule allows or confirms exec or mutating", `{"active_profile": "trusted"}`, `{"autonomy": 0}`, "-", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFiles(t)
			f.writeUser(tc.user)
			f.writeProject(tc.project)
			l := f.mustLoad()
			if tc.reason == "-" {
				assert.Empty(t, l.Skipped)
				return
			}
			require.Len(t, l.Skipped, 1, "%v", l.Skipped)
			assert.Equal(t, tc.pointer, l.Skipped[0].Source.Pointer)
			assert.Equal(t, tc.reason+lost, l.Skipped[0].Reason)
			assert.Equal(t, policy.BandTrusted, l.Profile.MustCompile().Band(), "the band stays")
		})
	}
}

// TestBlocklistOfAConfirmRule: the shell blocklist is a restriction only while DENY rules alone
// use it; when the user's CONFIRM rule refers to it, a project entry would make that rule
// confirm (and so override a denial) where it did not before.
func TestBlocklistOfAConfirmRule(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	f.writeUser(`{"active_profile": "PROFILE-DEV", "custom_rules": [
		{"id": "deny-dangerous-commands", "priority": 2, "condition": {"commands": ["@shell_blocklist"]}, "action": "CONFIRM"}]}`)
	f.writeProject(`{"shell_blocklist": ["rm -rf"]}`)
	l := f.mustLoad()
	require.Len(t, l.Skipped, 1)
	assert.Equal(t, `adds "rm -rf" to shell_blocklist, which the CONFIRM rule "deny-dangerous-commands" refers to`, l.Skipped[0].Reason)

	f.writeUser(`{"active_profile": "PROFILE-DEV"}`)
	l = f.mustLoad()
	assert.Empty(t, l.Skipped, "only DENY rules use it")
	assert.Contains(t, l.Profile.ShellBlocklist, "rm -rf")
}

// TestProjectSwitchJudgedByEffect: a project file's active_profile replaces the base profile's
// rules and lists wholesale, so it applies without trust only when the new base, with the user
// file applied, is at least as restrictive (profile.AtLeastAsRestrictive) as the old one with the
// user file applied. The built-in families' order holds for unchanged profiles, but not always
// with the user's rules: an ALLOW rule keeps allowing in the supervised band without the
// obligations the trusted band adds.
func TestProjectSwitchJudgedByEffect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, user, project string
		reason              string // "" means it applies without trust
	}{
		{"PROFILE-DEV to PROFILE-SAFE", `{"active_profile": "PROFILE-DEV"}`, `{"active_profile": "PROFILE-SAFE"}`, ""},
		{"PROFILE-FULL-AUTO to PROFILE-DEV", `{"active_profile": "PROFILE-FULL-AUTO"}`, `{"active_profile": "PROFILE-DEV"}`, ""},
		{"PROFILE-DEV to PROFILE-SAFE, with the user's ALLOW rule", `{"active_profile": "PROFILE-DEV", "custom_rules": [{"id": "allow-make", "priority": 1, "condition": {"commands": ["make"]}, "action": "ALLOW"}]}`,
			`{"active_profile": "PROFILE-SAFE"}`,
			"switches the active profile from PROFILE-DEV to PROFILE-SAFE: moves the autonomy dial from the trusted band to the supervised band, where actions that a rule allows or confirms, or the matrix decides, lose obligations or get a looser verdict: " +
				"mutating (ALLOW+checkpoint+notify, now CONFIRM); exec (ALLOW+notify+sandbox, now CONFIRM)"},
		{"to plan", `{"active_profile": "PROFILE-FULL-AUTO"}`, `{"active_profile": "plan"}`, ""},
		{"to emergency-stop", `{"active_profile": "yolo"}`, `{"active_profile": "emergency-stop"}`, ""},
		{"autonomous to trusted", `{"active_profile": "autonomous"}`, `{"active_profile": "trusted"}`, ""},
		{"autonomous to trusted, with the user's rules", `{"active_profile": "autonomous", "custom_rules": [{"id": "allow-make", "priority": 1, "condition": {"commands": ["make"]}, "action": "ALLOW"}]}`, `{"active_profile": "trusted"}`, ""},
		{"trusted to supervised", `{"active_profile": "trusted", "custom_rules": [{"id": "allow-make", "priority": 1, "condition": {"commands": ["make"]}, "action": "ALLOW"}]}`, `{"active_profile": "supervised"}`,
			"switches the active profile from trusted to supervised: moves the autonomy dial from the trusted band to the supervised band, where actions that a rule allows or confirms, or the matrix decides, lose obligations or get a looser verdict: " +
				"mutating (ALLOW+checkpoint+notify, now CONFIRM); exec (ALLOW+notify+sandbox, now CONFIRM)"},
		{"yolo to auto", `{"active_profile": "yolo"}`, `{"active_profile": "auto"}`, ""},
		{"auto to yolo", `{"active_profile": "auto"}`, `{"active_profile": "yolo"}`, "switches the active profile from auto to yolo: raises autonomy from 0.67 to 1 (more autonomous)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFiles(t)
			f.writeUser(tc.user)
			f.writeProject(tc.project)
			l := f.mustLoad()
			if tc.reason == "" {
				assert.Empty(t, l.Skipped)
				return
			}
			require.Len(t, l.Skipped, 1, "%v", l.Skipped)
			assert.Equal(t, "/active_profile", l.Skipped[0].Source.Pointer)
			assert.Equal(t, tc.reason, l.Skipped[0].Reason)
		})
	}
}

// TestManyLooseningEntries: the entries a project file adds to one list are judged together,
// and, when together they loosen, one by one up to a bound; the rest are left out with the
// reason of the whole, so a file with thousands of entries costs a bounded number of
// comparisons.
func TestManyLooseningEntries(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	f.writeUser(`{"active_profile": "PROFILE-DEV"}`)
	var entries []string
	for i := range 300 {
		entries = append(entries, fmt.Sprintf(`"tool%03d run"`, i))
	}
	f.writeProject(`{"shell_allowlist": [` + strings.Join(entries, ", ") + `], "shell_blocklist": ["git push --force"]}`)
	l := f.mustLoad()
	require.Len(t, l.Skipped, 300)
	assert.Equal(t, `adds "tool000 run" to shell_allowlist`, l.Skipped[0].Reason)
	assert.Equal(t, `adds "tool255 run" to shell_allowlist`, l.Skipped[255].Reason)
	assert.Equal(t, `one of the 300 entries this file adds to shell_allowlist, which together loosen the profile: adds "tool000 run" to shell_allowlist`, l.Skipped[256].Reason)
	assert.Equal(t, "/shell_allowlist/299", l.Skipped[299].Source.Pointer)
	assert.Contains(t, l.Profile.ShellBlocklist, "git push --force", "the tightening applies")
}
