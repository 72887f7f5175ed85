package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// The risk condition reads and writes the "risk_level" array of names profile files have
// always used: levels and severities mixed, any ASCII case in, lower case out.
func TestRiskMatchJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want policy.RiskMatch
		out  string
	}{
		{`["high", "exec"]`, policy.RiskMatch{Levels: risk.Of(risk.Exec), Severities: policy.SeveritiesOf(risk.High)}, `["high","exec"]`},
		{`["exec", "high"]`, policy.RiskMatch{Levels: risk.Of(risk.Exec), Severities: policy.SeveritiesOf(risk.High)}, `["high","exec"]`},
		{`["READ_ONLY","Network","read_only"]`, policy.MatchLevels(risk.ReadOnly, risk.Network), `["read_only","network"]`},
		{`["low","medium"]`, policy.MatchSeverities(risk.Low, risk.Medium), `["low","medium"]`},
		{`[]`, policy.RiskMatch{}, `[]`},
	} {
		var m policy.RiskMatch
		require.NoError(t, json.Unmarshal([]byte(tc.in), &m), tc.in)
		assert.Equal(t, tc.want, m, tc.in)
		out, err := json.Marshal(m)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.out, string(out), tc.in)
	}

	// An unknown name is an error that names it, and leaves the value unchanged.
	m := policy.MatchLevels(risk.Exec)
	err := json.Unmarshal([]byte(`["high","critical"]`), &m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"critical"`)
	assert.Contains(t, err.Error(), "risk_level")
	assert.Equal(t, policy.MatchLevels(risk.Exec), m)
	for _, bad := range []string{`"high"`, `[1]`, `{"high":true}`, `[""]`} {
		require.Error(t, json.Unmarshal([]byte(bad), &m), bad)
	}
	// null is "not given", as for the other list fields.
	require.NoError(t, json.Unmarshal([]byte(`null`), &m))
	assert.Equal(t, policy.MatchLevels(risk.Exec), m)

	// Invalid bits never reach a file.
	_, err = json.Marshal(policy.RiskMatch{Levels: 1})
	require.Error(t, err)
	_, err = json.Marshal(policy.RiskMatch{Severities: 1 << 5})
	require.Error(t, err)
}

// In a condition, the key is "risk_level" and an unset risk condition is left out, as an empty
// list was.
func TestConditionRiskKey(t *testing.T) {
	t.Parallel()
	out, err := json.Marshal(policy.Condition{Tools: []string{"bash"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"tools":["bash"]}`, string(out))
	out, err = json.Marshal(policy.Condition{Risk: policy.MatchSeverities(risk.High).Union(policy.MatchLevels(risk.Exec))})
	require.NoError(t, err)
	assert.Equal(t, `{"risk_level":["high","exec"]}`, string(out))

	var c policy.Condition
	err = json.Unmarshal([]byte(`{"risk_level":["medium","bogus"]}`), &c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"bogus"`)
}

func TestRiskMatchHolds(t *testing.T) {
	t.Parallel()
	m := policy.RiskMatch{Levels: risk.Of(risk.Network), Severities: policy.SeveritiesOf(risk.High)}
	assert.True(t, m.Holds(risk.Network, risk.Low))
	assert.True(t, m.Holds(risk.Mutating, risk.High))
	assert.False(t, m.Holds(risk.Mutating, risk.Medium))
	assert.True(t, policy.RiskMatch{}.Holds(risk.Exec, risk.Medium), "the unset condition holds for every part")
	assert.True(t, m.Contains(policy.MatchLevels(risk.Network)))
	assert.False(t, m.Contains(policy.MatchLevels(risk.Exec)))
	assert.False(t, policy.MatchLevels(risk.Network).Contains(m))
	assert.Equal(t, "high,network", m.String())
	assert.Equal(t, []string{"high", "network"}, m.Names())
	assert.Nil(t, policy.RiskMatch{}.Names())
	assert.True(t, policy.RiskMatch{}.IsZero())
	assert.False(t, policy.RiskMatch{Levels: 1 << 7}.Valid())
	assert.Equal(t, "low,high", policy.SeveritiesOf(risk.High, risk.Low, 0, 9).String())

	_, err := policy.ParseRiskMatch("exec", "severe")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"severe"`)
}
