package loader_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
)

// TestProtectionListsInFiles: write_protected_paths extends the write-protected class,
// unprotected_paths narrows both classes (a project file only when trusted), and the seeds'
// six names cannot be narrowed.
func TestProtectionListsInFiles(t *testing.T) {
	t.Parallel()
	has := func(l []string, e string) bool { return slices.Contains(l, e) }

	f := newFiles(t)
	f.writeUser(`{"active_profile": "PROFILE-DEV", "write_protected_paths": ["deploy/prod"], "denied_paths": ["*.pem"], "unprotected_paths": [".vscode", "~/.npmrc", ".github/workflows/"]}`)
	l := f.mustLoad()
	assert.True(t, has(l.Profile.WriteProtectedPaths, "deploy/prod"))
	assert.True(t, has(l.Profile.ProtectedPaths, "*.pem"))
	for _, gone := range []string{".vscode", "~/.npmrc", ".github/workflows"} {
		assert.False(t, has(l.Profile.WriteProtectedPaths, gone) || has(l.Profile.ProtectedPaths, gone), gone)
	}
	src, ok := l.Provenance.Of("write_protected_paths", "deploy/prod")
	require.True(t, ok)
	assert.Equal(t, "/write_protected_paths/0", src.Pointer)

	// An untrusted project file may add, not remove.
	f.writeProject(`{"write_protected_paths": ["infra"], "unprotected_paths": [".envrc", "~/.aws"]}`)
	l = f.mustLoad()
	assert.True(t, has(l.Profile.WriteProtectedPaths, "infra"))
	assert.True(t, has(l.Profile.WriteProtectedPaths, ".envrc"))
	assert.True(t, has(l.Profile.ProtectedPaths, "~/.aws"))
	require.Len(t, l.Skipped, 2)
	assert.Contains(t, l.Skipped[0].Reason, `no longer write-protects ".envrc"`)

	// Trusted, it may.
	f.writeUser(`{"active_profile": "PROFILE-DEV", "trusted_projects": [` + f.trustEntry() + `]}`)
	l = f.mustLoad()
	assert.False(t, has(l.Profile.WriteProtectedPaths, ".envrc"))
	assert.False(t, has(l.Profile.ProtectedPaths, "~/.aws"))
	assert.Empty(t, l.Skipped)

	// The seeds are refused, in any spelling, from either file.
	for _, seed := range []string{".git", ".ENV", ".env.local", ".ssh/", "id_rsa", "id_ed25519"} {
		g := newFiles(t)
		g.writeUser(`{"unprotected_paths": ["` + seed + `"]}`)
		_, err := g.load()
		require.Error(t, err, seed)
		var le *loader.Error
		require.ErrorAs(t, err, &le, seed)
		assert.Equal(t, "/unprotected_paths/0", le.Pointer, seed)
		assert.True(t, strings.Contains(err.Error(), "cannot be unprotected"), "%s: %v", seed, err)
	}
	// Entries are checked like denied_paths.
	g := newFiles(t)
	g.writeUser(`{"write_protected_paths": ["a/../b"]}`)
	_, err := g.load()
	assert.ErrorContains(t, err, `".." is not allowed`)
}

// TestBuiltinsHoldBothClasses: every built-in profile protects both default lists, and a profile
// that drops a write-protected entry is less restrictive.
func TestBuiltinsHoldBothClasses(t *testing.T) {
	t.Parallel()
	for _, p := range profile.All() {
		assert.Subset(t, p.ProtectedPaths, profile.DefaultProtectedPaths(), p.Name)
		assert.Subset(t, p.WriteProtectedPaths, profile.DefaultWriteProtectedPaths(), p.Name)
		_, err := p.Compile()
		require.NoError(t, err, p.Name)
	}
	dev := profile.MustBuiltin(profile.ProfileDev)
	looser := dev.Clone()
	looser.WriteProtectedPaths = looser.WriteProtectedPaths[1:]
	ok, why := profile.AtLeastAsRestrictive(looser, dev)
	assert.False(t, ok)
	assert.Contains(t, why, `no longer write-protects ".git"`)
	moved := dev.Clone()
	moved.ProtectedPaths = append(moved.ProtectedPaths, ".git")
	moved.WriteProtectedPaths = moved.WriteProtectedPaths[1:]
	ok, _ = profile.AtLeastAsRestrictive(moved, dev)
	assert.True(t, ok, "moving .git to the secrets protects more")

	bad := dev.Clone()
	bad.WriteProtectedPaths = append(bad.WriteProtectedPaths, "{a,b}")
	_, err := bad.Compile()
	assert.ErrorContains(t, err, "write_protected_paths")
}
