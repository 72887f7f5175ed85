//go:build !race

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

// TestCheckAllowPathDoesNotAllocate: with a no-op sink, an allowed Check allocates nothing
// (the race detector's instrumentation allocates, so this file is built without -race).
func TestCheckAllowPathDoesNotAllocate(t *testing.T) {

	for _, name := range []string{profile.ProfileDev, profile.PermissionTrusted, profile.ApprovalAuto} {
		g, err := gate.New(profile.MustBuiltin(name), &gate.Options{Workspace: []string{workspace(t)}})
		require.NoError(t, err)
		for _, a := range []policy.Action{
			{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"src/pkg/main.go"}},
			{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"src/pkg/main.go", "docs/git-notes.md"}},
			{Tool: "plan", Operation: policy.OpPlan, Risk: risk.Of(risk.ReadOnly)},
		} {
			d, err := decide(g, a)
			require.NoError(t, err)
			require.Equal(t, policy.Allow, d.Verdict, "%s: %s", name, d)
			allocs := testing.AllocsPerRun(200, func() { _, _ = decide(g, a) })
			assert.Zero(t, allocs, "%s: Check(%+v) allocates", name, a)
		}
	}
}
