package risk_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk"
)

func TestLevelTextRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level risk.Level
		name  string
		sev   risk.Severity
	}{
		{risk.ReadOnly, "read_only", risk.Low},
		{risk.Mutating, "mutating", risk.Medium},
		{risk.Exec, "exec", risk.Medium},
		{risk.Destructive, "destructive", risk.High},
		{risk.Network, "network", risk.Medium},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.name, tc.level.String())
			b, err := json.Marshal(tc.level)
			require.NoError(t, err)
			assert.JSONEq(t, `"`+tc.name+`"`, string(b))
			var back risk.Level
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tc.level, back)
			upper, err := risk.ParseLevel(string(b[1 : len(b)-1]))
			require.NoError(t, err)
			assert.Equal(t, tc.level, upper)
			assert.Equal(t, tc.sev, tc.level.Severity(), "default severity of %s", tc.level)
		})
	}
}

func TestLevelRejectsUnknownAndZero(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "readonly", "ReadOnly", "high", "delete", "exec ", "ALLOW"} {
		_, err := risk.ParseLevel(name)
		assert.Error(t, err, "ParseLevel(%q)", name)
	}
	var l risk.Level
	assert.False(t, l.Valid())
	_, err := json.Marshal(l)
	assert.Error(t, err, "the zero level must not marshal as if it were a level")
	assert.Error(t, json.Unmarshal([]byte(`"root"`), &l))
	assert.Equal(t, risk.High, risk.Level(0).Severity(), "an invalid level is High (fail closed)")
	assert.Equal(t, "Level(9)", risk.Level(9).String())
}

func TestLevelParseIgnoresCase(t *testing.T) {
	t.Parallel()
	l, err := risk.ParseLevel("DESTRUCTIVE")
	require.NoError(t, err)
	assert.Equal(t, risk.Destructive, l)
}

func TestSeverity(t *testing.T) {
	t.Parallel()
	for _, s := range []risk.Severity{risk.Low, risk.Medium, risk.High} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		back, err := risk.ParseSeverity(string(b))
		require.NoError(t, err)
		assert.Equal(t, s, back)
	}
	assert.True(t, risk.Low < risk.Medium && risk.Medium < risk.High, "severities are ordered")
	for _, bad := range []string{"", "med", "critical", "read_only"} {
		_, err := risk.ParseSeverity(bad)
		assert.Error(t, err, "ParseSeverity(%q)", bad)
	}
	_, err := risk.Severity(0).MarshalText()
	assert.Error(t, err)
	var s risk.Severity
	assert.Error(t, s.UnmarshalText([]byte("urgent")))
	assert.Equal(t, risk.Severity(0), s, "a failed decode leaves the zero value")
}

func TestSet(t *testing.T) {
	t.Parallel()
	s := risk.Of(risk.Exec, risk.Network)
	assert.True(t, s.Has(risk.Exec))
	assert.True(t, s.Has(risk.Network))
	assert.False(t, s.Has(risk.ReadOnly))
	assert.False(t, s.Has(0), "the zero level is never a member")
	assert.Equal(t, 2, s.Len())
	assert.Equal(t, "exec,network", s.String())
	assert.Equal(t, risk.Medium, s.Severity())
	assert.Equal(t, risk.High, s.With(risk.Destructive).Severity())
	assert.Equal(t, s, s.With(0), "adding an invalid level changes nothing")
	assert.True(t, risk.Set(0).Empty())
	assert.Equal(t, risk.Severity(0), risk.Set(0).Severity())
	assert.Equal(t, risk.Of(risk.ReadOnly, risk.Exec, risk.Network), s.Union(risk.Of(risk.ReadOnly)))

	var got []risk.Level
	for l := range s.All() {
		got = append(got, l)
	}
	assert.Equal(t, []risk.Level{risk.Exec, risk.Network}, got)

	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `["exec","network"]`, string(b))
	var back risk.Set
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, s, back)
	assert.Error(t, json.Unmarshal([]byte(`["exec","sudo"]`), &back))
	assert.Error(t, json.Unmarshal([]byte(`"exec"`), &back), "a set is an array")

	parsed, err := risk.ParseSet(" exec , network ")
	require.NoError(t, err)
	assert.Equal(t, s, parsed)
	empty, err := risk.ParseSet("")
	require.NoError(t, err)
	assert.True(t, empty.Empty())
	_, err = risk.ParseSet("exec,,network")
	assert.Error(t, err)
	_, err = json.Marshal(risk.Set(1))
	assert.Error(t, err, "invalid bits do not marshal")
}

func TestLevelsListsAllFive(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []risk.Level{risk.ReadOnly, risk.Mutating, risk.Exec, risk.Destructive, risk.Network}, risk.Levels())
}
