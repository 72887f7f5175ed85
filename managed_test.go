package reins_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

func bandPtr(b policy.Band) *policy.Band { return &b }

// orgTier is an organisation's managed tier: the trusted band at most, a DENY rule for git push,
// a CONFIRM rule for network use, a protected path.
func orgTier() *profile.Managed {
	return &profile.Managed{
		Source: "test", MaxBand: bandPtr(policy.BandTrusted),
		Rules: []policy.Rule{
			{ID: "org-deny-push", Action: policy.Deny, Condition: policy.Condition{Commands: []string{"git push"}}},
			{ID: "org-confirm-network", Action: policy.Confirm, Condition: policy.Condition{Risk: policy.MatchLevels(risk.Network)}},
		},
		ProtectedPaths: []string{"/srv/keys"},
	}
}

// under returns p under tier m, its dial and mode lowered to m's caps as the loader does.
func under(t testing.TB, p profile.Profile, m *profile.Managed) profile.Profile {
	t.Helper()
	if m.MaxBand != nil {
		if b, _ := policy.BandOf(p.Autonomy); b > *m.MaxBand {
			p.Autonomy = m.MaxBand.Dial()
		}
	}
	if m.MaxMode.StricterThan(p.Mode) {
		p.Mode = m.MaxMode
	}
	q, err := m.Impose(p)
	require.NoError(t, err)
	return q
}

// assertUnder fails t unless the run's active profile is under tier m: the same tier, within
// its caps, its rules evaluated first.
func assertUnder(t *testing.T, r *reins.Run, m *profile.Managed) {
	t.Helper()
	c := r.Profile()
	require.True(t, m.Equal(c.Managed()), "the run keeps the managed tier (profile %s)", c.Name())
	if m.MaxBand != nil {
		require.LessOrEqual(t, c.Band(), *m.MaxBand, "profile %s", c.Name())
	}
	require.False(t, m.MaxMode.StricterThan(c.Mode()), "profile %s mode %s", c.Name(), c.Mode())
	rules := c.Rules().Rules()
	for i, mr := range m.Rules {
		if mr.Action == policy.Deny {
			require.Equal(t, mr.ID, rules[i].ID, "the managed DENY rules come first")
		}
	}
	require.Contains(t, c.ProtectedPaths(), "/srv/keys")
}

func lastRecord(sink *audit.Memory) audit.Record {
	recs := sink.Records()
	return recs[len(recs)-1]
}

// TestManagedCapHoldsThroughSwitching: under a tier that caps the band at trusted, switches to
// an autonomous profile (built-in or custom, confirmed or not) are refused and recorded, while
// those within the cap apply with the tier imposed on them; a profile that carries another
// tier is refused; Reload takes a newer bundle's tier and refuses an older one.
func TestManagedCapHoldsThroughSwitching(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := orgTier()
	asked := 0
	f := newPlain(t, under(t, builtin(profile.ProfileDev), m), func(o *reins.Options) {
		o.ConfirmSwitch = func(context.Context, reins.SwitchRequest) (bool, error) { asked++; return true, nil }
	})
	assertUnder(t, f.r, m)

	for _, name := range []string{profile.ProfileFullAuto, "yolo", profile.PermissionAutonomous, "auto"} {
		_, err := f.r.SwitchTo(ctx, name)
		require.ErrorIs(t, err, reins.ErrSwitchRefused, name)
		assert.ErrorContains(t, err, "caps the autonomy band at trusted", name)
		rec := lastRecord(f.sink)
		assert.Equal(t, audit.KindProfileSwitchRefused, rec.Kind, name)
		assert.Contains(t, rec.Reason, "caps the autonomy band at trusted")
		assertUnder(t, f.r, m)
	}
	assert.Zero(t, asked, "a switch past the cap is refused before anyone is asked")

	custom := builtin(profile.ProfileDev)
	custom.Name, custom.Autonomy = "mine", 0.9
	_, err := f.r.SwitchProfile(ctx, custom)
	require.ErrorIs(t, err, reins.ErrSwitchRefused)
	assertUnder(t, f.r, m)

	for _, name := range []string{profile.PermissionSupervised, "trusted", profile.ProfileSafe, "yolo"} {
		if name == "yolo" {
			continue
		}
		_, err := f.r.SwitchTo(ctx, name)
		require.NoError(t, err, name)
		assert.Equal(t, name, f.r.Profile().Name())
		assertUnder(t, f.r, m)
	}
	d := f.check(t, shellAction("git push origin main"))
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Equal(t, "org-deny-push", d.RuleID, "the managed rule decides under a built-in profile switched to")

	other := orgTier()
	other.MaxBand = bandPtr(policy.BandAutonomous)
	_, err = f.r.SwitchProfile(ctx, under(t, builtin(profile.ProfileFullAuto), other))
	require.ErrorIs(t, err, reins.ErrSwitchRefused)
	assert.ErrorContains(t, err, "another managed tier")
	assertUnder(t, f.r, m)

	// Reload: a newer bundle's tier replaces the active one; an older one is refused; a profile
	// without a tier keeps the active one.
	newer := orgTier()
	newer.Bundle, newer.MaxBand = 8, bandPtr(policy.BandSupervised)
	_, err = f.r.Reload(ctx, under(t, builtin(profile.ProfileDev), newer))
	require.NoError(t, err)
	assertUnder(t, f.r, newer)
	assert.Equal(t, policy.BandSupervised, f.r.Profile().Band())
	older := orgTier()
	older.Bundle = 7
	_, err = f.r.Reload(ctx, under(t, builtin(profile.ProfileDev), older))
	require.ErrorIs(t, err, reins.ErrSwitchRefused)
	assert.ErrorContains(t, err, "older than the active one's 8, and the profile is looser")
	_, err = f.r.Reload(ctx, builtin(profile.ProfileFullAuto))
	require.ErrorIs(t, err, reins.ErrSwitchRefused, "reloaded without a tier, the active tier's cap still holds")
	assertUnder(t, f.r, newer)
}

