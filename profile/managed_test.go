package profile_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/internal/evalmodel"
	"github.com/reins-go/reins/risk"
)

func band(b policy.Band) *policy.Band { return &b }

// sampleManaged is an organisation's tier: a DENY rule, a CONFIRM rule on network use, a
// protected path, a blocklist entry a DENY rule refers to, caps.
func sampleManaged() *profile.Managed {
	return &profile.Managed{
		MaxBand: band(policy.BandTrusted), MaxMode: profile.ModeDefault,
		Rules: []policy.Rule{
			{ID: "org-deny-push", Priority: 5, Action: policy.Deny, Condition: policy.Condition{Commands: []string{"git push"}}},
			{ID: "org-deny-blocked", Priority: 6, Action: policy.Deny, Condition: policy.Condition{Commands: []string{"@shell_blocklist"}}},
			{ID: "org-confirm-network", Priority: 1, Action: policy.Confirm, Obligations: policy.Notify, Condition: policy.Condition{Risk: policy.MatchLevels(risk.Network)}},
		},
		ProtectedPaths: []string{"/srv/secrets"}, WriteProtectedPaths: []string{"deploy"},
		ShellBlocklist: []string{"terraform destroy"},
	}
}

// TestImposeIsIdempotentAndCompiles: on every built-in profile within the caps, the imposed
// profile carries the tier, compiles, and imposing again changes nothing; the managed rules come
// first, then the DENY rules moved ahead of the managed CONFIRM rule, then the rest.
func TestImposeIsIdempotentAndCompiles(t *testing.T) {
	t.Parallel()
	m := sampleManaged()
	for _, p := range profile.All() {
		q, err := m.Impose(p)
		require.NoError(t, err, p.Name)
		again, err := m.Impose(q)
		require.NoError(t, err)
		assert.Equal(t, q.Hash(), again.Hash(), "%s: Impose is idempotent", p.Name)
		assert.True(t, m.Equal(q.Managed))
		_, err = q.Compile()
		if b, _ := policy.BandOf(p.Autonomy); b > policy.BandTrusted {
			require.ErrorContains(t, err, "caps the autonomy band at trusted", p.Name)
			continue
		}
		require.NoError(t, err, p.Name)
		assert.Contains(t, q.ProtectedPaths, "/srv/secrets")
		assert.Contains(t, q.WriteProtectedPaths, "deploy")
		assert.Contains(t, q.ShellBlocklist, "terraform destroy")
		order := q.MustCompile().Rules().Rules()
		require.GreaterOrEqual(t, len(order), 3)
		assert.Equal(t, []string{"org-deny-push", "org-deny-blocked"}, []string{order[0].ID, order[1].ID}, p.Name)
		seenConfirm := false
		for _, r := range order[2:] {
			if r.ID == "org-confirm-network" {
				seenConfirm = true
				continue
			}
			if !seenConfirm {
				assert.NotEqual(t, policy.Allow, r.Action, "%s: no ALLOW rule before the managed CONFIRM rule: %s", p.Name, r.ID)
			} else {
				assert.GreaterOrEqual(t, r.Priority, -profile.MaxRulePriority, "%s: the rest keeps its priorities", p.Name)
			}
		}
		assert.True(t, seenConfirm)
	}
}

