package profile_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

func TestHashIsContentBased(t *testing.T) {
	t.Parallel()
	a, b := profile.MustBuiltin(profile.ProfileDev), profile.MustBuiltin(profile.ProfileDev)
	assert.Equal(t, a.Hash(), b.Hash())
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, a.Hash())
	b.ShellAllowlist = append(b.ShellAllowlist, "terraform apply")
	assert.NotEqual(t, a.Hash(), b.Hash())
	assert.NotEqual(t, a.Hash(), profile.MustBuiltin(profile.ProfileSafe).Hash())
}

func TestBuiltinFamiliesAreOrdered(t *testing.T) {
	t.Parallel()
	for _, chain := range [][]string{
		{profile.ProfileSafe, profile.ProfileDev, profile.ProfileFullAuto},
		{profile.PermissionEmergencyStop, profile.PermissionPlan, profile.PermissionReadOnly, profile.PermissionSupervised, profile.PermissionTrusted, profile.PermissionAutonomous},
		{profile.PermissionEmergencyStop, profile.PermissionPlan, profile.ProfileSafe},
		{profile.PermissionPlan, profile.ApprovalAsk},
		{profile.ApprovalAsk, profile.ApprovalSafe, profile.ApprovalAuto, profile.ApprovalYolo},
	} {
		for i := range chain {
			for j := range chain {
				ok, why := profile.AtLeastAsRestrictive(profile.MustBuiltin(chain[i]), profile.MustBuiltin(chain[j]))
				assert.Equal(t, i <= j, ok, "%s -> %s: %s", chain[j], chain[i], why)
			}
		}
	}
}

