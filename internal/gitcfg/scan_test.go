package gitcfg_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/gitcfg"
)

// needGit skips a test without git, unless REINS_TEST_STRICT=1.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("REINS_TEST_STRICT") == "1" {
			t.Fatalf("git is required: %v", err)
		}
		t.Skipf("git is not installed: %v", err)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

func newRepo(t *testing.T) string {
	t.Helper()
	needGit(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	repo := filepath.Join(dir, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "src", "pkg"), 0o755))
	git(t, repo, "init", "-q")
	return repo
}

func keys(r *gitcfg.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Key)
	}
	return out
}

func TestScanCleanRepository(t *testing.T) {
	repo := newRepo(t)
	r := gitcfg.Scan(filepath.Join(repo, "src", "pkg"), "", nil)
	assert.True(t, r.Trusted(), "%v", r.Findings)
	assert.Empty(t, r.Reason())
	assert.Equal(t, filepath.Join(repo, ".git"), r.GitDir)
	assert.Equal(t, r.GitDir, r.CommonDir)
	assert.False(t, r.Changed())
	var paths []string
	for _, w := range r.Files {
		paths = append(paths, w.Path)
	}
	assert.Contains(t, paths, filepath.Join(repo, ".git", "config"))
	assert.Contains(t, paths, filepath.Join(repo, "src", "pkg", ".git"), "discovery records the paths it looked for")
}

func TestScanPlantedFsmonitor(t *testing.T) {
	repo := newRepo(t)
	r := gitcfg.Scan(repo, "", nil)
	require.True(t, r.Trusted())
	git(t, repo, "config", "core.fsmonitor", "./fsmon.sh")
	assert.True(t, r.Changed(), "writing .git/config changes its identity")
	r = gitcfg.Scan(repo, "", nil)
	assert.False(t, r.Trusted())
	assert.Equal(t, []string{"core.fsmonitor"}, keys(r))
	assert.Contains(t, r.Reason(), "core.fsmonitor")
}

func TestScanIncludes(t *testing.T) {
	repo := newRepo(t)
	inc := filepath.Join(repo, "..", "inc.cfg")
	require.NoError(t, os.WriteFile(inc, []byte("[core]\n\tpager = less -R\n"), 0o644))
	git(t, repo, "config", "include.path", "../../inc.cfg") // relative to .git/config's directory
	r := gitcfg.Scan(repo, "", nil)
	assert.Equal(t, []string{"core.pager"}, keys(r))

	// includeIf: the condition is assumed to hold.
	repo2 := newRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo2, "..", "inc2.cfg"), []byte("[diff \"x\"]\ntextconv = x\n"), 0o644))
	git(t, repo2, "config", "includeIf.onbranch:nope.path", "../../inc2.cfg")
	assert.Equal(t, []string{"diff.x.textconv"}, keys(gitcfg.Scan(repo2, "", nil)))

	// A missing include, or one under an unknown home, is not trusted.
	repo3 := newRepo(t)
	git(t, repo3, "config", "include.path", "../missing.cfg")
	r = gitcfg.Scan(repo3, "", nil)
	assert.False(t, r.Trusted())
	git(t, repo3, "config", "--unset", "include.path")
	git(t, repo3, "config", "include.path", "~/x.cfg")
	assert.False(t, gitcfg.Scan(repo3, "", nil).Trusted())
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "x.cfg"), []byte("[user]\nname = n\n"), 0o644))
	assert.True(t, gitcfg.Scan(repo3, home, nil).Trusted())

	// An include cycle stops at the depth limit.
	repo4 := newRepo(t)
	git(t, repo4, "config", "include.path", "config")
	r = gitcfg.Scan(repo4, "", nil)
	assert.False(t, r.Trusted())
}

func TestScanWorktreeConfig(t *testing.T) {
	repo := newRepo(t)
	git(t, repo, "config", "extensions.worktreeConfig", "true")
	git(t, repo, "config", "--worktree", "core.editor", "x")
	_, err := os.Stat(filepath.Join(repo, ".git", "config.worktree"))
	require.NoError(t, err)
	assert.Equal(t, []string{"core.editor"}, keys(gitcfg.Scan(repo, "", nil)))
}

