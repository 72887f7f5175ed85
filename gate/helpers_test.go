package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// workspace makes a temporary workspace with a few files and returns its path.
func workspace(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"src/pkg", "docs", ".git", "build"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, f := range []string{"src/pkg/main.go", "docs/git-notes.md", ".git/config", "README.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644))
	}
	return dir
}

type fixture struct {
	g    *gate.Gate
	ws   string
	sink *audit.Memory
}

func newFixture(t testing.TB, p profile.Profile) *fixture {
	t.Helper()
	ws := workspace(t)
	sink := audit.NewMemory(0)
	g, err := gate.New(p, &gate.Options{Workspace: []string{ws}, Audit: sink, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	return &fixture{g: g, ws: ws, sink: sink}
}

func (f *fixture) check(t testing.TB, a policy.Action) gate.Decision {
	t.Helper()
	d, err := f.g.Check(context.Background(), a)
	require.NoError(t, err)
	return d
}

func builtin(name string) profile.Profile { return profile.MustBuiltin(name) }

func nan() float64 { var z float64; return z / z }

func expand(t testing.TB, p string) string {
	if len(p) > 1 && p[:2] == "~/" {
		home, err := os.UserHomeDir()
		require.NoError(t, err)
		return filepath.Join(home, p[2:])
	}
	return p
}
