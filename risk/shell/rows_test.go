package shell_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/shelltables"
	"github.com/reins-go/reins/risk/shell"
)

// TestOptionRows checks the analysis columns of shelltables.Options (the option classes of
// issue 11), one subtest per row (the gate's verdicts on the same rows are checked in package
// gate).
func TestOptionRows(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	ws := tableWorkspace(t, shelltables.OptionDirs)
	seen := map[string]bool{}
	for _, r := range shelltables.Options {
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
		})
	}
}
