package shell_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/shelltables"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// TestExpansionTable checks the analysis columns of shelltables.Expansions (the expansion, cost
// and environment classes of issue 11), one subtest per row (the gate's verdicts on the same
// rows are checked in package gate).
func TestExpansionTable(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	ws := tableWorkspace(t, shelltables.TableDirs)
	seen := map[string]bool{}
	for _, r := range shelltables.Expansions {
		require.False(t, seen[r.Line], "duplicate row %q", r.Line)
		seen[r.Line] = true
		t.Run(r.Line, func(t *testing.T) {
			an, err := shell.Analyze(r.Line, &shell.Options{Dir: ws, Home: home, TempDir: "/tmp"})
			require.NoError(t, err, r.Line)
			assert.Equal(t, r.Risk, an.Risk.String(), "%q: risk", r.Line)
			assert.Equal(t, r.Reads, paths(an.Reads, ws, home), "%q: reads", r.Line)
			assert.Equal(t, r.Writes, paths(an.Writes, ws, home), "%q: writes", r.Line)
			assert.Equal(t, r.Hosts, hosts(an), "%q: hosts", r.Line)
			assert.Equal(t, r.Opaque, an.Opaque, "%q: opaque (%v)", r.Line, why(an))
			if r.Opaque {
				assert.NotEmpty(t, why(an), "%q: an opaque line says why", r.Line)
			}
		})
	}
}

// TestReadmeExpansions: the two lines the issue names run an embedded command in bash; they and
// their variants are opaque, never read-only alone, and the reason names the expansion.
func TestReadmeExpansions(t *testing.T) {
	for _, line := range []string{
		`echo ${v@P}`, `v='$(touch m)'; echo ${v@P}`, `printf '%s\n' "${v@P}"`, `echo ${v@P} > out.txt`,
		`X='a[$(touch m)]'; echo $((X))`, `X='a[$(touch m)]'; echo $(( X + 1 ))`, `X='a[$(touch m)]'; (( X ))`,
		`X='a[$(touch m)]'; let X`, `X='a[$(touch m)]'; [[ X -eq 0 ]]`, `X='a[$(touch m)]'; [[ $X -eq 0 ]]`,
		`X='a[$(touch m)]'; echo ${a[X]}`, `X='a[$(touch m)]'; echo ${s:X}`, `X='a[$(touch m)]'; y=$((X))`,
		`X='a[$(touch m)]'; declare -i y=X`, `X='a[$(touch m)]'; a[X]=1`, `r='a[$(touch m)]'; echo ${!r}`,
	} {
		an, err := shell.Analyze(line, &shell.Options{Dir: "/w", Home: "/home/u"})
		require.NoError(t, err, line)
		assert.True(t, an.Opaque, "%q is opaque", line)
		assert.True(t, an.Risk.Has(risk.Exec), "%q may run anything: %s", line, an.Risk)
	}
}
