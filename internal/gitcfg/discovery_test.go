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
	"github.com/reins-go/reins/internal/testenv"
)

// gitDirOf asks git which git directory it uses when run in dir with env (GIT_* variables): ""
// when it finds none or refuses to run.
func gitDirOf(t *testing.T, dir string, env map[string]string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--absolute-git-dir")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// TestDiscoveryAgreesWithGit builds the directory layouts where a lexical look at ".git" and
// git's own discovery part ways (an invalid .git directory, a directory that only looks bare, a
// gitdir: file, a HEAD that is a symbolic link, objects that are an executable file, GIT_DIR,
// GIT_CEILING_DIRECTORIES), and checks that Scan reads the configuration of the repository git
// itself uses.
func TestDiscoveryAgreesWithGit(t *testing.T) {
	testenv.RequireTool(t, "git", "the discovery is checked against git itself")
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	repo := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	git(t, repo, "init", "-q")
	mk := func(rel string) string {
		p := filepath.Join(repo, rel)
		require.NoError(t, os.MkdirAll(p, 0o755))
		return p
	}
	write := func(rel, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(repo, rel), []byte(data), 0o644))
	}

	// An empty .git directory: git passes it over and uses the repository above.
	mk("emptydotgit/.git")
	// A .git directory with a HEAD but no objects: not a git directory either.
	mk("halfdotgit/.git/refs")
	write("halfdotgit/.git/HEAD", "ref: refs/heads/main\n")
	// A directory that looks bare (HEAD, objects, refs) but whose HEAD git does not accept.
	mk("fakebare/objects")
	mk("fakebare/refs")
	write("fakebare/HEAD", "not a ref\n")
	// A real bare repository.
	bare := mk("vendor/bare")
	git(t, bare, "init", "-q", "--bare")
	// A bare-looking directory whose HEAD is a symbolic link into refs/.
	mk("linkbare/objects")
	mk("linkbare/refs")
	require.NoError(t, os.Symlink("refs/heads/main", filepath.Join(repo, "linkbare/HEAD")))
	// A bare-looking directory whose objects is an executable file (git only asks access(X_OK)).
	mk("filebare/refs")
	write("filebare/HEAD", "0123456789012345678901234567890123456789\n")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "filebare/objects"), []byte("x"), 0o755))
	// A gitdir: file pointing at another repository, and one git refuses.
	other := filepath.Join(root, "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	git(t, other, "init", "-q")
	mk("gitfile")
	write("gitfile/.git", "gitdir: ../../other/.git\n")
	mk("badgitfile")
	write("badgitfile/.git", "gitdir:../../other/.git\n")

	for _, c := range []struct {
		name, dir string
		env       map[string]string
	}{
		{"plain", repo, nil},
		{"subdirectory", mk("src/pkg"), nil},
		{"empty .git directory", filepath.Join(repo, "emptydotgit"), nil},
		{"half .git directory", filepath.Join(repo, "halfdotgit"), nil},
		{"looks bare", filepath.Join(repo, "fakebare"), nil},
		{"bare", bare, nil},
		{"bare, HEAD a symbolic link", filepath.Join(repo, "linkbare"), nil},
		{"bare, objects a file", filepath.Join(repo, "filebare"), nil},
		{"gitdir: file", filepath.Join(repo, "gitfile"), nil},
		{"gitdir: file git refuses", filepath.Join(repo, "badgitfile"), nil},
		{"GIT_DIR", filepath.Join(repo, "src"), map[string]string{"GIT_DIR": filepath.Join(other, ".git")}},
		{"GIT_CEILING_DIRECTORIES", filepath.Join(repo, "src", "pkg"), map[string]string{"GIT_CEILING_DIRECTORIES": repo}},
		{"GIT_CEILING_DIRECTORIES at the directory", repo, map[string]string{"GIT_CEILING_DIRECTORIES": repo}},
		{"GIT_CEILING_DIRECTORIES above", filepath.Join(repo, "src"), map[string]string{"GIT_CEILING_DIRECTORIES": root}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := gitDirOf(t, c.dir, c.env)
			r := gitcfg.ScanEnv(c.dir, "", func(k string) string { return c.env[k] }, nil)
			if want == "" {
				// git finds no repository or refuses to run: the scan finds none, or does not
				// trust what it found.
				assert.True(t, r.GitDir == "" || !r.Trusted(), "git uses none; the scan found %q (%v)", r.GitDir, r.Findings)
				return
			}
			assert.Equal(t, want, r.GitDir, "the repository git uses")
		})
	}
}

