package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestDefaultProtectedPaths reproduces the seed's default denied path boundaries (.git, .env,
// .env.local, .ssh, id_rsa, id_ed25519) in their two classes, matched on path components: a file
// merely named like one is fine. Secrets are neither read nor written; write-protected paths
// (.git, reins' own configuration, shell rc files, ...) are read but never written.
func TestDefaultProtectedPaths(t *testing.T) {
	t.Parallel()
	assert.Subset(t, profile.DefaultProtectedPaths(), []string{".env", ".env.local", ".ssh", "id_rsa", "id_ed25519", ".env.*", "~/.aws"})
	assert.Subset(t, profile.DefaultWriteProtectedPaths(), []string{".git", ".reins", ".bashrc", ".envrc", ".mcp.json", ".vscode", ".claude"})
	const (
		none = iota
		writes
		all
	)
	for _, tc := range []struct {
		target    string
		protected int
	}{
		{".git", writes},
		{".git/config", writes},
		{"sub/.git/config", writes},
		{".GIT/config", writes}, // case-insensitive: safe on case-insensitive filesystems
		{".env", all},
		{"app/.env", all},
		{".env.local", all},
		{".env.production", all},
		{".ENV.Staging", all},
		{".ssh/authorized_keys", all},
		{"keys/id_rsa", all},
		{"id_ed25519", all},
		{".reins/project-profile.json", writes},
		{".envrc", writes},
		{".bashrc", writes},
		{".vscode/tasks.json", writes},
		{".github/workflows/ci.yml", writes},
		{".github/dependabot.yml", none},
		{"docs/git-notes.md", none},
		{".gitignore", none},
		{"env/.environment", none},
		{".envoy", none},
		{"id_rsa.pub", none},
		{"src/pkg/main.go", none},
	} {
		f := newFixture(t, builtin(profile.ModeAutonomous))
		for _, op := range []policy.Operation{policy.OpRead, policy.OpWrite, policy.OpDelete} {
			d := f.check(t, policy.Action{Tool: "fs", Operation: op, Targets: []string{tc.target}})
			denied := tc.protected == all || tc.protected == writes && op != policy.OpRead
			if denied {
				assert.Equal(t, policy.Deny, d.Verdict, "%s %s: %s", op, tc.target, d)
				assert.Equal(t, gate.LayerBoundary, d.Layer, "%s %s", op, tc.target)
				assert.Equal(t, "protected-path", d.RuleID, "%s %s", op, tc.target)
			} else {
				assert.NotEqual(t, gate.LayerBoundary, d.Layer, "%s %s: %s", op, tc.target, d)
			}
		}
	}
}

// TestSeedsCannotBeNarrowed: a profile that drops the seeds' names from its lists still has them
// protected, each in its class.
func TestSeedsCannotBeNarrowed(t *testing.T) {
	t.Parallel()
	p := builtin(profile.ApprovalYolo)
	p.ProtectedPaths, p.WriteProtectedPaths = nil, nil
	f := newFixture(t, p)
	for _, target := range []string{".env", ".env.local", ".ssh/config", "id_rsa", "k/id_ed25519"} {
		d := f.check(t, policy.Action{Operation: policy.OpRead, Targets: []string{target}})
		assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", target, d)
	}
	d := f.check(t, policy.Action{Operation: policy.OpWrite, Targets: []string{".git/hooks/pre-commit"}})
	assert.Equal(t, policy.Deny, d.Verdict, d.String())
	assert.Equal(t, gate.LayerBoundary, d.Layer)
}

// TestExtendedAndNarrowedLists: entries a profile adds are honoured in their class; an entry
// that cannot be honoured fails when the gate is built.
func TestExtendedAndNarrowedLists(t *testing.T) {
	t.Parallel()
	p := builtin(profile.ModeAutonomous)
	p.ProtectedPaths = append(p.ProtectedPaths, "secrets", "*.pem")
	p.WriteProtectedPaths = append(p.WriteProtectedPaths, "deploy/prod")
	p.WriteProtectedPaths = slices.DeleteFunc(p.WriteProtectedPaths, func(e string) bool { return e == ".vscode" })
	f := newFixture(t, p)
	for _, tc := range []struct {
		op     policy.Operation
		target string
		want   policy.Verdict
	}{
		{policy.OpRead, "secrets/db.json", policy.Deny},
		{policy.OpRead, "certs/server.PEM", policy.Deny},
		{policy.OpRead, "deploy/prod/values.yaml", policy.Allow},
		{policy.OpWrite, "deploy/prod/values.yaml", policy.Deny},
		{policy.OpWrite, "deploy/staging/values.yaml", policy.Allow},
		{policy.OpWrite, ".vscode/settings.json", policy.Allow},
	} {
		d := f.check(t, policy.Action{Operation: tc.op, Targets: []string{tc.target}})
		assert.Equal(t, tc.want, d.Verdict, "%s %s: %s", tc.op, tc.target, d)
	}
	for _, bad := range []string{"a/../b", "[ab]", "/etc/*", "**/x", "~root/x"} {
		q := builtin(profile.ModeAutonomous)
		q.WriteProtectedPaths = append(q.WriteProtectedPaths, bad)
		_, err := gate.New(q, &gate.Options{Workspace: []string{workspace(t)}})
		assert.Error(t, err, bad)
	}
}

// TestHomeEntriesAreExpanded: ~ and $HOME entries protect the user's credential stores; without
// a home directory they cannot be honoured and the gate is not built.
func TestHomeEntriesAreExpanded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	p := builtin(profile.ModeAutonomous)
	p.ProtectedPaths = append(p.ProtectedPaths, "$HOME/.private")
	ws := workspace(t)
	g, err := gate.New(p, &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	for _, target := range []string{".aws/credentials", ".netrc", ".config/gcloud/x.json", ".kube/config", ".docker/config.json", ".private/k"} {
		d, err := g.Check(context.Background(), policy.Action{Operation: policy.OpRead, Targets: []string{filepath.Join(home, target)}})
		require.NoError(t, err)
		assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", target, d)
		assert.Equal(t, gate.LayerBoundary, d.Layer, target)
	}
	if runtime.GOOS != "windows" {
		t.Setenv("HOME", "")
		_, err = gate.New(p, &gate.Options{Workspace: []string{ws}})
		assert.ErrorContains(t, err, "home directory", "a ~ entry without a home directory is an error, not dropped")
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