func TestOrderAcrossFamiliesAndCustom(t *testing.T) {
	t.Parallel()
	dev := profile.MustBuiltin(profile.ProfileDev)
	custom := func(change func(p *profile.Profile)) profile.Profile {
		p := dev.Clone()
		p.Name = "x"
		change(&p)
		return p
	}
	for _, tc := range []struct {
		name     string
		to, from profile.Profile
		why      string // "" means at least as restrictive
	}{
		{"anything to emergency-stop", profile.MustBuiltin(profile.PermissionEmergencyStop), profile.MustBuiltin(profile.ApprovalYolo), ""},
		{"leaving plan", dev, profile.MustBuiltin(profile.PermissionPlan), "leaves plan, which denies everything"},
		{"leaving emergency-stop for plan", profile.MustBuiltin(profile.PermissionPlan), profile.MustBuiltin(profile.PermissionEmergencyStop), "leaves emergency-stop"},
		{"cross family: DEV to ask", profile.MustBuiltin(profile.ApprovalAsk), dev, "leaves writes outside the workspace to the rules instead of halting the run"},
		{"cross family: DEV to read-only", profile.MustBuiltin(profile.PermissionReadOnly), dev, "no longer blocks"},
		{"same profile", dev, dev, ""},
		{"added deny rule", dev.WithRules(policy.Rule{ID: "no-curl", Priority: 0, Action: policy.Deny, Condition: policy.Condition{Commands: []string{"curl"}}}), dev, ""},
		{"added allow rule", dev.WithRules(policy.Rule{ID: "yes-rm", Priority: 0, Action: policy.Allow, Condition: policy.Condition{Commands: []string{"rm -rf"}}}), dev, `"yes-rm"`},
		{"added confirm rule", dev.WithRules(policy.Rule{ID: "ask-all", Priority: 0, Action: policy.Confirm}), dev, `"ask-all"`},
		{"raised dial", custom(func(p *profile.Profile) { p.Autonomy = 0.9 }), dev, "raises autonomy from 0.5 to 0.9"},
		{"raised dial within the band", custom(func(p *profile.Profile) { p.Autonomy = 0.6 }), dev, "raises autonomy from 0.5 to 0.6"},
		{"lowered dial within the band", custom(func(p *profile.Profile) { p.Autonomy = 0.4 }), dev, ""},
		// allow-low-med-risk keeps allowing mutating and exec parts, but the supervised band
		// adds no notification and no sandbox to them.
		{"lowered dial into the supervised band", custom(func(p *profile.Profile) { p.Autonomy = 0.1 }), dev,
			"moves the autonomy dial from the trusted band to the supervised band"},
		{"read-only mode", custom(func(p *profile.Profile) { p.Mode = profile.ModeReadOnly }), dev, ""},
		{"read-only mode in the supervised band", custom(func(p *profile.Profile) { p.Mode, p.Autonomy = profile.ModeReadOnly, 0 }), dev, ""},
		{"default mode from read-only", dev, custom(func(p *profile.Profile) { p.Mode = profile.ModeReadOnly }), "loosens the permission mode from read-only to default"},
		{"fewer protected paths", custom(func(p *profile.Profile) { p.ProtectedPaths = p.ProtectedPaths[1:] }), dev, `no longer protects ".env"`},
		{"a protected path moved to write-protected", custom(func(p *profile.Profile) {
			p.WriteProtectedPaths = append(p.WriteProtectedPaths, p.ProtectedPaths[0])
			p.ProtectedPaths = p.ProtectedPaths[1:]
		}), dev, `no longer protects ".env"`},
		{"a write-protected path made read-and-write protected", custom(func(p *profile.Profile) {
			p.ProtectedPaths = append(p.ProtectedPaths, p.WriteProtectedPaths[0])
			p.WriteProtectedPaths = p.WriteProtectedPaths[1:]
		}), dev, ""},
		{"fewer write-protected paths", custom(func(p *profile.Profile) { p.WriteProtectedPaths = p.WriteProtectedPaths[1:] }), dev, `no longer write-protects ".git"`},
		{"wider allowlist", custom(func(p *profile.Profile) { p.ShellAllowlist = append(p.ShellAllowlist, "rm") }), dev, `adds "rm" to shell_allowlist`},
		{"narrower allowlist", custom(func(p *profile.Profile) { p.ShellAllowlist = p.ShellAllowlist[:2] }), dev, ""},
		{"shorter blocklist", custom(func(p *profile.Profile) { p.ShellBlocklist = nil }), dev, "no longer blocks"},
		{"longer blocklist", custom(func(p *profile.Profile) { p.ShellBlocklist = append(p.ShellBlocklist, "curl") }), dev, ""},
		{"host group widened", dev.WithHostGroup(profile.GroupAIAPIs, "api.example"), dev, `adds "api.example" to host group "ai-apis"`},
		{"host group narrowed", dev, dev.WithHostGroup(profile.GroupAIAPIs, "api.example"), ""},
		{"deny rule dropped", custom(func(p *profile.Profile) { p.Rules = p.Rules[1:] }), dev, `drops the DENY rule "deny-outside-sandbox"`},
		{"external writes loosened", custom(func(p *profile.Profile) { p.ExternalWrites = profile.ExternalWritesByPolicy }), dev,
			"leaves writes outside the workspace to the rules instead of halting the run"},
		{"exec checkpoints off", custom(func(p *profile.Profile) { p.ExecCheckpoints = profile.ExecCheckpointsOff }), dev,
			"stops checkpointing commands that execute programs"},
		{"exec checkpoints back on", dev, custom(func(p *profile.Profile) { p.ExecCheckpoints = profile.ExecCheckpointsOff }), ""},
		{"trusted path added", custom(func(p *profile.Profile) { p.TrustedPaths = []string{"/data"} }), dev, `adds "/data" to trusted_paths`},
		// deny-outside-sandbox matches targets outside the workspace: with /data no longer
		// trusted, it denies writes there that it did not match before, which is stricter.
		{"trusted path dropped", dev, custom(func(p *profile.Profile) { p.TrustedPaths = []string{"/data"} }), ""},
		{"registry added", custom(func(p *profile.Profile) { p.Registries = map[string][]string{"npm": {"registry.example"}} }), dev,
			`adds "registry.example" to the npm registry hosts`},
		{"registry dropped", dev, custom(func(p *profile.Profile) { p.Registries = map[string][]string{"npm": {"registry.example"}} }),
			`removes "registry.example" from the npm registry hosts`},
		{"invalid dial", custom(func(p *profile.Profile) { p.Autonomy = math.NaN() }), dev, "the autonomy dial NaN is not a number in [0, 1]"},
		{"duplicate rule id", custom(func(p *profile.Profile) { p.Rules = append(p.Rules, p.Rules[0]) }), dev, `the rule id "deny-outside-sandbox" appears twice`},
	} {
		ok, why := profile.AtLeastAsRestrictive(tc.to, tc.from)
		assert.Equal(t, tc.why == "", ok, "%s: %s", tc.name, why)
		if tc.why != "" {
			assert.Contains(t, why, tc.why, tc.name)
		}
	}
}

