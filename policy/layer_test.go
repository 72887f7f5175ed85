package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
)

func TestLayerTextRoundTrip(t *testing.T) {
	names := map[policy.Layer]string{
		policy.LayerNone: "", policy.LayerInput: "input", policy.LayerHalted: "halted",
		policy.LayerHardStop: "hard_stop", policy.LayerBoundary: "boundary", policy.LayerMode: "mode",
		policy.LayerRule: "rule", policy.LayerMatrix: "matrix", policy.LayerAudit: "audit",
		policy.LayerApproval: "approval", policy.LayerObligation: "obligation",
	}
	for l, name := range names {
		assert.Equal(t, name, l.String())
		text, err := l.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, name, string(text))
		var back policy.Layer
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, l, back)
	}
}

func TestLayerRejectsUnknown(t *testing.T) {
	_, err := policy.ParseLayer("hard-stop")
	require.ErrorContains(t, err, `unknown layer "hard-stop"`)
	var l policy.Layer
	require.Error(t, json.Unmarshal([]byte(`"root"`), &l))
	assert.Equal(t, policy.LayerNone, l)
	_, err = policy.Layer(99).MarshalText()
	require.Error(t, err)
	assert.Equal(t, "Layer(99)", policy.Layer(99).String())
	assert.False(t, policy.Layer(99).Valid())
}
