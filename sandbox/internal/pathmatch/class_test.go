package pathmatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/fspath"
)

// TestNewWriteProtectedClass: the policy's WriteProtectedPaths are compiled
// as write-protected, its DeniedPaths as read-and-write protected, and an
// entry in both lists (or in a stricter default) is read-and-write
// protected.
func TestNewWriteProtectedClass(t *testing.T) {
	t.Parallel()
	m, err := New([]string{"secrets/prod.json", "both/x"},
		[]string{"config/deploy.yaml", "both/x", "/srv/ro", ".env", "tools/*.cfg"})
	require.NoError(t, err)
	tests := []struct {
		path  string
		entry string
		cls   fspath.Class
	}{
		{"/w/config/deploy.yaml", "config/deploy.yaml", fspath.WriteProtected},
		{"/w/a/CONFIG/Deploy.YAML", "config/deploy.yaml", fspath.WriteProtected},
		{"/w/tools/lint.cfg", "tools/*.cfg", fspath.WriteProtected},
		{"/srv/ro", "/srv/ro", fspath.WriteProtected},
		{"/srv/ro/f", "/srv/ro", fspath.WriteProtected},
		{"/w/secrets/prod.json", "secrets/prod.json", fspath.ReadWriteProtected},
		{"/w/both/x", "both/x", fspath.ReadWriteProtected},                // in both lists: the stricter
		{"/w/.env", ".env", fspath.ReadWriteProtected},                    // a stricter default wins
		{"/w/config/deploy.yaml/.env", ".env", fspath.ReadWriteProtected}, // a secret under a write-protected path
		{"/w/.git/config", ".git", fspath.WriteProtected},                 // the defaults keep their class
		{"/w/config/other.yaml", "", fspath.Unprotected},
		{"/w/deploy.yaml", "", fspath.Unprotected},
		{"/srv/rox", "", fspath.Unprotected},
	}
	for _, tt := range tests {
		entry, cls := m.MatchClass(tt.path)
		assert.Equal(t, tt.cls, cls, "MatchClass(%q)", tt.path)
		assert.Equal(t, tt.entry, entry, "MatchClass(%q)", tt.path)
		_, ok := m.Match(tt.path)
		assert.Equal(t, tt.cls != fspath.Unprotected, ok, "Match(%q)", tt.path)
	}
}

// TestNewNamesTheField: an entry either list cannot honour is an error
// naming its field and index, never dropped.
func TestNewNamesTheField(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		rw, w []string
		want  string
	}{
		{nil, []string{"ok", "fine", "a/../b"}, "FsNetPolicy.WriteProtectedPaths[2]"},
		{nil, []string{""}, "FsNetPolicy.WriteProtectedPaths[0]"},
		{nil, []string{"/"}, "FsNetPolicy.WriteProtectedPaths[0]"},
		{nil, []string{"x", "[ab]"}, "FsNetPolicy.WriteProtectedPaths[1]"},
		{nil, []string{"nul\x00byte"}, "FsNetPolicy.WriteProtectedPaths[0]"},
		{[]string{"ok", "[ab]"}, []string{"fine"}, "FsNetPolicy.DeniedPaths[1]"},
	} {
		_, err := New(tt.rw, tt.w)
		require.Error(t, err, "%q %q", tt.rw, tt.w)
		assert.Contains(t, err.Error(), tt.want)
		assert.True(t, strings.HasPrefix(err.Error(), "sandbox: "), err.Error())
	}
}

// TestFindProtectedUserClasses: the scan the hardened and container
// backends bind from puts a user write-protected file among the
// read-only paths, never among the masks, and a user denied file among
// the masks.
func TestFindProtectedUserClasses(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, f := range []string{"config/deploy.yaml", "secrets/prod.json", "config/other.yaml"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644))
	}
	ws, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	m, err := New([]string{"secrets/prod.json"}, []string{"config/deploy.yaml"})
	require.NoError(t, err)
	masks, ro, err := WalkProtected(m, []string{ws})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(ws, "secrets", "prod.json")}, masks)
	assert.Equal(t, []string{filepath.Join(ws, "config", "deploy.yaml")}, ro)
}

// FuzzNewClasses: one entry given as write-protected protects exactly the
// paths it protects given as denied (same validation, same matches); its
// class is write-protected unless a default makes the path a secret; given
// in both lists it is denied.
func FuzzNewClasses(f *testing.F) {
	for _, s := range [][2]string{
		{"config/deploy.yaml", "/w/config/deploy.yaml"},
		{"config/deploy.yaml", "/w/CONFIG/deploy.yaml/.env"},
		{".env", "/w/.env"},
		{"/srv/ro", "/srv/ro/x"},
		{"tools/*.cfg", "/w/tools/a.cfg"},
		{"~/.config/app", "/home/u/.config/app/x"},
		{"a/../b", "/w/b"},
		{"[x]", "/w/x"},
		{".git", "/w/.git/config"},
		{"", "/"},
	} {
		f.Add(s[0], s[1])
	}
	defaults, err := New(nil, nil)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, entry, p string) {
		if !filepath.IsAbs(p) {
			p = "/w/" + p
		}
		p = filepath.Clean(p)
		asDenied, errD := New([]string{entry}, nil)
		asWrite, errW := New(nil, []string{entry})
		both, errB := New([]string{entry}, []string{entry})
		require.Equal(t, errD != nil, errW != nil, "%q: %v / %v", entry, errD, errW)
		require.Equal(t, errD != nil, errB != nil, "%q: %v / %v", entry, errD, errB)
		if errW != nil {
			require.Contains(t, errW.Error(), "FsNetPolicy.WriteProtectedPaths[0]")
			return
		}
		_, dCls := asDenied.MatchClass(p)
		_, wCls := asWrite.MatchClass(p)
		_, bCls := both.MatchClass(p)
		_, defCls := defaults.MatchClass(p)
		require.Equal(t, dCls != fspath.Unprotected, wCls != fspath.Unprotected, "%q on %q", entry, p)
		require.Equal(t, dCls, bCls, "%q on %q: in both lists it is denied", entry, p)
		if wCls != fspath.Unprotected {
			// Write-protected unless a default makes p a secret.
			require.Equal(t, defCls == fspath.ReadWriteProtected, wCls == fspath.ReadWriteProtected, "%q on %q", entry, p)
		}
	})
}
