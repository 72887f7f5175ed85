package gate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("REINS_TEST_STRICT") == "1" {
			t.Fatalf("git is required: %v", err)
		}
		t.Skipf("git is not installed: %v", err)
	}
}

func runGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// gitWorkspace is a real repository (git init) in a temporary directory.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	needGit(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "pkg", "main.go"), []byte("package main\n"), 0o644))
	runGit(t, dir, "init", "-q")
	return dir
}

func shellCheck(t *testing.T, g *gate.Gate, line string) gate.Decision {
	t.Helper()
	d, err := decide(g, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line})
	require.NoError(t, err)
	return d
}

// TestRepositoryTrust: git in a repository whose own configuration runs programs is not
// auto-approved under PROFILE-DEV; in a clean one it is. The answer follows the files as they
// change, with one gate.
func TestRepositoryTrust(t *testing.T) {
	ws := gitWorkspace(t)
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	lines := []string{"git status", "git log --oneline -20"}
	// Found from a subdirectory too (these are not on DEV's allowlist, so only the risk shows).
	sub := []string{"cd src/pkg && git status", "git -C src/pkg status"}
	for _, l := range lines {
		d := shellCheck(t, g, l)
		require.Equal(t, policy.Allow, d.Verdict, "clean repository, %q: %s", l, d)
		assert.False(t, d.Risk.Has(risk.Exec), "%q", l)
	}
	for _, l := range sub {
		assert.False(t, shellCheck(t, g, l).Risk.Has(risk.Exec), "%q", l)
	}

	// A planted core.fsmonitor: git status runs it.
	runGit(t, ws, "config", "core.fsmonitor", "./fsmonitor.sh")
	for _, l := range append(lines, sub...) {
		d := shellCheck(t, g, l)
		assert.NotEqual(t, policy.Allow, d.Verdict, "core.fsmonitor planted, %q: %s", l, d)
		assert.True(t, d.Risk.Has(risk.Exec), "%q: %s", l, d)
	}
	ex, err := explain(g, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "git status"})
	require.NoError(t, err)
	assert.Contains(t, ex.String(), "core.fsmonitor")

	// Removed again: trusted again.
	runGit(t, ws, "config", "--unset", "core.fsmonitor")
	assert.Equal(t, policy.Allow, shellCheck(t, g, "git status").Verdict)

	// A pager in an included file.
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "extra.cfg"), []byte("[core]\n\tpager = less -R\n"), 0o644))
	runGit(t, ws, "config", "include.path", "extra.cfg")
	assert.NotEqual(t, policy.Allow, shellCheck(t, g, "git log --oneline -20").Verdict)
	runGit(t, ws, "config", "--unset", "include.path")
	assert.Equal(t, policy.Allow, shellCheck(t, g, "git log --oneline -20").Verdict)

	// The worktree configuration.
	runGit(t, ws, "config", "extensions.worktreeConfig", "true")
	runGit(t, ws, "config", "--worktree", "diff.png.textconv", "exiftool")
	assert.NotEqual(t, policy.Allow, shellCheck(t, g, "git status").Verdict)
}

// TestRepositoryTrustOtherRepository: a bare repository planted inside the workspace is the one
// git uses there.
func TestRepositoryTrustOtherRepository(t *testing.T) {
	ws := gitWorkspace(t)
	bare := filepath.Join(ws, "vendor", "b.git")
	require.NoError(t, os.MkdirAll(bare, 0o755))
	runGit(t, bare, "init", "-q", "--bare")
	runGit(t, bare, "config", "core.pager", "sh -c id")
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	assert.Equal(t, policy.Allow, shellCheck(t, g, "git status").Verdict)
	assert.NotEqual(t, policy.Allow, shellCheck(t, g, "cd vendor/b.git && git log").Verdict)
}

// TestRepeatedGitCheckDoesNotAllocate: the repository answer is cached; a repeated Check of a
// git command re-stats the configuration files without allocating (where stat is a raw system
// call).
func TestRepeatedGitCheckDoesNotAllocate(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("allocation-free stat is implemented for linux/amd64 and linux/arm64")
	}
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	ws := gitWorkspace(t)
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)

	a := policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "git status"}
	d, err := decide(g, a)
	require.NoError(t, err)
	require.Equal(t, policy.Allow, d.Verdict, d.String())
	allocs := testing.AllocsPerRun(100, func() { _, _ = decide(g, a) })
	assert.Zero(t, allocs)
}

