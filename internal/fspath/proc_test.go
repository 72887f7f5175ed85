//go:build linux

package fspath

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
)

// procFixture is a workspace with links into the process state: fd -> /dev/fd, cwd ->
// /proc/self/cwd, self -> /proc/self, in -> /dev/stdin, me -> /proc/<pid>.
func procFixture(t testing.TB) (w *Workspace, dir string) {
	t.Helper()
	if _, err := os.Lstat("/proc/self/cwd"); err != nil {
		testenv.Missing(t, "/proc is not mounted: %v", err)
	}
	dir = t.TempDir()
	for link, to := range map[string]string{
		"fd": "/dev/fd", "cwd": "/proc/self/cwd", "self": "/proc/self", "in": "/dev/stdin",
		"me": "/proc/" + strconv.Itoa(os.Getpid()), "procdir": "/proc",
	} {
		require.NoError(t, os.Symlink(to, filepath.Join(dir, link)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), nil, 0o644))
	w, err := NewWorkspace([]string{dir}, nil, "/home/u")
	require.NoError(t, err)
	return w, w.Primary()
}

// procTargets are the spellings of issue 23, part 1: "" means refused as ambiguous, anything
// else the path the target must resolve to (kept as the command reads it).
func procTargets() map[string]string {
	pid := strconv.Itoa(os.Getpid())
	return map[string]string{
		// The working directory, the root, the executable, open files: of whoever opens them.
		"/proc/self/cwd":                           "",
		"/proc/self/cwd/.aws/credentials":          "",
		"/proc/self/cwd/README.md":                 "",
		"/proc/./self/cwd/x":                       "",
		"//proc/self/cwd/x":                        "",
		"/proc//self///cwd/x":                      "",
		"/proc/self/root/etc/passwd":               "",
		"/proc/self/root":                          "",
		"/proc/self/exe":                           "",
		"/proc/self/fd/0":                          "",
		"/proc/self/fd/1":                          "",
		"/proc/self/fd/../cwd/x":                   "",
		"/proc/self/ns/net":                        "",
		"/proc/thread-self/cwd/x":                  "",
		"/proc/thread-self/root/etc":               "",
		"/proc/" + pid + "/cwd/x":                  "",
		"/proc/" + pid + "/root/etc":               "",
		"/proc/" + pid + "/task/" + pid + "/cwd/x": "",
		"/proc/1/cwd/x":                            "",
		"/proc/1/root":                             "",
		"/dev/fd/0":                                "",
		"/dev/fd/1/x":                              "",
		"/dev/stdin":                               "",
		"/dev/stdout":                              "",
		"/dev/stderr":                              "",
		"/dev/./stdout":                            "",
		"fd/0":                                     "",
		"fd/3":                                     "",
		"cwd/.ssh/id_ed25519":                      "",
		"self/cwd/x":                               "",
		"self/root/etc/passwd":                     "",
		"in":                                       "",
		"me/cwd/x":                                 "",
		"procdir/self/cwd/x":                       "",
		// A ".." back over a link that names the reader: where it leads depends on the reader.
		"/proc/self/..":        "",
		"/proc/thread-self/..": "",
		"/proc/self/../1/cwd":  "",
		// The reader's own information, and procfs without process links: kept as written.
		"/proc/self/status":      "/proc/self/status",
		"/proc/self/fd":          "/proc/self/fd",
		"/proc/self/fd/..":       "/proc/self",
		"/proc/mounts":           "/proc/mounts",
		"/proc/net/dev":          "/proc/net/dev",
		"/proc/cpuinfo":          "/proc/cpuinfo",
		"/proc/thread-self/comm": "/proc/thread-self/comm",
		"/proc/1/environ":        "/proc/1/environ",
		"/dev/null":              "/dev/null",
		"self/status":            "/proc/self/status",
	}
}

// TestProcStatePaths: every spelling of a path through the process state of issue 23 (part 1)
// is refused as ambiguous, never resolved for the gate's own process; the reader's own
// information keeps its name.
func TestProcStatePaths(t *testing.T) {
	w, _ := procFixture(t)
	for target, want := range procTargets() {
		root, p, err := w.Resolve(target)
		if want == "" {
			var amb *AmbiguousError
			assert.True(t, errors.As(err, &amb), "Resolve(%q) = %q, %q, %v: want an ambiguous path", target, root, p, err)
			continue
		}
		if assert.NoError(t, err, target) {
			assert.Equal(t, "", root, target)
			assert.Equal(t, want, p, target)
		}
	}
}

// FuzzResolveIndependentOfProcessState: no resolution depends on the resolving process's own
// state. The same target is resolved in two working directories with a different file open on
// the same descriptor: the answers are the same. Before issue 23, /proc/self/cwd/x resolved to
// the gate's working directory.
func FuzzResolveIndependentOfProcessState(f *testing.F) {
	w, dir := procFixture(f)
	for target := range procTargets() {
		f.Add(target)
	}
	for _, target := range []string{"README.md", "a/../README.md", "/etc/hostname", dir + "/README.md", "/proc/self/cwd/../x", "/proc/self/task", "/proc/thread-self"} {
		f.Add(target)
	}
	a, b := f.TempDir(), f.TempDir()
	fa, err := os.Open(a)
	require.NoError(f, err)
	defer fa.Close()
	fb, err := os.Open(b)
	require.NoError(f, err)
	defer fb.Close()
	slot, err := os.Open(os.DevNull) // its descriptor names a, then b
	require.NoError(f, err)
	defer slot.Close()
	fd := int(slot.Fd())
	for _, target := range []string{"/proc/self/fd/" + strconv.Itoa(fd), "/dev/fd/" + strconv.Itoa(fd) + "/x", "fd/" + strconv.Itoa(fd)} {
		f.Add(target)
	}
	f.Fuzz(func(t *testing.T, target string) {
		t.Chdir(a)
		require.NoError(t, syscall.Dup3(int(fa.Fd()), fd, syscall.O_CLOEXEC))
		first := resolveString(w, target)
		t.Chdir(b)
		require.NoError(t, syscall.Dup3(int(fb.Fd()), fd, syscall.O_CLOEXEC))
		second := resolveString(w, target)
		require.Equal(t, first, second, "target %q", target)
		if strings.HasPrefix(first, "error:") {
			return
		}
		for _, d := range []string{a, b} {
			assert.NotContains(t, first, d, "target %q resolved through the process's working directory or descriptors", target)
		}
	})
}
