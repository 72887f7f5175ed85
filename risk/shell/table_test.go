package shell_test

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/shelltables"
	"github.com/reins-go/reins/risk/shell"
)

// tableWorkspace makes a table's workspace: a temporary directory, symbolic links resolved,
// holding dirs.
func tableWorkspace(t *testing.T, dirs []string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range dirs {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	return ws
}

// TestAnalysisTable checks the analysis columns of shelltables.Table, one subtest per row (the
// gate's verdicts on the same rows are checked in package gate).
func TestAnalysisTable(t *testing.T) {
	require.GreaterOrEqual(t, len(shelltables.Table), 250, "the table must cover at least 250 command lines")
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	ws := tableWorkspace(t, shelltables.TableDirs)
	registries := shelltables.Registries()
	seen := map[string]bool{}

	for _, r := range shelltables.Table {
		require.False(t, seen[r.Line], "duplicate row %q", r.Line)
		seen[r.Line] = true
		t.Run(r.Line, func(t *testing.T) {
			an, aerr := shell.Analyze(r.Line, &shell.Options{Dir: ws, Home: home, TempDir: "/tmp", Registries: registries})
			require.NotNil(t, an)
			if aerr != nil {
				assert.True(t, an.Opaque, "%q: a line that fails to parse is opaque", r.Line)
			}
			assert.Equal(t, r.Risk, an.Risk.String(), "%q: risk", r.Line)
			assert.Equal(t, r.Reads, paths(an.Reads, ws, home), "%q: reads", r.Line)
			assert.Equal(t, r.Writes, paths(an.Writes, ws, home), "%q: writes", r.Line)
			assert.Equal(t, r.Hosts, hosts(an), "%q: hosts", r.Line)
			assert.Equal(t, r.Opaque, an.Opaque, "%q: opaque (%v)", r.Line, why(an))
		})
	}
}

func paths(ps []shell.Path, ws, home string) string {
	var out []string
	for _, p := range ps {
		s := path.Clean(p.Path)
		switch {
		case s == ws:
			s = "."
		case strings.HasPrefix(s, ws+"/"):
			s = s[len(ws)+1:]
		case s == home:
			s = "~"
		case strings.HasPrefix(s, home+"/"):
			s = "~/" + s[len(home)+1:]
		case strings.HasPrefix(s, path.Dir(ws)+"/"):
			s = "../" + s[len(path.Dir(ws))+1:]
		}
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func hosts(a *shell.Analysis) string {
	if !a.Network {
		return ""
	}
	var hs []string
	for _, h := range a.Hosts {
		if !contains(hs, h) {
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return "?"
	}
	sort.Strings(hs)
	return strings.Join(hs, " ")
}

func why(a *shell.Analysis) []string {
	var out []string
	for _, c := range a.Commands {
		out = append(out, c.Why...)
	}
	return out
}
