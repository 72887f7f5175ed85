package profile_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// presets are the built-in profiles as the package documentation's table names them.
var presets = []struct {
	preset profile.Preset
	name   string
	family profile.Family
}{
	{profile.Safe, "PROFILE-SAFE", profile.FamilyPolicySpec},
	{profile.Dev, "PROFILE-DEV", profile.FamilyPolicySpec},
	{profile.FullAuto, "PROFILE-FULL-AUTO", profile.FamilyPolicySpec},
	{profile.ReadOnly, "read-only", profile.FamilyPermissionMode},
	{profile.Plan, "plan", profile.FamilyPermissionMode},
	{profile.Supervised, "supervised", profile.FamilyPermissionMode},
	{profile.Trusted, "trusted", profile.FamilyPermissionMode},
	{profile.Autonomous, "autonomous", profile.FamilyPermissionMode},
	{profile.EmergencyStop, "emergency-stop", profile.FamilyPermissionMode},
	{profile.AskApproval, "ask", profile.FamilyApprovalMode},
	{profile.SafeApproval, "safe", profile.FamilyApprovalMode},
	{profile.AutoApproval, "auto", profile.FamilyApprovalMode},
	{profile.YoloApproval, "yolo", profile.FamilyApprovalMode},
}

// TestPresetsMatchBuiltins: every built-in name has exactly one preset, each preset's profile is
// the built-in of that name, and the documented names hold.
func TestPresetsMatchBuiltins(t *testing.T) {
	t.Parallel()
	require.Len(t, presets, len(profile.Names()), "one preset per built-in profile")
	var all []string
	for _, p := range presets {
		all = append(all, p.preset.Name())
	}
	assert.Equal(t, profile.Names(), all)
	for _, tc := range presets {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.name, tc.preset.Name())
			assert.Equal(t, tc.name, tc.preset.String())
			p := tc.preset.Profile()
			assert.Equal(t, tc.name, p.Name)
			assert.Equal(t, tc.family, p.Family)
			assert.Equal(t, builtin(tc.name).Hash(), p.Hash())
			_, err := p.Compile()
			assert.NoError(t, err)
		})
	}
}

// TestPresetProfileIsADeepCopy: changing everything reachable from one Profile() result, down
// to the slices inside rule conditions, leaves the next result unchanged.
func TestPresetProfileIsADeepCopy(t *testing.T) {
	t.Parallel()
	for _, tc := range presets {
		pr := tc.preset
		want := pr.Profile().Hash()
		p := pr.Profile()
		for _, l := range []*[]string{&p.ProtectedPaths, &p.WriteProtectedPaths, &p.TrustedPaths, &p.ShellAllowlist,
			&p.ShellBlocklist, &p.NetworkAllowlist, &p.AllowedTools, &p.AutoApprovePatterns} {
			for i := range *l {
				(*l)[i] = "changed"
			}
		}
		for _, m := range []map[string][]string{p.HostGroups, p.Registries} {
			for k := range m {
				for i := range m[k] {
					m[k][i] = "changed.example"
				}
				m[k] = append(m[k], "added.example")
			}
			if m != nil {
				m["new"] = []string{"x"}
			}
		}
		for i := range p.Rules {
			r := &p.Rules[i]
			r.Action = policy.Allow
			r.Condition.Risk = r.Condition.Risk.Union(policy.MatchSeverities(risk.Low)) // a value: the copy's own
			for _, l := range []*[]string{&r.Condition.Commands, &r.Condition.Hosts, &r.Condition.Tools} {
				for j := range *l {
					(*l)[j] = "changed"
				}
			}
			for j := range r.Condition.OperationType {
				r.Condition.OperationType[j] = "changed"
			}
		}
		p.Mode, p.Autonomy = profile.ModeDefault, 1
		assert.Equal(t, want, pr.Profile().Hash(), "%s: changing a copy changed the preset", pr)
	}
}

// TestZeroPresetFailsClosed: the zero Preset is no built-in profile; its Profile denies
// everything.
func TestZeroPresetFailsClosed(t *testing.T) {
	t.Parallel()
	var zero profile.Preset
	assert.Empty(t, zero.Name())
	p := zero.Profile()
	assert.Equal(t, profile.ModeEmergencyStop, p.Mode)
	assert.Equal(t, profile.EmergencyStop.Profile().Hash(), p.Hash())
	assert.Contains(t, zero.String(), "zero Preset")
}

// Presets are values: a host picks one without naming it as a string.
func ExamplePreset() {
	p := profile.Dev.Profile().WithHostGroup(profile.GroupAIAPIs, "api.example.com")
	c, err := p.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name(), p.Family, c.Band())
	fmt.Println(profile.Trusted.Name(), profile.Trusted.Profile().Autonomy)
	// Output:
	// PROFILE-DEV policy-spec trusted
	// trusted 0.5
}