// TestScanReadsTheRepositoryGitUses: a configuration planted in the repository git discovers
// past an invalid .git directory is found, and a hook that a status may run is a finding.
func TestScanReadsTheRepositoryGitUses(t *testing.T) {
	repo := newRepo(t)
	sub := filepath.Join(repo, "sub")
	require.NoError(t, os.MkdirAll(filepath.Join(sub, ".git"), 0o755))
	git(t, repo, "config", "core.fsmonitor", "./x.sh")
	r := gitcfg.Scan(sub, "", nil)
	assert.Equal(t, filepath.Join(repo, ".git"), r.GitDir)
	assert.Equal(t, []string{"core.fsmonitor"}, keys(r))

	repo2 := newRepo(t)
	hook := filepath.Join(repo2, ".git", "hooks", "post-index-change")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\n"), 0o644))
	r = gitcfg.Scan(repo2, "", nil)
	assert.True(t, r.Trusted(), "a hook that is not executable does not run: %v", r.Findings)
	require.NoError(t, os.Chmod(hook, 0o755))
	assert.True(t, r.Changed(), "making a hook executable changes what the scan saw")
	r = gitcfg.Scan(repo2, "", nil)
	assert.False(t, r.Trusted())
}

// TestScanSubmodules: a submodule's configuration is read (status runs git in it); its
// core.worktree, which git writes when it absorbs the submodule, is not a finding.
func TestScanSubmodules(t *testing.T) {
	repo := newRepo(t)
	mod := filepath.Join(repo, ".git", "modules", "lib", "x")
	require.NoError(t, os.MkdirAll(mod, 0o755))
	git(t, mod, "init", "-q", "--bare")
	require.NoError(t, os.WriteFile(filepath.Join(mod, "config"),
		[]byte("[core]\n\tbare = false\n\tworktree = ../../../../lib/x\n"), 0o644))
	r := gitcfg.Scan(repo, "", nil)
	assert.True(t, r.Trusted(), "%v", r.Findings)
	require.NoError(t, os.WriteFile(filepath.Join(mod, "config"),
		[]byte("[core]\n\tworktree = ../../../../lib/x\n\tfsmonitor = ./evil\n"), 0o644))
	assert.True(t, r.Changed())
	r = gitcfg.Scan(repo, "", nil)
	assert.Equal(t, []string{"core.fsmonitor"}, keys(r))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "config"), []byte("[core]\n\tworktree = /etc\n"), 0o644))
	assert.Equal(t, []string{"core.worktree"}, keys(gitcfg.Scan(repo, "", nil)))
}

// TestScanDoesNotOpenFIFOs: a FIFO where a .git file, a HEAD or a configuration would be is not
// opened (opening it would block the gate).
func TestScanDoesNotOpenFIFOs(t *testing.T) {
	repo := newRepo(t)
	sub := filepath.Join(repo, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	if err := mkfifo(filepath.Join(sub, ".git")); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	r := gitcfg.Scan(sub, "", nil) // returns: a FIFO .git is passed over, as git passes it over
	assert.Equal(t, filepath.Join(repo, ".git"), r.GitDir)
	require.NoError(t, os.Remove(filepath.Join(repo, ".git", "config")))
	require.NoError(t, mkfifo(filepath.Join(repo, ".git", "config")))
	assert.False(t, gitcfg.Scan(repo, "", nil).Trusted())
}
