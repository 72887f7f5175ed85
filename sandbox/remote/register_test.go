package remote_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/remote"
)

// TestRegister checks that every backend of this package is registered
// with a probe that reports, here, why it is unavailable, and that Open
// refuses to hand out an unavailable backend.
func TestRegister(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no vendor CLI
	r := &sandbox.Registry{}
	require.NoError(t, remote.Register(r, remote.Options{
		Modal:   remote.ModalConfig{},
		Daytona: remote.DaytonaConfig{Sandbox: "sb"},
	}))
	assert.Equal(t, []string{"daytona", "modal", "ssh", "vercel-sandbox"}, r.Names())
	tests := []struct {
		name, why string
	}{
		{"ssh", "not configured: sandbox: SSHConfig.Host"},
		{"modal", "modal CLI is not installed"},
		{"daytona", "daytona CLI is not installed"},
		{"vercel-sandbox", "CLI is not installed"},
	}
	for _, tt := range tests {
		err := r.Probe(context.Background(), tt.name)
		require.ErrorIs(t, err, sandbox.ErrUnavailable, tt.name)
		assert.Contains(t, err.Error(), tt.why, tt.name)
		_, err = r.Open(context.Background(), tt.name, t.TempDir())
		require.ErrorIs(t, err, sandbox.ErrUnavailable, tt.name)
	}

	// A name already taken: nothing of this package is registered.
	taken := &sandbox.Registry{}
	taken.RegisterForTest(t, "modal", sandbox.Backend{New: func(string) (sandbox.Sandbox, error) { return nil, nil }})
	require.Error(t, remote.Register(taken, remote.Options{}))
	assert.Equal(t, []string{"modal"}, taken.Names())
}