// TestImposeHoistsExceptionsTheManagedConfirmCovers: PROFILE-DEV allows network use to some
// hosts and denies the rest with a later rule. Under a managed CONFIRM rule for all network use,
// both move ahead of it (the exception raised to a CONFIRM with the managed rule's
// obligations), so network use to an unknown host stays denied and to an allowed one is asked.
// Under a managed CONFIRM rule for one command only, the exception is not covered, so
// deny-network stays where it was (the documented limit).
func TestImposeHoistsExceptionsTheManagedConfirmCovers(t *testing.T) {
	t.Parallel()
	dev := profile.MustBuiltin(profile.ProfileDev).WithHostGroup(profile.GroupAIAPIs, "api.llm.example")
	rules := func(m *profile.Managed) map[string]policy.Rule {
		q, err := m.Impose(dev)
		require.NoError(t, err)
		out := map[string]policy.Rule{}
		for _, r := range q.Rules {
			out[r.ID] = r
		}
		net := func(host string) policy.Verdict {
			mt, ok := q.MustCompile().Rules().Evaluate(&policy.Subject{Operation: policy.OpNetwork, Level: risk.Network, Severity: risk.Network.Severity(), Host: host})
			require.True(t, ok)
			return mt.Verdict
		}
		out["verdict:evil"] = policy.Rule{Action: net("evil.example")}
		out["verdict:llm"] = policy.Rule{Action: net("api.llm.example")}
		return out
	}
	all := rules(&profile.Managed{Rules: []policy.Rule{{ID: "org-confirm-network", Action: policy.Confirm, Obligations: policy.Notify, Condition: policy.Condition{Risk: policy.MatchLevels(risk.Network)}}}})
	assert.Equal(t, policy.Confirm, all["allow-network-hosts"].Action, "the exception is raised")
	assert.Equal(t, policy.Notify, all["allow-network-hosts"].Obligations&policy.Notify, "with the managed rule's obligations")
	assert.Less(t, all["deny-network"].Priority, all["org-confirm-network"].Priority)
	assert.Equal(t, policy.Deny, all["verdict:evil"].Action)
	assert.Equal(t, policy.Confirm, all["verdict:llm"].Action)

	one := rules(&profile.Managed{Rules: []policy.Rule{{ID: "org-confirm-push", Action: policy.Confirm, Condition: policy.Condition{Commands: []string{"git push"}}}}})
	assert.Equal(t, policy.Allow, one["allow-network-hosts"].Action, "not covered: not raised")
	assert.Equal(t, 2, one["deny-network"].Priority, "and deny-network does not move")
	assert.Less(t, one["deny-dangerous-commands"].Priority, one["org-confirm-push"].Priority, "a DENY rule nothing may make an exception to moves")
	assert.Equal(t, policy.Deny, one["verdict:evil"].Action)
	assert.Equal(t, policy.Allow, one["verdict:llm"].Action)
}

// TestCompileRefusesAProfileThatDoesNotHonourItsManagedTier: a profile past the caps, or one
// whose managed rules were dropped, moved or changed, or a managed rule added without being
// imposed, does not compile; nor does an invalid tier, and Impose refuses rules outside the
// priority range.
func TestCompileRefusesAProfileThatDoesNotHonourItsManagedTier(t *testing.T) {
	t.Parallel()
	m := sampleManaged()
	m.MaxMode = profile.ModeReadOnly
	base := profile.MustBuiltin(profile.ProfileDev)
	base.Mode = profile.ModeReadOnly
	good, err := m.Impose(base)
	require.NoError(t, err)
	_, err = good.Compile()
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		change func(p *profile.Profile)
		want   string
	}{
		"past the band cap":      {func(p *profile.Profile) { p.Autonomy = 1 }, "caps the autonomy band at trusted"},
		"past the mode cap":      {func(p *profile.Profile) { p.Mode = profile.ModeDefault }, "caps the permission mode at read-only"},
		"a managed rule dropped": {func(p *profile.Profile) { p.Rules = p.Rules[1:] }, "is not imposed"},
		"a managed rule moved":   {func(p *profile.Profile) { p.Rules[0].Priority = 7 }, "is not imposed"},
		"a managed rule changed": {func(p *profile.Profile) { p.Rules[0].Action = policy.Confirm }, "is not imposed"},
		"an ALLOW rule first": {func(p *profile.Profile) {
			p.Rules = append([]policy.Rule{{ID: "sneaky", Priority: -profile.MaxRulePriority, Action: policy.Allow}}, p.Rules...)
			p.Rules[0].Priority = -9_000_000
		}, "lies within ±1000000"},
		"a protected path removed": {func(p *profile.Profile) {
			p.ProtectedPaths = slices.DeleteFunc(p.ProtectedPaths, func(e string) bool { return e == "/srv/secrets" })
		}, "is not imposed"},
		"an invalid tier": {func(p *profile.Profile) {
			p.Managed.Rules = append(p.Managed.Rules, policy.Rule{ID: "org-allow", Action: policy.Allow})
		}, "DENY or CONFIRM rules"},
	} {
		p := good.Clone()
		tc.change(&p)
		_, err := p.Compile()
		require.Error(t, err, name)
		assert.Contains(t, strings.ReplaceAll(err.Error(), ",", ""), tc.want, name)
	}

	wide := profile.MustBuiltin(profile.ProfileDev).WithRules(policy.Rule{ID: "far", Priority: profile.MaxRulePriority + 1, Action: policy.Deny})
	_, err = m.Impose(wide)
	require.ErrorContains(t, err, `rule "far" has priority 1000001`)
}

