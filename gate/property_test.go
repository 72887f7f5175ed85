package gate_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

func randomAction(rng *rand.Rand, outside string) policy.Action {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	a := policy.Action{
		Tool:      pick("read_file", "write_file", "bash", "web_fetch", "mcp__x__y"),
		Operation: policy.Operation(pick("read", "write", "delete", "shell", "network", "plan", "tool", "self_upgrade")),
	}
	for _, l := range risk.Levels() {
		if rng.IntN(4) == 0 {
			a.Risk = a.Risk.With(l)
		}
	}
	if rng.IntN(3) == 0 {
		a.Severity = risk.Severity(1 + rng.IntN(3))
	}
	switch rng.IntN(4) {
	case 0:
		a.Targets = []string{pick("src/pkg/main.go", "docs/git-notes.md", "new.txt", "README.md")}
	case 1:
		a.Targets = []string{outside + "/x", "src/pkg/main.go"}
	}
	if a.Operation == policy.OpShell {
		a.Command = pick("go test ./...", "rm -rf build", "make", "git push --force", "curl x | sh")
	}
	if rng.IntN(2) == 0 {
		a.Host = pick("api.model.example", "exfil.example")
	}
	return a
}

// TestHigherAutonomyNeverStricter: for every risk, a higher dial value never gives a stricter
// verdict than a lower one (property over dial values and random actions).
func TestHigherAutonomyNeverStricter(t *testing.T) {
	t.Parallel()
	dials := []float64{0, 0.2, 0.33, 0.34, 0.5, 0.66, 0.67, 0.8, 1}
	outside := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 13))
	fixtures := make([]*fixture, len(dials))
	for i, dial := range dials {
		p := builtin(profile.PermissionTrusted)
		p.Name, p.Autonomy = fmt.Sprintf("dial-%v", dial), dial
		p.ExternalWrites = profile.ExternalWritesByPolicy // keep the hard stop from latching between checks
		fixtures[i] = newFixture(t, p)
	}
	for k := 0; k < 400; k++ {
		a := randomAction(rng, outside)
		var prev policy.Verdict
		for i, f := range fixtures {
			d := f.check(t, a)
			if i > 0 {
				require.False(t, d.Verdict.StricterThan(prev), "dial %v gives %s, dial %v gave %s, for %+v", dials[i], d.Verdict, dials[i-1], prev, a)
			}
			prev = d.Verdict
		}
	}
}

// TestDenyRuleNeverLoosens: adding a deny rule (any condition, any priority) to any built-in
// profile never makes any decision more permissive.
func TestDenyRuleNeverLoosens(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 5))
	conds := []policy.Condition{
		{}, {Tools: []string{"bash"}}, {OperationType: []policy.Operation{policy.OpWrite}},
		{Risk: policy.MatchLevels(risk.Exec)}, {Risk: policy.MatchSeverities(risk.Low)}, {TargetPattern: "src/**"},
		{CommandPattern: `\btest\b`}, {Hosts: []string{"*.example"}}, {OutsideWorkspace: true},
	}
	for _, base := range profile.All() {
		base.ExternalWrites = profile.ExternalWritesByPolicy
		before := newFixture(t, base)
		for _, c := range conds {
			prio := []int{-100, 0, 3, 50, 1000}[rng.IntN(5)]
			after := newFixture(t, base.WithRules(policy.Rule{ID: "extra-deny", Priority: prio, Action: policy.Deny, Condition: c}))
			for k := 0; k < 25; k++ {
				a := randomAction(rng, outside)
				d0, d1 := before.check(t, a), after.check(t, a)
				require.False(t, d0.Verdict.StricterThan(d1.Verdict), "%s + deny %+v at %d: %s became %s for %+v", base.Name, c, prio, d0, d1, a)
			}
		}
	}
}

// TestProtectedPathsUnderEveryProfile: the protected paths are denied under every built-in
// profile, the most autonomous included: secrets for reads, writes and deletes, write-protected
// paths for writes and deletes.
func TestProtectedPathsUnderEveryProfile(t *testing.T) {
	t.Parallel()
	for _, p := range profile.All() {
		for _, target := range []string{".git/config", ".env", "deploy/.env.local", ".ssh/id_rsa", "keys/id_ed25519", ".reins/project-profile.json", ".env.production", ".envrc"} {
			for _, op := range []policy.Operation{policy.OpRead, policy.OpWrite, policy.OpDelete} {
				if op == policy.OpRead && (strings.HasPrefix(target, ".reins/") || target == ".envrc") {
					continue // write-protected: reading is up to the profile
				}
				f := newFixture(t, p)
				d := f.check(t, policy.Action{Tool: "fs", Operation: op, Targets: []string{target}})
				assert.Equal(t, policy.Deny, d.Verdict, "%s %s %s: %s", p.Name, op, target, d)
			}
		}
	}
}

// TestBuiltinOrderIsBehavioural: the documented order of built-in profiles holds for decisions:
// along each family's chain, the stricter profile never gives a more permissive verdict.
func TestBuiltinOrderIsBehavioural(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 22))
	for _, chain := range [][]string{
		{profile.ProfileSafe, profile.ProfileDev, profile.ProfileFullAuto},
		{profile.PermissionEmergencyStop, profile.PermissionPlan, profile.PermissionReadOnly, profile.PermissionSupervised, profile.PermissionTrusted, profile.PermissionAutonomous},
		{profile.ApprovalAsk, profile.ApprovalSafe, profile.ApprovalAuto, profile.ApprovalYolo},
	} {
		fixtures := make([]*fixture, len(chain))
		for i, name := range chain {
			p := builtin(name).WithHostGroup(profile.GroupAIAPIs, "api.model.example")
			p.ExternalWrites = profile.ExternalWritesByPolicy // compare decisions, not latches
			fixtures[i] = newFixture(t, p)
		}
		for k := 0; k < 300; k++ {
			a := randomAction(rng, outside)
			for i := 1; i < len(chain); i++ {
				stricter, looser := fixtures[i-1].check(t, a), fixtures[i].check(t, a)
				require.False(t, looser.Verdict.StricterThan(stricter.Verdict), "%s gives %s but %s gives %s for %+v", chain[i-1], stricter, chain[i], looser, a)
			}
		}
	}
}
