package profile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

func TestBuiltinsCompileAndAreDistinct(t *testing.T) {
	t.Parallel()
	names := profile.Names()
	assert.Equal(t, []string{
		"PROFILE-SAFE", "PROFILE-DEV", "PROFILE-FULL-AUTO",
		"read-only", "plan", "supervised", "trusted", "autonomous", "emergency-stop",
		"ask", "safe", "auto", "yolo",
	}, names)
	seen := map[string]bool{}
	for _, p := range profile.All() {
		lower := strings.ToLower(p.Name)
		assert.False(t, seen[lower], "duplicate name %s", p.Name)
		seen[lower] = true
		c, err := p.Compile()
		require.NoError(t, err, p.Name)
		assert.Equal(t, p.Name, c.Name())
		assert.NotEmpty(t, p.Description, p.Name)
		assert.NotEmpty(t, p.Family, p.Name)
		assert.Subset(t, p.ProtectedPaths, profile.DefaultProtectedPaths(), "%s protects the defaults", p.Name)
		assert.Positive(t, p.Limits.MaxConcurrentOps, p.Name)
		assert.Positive(t, p.Limits.Timeout, p.Name)
	}
	safe, err := profile.Builtin("PROFILE-SAFE")
	require.NoError(t, err)
	approvalSafe, err := profile.Builtin("safe")
	require.NoError(t, err)
	assert.NotEqual(t, safe.Family, approvalSafe.Family, "PROFILE-SAFE and the approval mode safe are different things")
	lower, err := profile.Builtin("profile-dev")
	require.NoError(t, err)
	assert.Equal(t, profile.Dev.Name(), lower.Name)
	_, err = profile.Builtin("dev")
	assert.ErrorContains(t, err, "no built-in profile")
}

func TestBuiltinsAreFreshCopies(t *testing.T) {
	t.Parallel()
	a := profile.Dev.Profile()
	a.Rules[0].ID = "changed"
	a.ShellAllowlist[0] = "changed"
	b := profile.Dev.Profile()
	assert.Equal(t, "deny-outside-sandbox", b.Rules[0].ID)
	assert.NotEqual(t, "changed", b.ShellAllowlist[0])

	c := b.WithHostGroup(profile.GroupAIAPIs, "api.example")
	assert.Empty(t, b.HostGroups[profile.GroupAIAPIs], "WithHostGroup returns a copy")
	assert.Equal(t, []string{"api.example"}, c.HostGroups[profile.GroupAIAPIs])
	d := b.WithRules(policy.Rule{ID: "extra"})
	assert.Len(t, d.Rules, len(b.Rules)+1)
}

func TestDevProfileHasTheSpecRulesInOrder(t *testing.T) {
	t.Parallel()
	c := profile.Dev.Profile().MustCompile()
	var spec []string
	specIDs := map[string]bool{}
	for _, r := range policy.DevRules() {
		specIDs[r.ID] = true
	}
	for _, r := range c.Rules().Rules() {
		if specIDs[r.ID] {
			spec = append(spec, r.ID)
		}
	}
	assert.Equal(t, []string{"deny-outside-sandbox", "deny-dangerous-commands", "confirm-high-risk", "confirm-delete-ops", "allow-low-med-risk", "default-confirm"}, spec)
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	base := profile.Trusted.Profile()
	for _, tc := range []struct {
		name   string
		modify func(*profile.Profile)
		want   string
	}{
		{"empty name", func(p *profile.Profile) { p.Name = " " }, "name: is empty"},
		{"autonomy", func(p *profile.Profile) { p.Autonomy = 2 }, "autonomy"},
		{"mode", func(p *profile.Profile) { p.Mode = profile.Mode(9) }, "mode: invalid value 9"},
		{"limits", func(p *profile.Profile) { p.Limits.MaxConcurrentOps = -1 }, "resource_limits.max_concurrent_ops"},
		{"protected", func(p *profile.Profile) { p.ProtectedPaths = append(p.ProtectedPaths, "") }, "protected_paths"},
		{"group clash", func(p *profile.Profile) { p.HostGroups = map[string][]string{policy.ListShellBlocklist: nil} }, "has the name of a profile list"},
		{"rule", func(p *profile.Profile) {
			p.Rules = []policy.Rule{{ID: "r", Condition: policy.Condition{Hosts: []string{"@missing"}}}}
		}, `rule "r"`},
	} {
		p := base.Clone()
		tc.modify(&p)
		_, err := p.Compile()
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]profile.Mode{
		"default": profile.ModeDefault, "read-only": profile.ModeReadOnly, "READ_ONLY": profile.ModeReadOnly, "readonly": profile.ModeReadOnly,
		"plan": profile.ModePlan, "emergency-stop": profile.ModeEmergencyStop, "emergency_stop": profile.ModeEmergencyStop,
	} {
		got, err := profile.ParseMode(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		text, err := got.MarshalText()
		require.NoError(t, err)
		var back profile.Mode
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, got, back)
	}
	for _, bad := range []string{"", "yolo", "supervised"} {
		_, err := profile.ParseMode(bad)
		assert.Error(t, err, bad)
	}
}
