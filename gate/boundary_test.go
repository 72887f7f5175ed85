package gate_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// TestDefaultProtectedPaths reproduces the seed's default denied path boundaries (.git, .env,
// .env.local, .ssh, id_rsa, id_ed25519) in their two classes, matched on path components: a file
// merely named like one is fine. Secrets are neither read nor written; write-protected paths
// (reins' own configuration, shell rc files, ...) are read but never written. .git is denied
// outright, as the seeds list it (issue 23): its config can hold tokens in remote URLs.
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
		{".git", all},
		{".git/config", all},
		{"sub/.git/config", all},
		{".GIT/config", all}, // case-insensitive: safe on case-insensitive filesystems
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
		f := newFixture(t, builtin(profile.PermissionAutonomous))
		for _, op := range []policy.Operation{policy.OpRead, policy.OpWrite, policy.OpDelete} {
			d := f.check(t, policy.Action{Tool: "fs", Operation: op, Targets: []string{tc.target}})
			denied := tc.protected == all || tc.protected == writes && op != policy.OpRead
			if denied {
				assert.Equal(t, policy.Deny, d.Verdict, "%s %s: %s", op, tc.target, d)
				assert.Equal(t, policy.LayerBoundary, d.Layer, "%s %s", op, tc.target)
				assert.Equal(t, gate.CheckProtectedPath, d.RuleID, "%s %s", op, tc.target)
			} else {
				assert.NotEqual(t, policy.LayerBoundary, d.Layer, "%s %s: %s", op, tc.target, d)
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
	assert.Equal(t, policy.Deny, d.Verdict, d)
	assert.Equal(t, policy.LayerBoundary, d.Layer)
}

// TestExtendedAndNarrowedLists: entries a profile adds are honoured in their class; an entry
// that cannot be honoured fails when the gate is built.
func TestExtendedAndNarrowedLists(t *testing.T) {
	t.Parallel()
	p := builtin(profile.PermissionAutonomous)
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
		q := builtin(profile.PermissionAutonomous)
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
	p := builtin(profile.PermissionAutonomous)
	p.ProtectedPaths = append(p.ProtectedPaths, "$HOME/.private")
	ws := workspace(t)
	g, err := gate.New(p, &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	for _, target := range []string{".aws/credentials", ".netrc", ".config/gcloud/x.json", ".kube/config", ".docker/config.json", ".private/k"} {
		d, err := decide(g, policy.Action{Operation: policy.OpRead, Targets: []string{filepath.Join(home, target)}})
		require.NoError(t, err)
		assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", target, d)
		assert.Equal(t, policy.LayerBoundary, d.Layer, target)
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
	d, err := decide(g, policy.Action{Operation: policy.OpWrite, Targets: []string{filepath.Join(cfg, "profile.json")}})
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, d.Verdict, d)
	assert.Equal(t, policy.LayerBoundary, d.Layer)
}

// TestSymlinkSafeConfinement: targets are resolved through symbolic links before any check.
func TestSymlinkSafeConfinement(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.PermissionAutonomous))
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
		g, err := gate.New(builtin(profile.PermissionAutonomous), &gate.Options{Workspace: []string{f.ws}})
		require.NoError(t, err)
		d, err := decide(g, policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{target}})
		require.NoError(t, err)
		return d
	}
	for _, tc := range []struct {
		target  string
		verdict policy.Verdict
		layer   policy.Layer
	}{
		{"out/new.txt", policy.Deny, policy.LayerHardStop},     // inside lexically, outside for real
		{"cfg/config", policy.Deny, policy.LayerBoundary},      // .git through a link
		{"pkglink/main.go", policy.Allow, policy.LayerMatrix},  // a link that stays inside
		{"passwd", policy.Deny, policy.LayerHardStop},          // /etc/passwd through an absolute link
		{"loop1/x", policy.Deny, policy.LayerBoundary},         // cannot be resolved
		{"src/pkg/up/x", policy.Deny, policy.LayerHardStop},    // ../../.. from src/pkg is outside
		{"src/../../x", policy.Deny, policy.LayerHardStop},     // plain .. out
		{"new/dir/file.txt", policy.Allow, policy.LayerMatrix}, // does not exist yet: lexical below
		{"new/../../x", policy.Deny, policy.LayerHardStop},
		{f.ws + "-evil/x", policy.Deny, policy.LayerHardStop},         // prefix confusion
		{f.ws + "/src/pkg/main.go", policy.Allow, policy.LayerMatrix}, // absolute inside
		{"src/./pkg//main.go", policy.Allow, policy.LayerMatrix},
		{"a\x00b", policy.Deny, policy.LayerBoundary},
		{"", policy.Deny, policy.LayerBoundary},
	} {
		d := write(tc.target)
		assert.Equal(t, tc.verdict, d.Verdict, "%q: %s", tc.target, d)
		assert.Equal(t, tc.layer, d.Layer, "%q: %s", tc.target, d)
	}
}

