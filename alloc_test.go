//go:build !race

package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestCheckAllowDoesNotAllocateWithGrants: a session's grant source, with grants in it, leaves
// an allowed Check allocation-free (grants are only consulted for parts that would CONFIRM).
func TestCheckAllowDoesNotAllocateWithGrants(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t)
	g, err := gate.New(profile.MustBuiltin(profile.PermissionTrusted), &gate.Options{Workspace: []string{ws}, Audit: audit.Discard})
	require.NoError(t, err)
	s, err := session.New(ctx, g, nil)
	require.NoError(t, err)
	_, err = s.AddGrant(ctx, session.Grant{Scope: session.ForSession, Rules: []policy.Rule{{Condition: policy.Condition{
		Tools: []string{"bash"}, Commands: []string{"rm -rf build"}}}}})
	require.NoError(t, err)
	for _, a := range []policy.Action{
		writeAction("main.go"),
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}},
	} {
		d, err := g.Check(ctx, a)
		require.NoError(t, err)
		require.Equal(t, policy.Allow, d.Verdict)
		assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = g.Check(ctx, a) }), "%+v", a)
	}
	d, err := g.Check(ctx, shellAction("rm -rf build"))
	require.NoError(t, err)
	assert.Equal(t, policy.Allow, d.Verdict, "the grant answers")
}
