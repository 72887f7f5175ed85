package checkpoint_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first checkpoint of a repository starts from the user's index; what
// it records must still be the bytes on disk, whatever the user's git
// stored: content converted by line-ending settings or by a filter (also
// one that keeps the size), and files changed right after "git add" with
// the same size.
func TestFirstCheckpointRecordsTheBytesOnDisk(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) map[string]string // files on disk after setup
	}{
		{"plain repository", func(t *testing.T, dir string) map[string]string {
			return map[string]string{"README.md": "# project\n", "src/main.go": "package main\n", "bin/run.sh": "#!/bin/sh\necho hi\n"}
		}},
		{"autocrlf: the blob has LF, the file CRLF", func(t *testing.T, dir string) map[string]string {
			runGit(t, dir, "config", "core.autocrlf", "true")
			writeFile(t, dir, "crlf.txt", "one\r\ntwo\r\n", 0o644)
			runGit(t, dir, "add", "crlf.txt")
			runGit(t, dir, "commit", "-q", "-m", "crlf")
			return map[string]string{"crlf.txt": "one\r\ntwo\r\n"}
		}},
		{"a size-keeping clean filter named in .gitattributes", func(t *testing.T, dir string) map[string]string {
			runGit(t, dir, "config", "filter.upper.clean", "tr a-z A-Z")
			runGit(t, dir, "config", "filter.upper.smudge", "cat")
			writeFile(t, dir, ".gitattributes", "*.txt filter=upper\n", 0o644)
			writeFile(t, dir, "lower.txt", "lower case\n", 0o644)
			runGit(t, dir, "add", ".gitattributes", "lower.txt")
			runGit(t, dir, "commit", "-q", "-m", "filter")
			return map[string]string{"lower.txt": "lower case\n"}
		}},
		{"a size-keeping filter named in info/attributes", func(t *testing.T, dir string) map[string]string {
			runGit(t, dir, "config", "filter.upper.clean", "tr a-z A-Z")
			runGit(t, dir, "config", "filter.upper.smudge", "cat")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), []byte("*.txt filter=upper\n"), 0o644))
			writeFile(t, dir, "lower.txt", "lower case\n", 0o644)
			runGit(t, dir, "add", "lower.txt")
			runGit(t, dir, "commit", "-q", "-m", "filter")
			return map[string]string{"lower.txt": "lower case\n"}
		}},
		{"changed right after add, same size (racily clean)", func(t *testing.T, dir string) map[string]string {
			writeFile(t, dir, "racy.txt", "aaaa\n", 0o644)
			runGit(t, dir, "add", "racy.txt")
			writeFile(t, dir, "racy.txt", "bbbb\n", 0o644)
			return map[string]string{"racy.txt": "bbbb\n"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := newRepo(t)
			want := tc.setup(t, dir)
			if !strings.Contains(tc.name, "racily") {
				// Files older than the index, as in any repository not
				// edited this second: the user's index entries are trusted
				// by their stat data, and the first checkpoint uses them.
				backdate(t, dir)
			}
			c := newCheckpointer(t, dir, nil)
			cp, err := c.Create(ctx, "first")
			require.NoError(t, err)
			for rel, content := range want {
				got := runGit(t, dir, "cat-file", "blob", cp.Commit+":"+rel)
				assert.Equal(t, content, got, "%s as recorded", rel)
			}
			// And a restore puts those bytes back.
			for rel := range want {
				writeFile(t, dir, rel, strings.Repeat("x", 3), 0o644)
			}
			_, err = c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			for rel, content := range want {
				b, err := os.ReadFile(filepath.Join(dir, rel))
				require.NoError(t, err)
				assert.Equal(t, content, string(b), "%s after the restore", rel)
			}
		})
	}
}

// The checkpoint the next snapshot builds on may be pruned and its
// objects collected by git gc; the next snapshot starts over and is
// complete.
func TestBaseCollected(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			w := newBoundaryWS(t, kind, nil)
			writeFile(t, w.dir, "a/one.txt", "one\n", 0o644)
			first, err := w.c.Create(ctx, "first")
			require.NoError(t, err)
			writeFile(t, w.dir, "a/only-in-base.txt", "collected with the base\n", 0o644)
			base, err := w.c.Create(ctx, "base")
			require.NoError(t, err)
			gitDir := w.gitDir(t)
			git := func(args ...string) {
				cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...)
				cmd.Env = gitEnv()
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
			}
			git("update-ref", "-d", "refs/reins/checkpoints/"+base.ID)
			git("-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "gc", "-q", "--prune=now")

			writeFile(t, w.dir, "a/one.txt", "one, edited\n", 0o644)
			cp, err := w.c.Create(ctx, "after gc")
			require.NoError(t, err)
			want := readTree(t, w.dir, nil)
			writeFile(t, w.dir, "a/only-in-base.txt", "changed\n", 0o644)
			writeFile(t, w.dir, "a/one.txt", "changed\n", 0o644)
			_, err = w.c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			assert.Equal(t, want, readTree(t, w.dir, nil))
			_, err = w.c.Rewind(ctx, first.ID)
			require.NoError(t, err)
			_, err = os.Stat(filepath.Join(w.dir, "a/only-in-base.txt"))
			assert.True(t, os.IsNotExist(err), "a file created after the first checkpoint is removed by a restore to it")
		})
	}
}