// TestOrderJudgesTheManagedTier: keeping the tier, or tightening its caps, is at least as
// restrictive; leaving it, raising a cap or dropping managed rules only is not.
func TestOrderJudgesTheManagedTier(t *testing.T) {
	t.Parallel()
	m := sampleManaged()
	base := profile.MustBuiltin(profile.ProfileDev)
	under, err := m.Impose(base)
	require.NoError(t, err)
	ok, why := profile.AtLeastAsRestrictive(under, under)
	assert.True(t, ok, why)
	ok, _ = profile.AtLeastAsRestrictive(under, base)
	assert.True(t, ok, "adding a tier only adds DENY and CONFIRM rules and paths")

	ok, why = profile.AtLeastAsRestrictive(base, under)
	assert.False(t, ok)
	assert.Contains(t, why, "leaves the managed tier")

	tighter := m.Clone()
	tighter.MaxMode, tighter.RulesOnly = profile.ModeReadOnly, true
	ro := base.Clone()
	ro.Mode = profile.ModeReadOnly
	tq, err := tighter.Impose(ro)
	require.NoError(t, err)
	ok, why = profile.AtLeastAsRestrictive(tq, under)
	assert.True(t, ok, why)
	ok, why = profile.AtLeastAsRestrictive(under, tq)
	assert.False(t, ok)
	assert.Contains(t, why, "cap on the permission mode")
	wider := m.Clone()
	wider.MaxBand = band(policy.BandAutonomous)
	wq, err := wider.Impose(base)
	require.NoError(t, err)
	ok, why = profile.AtLeastAsRestrictive(wq, under)
	assert.False(t, ok)
	assert.Contains(t, why, "cap on the autonomy band")

	looser := m.Clone()
	looser.Rules = looser.Rules[1:]
	lq, err := looser.Impose(base)
	require.NoError(t, err)
	ok, why = profile.AtLeastAsRestrictive(lq, under)
	assert.False(t, ok)
	assert.Contains(t, why, "managed tier's rules")
}

// randomManaged returns a random managed tier from the generator's pools.
func (g gen) managed() *profile.Managed {
	m := &profile.Managed{}
	if g.chance(2) {
		m.MaxBand = band(policy.Band(g.r.IntN(3)))
	}
	if g.chance(3) {
		m.MaxMode = profile.Mode(g.r.IntN(3)) // default, read-only or plan
	}
	m.RulesOnly = g.chance(3)
	for i := range g.r.IntN(4) {
		r := g.rule("org-" + string(rune('a'+i)))
		r.Action = []policy.Verdict{policy.Deny, policy.Confirm}[g.r.IntN(2)]
		m.Rules = append(m.Rules, r)
	}
	if g.chance(2) {
		m.ProtectedPaths = g.some(2, poolPaths...)
	}
	if g.chance(3) {
		m.ShellBlocklist = g.some(2, poolCommands...)
	}
	return m
}