// TestManagedModeCapHoldsThroughSwitching: a cap on the permission mode refuses the default mode
// and allows the stricter ones.
func TestManagedModeCapHoldsThroughSwitching(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := orgTier()
	m.MaxMode = profile.ModeReadOnly
	f := newPlain(t, under(t, builtin(profile.ProfileDev), m), func(o *reins.Options) {
		o.ConfirmSwitch = func(context.Context, reins.SwitchRequest) (bool, error) { return true, nil }
	})
	assert.Equal(t, profile.ModeReadOnly, f.r.Profile().Mode())
	for _, name := range []string{profile.ProfileDev, profile.PermissionSupervised, "ask"} {
		_, err := f.r.SwitchTo(ctx, name)
		require.ErrorIs(t, err, reins.ErrSwitchRefused, name)
		assert.ErrorContains(t, err, "caps the permission mode at read-only", name)
	}
	for _, name := range []string{profile.PermissionPlan, profile.PermissionReadOnly, profile.PermissionEmergencyStop} {
		_, err := f.r.SwitchTo(ctx, name)
		require.NoError(t, err, name)
		assertUnder(t, f.r, m)
	}
}

// TestManagedCapHoldsThroughRandomSwitches is the cap's property through the run: random
// sequences of switches (built-in profiles by name, random changes of the active profile, with
// ConfirmSwitch approving everything, and reloads) under random tiers never leave the run
// outside its tier.
func TestManagedCapHoldsThroughRandomSwitches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(26, 3))
	names := profile.Names()
	tiers := 12
	if testing.Short() {
		tiers = 4
	}
	applied := 0
	for range tiers {
		m := orgTier()
		m.MaxBand = bandPtr(policy.Band(rng.IntN(3)))
		m.MaxMode = []profile.Mode{profile.ModeDefault, profile.ModeReadOnly, profile.ModePlan}[rng.IntN(3)]
		f := newPlain(t, under(t, builtin(profile.ProfileSafe), m), func(o *reins.Options) {
			o.ConfirmSwitch = func(context.Context, reins.SwitchRequest) (bool, error) { return true, nil }
		})
		for range 30 {
			var err error
			switch rng.IntN(3) {
			case 0:
				_, err = f.r.SwitchTo(ctx, names[rng.IntN(len(names))])
			case 1:
				p := f.r.Profile().Profile()
				p.Autonomy = []float64{0, 0.4, 0.7, 1}[rng.IntN(4)]
				p.Mode = profile.Mode(rng.IntN(4))
				if rng.IntN(2) == 0 {
					p.Managed = nil
				}
				_, err = f.r.SwitchProfile(ctx, p)
			case 2:
				_, err = f.r.Reload(ctx, builtin(names[rng.IntN(len(names))]))
			}
			if err == nil {
				applied++
			}
			assertUnder(t, f.r, m)
		}
	}
	t.Logf("%d switches applied under random tiers", applied)
	assert.Positive(t, applied)
}

