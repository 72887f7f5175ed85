package reins

import (
	"errors"
	"fmt"
	"slices"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// ErrManagedRulesOnly is the error of a grant the run refuses to make because its managed tier
// allows managed rules only (profile.Managed.RulesOnly): no grant is made or applied, so every
// CONFIRM is asked again.
var ErrManagedRulesOnly = errors.New("reins: the managed tier allows managed rules only: no grants")

// errManagedAsks is why no grant is made for a question a managed CONFIRM rule asks.
var errManagedAsks = errors.New("reins: a CONFIRM rule of the managed tier asks this: no grant answers it")

// The managed tier (see profile.Managed) travels in the profile: the loader puts it in
// Profile.Managed, and the run keeps it in force through every switch:
//
//   - New imposes the profile's tier on it (Managed.Impose: its rules ahead of every other
//     tier's, its protected paths in); a profile past the tier's caps does not compile, so New
//     fails.
//   - SwitchTo and SwitchProfile impose the active profile's tier on the new profile (a built-in
//     one, or any the host built, keeps the organisation's floor); a profile that carries
//     another tier is refused (only Reload replaces the tier), and one past the caps does not
//     compile, so the switch is refused and recorded, whatever ConfirmSwitch would say.
//     De-escalation goes through SwitchProfile.
//   - Reload takes the tier the new profile carries (a newer policy bundle, say), or keeps the
//     active one when it carries none; a tier from an older bundle than the active one (or from
//     none) is refused unless the profile is at least as restrictive as the active one (the
//     loader's profile that denies everything for a refused bundle is). Once under a managed
//     tier, a run stays under one.
//   - A grant never answers a question a managed CONFIRM rule asks (a remembered "always" of the
//     user's would otherwise outrank the organisation's rule). Under managed rules only, the run
//     applies no grant in its decisions and makes none.
//   - Every audit record names the version of the bundle the active tier came from
//     (audit.Record.BundleVersion; omitted for none).

// managed puts the new profile p of a switch under the managed tier the run keeps (see above).
// vouched is true for Reload.
func (r *Run) managed(p profile.Profile, vouched bool) (profile.Profile, error) {
	from := r.target()
	cur := from.Managed
	older := false
	switch {
	case p.Managed == nil:
		// A profile without a tier (a built-in one) gets the active one.
	case cur == nil && !vouched:
		return p, errors.New("the profile carries a managed tier the run is not under: only Reload brings one in")
	case cur != nil && !vouched && !p.Managed.Equal(cur):
		return p, errors.New("the profile carries another managed tier than the active one: only Reload replaces it")
	default:
		older = cur != nil && p.Managed.Bundle < cur.Bundle
		cur = p.Managed
	}
	if cur == nil {
		return p, nil
	}
	q, err := cur.Impose(p)
	if err != nil {
		return p, err
	}
	if older {
		// A tier from an older bundle (or from none) than the active one applies only when it
		// takes nothing away: the profile that denies everything of a refused bundle does.
		if ok, why := profile.AtLeastAsRestrictive(q, from); !ok {
			return p, fmt.Errorf("its managed tier comes from policy bundle version %d, older than the active one's %d, and the profile is looser: it %s", p.Managed.Bundle, from.Managed.Bundle, why)
		}
	}
	return q, nil
}

// managedAsks compiles the managed CONFIRM rules of the compiled profile c (under tier m), over
// c's lists, to tell the parts they match; nil when there are none.
func managedAsks(c *profile.Compiled, m *profile.Managed) *policy.RuleSet {
	ids := map[string]bool{}
	for _, r := range m.Rules {
		if r.Action == policy.Confirm {
			ids[r.ID] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	p := c.Profile()
	p.Managed = nil
	p.Rules = slices.DeleteFunc(p.Rules, func(r policy.Rule) bool { return !ids[r.ID] })
	asks, err := p.Compile()
	if err != nil {
		// The profile compiled with these rules in it: this cannot fail. Fail closed anyway:
		// every part is then taken for one a managed rule asks about.
		return policy.MustCompile([]policy.Rule{{ID: "managed-asks", Action: policy.Confirm}}, nil)
	}
	return asks.Rules()
}

// managedAsked reports whether rule ruleID of the active profile is one of the managed tier's
// CONFIRM rules, or a rule the tier raised to a CONFIRM because one of them covers it (see
// profile.Managed.Impose): a question no grant may answer.
func managedAsked(act *active, ruleID string) bool {
	if act.asks == nil || ruleID == "" {
		return false
	}
	for _, r := range act.g.Profile().Rules().Rules() {
		if r.ID == ruleID {
			return r.Action == policy.Confirm && r.Priority < -profile.MaxRulePriority
		}
	}
	return false
}