// capped lowers p's dial and mode to m's caps, as the loader does.
func capped(p profile.Profile, m *profile.Managed) profile.Profile {
	if m.MaxBand != nil {
		if b, err := policy.BandOf(p.Autonomy); err == nil && b > *m.MaxBand {
			p.Autonomy = m.MaxBand.Dial()
		}
	}
	if m.MaxMode.StricterThan(p.Mode) {
		p.Mode = m.MaxMode
	}
	return p
}

// subject returns a random part of an action, as rules see it.
func (g gen) subject() policy.Subject {
	s := policy.Subject{Tool: g.pick(poolTools...), Operation: policy.Operation(g.pick(poolOps...)).Canonical(),
		Level: risk.Levels()[g.r.IntN(5)]}
	s.Severity = s.Level.Severity()
	if g.chance(3) {
		s.Severity = risk.Severity(1 + g.r.IntN(3))
	}
	if g.chance(2) {
		t := g.pick(poolTargets...)
		if strings.HasPrefix(t, "/") {
			s.Target = t
		} else if !strings.HasPrefix(t, "~") {
			s.Root, s.Target = "/w", t
		}
	}
	if g.chance(3) {
		s.Host = g.pick(poolHosts...)
	}
	if g.chance(2) {
		c := g.command()
		s.Command, s.Argv, s.Line = c.Text(), c.Argv, c.Text()
		s.Redirects, s.Elevated = c.Redirects, c.Elevated
	}
	if g.chance(4) {
		s.Provider = g.pick("openai", "anthropic")
	}
	return s
}

// TestManagedRulesOutrankEveryOtherTier is the floor's property at the rule layer: for random
// profiles (a built-in one changed a few times) under random managed tiers, and random parts of
// actions, a part the managed rules deny is denied, one they ask about is not allowed, and one
// they do not match is decided as without the tier (same verdict and obligations) unless the
// tier moved a DENY rule ahead, which only the tier's own rules could have changed.
func TestManagedRulesOutrankEveryOtherTier(t *testing.T) {
	t.Parallel()
	g := gen{rand.New(rand.NewPCG(26, 1))}
	subjects := make([]policy.Subject, 400)
	for i := range subjects {
		subjects[i] = g.subject()
	}
	n := 300
	if testing.Short() {
		n = 80
	}
	checked := 0
	for range n {
		p := g.profile()
		m := g.managed()
		q, err := m.Impose(capped(p, m))
		require.NoError(t, err)
		c, err := q.Compile()
		require.NoError(t, err, "an imposed profile within the caps compiles")
		without := capped(p, m)
		without.ProtectedPaths = append(without.ProtectedPaths, m.ProtectedPaths...)
		without.ShellBlocklist = append(without.ShellBlocklist, m.ShellBlocklist...)
		cw, err := without.Compile()
		require.NoError(t, err)
		mp := q.Clone()
		mp.Managed, mp.Rules = nil, m.Rules
		cm, err := mp.Compile() // the managed rules alone, over the same lists
		require.NoError(t, err)
		for i := range subjects {
			s := &subjects[i]
			got, gotOK := c.Rules().Evaluate(s)
			mm, mOK := cm.Rules().Evaluate(s)
			base, baseOK := cw.Rules().Evaluate(s)
			switch {
			case mOK && mm.Verdict == policy.Deny:
				require.True(t, gotOK)
				require.Equal(t, policy.Deny, got.Verdict, "%+v: the managed rule %s denies it; decided by %s", *s, mm.Rule.ID, got.Rule.ID)
			case mOK:
				require.True(t, gotOK)
				require.NotEqual(t, policy.Allow, got.Verdict, "%+v: the managed rule %s asks; allowed by %s", *s, mm.Rule.ID, got.Rule.ID)
				if baseOK && base.Verdict == policy.Deny && got.Verdict != policy.Deny {
					// The documented limit: a DENY rule after an exception the managed rules do not
					// cover stays behind the managed CONFIRM rule.
					require.Equal(t, policy.Confirm, got.Verdict)
					require.Equal(t, mm.Rule.ID, got.Rule.ID)
				}
			default:
				require.Equal(t, baseOK, gotOK, "%+v", *s)
				if gotOK {
					require.Equal(t, base.Verdict, got.Verdict, "%+v: decided by %s under the tier, by %s without", *s, got.Rule.ID, base.Rule.ID)
					require.Equal(t, base.Obligations, got.Obligations, "%+v", *s)
				}
			}
			checked++
		}
	}
	t.Logf("%d parts checked under %d random managed tiers", checked, n)
}

