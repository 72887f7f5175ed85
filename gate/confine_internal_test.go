package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// confineFixture builds a directory with a workspace, a sibling that shares its prefix, and a
// farm of symbolic links in and out.
func confineFixture(t testing.TB) (top string, w *workspace) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(top, "app")
	for _, d := range []string{"app/src/pkg", "app/.git", "app-evil", "outside/deep"} {
		require.NoError(t, os.MkdirAll(filepath.Join(top, d), 0o755))
	}
	for _, f := range []string{"app/src/pkg/main.go", "app/.git/config", "outside/secret"} {
		require.NoError(t, os.WriteFile(filepath.Join(top, f), nil, 0o644))
	}
	links := map[string]string{
		"app/out":          "../outside",
		"app/abs-out":      filepath.Join(top, "outside"),
		"app/in":           "src/pkg",
		"app/src/up":       "../..",
		"app/loop1":        "loop2",
		"app/loop2":        "loop1",
		"app/dangling":     "nowhere/else",
		"app/evil":         "../app-evil",
		"app/src/pkg/self": ".",
		"app/gitlink":      ".git",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(top, name)))
	}
	w, err = newWorkspace([]string{ws}, nil)
	require.NoError(t, err)
	return top, w
}

// oracle resolves target the slow, obvious way: the deepest existing prefix through
// filepath.EvalSymlinks, then the rest lexically. It gives up on dangling links, which resolve
// follows (a write through one creates its target).
func oracle(primary, target string) (string, error) {
	p := target
	if !strings.HasPrefix(p, "/") {
		p = primary + "/" + p
	}
	comps := strings.Split(p, "/")
	for k := len(comps); k >= 1; k-- {
		prefix := strings.Join(comps[:k], "/")
		if prefix == "" {
			prefix = "/"
		}
		real, err := filepath.EvalSymlinks(prefix)
		if err != nil {
			if _, lerr := os.Lstat(prefix); lerr == nil {
				// A dangling link (or a loop): EvalSymlinks cannot say where it leads.
				return "", err
			}
			continue
		}
		rest := strings.Join(comps[k:], "/")
		return filepath.Clean(real + "/" + rest), nil
	}
	return filepath.Clean(p), nil
}

// FuzzConfine: resolve never panics, refuses NUL bytes, and agrees with the oracle on whether a
// target is inside the workspace and where it lands.
func FuzzConfine(f *testing.F) {
	for _, s := range []string{
		"src/pkg/main.go", "..", "../outside/secret", "src/../../outside", "/etc/passwd", "out/secret",
		"out/../app/x", "abs-out/deep", "in/main.go", "src/up/app-evil/x", "loop1/x", "dangling", "evil/x",
		"src/pkg/self/self/main.go", "gitlink/config", "a\x00b", "", ".", "./src//pkg/", "new/dir/../file",
		"new/../../x", "app-evil/x", "../app-evil", "//etc", "src/pkg/main.go/x", strings.Repeat("a/", 300),
	} {
		f.Add(s)
	}
	top, w := confineFixture(f)
	f.Fuzz(func(t *testing.T, target string) {
		for _, tgt := range []string{target, top + "/" + target} {
			root, p, err := w.resolve(tgt)
			if strings.IndexByte(tgt, 0) >= 0 || tgt == "" {
				require.Error(t, err, "%q", tgt)
				continue
			}
			if err != nil {
				// Loops, paths too long, permission problems: refused, which the gate turns
				// into a Deny.
				continue
			}
			want, oerr := oracle(w.primary, tgt)
			if oerr != nil {
				continue
			}
			got := p
			if root != "" {
				got = filepath.Clean(root + "/" + p)
			}
			require.Equal(t, want, got, "%q resolved to %q (root %q)", tgt, got, root)
			require.Equal(t, within(want, w.primary), root != "", "%q: inside disagrees (got %q root %q)", tgt, got, root)
		}
	})
}
