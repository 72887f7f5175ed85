package profile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestCompiledAccessors: a compiled profile reports what it was compiled from, and every slice
// or map it returns is a copy.
func TestCompiledAccessors(t *testing.T) {
	t.Parallel()
	p := profile.Dev.Profile()
	p.TrustedPaths = []string{"/srv/shared"}
	p.Registries = map[string][]string{"npm": {"registry.npm.example"}}
	p.ExternalWrites = profile.ExternalWritesByPolicy
	p.ExecCheckpoints = profile.ExecCheckpointsOff
	p.Limits.Timeout = 42 * time.Second
	c, err := p.Compile()
	require.NoError(t, err)

	assert.Equal(t, p, c.Profile())
	assert.Equal(t, profile.Dev.Name(), c.Name())
	assert.Equal(t, policy.BandTrusted, c.Band(), "PROFILE-DEV's dial is in the trusted band")
	assert.Equal(t, p.Mode, c.Mode())
	assert.Equal(t, p.ProtectedPaths, c.ProtectedPaths())
	assert.Equal(t, p.WriteProtectedPaths, c.WriteProtectedPaths())
	assert.Equal(t, []string{"/srv/shared"}, c.TrustedPaths())
	assert.Equal(t, map[string][]string{"npm": {"registry.npm.example"}}, c.Registries())
	assert.Equal(t, profile.ExternalWritesByPolicy, c.ExternalWrites())
	assert.Equal(t, profile.ExecCheckpointsOff, c.ExecCheckpoints())
	assert.Equal(t, p.Limits, c.Limits())
	assert.Equal(t, len(p.Rules), len(c.Rules().Rules()))

	// Changing what an accessor returned changes nothing in the compiled profile.
	got := c.Profile()
	got.Rules[0].ID = "changed"
	c.ProtectedPaths()[0] = "changed"
	c.WriteProtectedPaths()[0] = "changed"
	c.TrustedPaths()[0] = "changed"
	c.Registries()["npm"][0] = "changed"
	assert.Equal(t, p, c.Profile())
	assert.Equal(t, p.ProtectedPaths, c.ProtectedPaths())
	assert.Equal(t, p.WriteProtectedPaths, c.WriteProtectedPaths())
	assert.Equal(t, []string{"/srv/shared"}, c.TrustedPaths())
	assert.Equal(t, map[string][]string{"npm": {"registry.npm.example"}}, c.Registries())
}
