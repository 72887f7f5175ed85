package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestDefaultProtectedPaths reproduces the seed's default denied path boundaries (.git, .env,
// .env.local, .ssh, id_rsa, id_ed25519) plus reins' own configuration, matched on path
// components: a file merely named like one is fine.
func TestDefaultProtectedPaths(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{".git", ".env", ".env.local", ".ssh", "id_rsa", "id_ed25519", ".reins"}, profile.DefaultProtectedPaths())
	for _, tc := range []struct {
		target    string
		protected bool
	}{
		{".git", true},
		{".git/config", true},
		{"sub/.git/config", true},
		{".GIT/config", true}, // case-insensitive: safe on case-insensitive filesystems
		{".env", true},
		{"app/.env", true},
		{".env.local", true},
		{".ssh/authorized_keys", true},
		{"keys/id_rsa", true},
		{"id_ed25519", true},
		{".reins/project-profile.json", true},
		{"docs/git-notes.md", false},
		{".gitignore", false},
		{".envrc", false},
		{"env/.environment", false},
		{"id_rsa.pub", false},
		{"src/pkg/main.go", false},
	} {
		f := newFixture(t, builtin(profile.ModeAutonomous))
		d := f.check(t, policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{tc.target}})
		if tc.protected {
			assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", tc.target, d)
			assert.Equal(t, gate.LayerBoundary, d.Layer, tc.target)
			assert.Equal(t, "protected-path", d.RuleID, tc.target)
		} else {
			assert.Equal(t, policy.Allow, d.Verdict, "%s: %s", tc.target, d)
		}
	}
}

func TestConfigDirIsAlwaysProtected(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg := filepath.Join(t.TempDir(), "reins")
	p := builtin(profile.ApprovalYolo)
	p.ProtectedPaths = nil // even a profile that protects nothing
	g, err := gate.New(p, &gate.Options{Workspace: []string{ws}, ConfigDir: cfg})
	require.NoError(t, err)
	d, err := g.Check(context.Background(), policy.Action{Operation: policy.OpWrite, Targets: []string{filepath.Join(cfg, "profile.json")}})
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, d.Verdict, d.String())
	assert.Equal(t, gate.LayerBoundary, d.Layer)
}

// TestSymlinkSafeConfinement: targets are resolved through symbolic links before any check.
func TestSymlinkSafeConfinement(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ModeAutonomous))
	outside := t.TempDir()
	must := func(err error) { require.NoError(t, err) }
	must(os.Symlink(outside, filepath.Join(f.ws, "out")))       // a link inside pointing outside
	must(os.Symlink(".git", filepath.Join(f.ws, "cfg")))        // a link to a protected directory
	must(os.Symlink("src/pkg", filepath.Join(f.ws, "pkglink"))) // a harmless link
	must(os.Symlink("loop2", filepath.Join(f.ws, "loop1")))     // a loop
	must(os.Symlink("loop1", filepath.Join(f.ws, "loop2")))
	must(os.Symlink("/etc/passwd", filepath.Join(f.ws, "passwd")))  // an absolute link out
	must(os.Symlink("../../..", filepath.Join(f.ws, "src/pkg/up"))) // .. after a link

	write := func(target string) gate.Decision {
		t.Helper()
		g, err := gate.New(builtin(profile.ModeAutonomous), &gate.Options{Workspace: []string{f.ws}})
		require.NoError(t, err)
		d, err := g.Check(context.Background(), policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{target}})
		require.NoError(t, err)
		return d
	}
	for _, tc := range []struct {
		target  string
		verdict policy.Verdict
		layer   gate.Layer
	}{
		{"out/new.txt", policy.Deny, gate.LayerHardStop},     // inside lexically, outside for real
		{"cfg/config", policy.Deny, gate.LayerBoundary},      // .git through a link
		{"pkglink/main.go", policy.Allow, gate.LayerMatrix},  // a link that stays inside
		{"passwd", policy.Deny, gate.LayerHardStop},          // /etc/passwd through an absolute link
		{"loop1/x", policy.Deny, gate.LayerBoundary},         // cannot be resolved
		{"src/pkg/up/x", policy.Deny, gate.LayerHardStop},    // ../../.. from src/pkg is outside
		{"src/../../x", policy.Deny, gate.LayerHardStop},     // plain .. out
		{"new/dir/file.txt", policy.Allow, gate.LayerMatrix}, // does not exist yet: lexical below
		{"new/../../x", policy.Deny, gate.LayerHardStop},
		{f.ws + "-evil/x", policy.Deny, gate.LayerHardStop},         // prefix confusion
		{f.ws + "/src/pkg/main.go", policy.Allow, gate.LayerMatrix}, // absolute inside
		{"src/./pkg//main.go", policy.Allow, gate.LayerMatrix},
		{"a\x00b", policy.Deny, gate.LayerBoundary},
		{"", policy.Deny, gate.LayerBoundary},
	} {
		d := write(tc.target)
		assert.Equal(t, tc.verdict, d.Verdict, "%q: %s", tc.target, d)
		assert.Equal(t, tc.layer, d.Layer, "%q: %s", tc.target, d)
	}
}

func TestRelativePatternsSeeResolvedPaths(t *testing.T) {
	t.Parallel()
	p := builtin(profile.ModeAutonomous).WithRules(policy.Rule{ID: "deny-docs", Priority: 1, Action: policy.Deny,
		Condition: policy.Condition{TargetPattern: "docs/**"}})
	f := newFixture(t, p)
	require.NoError(t, os.Symlink("docs", filepath.Join(f.ws, "manual")))
	d := f.check(t, policy.Action{Operation: policy.OpRead, Targets: []string{"manual/git-notes.md"}})
	assert.Equal(t, "deny-docs", d.RuleID, "the link resolves into docs/: %s", d)
}

func TestMultipleRootsAndTrustedPaths(t *testing.T) {
	t.Parallel()
	a, b, trusted := workspace(t), workspace(t), t.TempDir()
	p := builtin(profile.ModeAutonomous)
	p.TrustedPaths = []string{trusted, filepath.Join(t.TempDir(), "does-not-exist")}
	g, err := gate.New(p, &gate.Options{Workspace: []string{a, b}})
	require.NoError(t, err)
	for _, target := range []string{"src/pkg/main.go", filepath.Join(b, "README.md"), filepath.Join(trusted, "x.txt")} {
		d, err := g.Check(context.Background(), policy.Action{Operation: policy.OpWrite, Targets: []string{target}})
		require.NoError(t, err)
		assert.Equal(t, policy.Allow, d.Verdict, "%s: %s", target, d)
	}
	_, err = gate.New(p, &gate.Options{Workspace: []string{filepath.Join(a, "missing")}})
	assert.Error(t, err, "a workspace root must exist")
	_, err = gate.New(p, &gate.Options{Workspace: []string{filepath.Join(a, "README.md")}})
	assert.Error(t, err, "a workspace root must be a directory")
}
