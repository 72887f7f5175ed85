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

// TestCheckAllowUnderAManagedTierDoesNotAllocate: under a managed tier from a bundle (records
// name its version), with grants kept and managed CONFIRM rules, Run.Check on an ALLOW still
// allocates nothing.
func TestCheckAllowUnderAManagedTierDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	m := orgTier()
	m.Bundle = 3
	o := &reins.Options{Workspace: []string{workspace(t)}, Audit: audit.Discard, ConfigDir: filepath.Join(t.TempDir(), "reins"),
		Grants: reins.NewMemoryStore()}
	r, err := reins.New(ctx, under(t, profile.MustBuiltin(profile.PermissionTrusted), m), o)
	require.NoError(t, err)
	defer r.Close()
	grantFor(t, r, policy.Action{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"docs/x.md"}}, reins.ForSession)
	for _, a := range []policy.Action{writeAction("main.go"), {Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}}} {
		d, err := r.Check(ctx, a)
		require.NoError(t, err)
		require.Equal(t, policy.Allow, d.Verdict)
		assert.Zero(t, allocs(200, func() { _, _ = r.Check(ctx, a) }), "%+v", a)
	}
}
