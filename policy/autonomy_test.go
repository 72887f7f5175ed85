package policy_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// TestMatrixSeedTable reproduces the autonomy seed's gate table row by row.
func TestMatrixSeedTable(t *testing.T) {
	t.Parallel()
	rows := []struct {
		level                           risk.Level
		supervised, trusted, autonomous string
	}{
		{risk.ReadOnly, "ALLOW", "ALLOW", "ALLOW"},
		{risk.Mutating, "CONFIRM", "ALLOW+checkpoint+notify", "ALLOW+checkpoint"}, // Ask | Notify+Checkpoint | Allow+Checkpoint
		{risk.Exec, "CONFIRM", "ALLOW+notify+sandbox", "ALLOW+sandbox"},           // Ask | Notify (sandbox) | Allow (sandbox)
		{risk.Destructive, "DENY", "CONFIRM", "CONFIRM"},                          // Deny | Ask | Ask
		{risk.Network, "CONFIRM", "ALLOW", "ALLOW"},                               // Ask | Allow | Allow
	}
	for _, r := range rows {
		assert.Equal(t, r.supervised, policy.Matrix(policy.BandSupervised, r.level).String(), "supervised × %s", r.level)
		assert.Equal(t, r.trusted, policy.Matrix(policy.BandTrusted, r.level).String(), "trusted × %s", r.level)
		assert.Equal(t, r.autonomous, policy.Matrix(policy.BandAutonomous, r.level).String(), "autonomous × %s", r.level)
	}
	assert.Equal(t, policy.Deny, policy.Matrix(policy.BandAutonomous, 0).Verdict, "an invalid level denies")
	assert.Equal(t, policy.Deny, policy.Matrix(policy.Band(7), risk.ReadOnly).Verdict, "an invalid band denies")
}

func TestBandEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dial float64
		want policy.Band
	}{
		{0, policy.BandSupervised}, {0.2, policy.BandSupervised}, {0.33, policy.BandSupervised}, {0.335, policy.BandSupervised},
		{0.33999, policy.BandSupervised}, {0.34, policy.BandTrusted}, {0.5, policy.BandTrusted}, {0.66, policy.BandTrusted},
		{0.665, policy.BandTrusted}, {0.66999, policy.BandTrusted}, {0.67, policy.BandAutonomous}, {0.9, policy.BandAutonomous},
		{1, policy.BandAutonomous},
	} {
		got, err := policy.BandOf(tc.dial)
		require.NoError(t, err, "BandOf(%v)", tc.dial)
		assert.Equal(t, tc.want, got, "BandOf(%v)", tc.dial)
	}
	for _, bad := range []float64{math.NaN(), -0.01, 1.0001, math.Inf(1), math.Inf(-1)} {
		_, err := policy.BandOf(bad)
		assert.Error(t, err, "BandOf(%v)", bad)
	}
	for _, b := range []policy.Band{policy.BandSupervised, policy.BandTrusted, policy.BandAutonomous} {
		back, err := policy.BandOf(b.Dial())
		require.NoError(t, err)
		assert.Equal(t, b, back, "the representative dial value of %s is in %s", b, b)
		parsed, err := policy.ParseBand(b.String())
		require.NoError(t, err)
		assert.Equal(t, b, parsed)
	}
	_, err := policy.ParseBand("yolo")
	assert.Error(t, err)
}

// TestMatrixMonotonic: for every risk, a higher band is never stricter than a lower one.
func TestMatrixMonotonic(t *testing.T) {
	t.Parallel()
	bands := []policy.Band{policy.BandSupervised, policy.BandTrusted, policy.BandAutonomous}
	for _, l := range risk.Levels() {
		for i := 1; i < len(bands); i++ {
			lo, hi := policy.Matrix(bands[i-1], l), policy.Matrix(bands[i], l)
			assert.False(t, hi.Verdict.StricterThan(lo.Verdict), "%s: %s (%s) is stricter than %s (%s)", l, bands[i], hi, bands[i-1], lo)
		}
	}
}