// TestManagedCapHoldsThroughDeescalation: the steps down of FailuresDeescalate keep the tier.
func TestManagedCapHoldsThroughDeescalation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := orgTier()
	m.MaxBand = nil
	f := newPlain(t, under(t, builtin(profile.PermissionAutonomous), m), func(o *reins.Options) { o.OnRepeatedFailure = reins.FailuresDeescalate })
	for range 3 {
		require.NoError(t, f.r.RecordResult(ctx, policy.Action{Tool: "bash"}, gate.Decision{Verdict: policy.Allow}, assert.AnError))
	}
	assert.Equal(t, policy.BandTrusted, f.r.Profile().Band())
	assertUnder(t, f.r, m)
}

// TestManagedRulesOnlyMakesAndAppliesNoGrants: under managed rules only, an approval kept for
// the session or always makes no grant (the action runs once), AddGrant is refused, a grant kept
// in the grants store from before is not applied, and a parked approval makes none.
func TestManagedRulesOnlyMakesAndAppliesNoGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	grants := reins.NewFileStore(filepath.Join(t.TempDir(), "grants.json"))
	a := policy.Action{Tool: "web_fetch", Operation: policy.OpNetwork, Host: "tracker.example"}
	// A run without the tier keeps an always grant for a.
	free := newPlain(t, builtin(profile.ApprovalAsk), func(o *reins.Options) { o.Grants = grants })
	_ = grantFor(t, free.r, a, reins.Always)
	require.Equal(t, policy.Allow, free.check(t, a).Verdict, "the grant applies without the tier")

	m := orgTier()
	m.RulesOnly, m.Rules = true, m.Rules[:1] // no managed CONFIRM rule for network use: only managed rules only holds grants off
	approver := &script{answers: []reins.Answer{{Verdict: policy.Allow, Scope: reins.Always}, {Verdict: policy.Allow, Scope: reins.ForSession}}}
	f := newPlain(t, under(t, builtin(profile.ApprovalAsk), m), func(o *reins.Options) {
		o.Grants, o.Approver = grants, approver
	})
	d := f.check(t, a)
	assert.Equal(t, policy.Confirm, d.Verdict, "the kept grant is not applied")
	// Nor is a grant written into the grants file for this very profile.
	exp0, err := f.r.Explain(ctx, a)
	require.NoError(t, err)
	planted, err := reins.NarrowestRules(a, exp0)
	require.NoError(t, err)
	for i := range planted {
		planted[i].ID, planted[i].Action = "grant:planted", policy.Allow
	}
	prof := f.r.Profile().Profile()
	_, err = grants.Update(ctx, func(s *reins.RunState) error {
		s.Grants = append(s.Grants, reins.Grant{ID: "planted", Rules: planted[:1], Scope: reins.Always, Profile: prof, ProfileHash: prof.Hash(),
			Created: time.Now(), By: "someone"})
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, policy.Confirm, f.check(t, a).Verdict, "a grant for the managed profile itself is not applied")
	for range 2 {
		out, err := f.r.Do(ctx, a, ok)
		require.NoError(t, err)
		require.NotNil(t, out.Approval)
		assert.Empty(t, out.Approval.Grant, "no grant is made")
		assert.Equal(t, reins.Once, out.Approval.Scope)
	}
	assert.Equal(t, 2, approver.count(), "asked each time")
	rules := planted
	_, err = f.r.AddGrant(ctx, reins.Grant{Scope: reins.ForSession, Rules: rules})
	require.ErrorIs(t, err, reins.ErrManagedRulesOnly)
	id, err := f.r.Park(ctx, "", a, d)
	require.NoError(t, err)
	ap, err := f.r.Resolve(ctx, id, reins.Answer{Verdict: policy.Allow, Scope: reins.Once})
	require.NoError(t, err)
	assert.Empty(t, ap.Grant)
	assert.Equal(t, policy.Confirm, f.check(t, a).Verdict, "the retry is asked again")
	assert.Contains(t, lastRecordOfKind(f.sink, audit.KindParkedResolved).Reason, "no grant: "+reins.ErrManagedRulesOnly.Error())
}

