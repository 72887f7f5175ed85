package gate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

func TestAlternatives(t *testing.T) {

	// A rule that denies writing the docs directory as a whole: its files are the narrower way.
	p := builtin(profile.PermissionTrusted).WithRules(policy.Rule{ID: "no-docs-dir", Priority: 1, Action: policy.Deny,
		Condition: policy.Condition{OperationType: []policy.Operation{policy.OpWrite}, TargetPattern: "docs"}})
	p.Name = "trusted-no-docs-dir"
	f := newFixture(t, p)
	a := policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"docs"}}
	d := f.check(t, a)
	require.Equal(t, policy.Deny, d.Verdict)
	alts := f.g.Alternatives(nil, a, d)
	var narrower []string
	for _, alt := range alts {
		if alt.Kind == gate.AltNarrowerPath {
			narrower = append(narrower, alt.Action.Targets[0])
			assert.NotEqual(t, policy.Deny, alt.Verdict)
		}
	}
	assert.Contains(t, narrower, "docs/git-notes.md")

	// The matrix denies a delete under supervision; the nearest profile that would not is named.
	f = newFixture(t, builtin(profile.PermissionSupervised))
	a = policy.Action{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"README.md"}}
	d = f.check(t, a)
	require.Equal(t, policy.Deny, d.Verdict)
	alts = f.g.Alternatives(nil, a, d)
	var prof *gate.Alternative
	for i := range alts {
		if alts[i].Kind == gate.AltProfile {
			prof = &alts[i]
		}
	}
	require.NotNil(t, prof, "%+v", alts)
	assert.Equal(t, profile.PermissionTrusted, prof.Profile, "the nearest one: a band up, same family")
	assert.Equal(t, policy.Confirm, prof.Verdict)

	// A protected path, a halt: no way forward but the boundary or a reset.
	a = policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{".env"}}
	d = f.check(t, a)
	require.Equal(t, policy.Deny, d.Verdict)
	for _, alt := range f.g.Alternatives(nil, a, d) {
		assert.NotEqual(t, gate.AltNarrowerPath, alt.Kind)
	}
	f.st.Halt = &gate.Halt{Cause: gate.CauseManual, Reason: "stop"}
	d = f.check(t, a)
	assert.Empty(t, f.g.Alternatives(nil, a, d))
	assert.Empty(t, f.g.Alternatives(nil, a, gate.Decision{Verdict: policy.Allow}))
}
