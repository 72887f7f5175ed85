package fspath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spellingFixture is a workspace and a home directory outside it; the workspace holds
// directories named "~", "~root", "$HOME" and "$TMPDIR", so a literal reading would find them.
func spellingFixture(t testing.TB) (w *Workspace, dir, home string) {
	t.Helper()
	dir, home = t.TempDir(), t.TempDir()
	for _, d := range []string{"~/.aws", "~root", "$HOME/.aws", "$TMPDIR", "src"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	w, err := NewWorkspace([]string{dir}, nil, home)
	require.NoError(t, err)
	home, err = filepath.EvalSymlinks(home)
	require.NoError(t, err)
	return w, w.Primary(), filepath.ToSlash(home)
}

// TestSpellings: a leading ~ or $HOME is the home directory, as a shell expands it; any other
// leading ~name or $ expansion is refused as ambiguous; never is the target a name in the
// workspace (issue 23, part 5). A $ later in the path is literal.
func TestSpellings(t *testing.T) {
	w, dir, home := spellingFixture(t)
	for _, tc := range []struct {
		target string
		want   string // the absolute path; "" for an ambiguous target
	}{
		{"~/.aws/credentials", home + "/.aws/credentials"},
		{"~", home},
		{"~/", home},
		{"$HOME/.aws/credentials", home + "/.aws/credentials"},
		{"${HOME}/.aws/credentials", home + "/.aws/credentials"},
		{"$HOME", home},
		{"${HOME}", home},
		{"~/../x", filepath.ToSlash(filepath.Dir(home)) + "/x"},
		{"~root/.ssh/id_rsa", ""},
		{"~root", ""},
		{"~+/x", ""},
		{"~-/x", ""},
		{"~1", ""},
		{"$TMPDIR/x", ""},
		{"${TMPDIR}/x", ""},
		{"${HOME}x", ""},
		{"$HOMEDIR/x", ""},
		{"$(pwd)/x", ""},
		{"$'x'/y", ""},
		{"$1/x", ""},
		{"$$/x", ""},
		{"$", dir + "/$"},
		{"$/x", dir + "/$/x"},
		{"src/Outer$Inner.class", dir + "/src/Outer$Inner.class"},
		{"src/$HOME", dir + "/src/$HOME"},
		{"./~/x", dir + "/~/x"},
		{"src/~/x", dir + "/src/~/x"},
	} {
		root, p, err := w.Resolve(tc.target)
		if tc.want == "" {
			var amb *AmbiguousError
			assert.True(t, errors.As(err, &amb), "Resolve(%q) = %q, %q, %v: want an ambiguous path", tc.target, root, p, err)
			continue
		}
		require.NoError(t, err, tc.target)
		got := p
		if root != "" {
			got = strings.TrimSuffix(root+"/"+p, "/.")
		}
		assert.Equal(t, tc.want, got, tc.target)
	}

	noHome, err := NewWorkspace([]string{dir}, nil, "")
	require.NoError(t, err)
	for _, target := range []string{"~/.aws/credentials", "$HOME/x", "~"} {
		_, _, err := noHome.Resolve(target)
		var amb *AmbiguousError
		assert.True(t, errors.As(err, &amb), "%q without a home directory: %v", target, err)
	}
}

// FuzzSpellings: a target that starts with an expansion ("~..." or "$" then anything but "/")
// is either refused as ambiguous or resolved from the home directory: under it when the target
// has no "..", and never to the literal name in the workspace.
func FuzzSpellings(f *testing.F) {
	w, dir, home := spellingFixture(f)
	for _, s := range []string{"~/.aws/credentials", "~", "$HOME/x", "${HOME}", "~root/x", "$TMPDIR/x", "~/../x", "$HOME/../../x", "~//x", "${HOME}/./x", "~\x00", "$", "$/x", "~/" + dir, "~/../" + filepath.Base(dir) + "/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		root, p, err := w.Resolve(target)
		if err != nil || target == "" || target[0] != '~' && target[0] != '$' || target == "$" || strings.HasPrefix(target, "$/") {
			return
		}
		abs := p
		if root != "" {
			abs = strings.TrimSuffix(root+"/"+p, "/.")
		}
		if !hasDotDot(target) {
			assert.True(t, Within(abs, home), "Resolve(%q) = %q, outside the home directory %q", target, abs, home)
		}
		assert.NotEqual(t, Host().Clean(dir+"/"+target), abs, "Resolve(%q): the literal name in the workspace", target)
	})
}
