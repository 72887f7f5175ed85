package profile_test

import (
	"testing"

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
	for _, tc := range []struct {
		name     string
		to, from profile.Profile
		ok       bool
		why      string
	}{
		{"anything to emergency-stop", profile.MustBuiltin(profile.PermissionEmergencyStop), profile.MustBuiltin(profile.ApprovalYolo), true, ""},
		{"leaving plan", dev, profile.MustBuiltin(profile.PermissionPlan), false, "leaves plan"},
		{"cross family: DEV to ask", profile.MustBuiltin(profile.ApprovalAsk), dev, false, ""},
		{"same profile", dev, dev, true, ""},
		{"added deny rule", dev.WithRules(policy.Rule{ID: "no-curl", Priority: 0, Action: policy.Deny, Condition: policy.Condition{Commands: []string{"curl"}}}), dev, true, ""},
		{"added allow rule", dev.WithRules(policy.Rule{ID: "yes-rm", Priority: 0, Action: policy.Allow, Condition: policy.Condition{Commands: []string{"rm -rf"}}}), dev, false, `rule "yes-rm" allows`},
		{"added confirm rule", dev.WithRules(policy.Rule{ID: "ask-all", Priority: 0, Action: policy.Confirm}), dev, false, "asks instead of denying"},
		{"raised dial", func() profile.Profile { p := dev.Clone(); p.Name = "x"; p.Autonomy = 0.9; return p }(), dev, false, "autonomy"},
		{"lowered dial", func() profile.Profile { p := dev.Clone(); p.Name = "x"; p.Autonomy = 0.1; return p }(), dev, true, ""},
		{"read-only mode", func() profile.Profile { p := dev.Clone(); p.Name = "x"; p.Mode = profile.ModeReadOnly; return p }(), dev, true, ""},
		{"fewer protected paths", func() profile.Profile {
			p := dev.Clone()
			p.Name = "x"
			p.ProtectedPaths = p.ProtectedPaths[1:]
			return p
		}(), dev, false, "no longer protects .env"},
		{"wider allowlist", func() profile.Profile {
			p := dev.Clone()
			p.Name = "x"
			p.ShellAllowlist = append(p.ShellAllowlist, "rm")
			return p
		}(), dev, false, "shell_allowlist adds rm"},
		{"narrower allowlist", func() profile.Profile {
			p := dev.Clone()
			p.Name = "x"
			p.ShellAllowlist = p.ShellAllowlist[:2]
			return p
		}(), dev, true, ""},
		{"shorter blocklist", func() profile.Profile { p := dev.Clone(); p.Name = "x"; p.ShellBlocklist = nil; return p }(), dev, false, "no longer blocks"},
		{"host group widened", dev.WithHostGroup(profile.GroupAIAPIs, "api.example"), dev, false, `host group "ai-apis" adds api.example`},
		{"deny rule dropped", func() profile.Profile { p := dev.Clone(); p.Name = "x"; p.Rules = p.Rules[1:]; return p }(), dev, false, `drops the DENY rule "deny-outside-sandbox"`},
		{"external writes loosened", func() profile.Profile {
			p := dev.Clone()
			p.Name = "x"
			p.ExternalWrites = profile.ExternalWritesByPolicy
			return p
		}(), dev, false, "external writes"},
	} {
		ok, why := profile.AtLeastAsRestrictive(tc.to, tc.from)
		assert.Equal(t, tc.ok, ok, "%s: %s", tc.name, why)
		if !tc.ok && tc.why != "" {
			assert.Contains(t, why, tc.why, tc.name)
		}
	}
}

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
	// Changed differently: compared setting by setting.
	other := change(profile.ProfileSafe)
	other.ProtectedPaths = other.ProtectedPaths[:len(other.ProtectedPaths)-1]
	ok, _ = profile.AtLeastAsRestrictive(other, change(profile.ProfileDev))
	assert.False(t, ok)
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