// TestOrderCountsLimits is issue 24's example: a copy of PROFILE-DEV whose limits go from 50 to
// 1,050 files per plan and 3 to 103 concurrent operations with an extra hour of timeout is
// looser, and 0 (no limit) is the loosest of all.
func TestOrderCountsLimits(t *testing.T) {
	t.Parallel()
	dev := profile.MustBuiltin(profile.ProfileDev)
	with := func(l profile.Limits) profile.Profile {
		p := dev.Clone()
		p.Name, p.Limits = "dev-copy", l
		return p
	}
	wide := with(profile.Limits{MaxFilesPerPlan: 1050, MaxConcurrentOps: 103, Timeout: dev.Limits.Timeout + time.Hour})
	ok, why := profile.AtLeastAsRestrictive(wide, dev)
	assert.False(t, ok)
	assert.Equal(t, "raises max_files_per_plan from 50 to 1050", why)
	ok, _ = profile.AtLeastAsRestrictive(dev, wide)
	assert.True(t, ok, "the way back tightens")
	for _, tc := range []struct {
		name   string
		limits profile.Limits
		why    string
	}{
		{"more operations", profile.Limits{MaxFilesPerPlan: 50, MaxConcurrentOps: 103, Timeout: 10 * time.Minute}, "raises max_concurrent_ops from 3 to 103"},
		{"a longer timeout", profile.Limits{MaxFilesPerPlan: 50, MaxConcurrentOps: 3, Timeout: 70 * time.Minute}, "raises the timeout from 10m0s to 1h10m0s"},
		{"no plan limit", profile.Limits{MaxFilesPerPlan: 0, MaxConcurrentOps: 3, Timeout: 10 * time.Minute}, "raises max_files_per_plan from 50 to no limit"},
		{"no operation limit", profile.Limits{MaxFilesPerPlan: 50, MaxConcurrentOps: 0, Timeout: 10 * time.Minute}, "raises max_concurrent_ops from 3 to no limit"},
		{"no timeout", profile.Limits{MaxFilesPerPlan: 50, MaxConcurrentOps: 3}, "raises the timeout from 10m0s to no limit"},
		{"lower limits", profile.Limits{MaxFilesPerPlan: 5, MaxConcurrentOps: 1, Timeout: time.Minute}, ""},
	} {
		ok, why := profile.AtLeastAsRestrictive(with(tc.limits), dev)
		assert.Equal(t, tc.why == "", ok, "%s: %s", tc.name, why)
		assert.Equal(t, tc.why, why, tc.name)
	}
	unlimited := with(profile.Limits{})
	ok, _ = profile.AtLeastAsRestrictive(wide, unlimited)
	assert.True(t, ok, "any limit is at least as restrictive as none")
}

// TestOrderOfEquallyChangedBuiltins: the same changes made to two built-in profiles of one
// family keep the family's order only when they provably do. Protected paths added to both do;
// a user's ALLOW rule added to both does not when the dial falls into another band, because the
// rule keeps allowing while the supervised band adds no notification and no sandbox (the order
// once took that switch as a tightening; the loader did not).
func TestOrderOfEquallyChangedBuiltins(t *testing.T) {
	t.Parallel()
	change := func(name string) profile.Profile {
		p := profile.MustBuiltin(name)
		p.ProtectedPaths = append(p.ProtectedPaths, "/home/u/.config/reins")
		p.HostGroups[profile.GroupAIAPIs] = []string{"api.model.example"}
		return p
	}
	ok, why := profile.AtLeastAsRestrictive(change(profile.ProfileSafe), change(profile.ProfileDev))
	assert.True(t, ok, why)
	ok, _ = profile.AtLeastAsRestrictive(change(profile.ProfileFullAuto), change(profile.ProfileDev))
	assert.False(t, ok)
	other := change(profile.ProfileSafe)
	other.ProtectedPaths = other.ProtectedPaths[:len(other.ProtectedPaths)-1]
	ok, _ = profile.AtLeastAsRestrictive(other, change(profile.ProfileDev))
	assert.False(t, ok)

	allowMake := policy.Rule{ID: "allow-make", Priority: 1, Action: policy.Allow, Condition: policy.Condition{Commands: []string{"make"}}}
	trusted := profile.MustBuiltin(profile.PermissionTrusted).WithRules(allowMake)
	supervised := profile.MustBuiltin(profile.PermissionSupervised).WithRules(allowMake)
	ok, why = profile.AtLeastAsRestrictive(supervised, trusted)
	assert.False(t, ok)
	assert.Contains(t, why, "from the trusted band to the supervised band")
	ok, why = profile.AtLeastAsRestrictive(profile.MustBuiltin(profile.PermissionSupervised), profile.MustBuiltin(profile.PermissionTrusted))
	assert.True(t, ok, "without the rule the matrix asks instead: %s", why)
}

// TestModeStricterThan: emergency-stop < plan < read-only < default, a strict order.
func TestModeStricterThan(t *testing.T) {
	t.Parallel()
	order := []profile.Mode{profile.ModeEmergencyStop, profile.ModePlan, profile.ModeReadOnly, profile.ModeDefault}
	for i, m := range order {
		for j, n := range order {
			assert.Equal(t, i < j, m.StricterThan(n), "%s stricter than %s", m, n)
		}
	}
}