func TestScanLinkedWorktree(t *testing.T) {
	repo := newRepo(t)
	git(t, repo, "-c", "user.name=n", "-c", "user.email=e@example.invalid", "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(filepath.Dir(repo), "wt")
	git(t, repo, "worktree", "add", "-q", wt)
	r := gitcfg.Scan(wt, "", nil)
	require.True(t, r.Trusted(), "%v", r.Findings)
	assert.Equal(t, filepath.Join(repo, ".git"), r.CommonDir)
	assert.True(t, strings.HasPrefix(r.GitDir, filepath.Join(repo, ".git", "worktrees")), r.GitDir)
	git(t, repo, "config", "filter.x.clean", "x")
	assert.True(t, r.Changed())
	assert.Equal(t, []string{"filter.x.clean"}, keys(gitcfg.Scan(wt, "", nil)))
}

func TestScanBareRepositoryInWorkspace(t *testing.T) {
	repo := newRepo(t)
	bare := filepath.Join(repo, "vendor", "b")
	require.NoError(t, os.MkdirAll(bare, 0o755))
	git(t, bare, "init", "-q", "--bare")
	git(t, bare, "config", "core.fsmonitor", "x")
	r := gitcfg.Scan(bare, "", nil)
	assert.Equal(t, bare, r.GitDir)
	assert.Equal(t, []string{"core.fsmonitor"}, keys(r))
}

func TestScanOddFiles(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)

	// No repository at all.
	r := gitcfg.Scan(dir, "", nil)
	if r.GitDir == "" {
		assert.True(t, r.Trusted())
	}

	// A .git file without gitdir:, and one pointing at a repository elsewhere.
	a := filepath.Join(dir, "a")
	require.NoError(t, os.MkdirAll(a, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(a, ".git"), []byte("nonsense\n"), 0o644))
	assert.False(t, gitcfg.Scan(a, "", nil).Trusted())
	other := filepath.Join(dir, "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "config"), []byte("[core]\n\tsshCommand = x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(a, ".git"), []byte("gitdir: ../other\n"), 0o644))
	r = gitcfg.Scan(a, "", nil)
	assert.Equal(t, other, r.GitDir)
	assert.Equal(t, []string{"core.sshcommand"}, keys(r))

	// A config git would reject, and one over the size bound.
	require.NoError(t, os.WriteFile(filepath.Join(other, "config"), []byte("[core\n"), 0o644))
	assert.False(t, gitcfg.Scan(a, "", nil).Trusted())
	require.NoError(t, os.WriteFile(filepath.Join(other, "config"), []byte("[user]\nname = "+strings.Repeat("x", 2000)+"\n"), 0o644))
	assert.True(t, gitcfg.Scan(a, "", nil).Trusted())
	assert.False(t, gitcfg.Scan(a, "", &gitcfg.Limits{MaxFileSize: 1000}).Trusted())

	// A relative directory is not a place.
	assert.False(t, gitcfg.Scan("rel", "", nil).Trusted())
}

// TestScanFiles: configuration files a program reads if they exist are findings in the directory
// or above it, and the report notices one appearing.
func TestScanFiles(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sub := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	names := []string{".cargo/config.toml", "rust-toolchain.toml"}
	r := gitcfg.ScanFiles(sub, names, true, nil)
	require.True(t, r.Trusted(), "%v", r.Findings)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", ".cargo"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", ".cargo", "config.toml"), []byte("[build]\nrustc-wrapper = \"./w\"\n"), 0o644))
	assert.True(t, r.Changed(), "a configuration appearing above the directory changes the answer")
	r = gitcfg.ScanFiles(sub, names, true, nil)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, filepath.Join(root, "a", ".cargo", "config.toml"), r.Findings[0].File)
	assert.True(t, gitcfg.ScanFiles(sub, names, false, nil).Trusted(), "without up only the directory itself is looked at")
	assert.False(t, gitcfg.ScanFiles("rel", names, true, nil).Trusted())
}
