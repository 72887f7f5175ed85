package profile_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/internal/evalmodel"
	"github.com/reins-go/reins/risk"
)

// gen makes random profiles and actions from small pools, so that rules, lists and actions
// meet often.
type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g gen) chance(n int) bool        { return g.r.IntN(n) == 0 }

func (g gen) some(n int, xs ...string) []string {
	var out []string
	for range 1 + g.r.IntN(n) {
		if x := g.pick(xs...); !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

var (
	poolOps      = []string{"read", "write", "delete", "shell", "network", "plan", "tool", "self_upgrade", "edit", "mcp"}
	poolTools    = []string{"bash", "write_file", "read_file", "web_fetch", "mcp__x__y", "planner", "upgrade"}
	poolHosts    = []string{"api.llm.example", "evil.example", "proxy.golang.org", "registry.npmjs.org", "pypi.org"}
	poolTargets  = []string{"src/main.go", "docs/a.md", "deploy/prod/x", "secrets/k", ".env", ".git/config", "build/out", "/data/x", "/data/secrets/y", "/tmp/z", "/etc/passwd", "~/.aws/credentials"}
	poolCommands = []string{"go test", "ls", "rm -rf", "rm", "npm install", "curl", "make", "make deploy", "cat", "pip install", "docker pull", "git push"}
	poolPaths    = []string{"secrets", "docs", "deploy/prod", "/data/secrets", "~/.aws", "build", "/etc"}
	poolTrusted  = []string{"/data", "/opt/share", "~/shared"}
	poolRefs     = map[int][]string{
		0: {"@shell_allowlist", "@shell_blocklist", "@auto_approve_patterns"},
		1: {"@allowed_tools"},
		2: {"@network_allowlist", "@ai-apis", "@package-managers", "@configured-hosts"},
	}
)

func (g gen) riskMatch() policy.RiskMatch {
	var m policy.RiskMatch
	for range 1 + g.r.IntN(2) {
		if g.chance(2) {
			m.Levels = m.Levels.With(risk.Levels()[g.r.IntN(5)])
		} else {
			m.Severities = m.Severities.With(risk.Severity(1 + g.r.IntN(3)))
		}
	}
	return m
}

func (g gen) condition() policy.Condition {
	var c policy.Condition
	for range g.r.IntN(3) {
		switch g.r.IntN(10) {
		case 0:
			for _, op := range g.some(2, poolOps...) {
				c.OperationType = append(c.OperationType, policy.Operation(op))
			}
		case 1, 2:
			c.Risk = g.riskMatch()
		case 3:
			c.TargetPattern = g.pick("**", "docs/**", "src/**", "deploy/**", "/data/**", "secrets/**", "*.go")
		case 4:
			c.CommandPattern = g.pick(`^go test`, `rm`, `curl .*\| *sh`, `^make`)
		case 5:
			c.Commands = g.some(2, append(slices.Clone(poolCommands), poolRefs[0]...)...)
		case 6:
			c.Tools = g.some(2, append([]string{"bash", "write_file", "mcp__*", "*", "upgrade"}, poolRefs[1]...)...)
		case 7:
			c.Hosts = g.some(2, append([]string{"evil.example", "*.example", "*"}, poolRefs[2]...)...)
		case 8:
			c.OutsideWorkspace = true
		case 9:
			c.Providers = g.some(1, "openai", "anthropic", "*")
		}
	}
	return c
}

func (g gen) obligations() policy.Obligations {
	if g.chance(2) {
		return 0
	}
	return policy.Obligations(1 + g.r.IntN(7))
}

func (g gen) rule(id string) policy.Rule {
	return policy.Rule{ID: id, Priority: []int{-1, 0, 1, 2, 3, 4, 5, 50, 99}[g.r.IntN(9)], Condition: g.condition(),
		Action: []policy.Verdict{policy.Allow, policy.Deny, policy.Confirm}[g.r.IntN(3)], Obligations: g.obligations()}
}

// profile returns a random valid profile: a built-in one, changed a few times.
func (g gen) profile() profile.Profile {
	for {
		p := profile.All()[g.r.IntN(len(profile.Names()))]
		for range g.r.IntN(4) {
			p = g.mutate(p, false)
		}
		if _, err := p.Compile(); err == nil {
			return p
		}
	}
}

// derive returns a random valid profile made from p by a few changes, mostly ones that tend to
// tighten (so that many derived profiles are at least as restrictive), sometimes any.
func (g gen) derive(p profile.Profile) profile.Profile {
	for {
		q := p.Clone()
		for range 1 + g.r.IntN(3) {
			q = g.mutate(q, !g.chance(4))
		}
		if _, err := q.Compile(); err == nil {
			return q
		}
	}
}

func toggle(list []string, e string) []string {
	if i := slices.Index(list, e); i >= 0 {
		return slices.Delete(slices.Clone(list), i, i+1)
	}
	return append(slices.Clone(list), e)
}

func removeRandom(g gen, list []string) []string {
	if len(list) == 0 {
		return list
	}
	i := g.r.IntN(len(list))
	return slices.Delete(slices.Clone(list), i, i+1)
}

// mutate changes one setting of p; tighten prefers the direction that tends to tighten.
func (g gen) mutate(p profile.Profile, tighten bool) profile.Profile {
	p = p.Clone()
	limit := func(cur int, vals ...int) int {
		v := vals[g.r.IntN(len(vals))]
		if tighten && cur > 0 && (v == 0 || v > cur) {
			return cur
		}
		return v
	}
	switch g.r.IntN(17) {
	case 0:
		if tighten {
			p.Mode = []profile.Mode{profile.ModeReadOnly, profile.ModePlan, profile.ModeEmergencyStop}[g.r.IntN(3)]
		} else {
			p.Mode = profile.Mode(g.r.IntN(4))
		}
	case 1:
		v := []float64{0, 0.2, 0.34, 0.5, 0.67, 0.9, 1}[g.r.IntN(7)]
		if !tighten || v <= p.Autonomy {
			p.Autonomy = v
		}
	case 2:
		p.ExternalWrites = profile.ExternalWrites(g.r.IntN(2))
		if tighten {
			p.ExternalWrites = profile.ExternalWritesHalt
		}
	case 3:
		p.ExecCheckpoints = profile.ExecCheckpoints(g.r.IntN(2))
		if tighten {
			p.ExecCheckpoints = profile.ExecCheckpointsOn
		}
	case 4:
		p.Limits.MaxFilesPerPlan = limit(p.Limits.MaxFilesPerPlan, 0, 1, 3, 10, 50, 1050)
		p.Limits.MaxConcurrentOps = limit(p.Limits.MaxConcurrentOps, 0, 1, 2, 3, 5, 103)
		p.Limits.Timeout = time.Duration(limit(int(p.Limits.Timeout), 0, int(time.Minute), int(10*time.Minute), int(70*time.Minute)))
	case 5:
		e := g.pick(poolPaths...)
		if tighten {
			p.ProtectedPaths = append(p.ProtectedPaths, e)
		} else {
			p.ProtectedPaths = toggle(p.ProtectedPaths, e)
		}
	case 6:
		e := g.pick(poolPaths...)
		if tighten {
			p.WriteProtectedPaths = append(p.WriteProtectedPaths, e)
		} else {
			p.WriteProtectedPaths = toggle(p.WriteProtectedPaths, e)
		}
	case 7:
		if tighten {
			p.TrustedPaths = removeRandom(g, p.TrustedPaths)
		} else {
			p.TrustedPaths = toggle(p.TrustedPaths, g.pick(poolTrusted...))
		}
	case 8:
		if tighten {
			p.ShellAllowlist = removeRandom(g, p.ShellAllowlist)
		} else {
			p.ShellAllowlist = toggle(p.ShellAllowlist, g.pick(poolCommands...))
		}
	case 9:
		e := g.pick(poolCommands...)
		if tighten {
			p.ShellBlocklist = append(p.ShellBlocklist, e)
		} else {
			p.ShellBlocklist = toggle(p.ShellBlocklist, e)
		}
	case 10:
		lists := []*[]string{&p.NetworkAllowlist, &p.AllowedTools, &p.AutoApprovePatterns}
		pools := [][]string{poolHosts, {"bash", "write_file", "mcp__*"}, poolCommands}
		i := g.r.IntN(3)
		if tighten {
			*lists[i] = removeRandom(g, *lists[i])
		} else {
			*lists[i] = toggle(*lists[i], g.pick(pools[i]...))
		}
	case 11:
		grp := g.pick(profile.GroupAIAPIs, profile.GroupPackageManagers, profile.GroupConfiguredHosts)
		if p.HostGroups == nil {
			p.HostGroups = map[string][]string{}
		}
		if tighten {
			p.HostGroups[grp] = removeRandom(g, p.HostGroups[grp])
		} else {
			p.HostGroups[grp] = toggle(p.HostGroups[grp], g.pick(poolHosts...))
		}
	case 12:
		if p.Registries == nil {
			p.Registries = map[string][]string{}
		}
		eco := g.pick("npm", "pypi", "docker")
		p.Registries[eco] = toggle(p.Registries[eco], g.pick("registry.npmjs.org", "pypi.org", "evil.example"))
	case 13: // add a rule: DENY when tightening
		r := g.rule("r" + string(rune('a'+g.r.IntN(26))))
		if tighten {
			r.Action = policy.Deny
		}
		if !slices.ContainsFunc(p.Rules, func(x policy.Rule) bool { return x.ID == r.ID }) {
			p.Rules = append([]policy.Rule{r}, p.Rules...)
		}
	case 14: // drop a rule: an ALLOW one when tightening
		if len(p.Rules) > 0 {
			i := g.r.IntN(len(p.Rules))
			if !tighten || p.Rules[i].Action == policy.Allow {
				p.Rules = slices.Delete(p.Rules, i, i+1)
			}
		}
	case 15: // change a rule's verdict or obligations: stricter when tightening
		if len(p.Rules) > 0 {
			r := &p.Rules[g.r.IntN(len(p.Rules))]
			if tighten {
				if g.chance(2) {
					r.Action = policy.Strictest(r.Action, []policy.Verdict{policy.Confirm, policy.Deny}[g.r.IntN(2)])
				} else {
					r.Obligations |= g.obligations()
				}
			} else {
				r.Action, r.Obligations = []policy.Verdict{policy.Allow, policy.Deny, policy.Confirm}[g.r.IntN(3)], g.obligations()
			}
		}
	case 16: // change a rule's condition or priority
		if len(p.Rules) > 0 {
			r := &p.Rules[g.r.IntN(len(p.Rules))]
			if g.chance(2) {
				r.Priority += g.r.IntN(3) - 1
			} else {
				r.Condition = g.condition()
			}
		}
	}
	return p
}

func (g gen) command() evalmodel.Command {
	cmds := []evalmodel.Command{
		{Argv: []string{"go", "test", "./..."}, Risk: risk.Of(risk.Exec)},
		{Argv: []string{"ls"}, Risk: risk.Of(risk.ReadOnly)},
		{Argv: []string{"cat", ".env"}, Risk: risk.Of(risk.ReadOnly), Reads: []string{".env"}},
		{Argv: []string{"cat", "docs/a.md"}, Risk: risk.Of(risk.ReadOnly), Reads: []string{"docs/a.md"}},
		{Argv: []string{"cat", "/data/secrets/y"}, Risk: risk.Of(risk.ReadOnly), Reads: []string{"/data/secrets/y"}},
		{Argv: []string{"rm", "-rf", "build"}, Risk: risk.Of(risk.Destructive), Writes: []string{"build"}},
		{Argv: []string{"rm", "-rf", "/data/x"}, Risk: risk.Of(risk.Destructive), Writes: []string{"/data/x"}},
		{Argv: []string{"rm", "-rf", "/"}, Risk: risk.Of(risk.Destructive), Severity: risk.High, Writes: []string{"/"}},
		{Argv: []string{"curl", "https://evil.example"}, Risk: risk.Of(risk.Network), Hosts: []string{"evil.example"}},
		{Argv: []string{"npm", "install"}, Risk: risk.Of(risk.Exec, risk.Network, risk.Mutating), Install: "npm"},
		{Argv: []string{"pip", "install", "x"}, Risk: risk.Of(risk.Exec, risk.Network, risk.Mutating), Install: "pypi"},
		{Argv: []string{"docker", "pull", "x"}, Risk: risk.Of(risk.Exec, risk.Network), Install: "docker"},
		{Argv: []string{"make", "deploy"}, Risk: risk.Of(risk.Exec)},
		{Argv: []string{"make"}, Risk: risk.Of(risk.Exec), Elevated: true},
		{Argv: []string{"python", "-c", "x"}, Risk: risk.Of(risk.Exec), Opaque: true},
		{Argv: []string{"go", "test", "./..."}, Risk: risk.Of(risk.Exec, risk.Mutating), Writes: []string{"out.txt"}, Redirects: true},
		{Argv: []string{"git", "push", "--force"}, Risk: risk.Of(risk.Network, risk.Destructive), Severity: risk.High, Hosts: []string{"github.com"}},
	}
	return cmds[g.r.IntN(len(cmds))]
}

// action returns a random action of any operation, risk, targets, host and commands.
func (g gen) action() evalmodel.Action {
	a := evalmodel.Action{}
	a.Tool = g.pick(poolTools...)
	a.Operation = policy.Operation(g.pick(poolOps...))
	if g.chance(2) {
		for range 1 + g.r.IntN(2) {
			a.Risk = a.Risk.With(risk.Levels()[g.r.IntN(5)])
		}
	}
	if g.chance(3) {
		a.Severity = risk.Severity(1 + g.r.IntN(3))
	}
	if g.chance(2) {
		a.Targets = g.some(2, poolTargets...)
	}
	if a.Operation == policy.OpPlan && g.chance(2) {
		for i := range 5 + g.r.IntN(60) {
			a.Targets = append(a.Targets, "src/f"+string(rune('a'+i%26))+".go")
		}
	}
	if g.chance(3) {
		a.Host = g.pick(poolHosts...)
	}
	if a.Operation == policy.OpShell || g.chance(6) {
		var texts []string
		for range 1 + g.r.IntN(2) {
			c := g.command()
			a.Commands = append(a.Commands, c)
			texts = append(texts, c.Text())
		}
		a.Command = strings.Join(texts, " && ")
	}
	if g.chance(4) {
		a.Provider = g.pick("openai", "anthropic")
	}
	a.InFlight = g.r.IntN(6)
	a.Duration = []time.Duration{time.Minute, 5 * time.Minute, 20 * time.Minute, 2 * time.Hour}[g.r.IntN(4)]
	return a
}

// checkImplies fails t when AtLeastAsRestrictive(a, b) holds and some action is decided more
// permissively under a than under b. It reports whether the order said yes.
func checkImplies(t *testing.T, a, b profile.Profile, actions []evalmodel.Action) bool {
	t.Helper()
	ok, why := profile.AtLeastAsRestrictive(a, b)
	if !ok {
		require.NotEmpty(t, why, "a no comes with the setting that loosens")
		return false
	}
	ma, mb := evalmodel.New(a.MustCompile()), evalmodel.New(b.MustCompile())
	for _, x := range actions {
		da, db := ma.Decide(x), mb.Decide(x)
		if !evalmodel.AtLeastAsStrict(da, db) {
			t.Fatalf("AtLeastAsRestrictive(a, b) holds, but %v is decided %v under a and %v under b\na: %s\nb: %s",
				x, da, db, describe(a), describe(b))
		}
	}
	return true
}

func describe(p profile.Profile) string {
	var rules []string
	for _, r := range p.Rules {
		rules = append(rules, fmt.Sprintf("%s:%s+%s@%d%+v", r.ID, r.Action, r.Obligations, r.Priority, r.Condition))
	}
	return fmt.Sprintf("%s mode %s dial %v external %s exec-ckpt %s limits %+v protected+%d trusted %q allow %q block+%d net %q tools %q auto %q groups %q registries %q\n  rules %s",
		p.Name, p.Mode, p.Autonomy, p.ExternalWrites, p.ExecCheckpoints, p.Limits, len(p.ProtectedPaths), p.TrustedPaths,
		p.ShellAllowlist, len(p.ShellBlocklist), p.NetworkAllowlist, p.AllowedTools, p.AutoApprovePatterns, p.HostGroups, p.Registries,
		strings.Join(rules, "\n        "))
}

// TestOrderAgainstEvaluation is the order's property test: for random pairs of profiles (a
// built-in one changed a few times, and one derived from it), whenever AtLeastAsRestrictive
// says a is at least as restrictive as b, no random action (every operation, risk level and
// severity, targets inside and outside the workspace and under trusted paths, hosts, shell
// commands including installs, opaque, elevated and redirecting ones, and the run's operations
// in flight and duration) is decided more permissively under a than under b, in the decision
// order (evalmodel.AtLeastAsStrict: ALLOW < CONFIRM < DENY, fewer obligations is looser, a
// CONFIRM stands in for notify and sandbox but not for a checkpoint). Every pair of built-in
// profiles is checked too. It also checks that the order is reflexive and transitive on the
// generated profiles.
func TestOrderAgainstEvaluation(t *testing.T) {
	t.Parallel()
	g := gen{rand.New(rand.NewPCG(24, 5))}
	actions := make([]evalmodel.Action, 300)
	for i := range actions {
		actions[i] = g.action()
	}
	for _, a := range profile.All() {
		for _, b := range profile.All() {
			checkImplies(t, a, b, actions)
		}
	}
	pairs, yes, chains, transitive := 400, 0, 0, 0
	if testing.Short() {
		pairs = 100
	}
	for range pairs {
		b := g.profile()
		a := g.derive(b)
		ok, why := profile.AtLeastAsRestrictive(b, b)
		require.True(t, ok, "reflexive: %s: %s", describe(b), why)
		if checkImplies(t, a, b, actions[:100]) {
			yes++
			// Transitivity: c derived from a, at least as restrictive as a, is at least as
			// restrictive as b.
			c := g.derive(a)
			if ok, _ := profile.AtLeastAsRestrictive(c, a); ok {
				chains++
				ok, why := profile.AtLeastAsRestrictive(c, b)
				require.True(t, ok, "transitive: c >= a >= b but not c >= b: %s\nc: %s\na: %s\nb: %s", why, describe(c), describe(a), describe(b))
				transitive++
				checkImplies(t, c, b, actions[:100])
			}
		}
		// The other way round too: b against a changed anyhow.
		checkImplies(t, b, a, actions[:100])
	}
	t.Logf("%d of %d derived profiles at least as restrictive; %d chains of two checked for transitivity", yes, pairs, chains)
	assert.Greater(t, yes, pairs/4, "the generator makes many ordered pairs")
	assert.Greater(t, transitive, pairs/10, "and many ordered chains")
}

// BenchmarkAtLeastAsRestrictive measures the order on the comparisons switching makes:
// identical profiles (what a reload compares), the built-in PROFILE-SAFE against PROFILE-DEV
// (where the rule-by-id proof fails and the pair-by-pair one runs), and a PROFILE-DEV with a
// user's lists of 2,000 entries and 200 rules against a copy with one more rule; the baseline
// is Profile.Clone of PROFILE-DEV (report ratios, not absolute times).
func BenchmarkAtLeastAsRestrictive(b *testing.B) {
	dev, safe := profile.MustBuiltin(profile.ProfileDev), profile.MustBuiltin(profile.ProfileSafe)
	big := dev.Clone()
	for i := range 2000 {
		big.ShellBlocklist = append(big.ShellBlocklist, fmt.Sprintf("tool-%d", i))
		big.ProtectedPaths = append(big.ProtectedPaths, fmt.Sprintf("secret-%d", i))
	}
	for i := range 200 {
		big.Rules = append(big.Rules, policy.Rule{ID: fmt.Sprintf("deny-%d", i), Priority: i % 7, Action: policy.Deny,
			Condition: policy.Condition{Commands: []string{fmt.Sprintf("cmd-%d", i)}}})
	}
	bigger := big.WithRules(policy.Rule{ID: "deny-more", Action: policy.Deny, Condition: policy.Condition{Tools: []string{"x"}}})
	b.Run("baseline=Clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = dev.Clone()
		}
	})
	for _, bc := range []struct {
		name     string
		to, from profile.Profile
	}{{"same", dev, dev}, {"SAFE-vs-DEV", safe, dev}, {"large", bigger, big}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ok, why := profile.AtLeastAsRestrictive(bc.to, bc.from); !ok {
					b.Fatal(why)
				}
			}
		})
	}
}
