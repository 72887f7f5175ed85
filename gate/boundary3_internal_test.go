package gate

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/fspath"
)

// TestWorkDirSpellings: the working directory of a command line follows the spelling rules of
// targets (issue 23, part 5): a leading ~ or $HOME is the home directory, other leading
// expansions are refused as ambiguous, relative directories are joined to the primary root.
func TestWorkDirSpellings(t *testing.T) {
	t.Parallel()
	home := filepath.ToSlash(t.TempDir())
	w, err := newWorkspace([]string{t.TempDir()}, nil, home)
	require.NoError(t, err)
	for wd, want := range map[string]string{
		"":         w.primary,
		"src":      w.primary + "/src",
		"src/../x": w.primary + "/src/../x",
		"/tmp":     "/tmp",
		"~":        home,
		"~/proj":   home + "/proj",
		"$HOME/p":  home + "/p",
		"./~":      w.primary + "/./~",
		"~root":    "",
		"$TMPDIR":  "",
		"${X}/y":   "",
	} {
		got, err := w.workDir(wd)
		if want == "" {
			var amb *fspath.AmbiguousError
			assert.True(t, errors.As(err, &amb), "workDir(%q) = %q, %v: want ambiguous", wd, got, err)
			continue
		}
		require.NoError(t, err, wd)
		assert.Equal(t, want, got, wd)
	}
}
