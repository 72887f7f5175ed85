package gate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

func TestExplainAgreesWithCheckAndRecordsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ProfileDev))
	a := policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "rm -rf build", Risk: risk.Of(risk.Destructive), Targets: []string{"build"}}
	e, err := explain(f.g, a)
	require.NoError(t, err)
	d := f.check(t, a)
	assert.Equal(t, d.Verdict, e.Decision.Verdict)
	assert.Equal(t, d.RuleID, e.Decision.RuleID)
	assert.Equal(t, "confirm-high-risk", d.RuleID, "the most severe part gives the reason: %s", d)

	var layers []policy.Layer
	for _, s := range e.Steps {
		layers = append(layers, s.Layer)
	}
	assert.Equal(t, []policy.Layer{policy.LayerHalted, policy.LayerHardStop, policy.LayerBoundary, policy.LayerMode, policy.LayerRule}, layers)
	require.Len(t, e.Parts, 2, "exec and destructive, one target")
	for _, p := range e.Parts {
		assert.Len(t, p.Rules, f.g.Profile().Rules().Len())
		assert.Equal(t, "build", p.Target)
		assert.True(t, p.Inside)
	}
	assert.Contains(t, e.String(), "confirm-high-risk")

	// A hard stop is named for the run to latch; the decider latches nothing.
	e, err = explain(f.g, policy.Action{Operation: policy.OpWrite, Targets: []string{t.TempDir() + "/x"}})
	require.NoError(t, err)
	assert.Equal(t, policy.LayerHardStop, e.Decision.Layer)
	assert.Equal(t, gate.CauseExternalWrite, e.Decision.Latch)
	assert.Equal(t, policy.Allow, f.check(t, policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}}).Verdict)
}
