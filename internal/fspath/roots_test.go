package fspath

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootsFixture is top/ws (the primary root) holding vendor/lib (a trusted root) with
// a/b/c.txt, and top/outside with the same a/b/c.txt.
func rootsFixture(t *testing.T) (w *Workspace, top string) {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	top = filepath.ToSlash(top)
	for _, d := range []string{"ws/vendor/lib/a/b", "outside/a/b", "outside/lib/a/b"} {
		require.NoError(t, os.MkdirAll(filepath.Join(top, d), 0o755))
	}
	for _, f := range []string{"ws/vendor/lib/a/b/c.txt", "outside/a/b/c.txt", "outside/lib/a/b/c.txt", "ws/main.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(top, f), nil, 0o644))
	}
	w, err = NewWorkspace([]string{top + "/ws"}, []string{top + "/ws/vendor/lib"}, "")
	require.NoError(t, err)
	return w, top
}

// TestRootsCheckedAtResolution: a root that is no longer the directory NewWorkspace opened
// (moved away, replaced by a link, removed; or one of its parents) is noticed by the next
// resolution, and its targets are resolved by what they lead to now (issue 23, part 3), with
// the single-call path and with the walk.
func TestRootsCheckedAtResolution(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	type want struct{ root, path string } // relative to top; root "" for outside
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, top string)
		want   map[string]want // target (relative to top when it starts with "/") -> result
	}{
		{"unchanged", func(*testing.T, string) {}, map[string]want{
			"/ws/vendor/lib/a/b/c.txt": {"ws/vendor/lib", "a/b/c.txt"},
			"/ws/vendor/lib/x":         {"ws/vendor/lib", "x"},
			"/ws/vendor/lib":           {"ws/vendor/lib", "."},
			"vendor/lib/a/b/c.txt":     {"ws/vendor/lib", "a/b/c.txt"},
			"main.go":                  {"ws", "main.go"},
		}},
		{"trusted root replaced by a link out", func(t *testing.T, top string) {
			must(t, os.Rename(top+"/ws/vendor/lib", top+"/ws/vendor/lib.old"))
			must(t, os.Symlink(top+"/outside", top+"/ws/vendor/lib"))
		}, map[string]want{
			"/ws/vendor/lib/a/b/c.txt": {"", "outside/a/b/c.txt"},
			"/ws/vendor/lib/x":         {"", "outside/x"},
			"/ws/vendor/lib/a/b/new":   {"", "outside/a/b/new"},
			"/ws/vendor/lib":           {"", "outside"},
			"vendor/lib/a/b/c.txt":     {"", "outside/a/b/c.txt"},
			"vendor/lib.old/a/b/c.txt": {"ws", "vendor/lib.old/a/b/c.txt"},
		}},
		{"trusted root replaced by a relative link out", func(t *testing.T, top string) {
			must(t, os.RemoveAll(top+"/ws/vendor/lib"))
			must(t, os.Symlink("../../outside", top+"/ws/vendor/lib"))
		}, map[string]want{
			"/ws/vendor/lib/a/b/c.txt": {"", "outside/a/b/c.txt"},
			"/ws/vendor/lib/x":         {"", "outside/x"},
		}},
		{"trusted root replaced by a link to itself moved", func(t *testing.T, top string) {
			must(t, os.Rename(top+"/ws/vendor/lib", top+"/ws/vendor/lib.old"))
			must(t, os.Symlink("lib.old", top+"/ws/vendor/lib"))
		}, map[string]want{
			"/ws/vendor/lib/a/b/c.txt": {"ws/vendor/lib", "a/b/c.txt"}, // the same directory
			"vendor/lib/a/b/c.txt":     {"ws", "vendor/lib.old/a/b/c.txt"},
		}},
		{"trusted root replaced by a new directory", func(t *testing.T, top string) {
			must(t, os.Rename(top+"/ws/vendor/lib", top+"/ws/vendor/lib.old"))
			must(t, os.MkdirAll(top+"/ws/vendor/lib/a", 0o755))
		}, map[string]want{
			"/ws/vendor/lib/a/b/c.txt": {"ws/vendor/lib", "a/b/c.txt"}, // the path, as a writer creates it
			"/ws/vendor/lib/x":         {"ws/vendor/lib", "x"},
		}},
		{"trusted root removed", func(t *testing.T, top string) {
			must(t, os.RemoveAll(top+"/ws/vendor/lib"))
		}, map[string]want{
			"/ws/vendor/lib/a/b/c.txt": {"ws/vendor/lib", "a/b/c.txt"},
		}},
		{"a parent replaced by a link out", func(t *testing.T, top string) {
			must(t, os.Rename(top+"/ws/vendor", top+"/ws/vendor.old"))
			must(t, os.Symlink(top+"/outside", top+"/ws/vendor"))
		}, map[string]want{
			"/ws/vendor/lib/a/b/c.txt": {"", "outside/lib/a/b/c.txt"},
			"vendor/lib/a/b/c.txt":     {"", "outside/lib/a/b/c.txt"},
		}},
		{"primary root replaced by a link out", func(t *testing.T, top string) {
			must(t, os.Rename(top+"/ws", top+"/ws.old"))
			must(t, os.Symlink(top+"/outside", top+"/ws"))
		}, map[string]want{
			"a/b/c.txt":       {"", "outside/a/b/c.txt"},
			"a/b/new.txt":     {"", "outside/a/b/new.txt"},
			"x":               {"", "outside/x"},
			"/ws/a/b/c.txt":   {"", "outside/a/b/c.txt"},
			"/ws/vendor/lib/": {"", "outside/vendor/lib"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, top := rootsFixture(t)
			tc.change(t, top)
			defer SetFastResolve(SetFastResolve(true))
			for target, want := range tc.want {
				if target[0] == '/' {
					target = top + target
				}
				for _, fast := range []bool{true, false} {
					SetFastResolve(fast)
					root, p, err := w.Resolve(target)
					require.NoError(t, err, target)
					wantRoot, wantPath := "", top+"/"+want.path
					if want.root != "" {
						wantRoot, wantPath = top+"/"+want.root, want.path
					}
					assert.Equal(t, wantRoot, root, "%s (fast %v)", target, fast)
					assert.Equal(t, wantPath, p, "%s (fast %v)", target, fast)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	require.NoError(t, err)
}