// TestUnparsableLineIsDenied: a line that does not parse cannot run as written; the decision
// says what the parser said. A line too long to analyse is only opaque.
func TestUnparsableLineIsDenied(t *testing.T) {
	for _, name := range []string{profile.ProfileDev, profile.PermissionAutonomous, profile.PermissionSupervised} {
		f := newFixture(t, builtin(name))
		for _, line := range []string{"echo 'unterminated", "ls;;", "$(", "if true; then", "cat <<EOF\nx", "a | | b"} {
			d := f.check(t, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line})
			assert.Equal(t, policy.Deny, d.Verdict, "%s %q: %s", name, line, d)
			assert.Equal(t, gate.CheckUnparsableCommand, d.RuleID, "%s %q", name, line)
			assert.Contains(t, d.Reason, "does not parse", "%s %q", name, line)
		}
		d := f.check(t, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "echo 'unterminated"})
		assert.Contains(t, d.Reason, "without closing quote")
		long := "echo " + strings.Repeat("a ", 40<<10)
		d = f.check(t, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: long})
		assert.NotEqual(t, policy.Allow, d.Verdict, name)
		assert.NotEqual(t, gate.CheckUnparsableCommand, d.RuleID, name)
	}
}

// BenchmarkGitRepositoryTrust: a repeated `git status` Check (the cached repository answer,
// re-validated by stat) against `go test ./...` in the same gate (no repository check).
func BenchmarkGitRepositoryTrust(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	require.NoError(b, cmd.Run())
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{dir}, ConfigDir: filepath.Join(b.TempDir(), "reins")})
	require.NoError(b, err)

	for _, line := range []string{"go test ./...", "git status"} {
		a := policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line}
		b.Run(line, func(b *testing.B) {
			d, err := decide(g, a)
			require.NoError(b, err)
			require.Equal(b, policy.Allow, d.Verdict, d.String())
			b.ReportAllocs()
			for b.Loop() {
				_, _ = decide(g, a)
			}
		})
	}
}

// TestRepositoryTrustConcurrent: Checks from several goroutines while the configuration changes
// share the cache safely, and once the change is made every later Check sees it.
func TestRepositoryTrustConcurrent(t *testing.T) {
	ws := gitWorkspace(t)
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lines := []string{"git status", "git log --oneline -20", "cd src && git status", "cd src/pkg && git log"}
			for j := 0; j < 50; j++ {
				d, err := decide(g, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: lines[(i+j)%len(lines)]})
				assert.NoError(t, err)
				assert.NotEqual(t, policy.Deny, d.Verdict)
			}
		}(i)
	}
	runGit(t, ws, "config", "core.sshCommand", "ssh -o ProxyCommand=x")
	wg.Wait()
	for _, l := range []string{"git status", "git log --oneline -20"} {
		assert.NotEqual(t, policy.Allow, shellCheck(t, g, l).Verdict, l)
	}
}

// TestConfigFilesTrust: a program whose classification depends on configuration files it reads
// from the workspace (the analysis names them: shell.Command.Config, ConfigFiles) is decided as
// the analysis says while none exists, and is exec and never auto-approved once one appears
// (a committed .cargo/config.toml can name a compiler wrapper); the cached answer follows the
// files.
func TestConfigFilesTrust(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	g, err := gate.New(profile.Dev.Profile(), &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	line := "cargo tree --offline"
	before := shellCheck(t, g, line)
	require.NotEqual(t, gate.CheckOpaqueCommand, before.RuleID, "no configuration file: %s", before)
	require.False(t, before.Risk.Has(risk.Exec) && before.RuleID == gate.CheckOpaqueCommand)

	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".cargo"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".cargo", "config.toml"), []byte("[build]\nrustc-wrapper = \"./evil\"\n"), 0o644))
	after := shellCheck(t, g, line)
	assert.NotEqual(t, policy.Allow, after.Verdict, "a committed cargo configuration decides what cargo runs: %s", after)
	assert.True(t, after.Risk.Has(risk.Exec), "%s", after)
	exp := g.Explain(nil, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line})
	assert.Contains(t, exp.String(), "config.toml")

	require.NoError(t, os.Remove(filepath.Join(ws, ".cargo", "config.toml")))
	assert.Equal(t, before.Verdict, shellCheck(t, g, line).Verdict, "the answer follows the files")
}
