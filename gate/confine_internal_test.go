package gate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/fspath"
)

// escapeFixture builds top/app (the workspace) and top/outside, with the links of issue 12's
// escapes. Every link is relative, so os.Root (the writer oracle) follows them.
func escapeFixture(t testing.TB) (top string, w *workspace) {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"app/src/pkg", "app/.git/hooks", "app/deep/dir", "app-evil", "outside/deep"} {
		require.NoError(t, os.MkdirAll(filepath.Join(top, d), 0o755))
	}
	for _, f := range []string{"app/src/pkg/main.go", "app/.git/config", "app/somefile", "outside/secret"} {
		require.NoError(t, os.WriteFile(filepath.Join(top, f), nil, 0o644))
	}
	for name, target := range map[string]string{
		"app/link_out":     "../outside",
		"app/esc":          "../outside",
		"app/inlink":       "deep/dir",
		"app/gitlink":      ".git",
		"app/in":           "src/pkg",
		"app/src/up":       "../..",
		"app/loop1":        "loop2",
		"app/loop2":        "loop1",
		"app/dangling":     "nowhere/else",
		"app/evil":         "../app-evil",
		"app/src/pkg/self": ".",
		"app/deep/dir/top": "../../..",
		"app/deep/sib":     "../src",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(top, name)))
	}
	w, err = newWorkspace([]string{filepath.Join(top, "app")}, nil, "")
	require.NoError(t, err)
	return top, w
}

// TestResolveEscapes: each escape of issue 12, part 1, at the resolver.
func TestResolveEscapes(t *testing.T) {
	t.Parallel()
	top, w := escapeFixture(t)
	app := top + "/app"
	for _, tc := range []struct {
		target    string
		root      string // "" outside
		path      string
		ambiguous bool
	}{
		// A ".." after a missing directory is applied to the real directories: link_out is
		// followed, the target is outside.
		{target: "nonexist/../link_out/pwned", path: top + "/outside/pwned"},
		{target: "nonexist/deeper/../../link_out/pwned", path: top + "/outside/pwned"},
		{target: "nonexist/../gitlink/hooks/pre-commit", root: app, path: ".git/hooks/pre-commit"},
		// The kernel reads deep/esc/pwned, a lexical join esc/pwned (outside): ambiguous.
		{target: "inlink/../esc/pwned", ambiguous: true},
		// A ".." after a file: the kernel refuses, a lexical join writes outside.
		{target: "somefile/x/../../link_out/pwned", ambiguous: true},
		{target: "somefile/../README", ambiguous: true},
		{target: "deep/sib/../src/pkg/main.go", ambiguous: true}, // kernel: src/src/pkg/main.go
		// Readings that agree are fine.
		{target: "nonexist/../src/pkg/main.go", root: app, path: "src/pkg/main.go"},
		{target: "new/dir/../file.txt", root: app, path: "new/file.txt"},
		{target: "in/../in/main.go", ambiguous: true},            // kernel: src/in/main.go
		{target: "src/pkg/self/../pkg/main.go", ambiguous: true}, // kernel: src/pkg/main.go
		{target: "src/pkg/self/../../README", ambiguous: true},   // kernel: README, lexical: src/README
		{target: "inlink/x", root: app, path: "deep/dir/x"},
		{target: "src/up/outside/secret", path: top + "/outside/secret"},
		{target: "../outside/x", path: top + "/outside/x"},
		{target: app + "/inlink/../esc/pwned", ambiguous: true},
		{target: app + "/nonexist/../link_out/p", path: top + "/outside/p"},
	} {
		root, p, err := w.resolve(tc.target)
		if tc.ambiguous {
			var amb *fspath.AmbiguousError
			require.ErrorAs(t, err, &amb, "%q: root %q path %q", tc.target, root, p)
			assert.Contains(t, err.Error(), "ambiguous", tc.target)
			continue
		}
		require.NoError(t, err, tc.target)
		assert.Equal(t, tc.root, root, tc.target)
		assert.Equal(t, tc.path, p, tc.target)
	}
}

