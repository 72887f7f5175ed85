//go:build !race

package reins_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// allocs returns the fewest allocations of three AllocsPerRun tries (the count is the whole
// process's, so another goroutine's allocation may land in one try).
func allocs(runs int, f func()) float64 {
	least := testing.AllocsPerRun(runs, f)
	for range 2 {
		least = min(least, testing.AllocsPerRun(runs, f))
	}
	return least
}

// TestCheckAllowDoesNotAllocate: Run.Check on an ALLOW allocates nothing, with the default
// MemoryStore, with grants present in the run's store and in a grants store, and with meters
// (grants are only consulted for parts that would CONFIRM; the snapshot is reused while the
// state does not change).
func TestCheckAllowDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	ws := workspace(t)
	kept := reins.NewMemoryStore()
	for _, tc := range []struct {
		name string
		opts reins.Options
	}{
		{"default store", reins.Options{}},
		{"grants and meters", reins.Options{Grants: kept, Meters: []reins.Meter{{Name: reins.MeterCost, Limit: 10}, {Name: reins.MeterActions, Limit: 1e9}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Workspace, o.Audit, o.ConfigDir = []string{ws}, audit.Discard, filepath.Join(t.TempDir(), "reins")
			r, err := reins.New(ctx, profile.MustBuiltin(profile.PermissionTrusted), &o)
			require.NoError(t, err)
			defer r.Close()
			if o.Grants != nil {
				grantFor(t, r, shellAction("rm -rf build"), reins.ForSession)
				grantFor(t, r, policy.Action{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"docs/git-notes.md"}}, reins.Always)
				gs, err := r.Grants(ctx)
				require.NoError(t, err)
				require.Len(t, gs, 2)
			}
			for _, a := range []policy.Action{
				writeAction("main.go"),
				{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}},
			} {
				d, err := r.Check(ctx, a)
				require.NoError(t, err)
				require.Equal(t, policy.Allow, d.Verdict)
				assert.Zero(t, allocs(200, func() { _, _ = r.Check(ctx, a) }), "%+v", a)
			}
			if o.Grants != nil {
				d, err := r.Check(ctx, shellAction("rm -rf build"))
				require.NoError(t, err)
				assert.Equal(t, policy.Allow, d.Verdict, "the grant answers")
			}
		})
	}
}
