package container_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/container"
)

// TestRegister checks that every backend of this package is registered
// with a probe that reports, here, why it is unavailable, and that Open
// refuses to hand out an unavailable backend.
func TestRegister(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no docker, no singularity, no apptainer
	r := &sandbox.Registry{}
	require.NoError(t, container.Register(r, container.Options{
		Docker:      container.DockerConfig{Image: "debian@sha256:00"},
		Singularity: container.SingularityConfig{Image: "img.sif"},
	}))
	assert.Equal(t, []string{"apptainer", "docker", "singularity"}, r.Names())
	for _, name := range r.Names() {
		err := r.Probe(context.Background(), name)
		require.ErrorIs(t, err, sandbox.ErrUnavailable, name)
		assert.Contains(t, err.Error(), name+" CLI is not installed", name)
		_, err = r.Open(context.Background(), name, t.TempDir())
		require.ErrorIs(t, err, sandbox.ErrUnavailable, name)
	}

	empty := &sandbox.Registry{}
	require.NoError(t, container.Register(empty, container.Options{}))
	err := empty.Probe(context.Background(), "docker")
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), "DockerConfig.Image", "a missing image is named")

	// A name already taken: nothing of this package is registered.
	taken := &sandbox.Registry{}
	taken.RegisterForTest(t, "apptainer", sandbox.Backend{New: func(string) (sandbox.Sandbox, error) { return nil, nil }})
	require.Error(t, container.Register(taken, container.Options{}))
	assert.Equal(t, []string{"apptainer"}, taken.Names())
}
