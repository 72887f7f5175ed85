package gate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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

// fixture is a gate over a fresh workspace, and the run state its decisions read (the zero
// State unless a test sets it).
type fixture struct {
	g  *gate.Gate
	ws string
	st gate.State
}

func newFixture(t testing.TB, p profile.Profile) *fixture {
	t.Helper()
	ws := workspace(t)
	g, err := gate.New(p, &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	return &fixture{g: g, ws: ws}
}

func (f *fixture) check(t testing.TB, a policy.Action) gate.Decision {
	t.Helper()
	return f.g.Decide(&f.st, a, nil)
}

// decide decides a with g against the zero run state. The error is always nil: it keeps the
// shape of a host's check (decide, then look at the error) in the tables below.
func decide(g *gate.Gate, a policy.Action) (gate.Decision, error) {
	return g.Decide(nil, a, nil), nil
}

// explain explains a with g against the zero run state (error always nil, as decide's).
func explain(g *gate.Gate, a policy.Action) (gate.Explanation, error) {
	return g.Explain(nil, a), nil
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