// TestOrderAgainstEvaluationUnderManagedTiers is the order's property test with managed tiers:
// random profiles under random tiers, derived ones under the same tier (re-imposed after each
// change) or a changed one; whenever the order says yes, no action is decided more permissively,
// and the order stays reflexive.
func TestOrderAgainstEvaluationUnderManagedTiers(t *testing.T) {
	t.Parallel()
	g := gen{rand.New(rand.NewPCG(26, 7))}
	actions := make([]evalmodel.Action, 150)
	for i := range actions {
		actions[i] = g.action()
	}
	under := func(p profile.Profile, m *profile.Managed) (profile.Profile, bool) {
		q, err := m.Impose(capped(p, m))
		if err != nil {
			return q, false
		}
		_, err = q.Compile()
		return q, err == nil
	}
	pairs, yes := 200, 0
	if testing.Short() {
		pairs = 60
	}
	for range pairs {
		m := g.managed()
		b, ok := under(g.profile(), m)
		if !ok {
			continue
		}
		okr, why := profile.AtLeastAsRestrictive(b, b)
		require.True(t, okr, "reflexive: %s", why)
		m2 := m
		if g.chance(3) {
			m2 = m.Clone()
			switch g.r.IntN(3) {
			case 0:
				m2.MaxBand = band(policy.BandSupervised)
			case 1:
				m2.RulesOnly = true
			case 2:
				m2.Rules = append(m2.Rules, policy.Rule{ID: "org-more", Action: policy.Deny, Condition: g.condition()})
			}
		}
		a, ok := under(g.derive(b), m2)
		if !ok {
			continue
		}
		if checkImplies(t, a, b, actions) {
			yes++
		}
		checkImplies(t, b, a, actions)
	}
	t.Logf("%d of %d pairs under managed tiers at least as restrictive", yes, pairs)
	assert.Greater(t, yes, pairs/10)
}

// BenchmarkManagedCompile measures what a managed tier costs when a profile compiles (Compile
// imposes the tier again to check the profile honours it) and when it is imposed: PROFILE-DEV,
// and a PROFILE-DEV with 2,000 more rules (the moves ahead of the managed CONFIRM rules are
// quadratic in the rules); the baseline is Compile without a tier (report ratios).
func BenchmarkManagedCompile(b *testing.B) {
	m := sampleManaged()
	dev := profile.MustBuiltin(profile.ProfileDev)
	big := dev.Clone()
	for i := range 2000 {
		act := []policy.Verdict{policy.Deny, policy.Allow, policy.Confirm}[i%3]
		big.Rules = append(big.Rules, policy.Rule{ID: "r" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26),
			Priority: i % 50, Action: act, Condition: policy.Condition{Commands: []string{"cmd" + string(rune('a'+i%26))}}})
	}
	for _, bc := range []struct {
		name string
		p    profile.Profile
	}{{"DEV", dev}, {"DEV+2000rules", big}} {
		under, err := m.Impose(bc.p)
		require.NoError(b, err)
		b.Run(bc.name+"/baseline=Compile", func(b *testing.B) {
			for b.Loop() {
				if _, err := bc.p.Compile(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/Compile-under-tier", func(b *testing.B) {
			for b.Loop() {
				if _, err := under.Compile(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/Impose", func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Impose(bc.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
