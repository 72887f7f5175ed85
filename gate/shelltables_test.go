package gate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/internal/shelltables"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// The gate's verdicts on the shell tables of internal/shelltables: one subtest per row and
// profile. The analysis columns of the same rows are checked in package risk/shell.

// shellTableWorkspace makes a table's workspace: a temporary directory, symbolic links
// resolved, holding dirs.
func shellTableWorkspace(t *testing.T, dirs []string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range dirs {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	return ws
}

// TestShellTableVerdicts: shelltables.Table under PROFILE-DEV (model API and package registry
// host groups, registries configured) and the autonomous permission mode, a fresh gate per line
// and profile.
func TestShellTableVerdicts(t *testing.T) {
	ws := shellTableWorkspace(t, shelltables.TableDirs)
	registries := shelltables.Registries()
	dev := profile.Dev.Profile().
		WithHostGroup(profile.GroupAIAPIs, "api.model.example").
		WithHostGroup(profile.GroupPackageManagers, "registry.npm.example", "pypi.example", "proxy.go.example", "crates.example")
	dev.Registries = registries
	auto := profile.Autonomous.Profile()
	auto.Registries = registries

	for _, r := range shelltables.Table {
		t.Run(r.Line, func(t *testing.T) {
			for _, g := range []struct {
				name string
				p    profile.Profile
				want policy.Verdict
			}{{"PROFILE-DEV", dev, r.Dev}, {"autonomous", auto, r.Auto}} {
				t.Run(g.name, func(t *testing.T) {
					gt, err := gate.New(g.p, &gate.Options{Workspace: []string{ws}})
					require.NoError(t, err)
					d := shellCheck(t, gt, r.Line)
					assert.Equal(t, g.want, d.Verdict, "%q under %s: %s", r.Line, g.name, d)
				})
			}
		})
	}
}

// modeRowVerdicts pairs the built-in profiles of a ModeRow with their verdicts.
func modeRowVerdicts(r shelltables.ModeRow) []struct {
	name string
	want policy.Verdict
} {
	return []struct {
		name string
		want policy.Verdict
	}{{profile.Dev.Name(), r.Dev}, {profile.Supervised.Name(), r.Supervised}, {profile.Autonomous.Name(), r.Autonomous}}
}

// TestShellOptionVerdicts: shelltables.Options under the built-in profiles out of the box, a
// fresh gate per line and profile.
func TestShellOptionVerdicts(t *testing.T) {
	ws := shellTableWorkspace(t, shelltables.OptionDirs)
	for _, r := range shelltables.Options {
		t.Run(r.Line, func(t *testing.T) {
			for _, v := range modeRowVerdicts(r) {
				t.Run(v.name, func(t *testing.T) {
					// A fresh gate per line: a write outside the workspace latches the halt.
					g, err := gate.New(builtin(v.name), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(ws, "..", "cfg")})
					require.NoError(t, err)
					d := shellCheck(t, g, r.Line)
					assert.Equal(t, v.want, d.Verdict, "%q under %s: %s", r.Line, v.name, d)
				})
			}
		})
	}
}

// TestShellExpansionVerdicts: shelltables.Expansions under the built-in profiles out of the box,
// one gate per profile for the whole table, lines in order.
func TestShellExpansionVerdicts(t *testing.T) {
	ws := shellTableWorkspace(t, shelltables.TableDirs)
	gates := map[string]*gate.Gate{}
	for _, name := range []string{profile.Dev.Name(), profile.Supervised.Name(), profile.Autonomous.Name()} {
		g, err := gate.New(builtin(name), &gate.Options{Workspace: []string{ws}})
		require.NoError(t, err)
		gates[name] = g
	}
	for _, r := range shelltables.Expansions {
		t.Run(r.Line, func(t *testing.T) {
			for _, v := range modeRowVerdicts(r) {
				t.Run(v.name, func(t *testing.T) {
					d := shellCheck(t, gates[v.name], r.Line)
					assert.Equal(t, v.want, d.Verdict, "%q under %s: %s", r.Line, v.name, d)
				})
			}
		})
	}
}