// writeLands writes marker at name (relative to top) the way a writer does, inside an os.Root on
// top so nothing outside top is ever touched: mkdir -p of the parent, then create. It returns
// where the file landed ("" when the writer failed) and whether the write escaped top. Then it
// puts the fixture back as it was: what the writer created is removed.
func writeLands(t *testing.T, top, name string, marker []byte) (landed string, escaped bool) {
	t.Helper()
	before := map[string]bool{}
	require.NoError(t, filepath.WalkDir(top, func(p string, _ fs.DirEntry, err error) error {
		before[p] = true
		return err
	}))
	defer func() {
		var created []string
		_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !before[p] {
				created = append(created, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
			}
			return nil
		})
		for _, p := range created {
			require.NoError(t, os.RemoveAll(p))
		}
		if landed != "" && before[filepath.FromSlash(landed)] {
			require.NoError(t, os.Truncate(landed, 0)) // the fixture's files are empty
		}
	}()
	r, err := os.OpenRoot(top)
	require.NoError(t, err)
	defer r.Close()
	isEscape := func(err error) bool { return err != nil && strings.Contains(err.Error(), "escapes") }
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		if err := r.MkdirAll(name[:i], 0o755); err != nil {
			return "", isEscape(err)
		}
	}
	if err := r.WriteFile(name, marker, 0o644); err != nil {
		return "", isEscape(err)
	}
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, _ := os.ReadFile(p); bytes.Equal(b, marker) {
			landed = filepath.ToSlash(p)
		}
		return nil
	})
	require.NoError(t, err)
	return landed, false
}

// FuzzResolve checks resolution against a real-filesystem oracle that does what a writer does:
// for every target the gate calls inside, a writer that lets the kernel resolve it (mkdir -p of
// the parent, then create) and a writer that joins it lexically first (filepath.Join) both land
// exactly where the gate said, inside the workspace. The writes go through os.Root on a
// temporary directory, so an escape is an error, never a write to the real system.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"src/pkg/main.go", "..", "../outside/secret", "src/../../outside", "/etc/passwd", "link_out/x",
		"nonexist/../link_out/pwned", "nonexist/../gitlink/hooks/pre-commit", "inlink/../esc/pwned",
		"somefile/x/../../link_out/pwned", "in/main.go", "src/up/app-evil/x", "loop1/x", "dangling/x",
		"evil/x", "src/pkg/self/self/new.go", "gitlink/config", "a\x00b", "", ".", "./src//pkg/new",
		"new/dir/../file", "new/../../x", "deep/dir/top/outside/x", "deep/sib/../x", "inlink/../../x",
		"deep/dir/../../src/new", "src/pkg/main.go/x", strings.Repeat("a/", 300), "x/./../y",
	} {
		f.Add(s)
	}
	top, w := escapeFixture(f)  // resolved against, never written
	wtop, _ := escapeFixture(f) // written, and put back after each write
	app := top + "/app"
	var seq atomic.Int64
	f.Fuzz(func(t *testing.T, target string) {
		if len(target) > 512 {
			return
		}
		for _, tgt := range []string{target, app + "/" + target} {
			root, p, err := w.resolve(tgt)
			if tgt == "" || strings.IndexByte(tgt, 0) >= 0 {
				require.Error(t, err, "%q", tgt)
				continue
			}
			if err != nil || root == "" {
				continue // refused, or outside: the gate denies or halts
			}
			want := root
			if p != "." {
				want = root + "/" + p
			}
			require.True(t, fspath.Within(want, app), "%q: resolved inside %q but not under the workspace", tgt, want)
			// Names relative to top for the writers.
			rel := "app/" + tgt
			if strings.HasPrefix(tgt, "/") {
				rel = strings.TrimPrefix(tgt, top+"/")
			}
			for _, lexical := range []bool{false, true} {
				name := rel
				if lexical {
					name = path.Clean(rel)
					require.False(t, name == ".." || strings.HasPrefix(name, "../"), "%q: a lexical join leaves the fixture (%q)", tgt, name)
				}
				marker := []byte("marker-" + strconv.FormatInt(seq.Add(1), 10))
				landed, escaped := writeLands(t, wtop, name, marker)
				require.False(t, escaped, "%q (lexical %v): the writer escaped the fixture, the gate said %q", tgt, lexical, want)
				if landed == "" {
					continue // the writer failed: nothing written
				}
				require.Equal(t, wtop+strings.TrimPrefix(want, top), landed, "%q (lexical %v): landed elsewhere than the gate said", tgt, lexical)
			}
		}
	})
}

// TestResolveBounds: loops, long paths and NUL bytes are refused.
func TestResolveBounds(t *testing.T) {
	t.Parallel()
	_, w := escapeFixture(t)
	for target, want := range map[string]error{
		"loop1/x":                         fspath.ErrLoop,
		"a\x00b":                          fspath.ErrNUL,
		"":                                fspath.ErrEmpty,
		strings.Repeat("a", 5000):         fspath.ErrTooLong,
		strings.Repeat("../a/", 900) + "": fspath.ErrTooLong,
	} {
		_, _, err := w.resolve(target)
		assert.True(t, errors.Is(err, want), "%.40q: %v", target, err)
	}
}