func lastRecordOfKind(sink *audit.Memory, k audit.Kind) audit.Record {
	recs := sink.Records()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == k {
			return recs[i]
		}
	}
	return audit.Record{}
}

// TestAuditRecordsNameTheBundleVersion: every record a run under a bundle's tier writes names
// the bundle's version beside the profile hash; a reload to a newer bundle changes it; a run
// without a bundle writes none (the field is omitted).
func TestAuditRecordsNameTheBundleVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := orgTier()
	m.Bundle = 12
	f := newPlain(t, under(t, builtin(profile.ProfileDev), m), nil)
	f.check(t, shellAction("ls"))
	f.r.Halt(ctx, "test")
	require.NoError(t, f.r.Reset(ctx, "test"))
	n := len(f.sink.Records())
	require.Positive(t, n)
	for _, rec := range f.sink.Records() {
		assert.Equal(t, uint64(12), rec.BundleVersion, "%s", rec.Kind)
		assert.NotEmpty(t, rec.ProfileHash, "%s", rec.Kind)
	}
	newer := m.Clone()
	newer.Bundle = 13
	_, err := f.r.Reload(ctx, under(t, builtin(profile.ProfileDev), newer))
	require.NoError(t, err)
	f.check(t, shellAction("ls"))
	assert.Equal(t, uint64(13), lastRecord(f.sink).BundleVersion)

	plain := newPlain(t, builtin(profile.ProfileDev), nil)
	plain.check(t, shellAction("ls"))
	assert.Zero(t, lastRecord(plain.sink).BundleVersion)
}

// TestRefusedBundleKeepsTheRunOrDeniesEverything: a host that loads a signed bundle runs under
// its tier; a tampered, replayed or expired bundle that replaces it is refused by the loader, and
// the run either stays on what it had (KeepLast: nothing to reload) or, reloading the loader's
// profile (DenyAll), denies everything; the records name the bundle version in force.
func TestRefusedBundleKeepsTheRunOrDeniesEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sign := func(v uint64, managed string, expires time.Time) []byte {
		data, err := loader.SignBundle(loader.Bundle{Version: v, Issued: now.Add(-time.Hour), Expires: expires, Managed: []byte(managed)}, priv)
		require.NoError(t, err)
		return data
	}
	const tier = `{"managed": {"max_band": "trusted"}, "custom_rules": [{"id": "org-deny-push", "condition": {"commands": ["git push"]}, "action": "DENY"}]}`
	for _, refusal := range []loader.Refusal{loader.KeepLast, loader.DenyAll} {
		for _, bad := range []struct {
			name string
			data []byte
			at   time.Time
		}{
			{"tampered", bytes.Replace(sign(6, tier, now.Add(time.Hour)), []byte(`"version": 6`), []byte(`"version": 60`), 1), now},
			{"replayed", sign(4, tier, now.Add(time.Hour)), now},
			{"expired", sign(6, tier, now.Add(time.Hour)), now.Add(2 * time.Hour)},
		} {
			dir := t.TempDir()
			bundleFile := filepath.Join(dir, "policy-bundle.json")
			require.NoError(t, os.WriteFile(bundleFile, sign(5, tier, now.Add(24*time.Hour)), 0o644))
			clock := now
			l, err := loader.New(&loader.Options{NoUserFile: true, Default: profile.ProfileDev, Bundle: &loader.BundleOptions{
				File: bundleFile, Keys: []ed25519.PublicKey{priv.Public().(ed25519.PublicKey)}, OnRefusal: refusal,
				Versions: loader.NewFileVersionStore(filepath.Join(dir, "seen.json")), Now: func() time.Time { return clock }}})
			require.NoError(t, err)
			ld, err := l.Load(ctx)
			require.NoError(t, err)
			f := newPlain(t, ld.Profile, nil)
			assert.Equal(t, policy.Deny, f.check(t, shellAction("git push")).Verdict)
			assert.Equal(t, policy.Allow, f.check(t, shellAction("ls")).Verdict)
			assert.Equal(t, uint64(5), lastRecord(f.sink).BundleVersion)
			hash := f.r.Profile().Profile().Hash()

			require.NoError(t, os.WriteFile(bundleFile, bad.data, 0o644))
			clock = bad.at
			ld, err = l.Load(ctx)
			if refusal == loader.KeepLast {
				require.ErrorIs(t, err, loader.ErrBundleRefused, bad.name)
				assert.Nil(t, ld)
				// The host reloads nothing: the run stays on what it had.
				assert.Equal(t, hash, f.r.Profile().Profile().Hash())
				assert.Equal(t, policy.Allow, f.check(t, shellAction("ls")).Verdict)
				assert.Equal(t, uint64(5), lastRecord(f.sink).BundleVersion)
				continue
			}
			require.NoError(t, err)
			require.ErrorIs(t, ld.BundleRefused, loader.ErrBundleRefused, bad.name)
			_, err = f.r.Reload(ctx, ld.Profile)
			require.NoError(t, err, bad.name)
			d := f.check(t, shellAction("ls"))
			assert.Equal(t, policy.Deny, d.Verdict, "%s: everything is denied", bad.name)
			assert.Zero(t, lastRecord(f.sink).BundleVersion, "no verified bundle is in force")
			_, err = f.r.SwitchTo(ctx, profile.ProfileDev)
			require.ErrorIs(t, err, reins.ErrSwitchRefused, "nothing switches out of it")
		}
	}
}

