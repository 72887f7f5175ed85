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

// TestSafeIsAtLeastAsStrictAsDev: the family order says PROFILE-SAFE is stricter than
// PROFILE-DEV, so a high-severity read that DEV confirms must not be allowed by SAFE.
func TestSafeIsAtLeastAsStrictAsDev(t *testing.T) {
	ws := t.TempDir()
	a := policy.Action{Tool: "read_file", Operation: policy.OpRead, Risk: risk.Of(risk.ReadOnly), Severity: risk.High, Targets: []string{"notes.txt"}}
	for _, name := range []string{profile.ProfileDev, profile.ProfileSafe} {
		g, err := gate.New(profile.MustBuiltin(name), &gate.Options{Workspace: []string{ws}})
		require.NoError(t, err)
		d, err := decide(g, a)
		require.NoError(t, err)
		assert.Equal(t, policy.Confirm, d.Verdict, "%s: %s", name, d)
	}
}