func TestRelativePatternsSeeResolvedPaths(t *testing.T) {
	t.Parallel()
	p := builtin(profile.PermissionAutonomous).WithRules(policy.Rule{ID: "deny-docs", Priority: 1, Action: policy.Deny,
		Condition: policy.Condition{TargetPattern: "docs/**"}})
	f := newFixture(t, p)
	require.NoError(t, os.Symlink("docs", filepath.Join(f.ws, "manual")))
	d := f.check(t, policy.Action{Operation: policy.OpRead, Targets: []string{"manual/git-notes.md"}})
	assert.Equal(t, "deny-docs", d.RuleID, "the link resolves into docs/: %s", d)
}

func TestMultipleRootsAndTrustedPaths(t *testing.T) {
	t.Parallel()
	a, b, trusted := workspace(t), workspace(t), t.TempDir()
	p := builtin(profile.PermissionAutonomous)
	p.TrustedPaths = []string{trusted, filepath.Join(t.TempDir(), "does-not-exist")}
	g, err := gate.New(p, &gate.Options{Workspace: []string{a, b}})
	require.NoError(t, err)
	for _, target := range []string{"src/pkg/main.go", filepath.Join(b, "README.md"), filepath.Join(trusted, "x.txt")} {
		d, err := decide(g, policy.Action{Operation: policy.OpWrite, Targets: []string{target}})
		require.NoError(t, err)
		assert.Equal(t, policy.Allow, d.Verdict, "%s: %s", target, d)
	}
	_, err = gate.New(p, &gate.Options{Workspace: []string{filepath.Join(a, "missing")}})
	assert.Error(t, err, "a workspace root must exist")
	_, err = gate.New(p, &gate.Options{Workspace: []string{filepath.Join(a, "README.md")}})
	assert.Error(t, err, "a workspace root must be a directory")
}

// escapeWorkspace is a workspace with the links of issue 12's gate escapes: link_out and esc lead
// outside, gitlink to .git, inlink to deep/dir; somefile is a file.
func escapeWorkspace(t *testing.T) (ws, outside string) {
	t.Helper()
	ws, outside = workspace(t), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "deep", "dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "somefile"), []byte("x"), 0o644))
	for name, target := range map[string]string{"link_out": outside, "esc": outside, "gitlink": ".git", "inlink": "deep/dir"} {
		require.NoError(t, os.Symlink(target, filepath.Join(ws, name)))
	}
	return ws, outside
}