// TestNoGrantAnswersAManagedConfirm: a question a managed CONFIRM rule asks is asked every time:
// an approval for the session or always makes no grant, and a grant the host adds for it does
// not answer it; other questions are granted as usual.
func TestNoGrantAnswersAManagedConfirm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	approver := &script{answers: []reins.Answer{{Verdict: policy.Allow, Scope: reins.ForSession}, {Verdict: policy.Allow, Scope: reins.ForSession},
		{Verdict: policy.Allow, Scope: reins.ForSession}}}
	f := newPlain(t, under(t, builtin(profile.ApprovalAsk), orgTier()), func(o *reins.Options) { o.Approver = approver })
	net := policy.Action{Tool: "web_fetch", Operation: policy.OpNetwork, Host: "tracker.example"}
	for range 2 {
		out, err := f.r.Do(ctx, net, ok)
		require.NoError(t, err)
		assert.Equal(t, "org-confirm-network", out.Decision.RuleID)
		assert.Empty(t, out.Approval.Grant)
	}
	assert.Equal(t, 2, approver.count(), "asked each time")
	exp, err := f.r.Explain(ctx, net)
	require.NoError(t, err)
	rules, err := reins.NarrowestRules(net, exp)
	require.NoError(t, err)
	_, err = f.r.AddGrant(ctx, reins.Grant{Scope: reins.ForSession, Rules: rules})
	require.NoError(t, err, "the host may add it")
	assert.Equal(t, policy.Confirm, f.check(t, net).Verdict, "but it does not answer a managed CONFIRM")

	plan := policy.Action{Tool: "planner", Operation: policy.OpPlan, Targets: []string{"src/a.go"}}
	require.Equal(t, policy.Confirm, f.check(t, plan).Verdict)
	_ = grantFor(t, f.r, plan, reins.ForSession)
	assert.Equal(t, policy.Allow, f.check(t, plan).Verdict, "a question the tier does not ask is granted as usual")
}

// BenchmarkCheckUnderManagedTier: a Check of an ALLOW under a managed tier (its rules evaluated
// first, records naming the bundle) against the same profile without it (report the ratio).
func BenchmarkCheckUnderManagedTier(b *testing.B) {
	ctx := context.Background()
	ws := workspace(b)
	m := orgTier()
	m.Bundle = 3
	for _, bc := range []struct {
		name string
		p    profile.Profile
	}{{"baseline=trusted", builtin(profile.PermissionTrusted)}, {"trusted+tier", under(b, builtin(profile.PermissionTrusted), m)}} {
		r, err := reins.New(ctx, bc.p, &reins.Options{Workspace: []string{ws}, Audit: audit.Discard, ConfigDir: filepath.Join(b.TempDir(), "reins")})
		require.NoError(b, err)
		a := writeAction("main.go")
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, _ := r.Check(ctx, a); d.Verdict != policy.Allow {
					b.Fatal(d)
				}
			}
		})
		_ = r.Close()
	}
}
