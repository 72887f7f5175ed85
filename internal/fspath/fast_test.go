package fspath

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldFixture is a workspace with links, files and a trusted sub-root, and a directory outside.
func heldFixture(t testing.TB) (w *Workspace, dir, outside string) {
	t.Helper()
	dir, outside = t.TempDir(), t.TempDir()
	for _, d := range []string{"src/pkg", "deep/a/b/c/d/e/f/g", "trusted/t"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, f := range []string{"src/pkg/main.go", "file.txt", "deep/a/b/c/d/e/f/g/h.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
	}
	if runtime.GOOS != "windows" {
		for link, to := range map[string]string{
			"link": "src", "flink": "src/pkg/main.go", "dangling": "nowhere", "out": outside,
			"src/pkg/up": "..", "deep/a/b/dangling": "nowhere", "deep/a/b/flink": "../../../file.txt", "deep/a/b/c/d/e/f/g/back": "../../../../../../../..",
		} {
			require.NoError(t, os.Symlink(to, filepath.Join(dir, link)))
		}
	}
	w, err := NewWorkspace([]string{dir}, []string{filepath.Join(dir, "trusted")}, "")
	require.NoError(t, err)
	return w, w.Primary(), outside
}

func heldTargets(dir, outside string) []string {
	return []string{
		"src/pkg/main.go", "src/pkg/new.go", "src/missing/x/y", "src", "file.txt", "new.txt",
		"deep/a/b/c/d/e/f/g/h.txt", "deep/a/b/c/d/e/f/g/new.txt", "deep/a/b/c/missing/e/f/g/h",
		"link/pkg/main.go", "link/pkg/new.go", "flink", "dangling", "dangling/x", "out/x", "out",
		"src/pkg/up/pkg/main.go", "deep/a/b/dangling", "deep/a/b/dangling/x", "deep/a/b/flink", "deep/a/b/flink/x",
		"src/pkg/main.go/x", "src/pkg/main.go/x/y", "deep/a/b/c/d/e/f/g/back/file.txt",
		"file.txt/x", "file.txt/x/y", "file.txt/../src",
		"src/../file.txt", "link/../file.txt", "missing/../file.txt", "src/pkg/../../new",
		"./src", "src//pkg", "src/pkg/", ".", "..", "../x", "a/./b",
		"trusted/t/x", "trusted/new", "trusted",
		dir + "/src/pkg/main.go", dir + "//src/pkg", dir, dir + "/", dir + "/trusted/t/y", dir + "/link/x",
		outside + "/x", outside, "/etc/passwd", "/nonexistent/a", "/",
		strings.Repeat("n", 300), "src/" + strings.Repeat("n", 256), strings.Repeat("n", 255),
		strings.Repeat("a/", 2000) + "b", strings.Repeat("src/../", 600) + "src", strings.Repeat("x", MaxPathLen-len(dir)-1),
		strings.Repeat("x", MaxPathLen-len(dir)), strings.Repeat("x", MaxPathLen+1),
	}
}

func resolveString(w *Workspace, target string) string {
	root, p, err := w.Resolve(target)
	if err != nil {
		return "error: " + err.Error()
	}
	return root + " | " + p
}

// TestFastResolveMatchesWalk: every target resolves to the same root, path and error with the
// single-call fast path on and with the component walk only.
func TestFastResolveMatchesWalk(t *testing.T) {
	w, dir, outside := heldFixture(t)
	defer SetFastResolve(SetFastResolve(true))
	for _, target := range heldTargets(dir, outside) {
		SetFastResolve(true)
		fast := resolveString(w, target)
		SetFastResolve(false)
		walk := resolveString(w, target)
		assert.Equal(t, walk, fast, "target %q", target)
	}
}

// TestFastResolveIsTaken: on Linux, clean targets without links are decided without a walk:
// the root itself and one component by a stat of the root and of the target, more components by
// one openat2 call on the whole path (existing, or only the last component missing); the others
// are walked.
func TestFastResolveIsTaken(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("openat2 is Linux only: every target is walked here")
	}
	w, dir, _ := heldFixture(t)
	defer SetFastResolve(SetFastResolve(true))
	var buf [MaxPathLen + 2]byte
	ri := w.rootIndex(dir)
	require.GreaterOrEqual(t, ri, 0)
	if !w.fast(&buf, dir, "src/pkg/main.go", ri) {
		if os.Getenv("REINS_TEST_STRICT") == "1" {
			t.Fatal("openat2 is unavailable (old kernel or seccomp)")
		}
		t.Skip("openat2 is unavailable (old kernel or seccomp): every target is walked")
	}
	for rest, want := range map[string]bool{
		"src/pkg/main.go": true, "src/pkg/new.go": true, "new.txt": true, "src/pkg": true, "deep/a/b/c/d/e/f/g/h.txt": true,
		"file.txt": true, "src": true, "": true,
		"src/missing/x": false, "deep/a/b/dangling": false, "deep/a/b/flink": false, "src/pkg/main.go/x": false, "deep/a/b/c/missing/e": false, "deep/a/b/c/d/e/f/g/back/x": false, "link/pkg/main.go": false, "flink": false, "dangling": false,
		"src/pkg/up/pkg": false, "file.txt/x": false, "src/../file.txt": false, "./src": false,
		"src//pkg": false, "src/pkg/": false, "link": false, "out": false,
	} {
		assert.Equal(t, want, w.fast(&buf, dir, rest, ri), "rest %q", rest)
	}
	SetFastResolve(false)
	assert.False(t, w.fast(&buf, dir, "src/pkg/main.go", ri), "SetFastResolve(false) forces the walk")
}

// FuzzFastResolve: the fast path and the walk agree on any target.
func FuzzFastResolve(f *testing.F) {
	w, dir, outside := heldFixture(f)
	for _, target := range heldTargets(dir, outside) {
		f.Add(target)
	}
	f.Fuzz(func(t *testing.T, target string) {
		was := SetFastResolve(true)
		fast := resolveString(w, target)
		SetFastResolve(false)
		walk := resolveString(w, target)
		SetFastResolve(was)
		require.Equal(t, walk, fast, "target %q", target)
	})
}