// TestGateEscapes: each escape of issue 12 part 1 is refused, for reads and writes, declared or
// written in a command line, under the most autonomous profiles.
func TestGateEscapes(t *testing.T) {
	t.Parallel()
	ws, outside := escapeWorkspace(t)
	// A rule that names reads outside the workspace shows where the gate thinks a read lands.
	outsideRead := policy.Rule{ID: "deny-outside-reads", Priority: -1, Action: policy.Deny,
		Condition: policy.Condition{Risk: policy.MatchLevels(risk.ReadOnly), OutsideWorkspace: true}}
	for _, name := range []string{profile.ProfileDev, profile.ProfileFullAuto, profile.PermissionAutonomous, profile.ApprovalYolo} {
		g, err := gate.New(builtin(name).WithRules(outsideRead), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
		require.NoError(t, err)
		check := func(a policy.Action) gate.Decision {
			t.Helper()
			d, err := decide(g, a)
			require.NoError(t, err)
			return d
		}
		for _, tc := range []struct {
			target string
			layer  policy.Layer // for a write; "" means any denial
			rule   string
		}{
			{"nonexist/../link_out/pwned", policy.LayerHardStop, gate.CheckHardStopExternalWrite}, // outside, not inside
			{"nonexist/../gitlink/hooks/pre-commit", policy.LayerBoundary, gate.CheckProtectedPath},
			{"inlink/../esc/pwned", policy.LayerBoundary, gate.CheckAmbiguousPath},
			{"somefile/x/../../link_out/pwned", policy.LayerBoundary, gate.CheckAmbiguousPath},
			{filepath.Join(ws, "inlink") + "/../esc/pwned", policy.LayerBoundary, gate.CheckAmbiguousPath},
		} {
			w := check(policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{tc.target}})
			if name == profile.ApprovalYolo && tc.layer == policy.LayerHardStop {
				// yolo leaves writes outside the workspace to its rules, which allow them: as a
				// write outside, never as one inside.
				assert.NotEqual(t, "allow-workspace-writes", w.RuleID)
			} else {
				assert.Equal(t, policy.Deny, w.Verdict, "%s: write %s: %s", name, tc.target, w)
				assert.Equal(t, tc.rule, w.RuleID, "%s: write %s: %s", name, tc.target, w)
			}
			if strings.Contains(tc.target, "gitlink") {
				continue // .git is write-protected: reading it is up to the profile
			}
			r := check(policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{tc.target}})
			assert.Equal(t, policy.Deny, r.Verdict, "%s: read %s: %s", name, tc.target, r)
			if tc.rule == gate.CheckAmbiguousPath {
				assert.Contains(t, r.Reason, "ambiguous", "%s: %s", name, tc.target)
			}
		}
		// The command line of the issue: the mkdir has not run when the gate decides, and the
		// redirection lands in outside/.
		d := check(policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "mkdir -p nonexist && echo x > nonexist/../link_out/p"})
		if name != profile.ApprovalYolo {
			assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", name, d)
			assert.Equal(t, gate.CheckHardStopExternalWrite, d.RuleID, "%s: %s", name, d)
		}
		for _, line := range []string{"echo x > inlink/../esc/pwned", "cat somefile/x/../../link_out/pwned", "echo x > nonexist/../gitlink/hooks/pre-commit"} {
			d := check(policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line})
			assert.Equal(t, policy.Deny, d.Verdict, "%s: %s: %s", name, line, d)
			assert.Equal(t, policy.LayerBoundary, d.Layer, "%s: %s: %s", name, line, d)
		}
	}
	_, err := os.Stat(filepath.Join(outside, "p"))
	assert.True(t, os.IsNotExist(err), "nothing was written outside")
}

// TestShellPathsInBothClasses: the paths a command line reads and writes meet the same two
// classes as declared targets, and a working directory with ".." is resolved like a target.
func TestShellPathsInBothClasses(t *testing.T) {
	t.Parallel()
	ws, _ := escapeWorkspace(t)
	g, err := gate.New(builtin(profile.ProfileFullAuto), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	for _, tc := range []struct {
		line, workdir string
		boundary      bool
	}{
		{"cat .env", "", true},
		{"cat deploy/.env.staging", "", true},
		{"cat .git/config", "", true}, // the seeds deny .git: remote URLs can hold tokens (issue 23)
		{"echo x >> .bashrc", "", true},
		{"cp notes.md .vscode/settings.json", "", true},
		{"rm -rf .git", "", true},
		{"echo 'use nix' > .envrc", "", true},
		{"echo x > README.md", "", false},
		{"echo x > pwned", "inlink/..", true},          // kernel: deep/pwned, lexical: pwned
		{"echo x > esc/pwned", "inlink/..", true},      // kernel: deep/esc/pwned, lexical: outside
		{"echo x > pwned", "src/..", false},            // both readings agree
		{"echo x > hooks/pre-commit", "gitlink", true}, // .git through a link
	} {
		d, err := decide(g, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: tc.line, WorkDir: tc.workdir})
		require.NoError(t, err)
		if tc.boundary {
			assert.Equal(t, policy.Deny, d.Verdict, "%s (in %q): %s", tc.line, tc.workdir, d)
			assert.Equal(t, policy.LayerBoundary, d.Layer, "%s (in %q): %s", tc.line, tc.workdir, d)
		} else {
			assert.NotEqual(t, policy.LayerBoundary, d.Layer, "%s (in %q): %s", tc.line, tc.workdir, d)
		}
	}
}
