package gate_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestAllowedShellLinesCarryTheirConfinement: the analysis proposes, the sandbox enforces. A
// shell line the gate lets through without asking carries the Sandbox obligation, whichever
// layer allowed it (a rule, the matrix, a grant), and its trace says what the sandbox must
// enforce: the paths the analysis claims it writes, the network when it names hosts the
// profile allowed, and whether it touches files it cannot name. A line that is asked about or
// denied carries no derived confinement.
func TestAllowedShellLinesCarryTheirConfinement(t *testing.T) {
	t.Parallel()
	allowAll := policy.Rule{ID: "allow-all", Priority: -1, Action: policy.Allow, Condition: policy.Condition{Commands: []string{"echo >"}}}
	grant := grantFor("grant:g1", "sort -o out.txt data.txt")
	for _, tc := range []struct {
		name      string
		prof      profile.Profile
		state     *gate.State
		line      string
		confined  bool
		writable  []string // relative to the workspace
		network   bool
		unknown   bool
		layerRule string // the deciding rule, when it matters
	}{
		{"read-only line, a rule", profile.Dev.Profile(), nil, "grep -n TODO *.go", true, nil, false, true, ""}, // a match named -f.env.go would be an option: an unknown read
		{"read-only line, the matrix", profile.Trusted.Profile(), nil, "ls -la src", true, nil, false, false, gate.CheckMatrix},
		{"a write by redirection", profile.Autonomous.Profile(), nil, "echo hi > build/out.txt", true, []string{"build/out.txt"}, false, false, ""},
		{"a write by an option", profile.Autonomous.Profile(), nil, "sort -o out.txt data.txt", true, []string{"out.txt"}, false, false, ""},
		{"a profile rule", profile.Supervised.Profile().WithRules(allowAll), nil, "echo hi > a.txt", true, []string{"a.txt"}, false, false, "allow-all"},
		{"a grant", profile.Supervised.Profile(), &gate.State{Grants: grant}, "sort -o out.txt data.txt", true, []string{"out.txt"}, false, false, "grant:g1"},
		{"the network, at a host the profile allows", profile.Autonomous.Profile(), nil, "curl -s https://example.com", true, nil, true, false, ""},
		{"a package manager's registry", profile.Dev.Profile(), nil, "npm install", true, []string{"."}, true, false, ""}, // the analysis claims the project directory
		{"files the line does not name", profile.Dev.Profile(), nil, "git ls-files | xargs wc -l", true, nil, false, true, ""},
		{"asked about: no derived confinement", profile.Supervised.Profile(), nil, "echo hi > a.txt", false, nil, false, false, ""},
		{"denied: none", profile.Dev.Profile(), nil, "cat .env", false, nil, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.prof)
			var tr gate.Trace
			d := f.g.Decide(tc.state, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: tc.line}, &tr)
			c, ok := tr.Confinement()
			require.Equal(t, tc.confined, ok, "%s: %s", tc.line, d)
			if !tc.confined {
				assert.NotEqual(t, policy.Allow, d.Verdict, "%s: %s", tc.line, d)
				return
			}
			require.Equal(t, policy.Allow, d.Verdict, "%s: %s", tc.line, d)
			assert.True(t, d.Obligations.Has(policy.Sandbox), "an allowed line is confined: %s", d)
			if tc.layerRule != "" {
				assert.Equal(t, tc.layerRule, d.RuleID)
			}
			var want []string
			for _, w := range tc.writable {
				want = append(want, filepath.Join(f.ws, w))
			}
			assert.ElementsMatch(t, want, c.Writable, "%s", tc.line)
			assert.Equal(t, tc.network, c.Network)
			assert.Equal(t, tc.unknown, c.Unknown)
		})
	}
}

// grantSource answers for one line with one rule id, as a run's grants would.
type grantSource struct{ id, line string }

func grantFor(id, line string) gate.GrantSource { return grantSource{id, line} }

func (g grantSource) MatchGrant(scope gate.GrantScope, _ policy.Subject) (string, string, bool) {
	if scope.Line != g.line {
		return "", "", false
	}
	return g.id, "granted", true
}
