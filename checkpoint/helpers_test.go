package checkpoint_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

// helperEnv, set, makes the test binary the cross-process lock tests' second process.
const helperEnv = "REINS_CHECKPOINT_HELPER"

func TestMain(m *testing.M) {
	// Files git writes get 0666/0777 minus the umask; fix it so modes
	// can be compared exactly.
	setUmask()
	// TestHelperProcess is the cross-process lock tests' second process, not a test: it runs
	// only when they re-execute the binary, and is not even listed otherwise.
	if os.Getenv(helperEnv) == "" {
		skip := "^TestHelperProcess$"
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
			skip = f.Value.String() + "|" + skip
		}
		_ = flag.Set("test.skip", skip)
	}
	code := m.Run()
	cleanupBenchFixtures()
	os.Exit(code)
}

// gitEnv is a minimal, deterministic environment for the test's own git
// commands (the "user" of the repository).
func gitEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_AUTHOR_NAME=User", "GIT_AUTHOR_EMAIL=user@example.com",
		"GIT_COMMITTER_NAME=User", "GIT_COMMITTER_EMAIL=user@example.com",
		"GIT_AUTHOR_DATE=@1700000000 +0000", "GIT_COMMITTER_DATE=@1700000000 +0000",
		"LC_ALL=C",
	}
}

func runGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(tb, err, "git %v: %s", args, out)
	return string(out)
}

func writeFile(tb testing.TB, root, rel, content string, perm os.FileMode) {
	tb.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(tb, os.WriteFile(p, []byte(content), perm))
	require.NoError(tb, os.Chmod(p, perm))
}

// newRepo makes a git repository with one commit, a second branch and a
// stash entry, so that tests can check none of them move.
func newRepo(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	runGit(tb, dir, "init", "-q", "-b", "main")
	writeFile(tb, dir, "README.md", "# project\n", 0o644)
	writeFile(tb, dir, ".gitignore", "*.log\n/build/\n", 0o644)
	writeFile(tb, dir, "src/main.go", "package main\n", 0o644)
	writeFile(tb, dir, "bin/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	runGit(tb, dir, "add", "-A")
	runGit(tb, dir, "commit", "-q", "-m", "initial")
	runGit(tb, dir, "branch", "feature")
	writeFile(tb, dir, "README.md", "# stashed change\n", 0o644)
	runGit(tb, dir, "stash", "-q")
	return dir
}

// newPlainDir makes a directory that is not in any git repository.
func newPlainDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	writeFile(tb, dir, "README.md", "# plain\n", 0o644)
	writeFile(tb, dir, ".gitignore", "*.log\n/build/\n", 0o644)
	writeFile(tb, dir, "src/main.go", "package main\n", 0o644)
	return dir
}

func newCheckpointer(tb testing.TB, dir string, opts *checkpoint.Options) *checkpoint.Checkpointer {
	tb.Helper()
	var o checkpoint.Options
	if opts != nil {
		o = *opts
	}
	if o.ShadowRoot == "" {
		o.ShadowRoot = tb.TempDir()
	}
	c, err := checkpoint.New(context.Background(), dir, &o)
	require.NoError(tb, err)
	return c
}

// entry is what a snapshot must reproduce for one path.
type entry struct {
	Mode    fs.FileMode // type bits and permission bits
	Content string      // file content or link target
}

// readTree records every file and symlink under root (not .git, not the
// directories themselves: git records content, not empty directories).
func readTree(tb testing.TB, root string, skip func(rel string) bool) map[string]entry {
	tb.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if skip != nil && skip(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{Mode: info.Mode()}
		if info.Mode()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e.Content = t
		} else {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Content = string(b)
		}
		out[rel] = e
		return nil
	})
	require.NoError(tb, err)
	return out
}

// userState is everything of the user's repository a checkpoint must not
// move: HEAD, the index file, branches and the stash.
type userState struct {
	Head, HeadRef, IndexSum, Refs, Stash string
}

func readUserState(tb testing.TB, dir string) userState {
	tb.Helper()
	idx, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	require.NoError(tb, err)
	sum := sha256.Sum256(idx)
	return userState{
		Head:     runGit(tb, dir, "rev-parse", "HEAD"),
		HeadRef:  runGit(tb, dir, "symbolic-ref", "HEAD"),
		IndexSum: hex.EncodeToString(sum[:]),
		Refs:     runGit(tb, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/stash", "refs/tags"),
		Stash:    runGit(tb, dir, "stash", "list"),
	}
}

// fakeClock is an injectable clock that advances only when told.
type fakeClock struct{ t time.Time }

func (f *fakeClock) Now() time.Time          { return f.t }
func (f *fakeClock) Advance(d time.Duration) { f.t = f.t.Add(d) }

func isIgnoredByTestRules(rel string) bool {
	return strings.HasSuffix(rel, ".log") || strings.HasPrefix(rel, "build/")
}
