package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// fixture makes a workspace with a directory, a file, a symbolic link
// out of it, a protected directory and a sibling outside.
func fixture(t testing.TB) (root, outside string, m pathmatch.Matcher) {
	t.Helper()
	base := t.TempDir()
	base, err := filepath.EvalSymlinks(base)
	require.NoError(t, err)
	root, outside = filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{root, outside, filepath.Join(root, "dir", "sub"), filepath.Join(root, ".git")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, f := range []string{"file", "dir/a", "dir/b", ".env"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "escape")))
	require.NoError(t, os.Symlink("../file", filepath.Join(root, "dir", "link")))
	m, err = pathmatch.New(nil)
	require.NoError(t, err)
	return root, outside, m
}

func TestMake(t *testing.T) {
	t.Parallel()
	root, outside, m := fixture(t)
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	tests := []struct {
		name     string
		writable []string
		want     Plan
		warnings int
	}{
		{"read-only", nil, Plan{}, 0},
		{"an existing directory", []string{j("dir")}, Plan{Dirs: []string{j("dir")}}, 0},
		{"an existing file", []string{j("file")}, Plan{Files: []string{j("file")}}, 0},
		{"the root itself", []string{root}, Plan{Dirs: []string{root}}, 0},
		{"a new file: its directory with every entry pinned", []string{j("dir", "new.txt")},
			Plan{Create: []string{j("dir")}, Pins: []string{j("dir", "a"), j("dir", "b"), j("dir", "link"), j("dir", "sub")}}, 0},
		{"a new file below a missing directory", []string{j("dir", "x", "y", "z")},
			Plan{Create: []string{j("dir")}, Pins: []string{j("dir", "a"), j("dir", "b"), j("dir", "link"), j("dir", "sub")}}, 0},
		{"a granted entry is not pinned", []string{j("dir", "new"), j("dir", "a")},
			Plan{Files: []string{j("dir", "a")}, Create: []string{j("dir")}, Pins: []string{j("dir", "b"), j("dir", "link"), j("dir", "sub")}}, 0},
		{"a create directory inside a granted one needs no grant", []string{j("dir"), j("dir", "sub", "new")}, Plan{Dirs: []string{j("dir")}}, 0},
		{"a symbolic link is granted where it leads", []string{j("dir", "link")}, Plan{Files: []string{j("file")}}, 0},
		{"outside the roots", []string{filepath.Join(outside, "x"), outside}, Plan{}, 2},
		{"through a link out of the root", []string{j("escape", "x")}, Plan{}, 1},
		{"a denied path", []string{j(".env"), j(".git", "config"), j(".git", "new"), j("sub", ".ssh")}, Plan{}, 4},
		{"relative", []string{"dir"}, Plan{}, 1},
		{"dot-dot out of the root", []string{j("..", "out", "x")}, Plan{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Make(sandbox.Confine{Writable: tt.writable}, []string{root}, m)
			require.NoError(t, err)
			assert.Len(t, got.Warnings, tt.warnings, "warnings: %q", got.Warnings)
			got.Warnings = nil
			assert.Equal(t, tt.want, got)
		})
	}
	got, err := Make(sandbox.Confine{Network: true}, []string{root}, m)
	require.NoError(t, err)
	assert.True(t, got.Network)
}

func TestMakeBoundsPins(t *testing.T) {
	t.Parallel()
	root, _, m := fixture(t)
	big := filepath.Join(root, "big")
	require.NoError(t, os.Mkdir(big, 0o755))
	for i := 0; i <= MaxPins; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(big, fmt.Sprint(i)), nil, 0o644))
	}
	_, err := Make(sandbox.Confine{Writable: []string{filepath.Join(big, "new")}}, []string{root}, m)
	require.ErrorIs(t, err, ErrTooManyPins)
	_, err = Make(sandbox.Confine{Writable: []string{big}}, []string{root}, m)
	require.NoError(t, err, "a directory granted whole pins nothing")
}

// FuzzMake checks the plan's promises for any Writable entry: every
// grant lies inside the roots and names no denied path, and every pin is
// an existing entry of a create directory.
func FuzzMake(f *testing.F) {
	for _, s := range []string{"dir", "dir/new", "file", ".env", "../out/x", "escape/x", "dir/link", "dir/./sub/../a", "DIR/x", ".git/x", "dir/sub/.ssh/k", ""} {
		f.Add(s)
	}
	root, _, m := fixture(f)
	f.Fuzz(func(t *testing.T, rel string) {
		if strings.IndexByte(rel, 0) >= 0 || len(rel) > 512 {
			return
		}
		p, err := Make(sandbox.Confine{Writable: []string{root + "/" + rel}}, []string{root}, m)
		require.NoError(t, err)
		for _, l := range [][]string{p.Dirs, p.Files, p.Create} {
			for _, g := range l {
				assert.True(t, fspath.Within(g, root), "grant %s lies outside the root", g)
				_, denied := m.Match(g)
				assert.False(t, denied, "grant %s is denied", g)
			}
		}
		for _, pin := range p.Pins {
			found := false
			for _, a := range p.Create {
				found = found || filepath.Dir(pin) == a
			}
			assert.True(t, found, "pin %s is not an entry of a create directory", pin)
		}
	})
}
