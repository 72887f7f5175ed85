package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

// boundaryWS is a workspace of either kind with a known shadow root, so
// that the object store behind its checkpoints can be inspected.
type boundaryWS struct {
	kind, dir, shadow string
	c                 *checkpoint.Checkpointer
}

func newBoundaryWS(t *testing.T, kind string, setup func(dir string)) *boundaryWS {
	t.Helper()
	w := &boundaryWS{kind: kind, dir: newWorkspace(t, kind), shadow: t.TempDir()}
	if setup != nil {
		setup(w.dir)
	}
	var err error
	w.c, err = checkpoint.New(context.Background(), w.dir, &checkpoint.Options{ShadowRoot: w.shadow})
	require.NoError(t, err)
	return w
}

// gitDir is the repository holding the checkpoints' objects and refs.
func (w *boundaryWS) gitDir(t *testing.T) string {
	t.Helper()
	if w.kind == "git" {
		return filepath.Join(w.dir, ".git")
	}
	m, err := filepath.Glob(filepath.Join(w.shadow, "*", "repo"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}

// allObjects returns the content of every object in the checkpoints'
// object store, reachable or not.
func (w *boundaryWS) allObjects(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command("git", "--git-dir="+w.gitDir(t), "cat-file", "--batch-all-objects", "--batch")
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	require.NoError(t, err)
	return out
}

// requireNoSecret fails when any object holds one of the secrets.
func (w *boundaryWS) requireNoSecret(t *testing.T, secrets ...string) {
	t.Helper()
	objs := w.allObjects(t)
	require.NotEmpty(t, objs)
	for _, s := range secrets {
		assert.False(t, bytes.Contains(objs, []byte(s)), "secret %q reached the object store", s)
	}
}

func (w *boundaryWS) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(rel)))
	require.NoError(t, err, rel)
	return string(b)
}

var errFailedOp = errors.New("the agent's operation failed")

// Issue 12, part 3: a rollback after the agent rewrote or deleted
// .gitignore, or removed a nested repository's .git, must not delete or
// store what the snapshot left out.
func TestRollbackKeepsWhatTheSnapshotDidNotCover(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		op    func(t *testing.T, dir string)
		keep  map[string]string // files that must survive the rollback, with content
	}{
		{"ignored .env, .gitignore rewritten",
			func(t *testing.T, dir string) {
				writeFile(t, dir, ".gitignore", "*.log\n/build/\n.env\n", 0o644)
				writeFile(t, dir, ".env", "API_KEY=sk-live-REWRITTEN-1\n", 0o600)
			},
			func(t *testing.T, dir string) { writeFile(t, dir, ".gitignore", "*.log\n", 0o644) },
			map[string]string{".env": "API_KEY=sk-live-REWRITTEN-1\n"}},
		{"ignored .env, .gitignore deleted",
			func(t *testing.T, dir string) {
				writeFile(t, dir, ".gitignore", "*.log\n/build/\n.env\n", 0o644)
				writeFile(t, dir, ".env", "API_KEY=sk-live-DELETED-2\n", 0o600)
			},
			func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, ".gitignore"))) },
			map[string]string{".env": "API_KEY=sk-live-DELETED-2\n"}},
		{"ignored build output, .gitignore deleted",
			func(t *testing.T, dir string) {
				writeFile(t, dir, "build/out.bin", "generated, never recorded\n", 0o644)
				writeFile(t, dir, "trace.log", "ignored log\n", 0o644)
			},
			func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, ".gitignore"))) },
			map[string]string{"build/out.bin": "generated, never recorded\n", "trace.log": "ignored log\n"}},
		{"ignored build output, later files there too",
			func(t *testing.T, dir string) { writeFile(t, dir, "build/out.bin", "old output\n", 0o644) },
			func(t *testing.T, dir string) {
				writeFile(t, dir, ".gitignore", "", 0o644)
				writeFile(t, dir, "build/out.bin", "rebuilt\n", 0o644)
				writeFile(t, dir, "build/new/x.o", "new output\n", 0o644)
			},
			map[string]string{"build/out.bin": "rebuilt\n", "build/new/x.o": "new output\n"}},
		{"nested repository's .git removed",
			func(t *testing.T, dir string) {
				writeFile(t, dir, "vendor/lib/lib.go", "package lib // nested\n", 0o644)
				runGit(t, filepath.Join(dir, "vendor/lib"), "init", "-q")
			},
			func(t *testing.T, dir string) {
				require.NoError(t, os.RemoveAll(filepath.Join(dir, "vendor/lib/.git")))
				writeFile(t, dir, "vendor/lib/extra.go", "package lib // added by the agent\n", 0o644)
			},
			map[string]string{"vendor/lib/lib.go": "package lib // nested\n", "vendor/lib/extra.go": "package lib // added by the agent\n"}},
		{"secret not ignored at all",
			func(t *testing.T, dir string) {
				writeFile(t, dir, "config/.ENV.production", "DB_PASSWORD=NOTIGNORED-3\n", 0o600)
			},
			func(t *testing.T, dir string) { writeFile(t, dir, ".env.local", "TOKEN=CREATED-LATER-4\n", 0o600) },
			map[string]string{"config/.ENV.production": "DB_PASSWORD=NOTIGNORED-3\n", ".env.local": "TOKEN=CREATED-LATER-4\n"}},
	}
	for _, kind := range kinds {
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				w := newBoundaryWS(t, kind, func(dir string) { tc.setup(t, dir) })
				before := readTree(t, w.dir, func(rel string) bool { _, ok := tc.keep[rel]; return ok })
				res, err := w.c.Batch(ctx, "agent op", func(context.Context) error {
					writeFile(t, w.dir, "README.md", "half-done\n", 0o644)
					tc.op(t, w.dir)
					return errFailedOp
				})
				require.ErrorIs(t, err, errFailedOp)
				require.True(t, res.RolledBack, "rollback: %v", err)
				for rel, content := range tc.keep {
					assert.Equal(t, content, w.read(t, rel), "%s must survive the rollback", rel)
				}
				assert.Equal(t, before, readTree(t, w.dir, func(rel string) bool { _, ok := tc.keep[rel]; return ok }),
					"everything the snapshot covered is as it was")
				var secrets []string
				for rel, content := range tc.keep {
					if strings.Contains(strings.ToLower(rel), ".env") {
						secrets = append(secrets, content)
					}
				}
				w.requireNoSecret(t, secrets...)
				// Undoing the rollback is possible and still touches nothing uncovered.
				_, err = w.c.Rewind(ctx, res.Rollback.Undo.ID)
				require.NoError(t, err)
				assert.Equal(t, "half-done\n", w.read(t, "README.md"))
				for rel, content := range tc.keep {
					assert.Equal(t, content, w.read(t, rel))
				}
			})
		}
	}
}

// Read-protected files never reach the object store: not in a full
// snapshot, not in the checkpoint a restore takes first, not in a
// path-scoped snapshot that names them, whatever their case.
func TestSecretsNeverStored(t *testing.T) {
	secrets := map[string]string{
		".env":                   "S1-dotenv-plain",
		".env.local":             "S2-dotenv-local",
		"app/.Env.Production":    "S3-dotenv-variant-mixed-case",
		".ssh/config":            "S4-ssh-config",
		"keys/id_rsa":            "S5-rsa-private-key",
		"keys/ID_ED25519":        "S6-ed25519-upper",
		"deploy/.ssh/authorized": "S7-nested-ssh-dir",
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newBoundaryWS(t, kind, func(dir string) {
				for rel, content := range secrets {
					writeFile(t, dir, rel, content+"\n", 0o600)
				}
				writeFile(t, dir, "keys/id_rsa.pub", "public key, an ordinary file\n", 0o644)
			})
			cp, err := w.c.Create(ctx, "with secrets")
			require.NoError(t, err)
			for rel, content := range secrets {
				writeFile(t, w.dir, rel, content+"-changed\n", 0o600)
			}
			writeFile(t, w.dir, "README.md", "changed\n", 0o644)
			res, err := w.c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			for rel, content := range secrets {
				assert.Equal(t, content+"-changed\n", w.read(t, rel), "a restore leaves %s alone", rel)
				assert.NotContains(t, res.Changes, checkpoint.Change{Path: rel, Kind: checkpoint.Modified})
			}
			scoped, err := w.c.CreateWith(ctx, checkpoint.CreateOptions{Paths: []string{".env", "keys/id_rsa", "README.md"}})
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{".env", "keys/id_rsa"}, scoped.Skipped)
			require.NoError(t, os.Remove(filepath.Join(w.dir, ".env")))
			require.NoError(t, w.c.Restore(ctx, scoped.ID))
			assert.NoFileExists(t, filepath.Join(w.dir, ".env"), "a scoped restore does not bring back what it never stored")
			assert.FileExists(t, filepath.Join(w.dir, "keys/id_rsa"))

			objs := w.allObjects(t)
			assert.Contains(t, string(objs), "public key, an ordinary file", "ordinary files are stored")
			for _, content := range secrets {
				assert.NotContains(t, string(objs), content)
			}
		})
	}
}

// Issue 12, part 4: a directory replaced by a symbolic link, to outside
// the workspace or inside it, is restored without following the link.
func TestRestoreDirectoryReplacedBySymlink(t *testing.T) {
	for _, kind := range kinds {
		for _, where := range []string{"outside", "inside", "nested-outside"} {
			t.Run(kind+"/"+where, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				w := newBoundaryWS(t, kind, func(dir string) {
					writeFile(t, dir, "src/lib/util.go", "package lib\n", 0o644)
					writeFile(t, dir, "docs/guide.md", "# guide\n", 0o644)
				})
				outside := t.TempDir()
				writeFile(t, outside, "main.go", "outside content, must not change\n", 0o644)
				writeFile(t, outside, "lib/util.go", "outside content, must not change\n", 0o644)
				outsideBefore := readTree(t, outside, nil)
				want := readTree(t, w.dir, isIgnoredByTestRules)
				cp, err := w.c.Create(ctx, "before")
				require.NoError(t, err)

				writeFile(t, w.dir, "README.md", "changed too\n", 0o644)
				switch where {
				case "outside":
					require.NoError(t, os.RemoveAll(filepath.Join(w.dir, "src")))
					require.NoError(t, os.Symlink(outside, filepath.Join(w.dir, "src")))
				case "inside":
					require.NoError(t, os.RemoveAll(filepath.Join(w.dir, "src")))
					require.NoError(t, os.Symlink("docs", filepath.Join(w.dir, "src")))
				case "nested-outside":
					require.NoError(t, os.RemoveAll(filepath.Join(w.dir, "src/lib")))
					require.NoError(t, os.Symlink(filepath.Join(outside, "lib"), filepath.Join(w.dir, "src/lib")))
				}
				docsBefore := readTree(t, filepath.Join(w.dir, "docs"), nil)

				_, err = w.c.Rewind(ctx, cp.ID)
				require.NoError(t, err)
				assert.Equal(t, want, readTree(t, w.dir, isIgnoredByTestRules))
				st, err := os.Lstat(filepath.Join(w.dir, "src"))
				require.NoError(t, err)
				assert.True(t, st.IsDir(), "src is a real directory again")
				assert.Equal(t, outsideBefore, readTree(t, outside, nil), "nothing outside the workspace changed")
				assert.Equal(t, docsBefore, readTree(t, filepath.Join(w.dir, "docs"), nil), "the link's inside target is untouched")
			})
		}
	}
}

// A restore that cannot be carried out changes nothing and says why with
// a *RestoreError; one that fails midway puts the prior state back.
func TestRestoreErrors(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind+"/conflict", func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newBoundaryWS(t, kind, nil)
			writeFile(t, w.dir, "out", "a file\n", 0o644)
			cp, err := w.c.Create(ctx, "file out")
			require.NoError(t, err)
			require.NoError(t, os.Remove(filepath.Join(w.dir, "out")))
			writeFile(t, w.dir, "out/.env", "SECRET-IN-THE-WAY\n", 0o600)
			writeFile(t, w.dir, "README.md", "edited\n", 0o644)
			before := readTree(t, w.dir, nil)
			_, err = w.c.Rewind(ctx, cp.ID)
			require.ErrorIs(t, err, checkpoint.ErrRestoreFailed)
			require.ErrorIs(t, err, checkpoint.ErrConflict)
			var re *checkpoint.RestoreError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, checkpoint.RestoreConflict, re.Failure)
			assert.Equal(t, cp.ID, re.ID)
			assert.NotEmpty(t, re.Undo)
			assert.Equal(t, "out", re.Path)
			assert.Contains(t, err.Error(), "nothing was changed")
			assert.Equal(t, before, readTree(t, w.dir, nil))
		})
		t.Run(kind+"/interrupted", func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newBoundaryWS(t, kind, nil)
			for _, f := range []string{"a.txt", "b.txt", "c.txt", "d/e.txt"} {
				writeFile(t, w.dir, f, "original "+f+"\n", 0o644)
			}
			cp, err := w.c.Create(ctx, "original")
			require.NoError(t, err)
			for _, f := range []string{"a.txt", "b.txt", "c.txt", "d/e.txt"} {
				writeFile(t, w.dir, f, "edited "+f+"\n", 0o644)
			}
			writeFile(t, w.dir, "new.txt", "created since\n", 0o644)
			before := readTree(t, w.dir, nil)
			n := 0
			errDisk := errors.New("disk full")
			checkpoint.SetRestoreHook(w.c, func(op, path string) error {
				if n++; n == 3 {
					return errDisk
				}
				return nil
			})
			_, err = w.c.Rewind(ctx, cp.ID)
			require.ErrorIs(t, err, checkpoint.ErrRestoreFailed)
			require.ErrorIs(t, err, errDisk)
			var re *checkpoint.RestoreError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, checkpoint.RestoreInterrupted, re.Failure)
			assert.True(t, re.RolledBack, "rollback: %v", re.RollbackErr)
			assert.Equal(t, before, readTree(t, w.dir, nil), "an interrupted restore is undone")
			checkpoint.SetRestoreHook(w.c, nil)
			_, err = w.c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			assert.Equal(t, "original a.txt\n", w.read(t, "a.txt"))
			assert.NoFileExists(t, filepath.Join(w.dir, "new.txt"))
		})
	}
}

// The record of what a checkpoint left out is read back from the object
// store by another Checkpointer (another process), and a v2 checkpoint
// whose record is missing fails closed.
func TestUncoveredRecordFromTheObjectStore(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newBoundaryWS(t, kind, func(dir string) {
				writeFile(t, dir, "build/out.bin", "never recorded\n", 0o644)
				writeFile(t, dir, ".env", "RECORD-TEST-SECRET\n", 0o600)
			})
			cp, err := w.c.Create(ctx, "before")
			require.NoError(t, err)
			require.NoError(t, os.Remove(filepath.Join(w.dir, ".gitignore")))
			writeFile(t, w.dir, "build/more.bin", "created later in the ignored directory\n", 0o644)
			writeFile(t, w.dir, "later.txt", "created later, covered\n", 0o644)

			other, err := checkpoint.New(ctx, w.dir, &checkpoint.Options{ShadowRoot: w.shadow})
			require.NoError(t, err)
			res, err := other.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			assert.Equal(t, "never recorded\n", w.read(t, "build/out.bin"))
			assert.Equal(t, "created later in the ignored directory\n", w.read(t, "build/more.bin"))
			assert.Equal(t, "RECORD-TEST-SECRET\n", w.read(t, ".env"))
			assert.NoFileExists(t, filepath.Join(w.dir, "later.txt"))
			assert.Equal(t, []checkpoint.Change{{Path: ".gitignore", Kind: checkpoint.Added}, {Path: "later.txt", Kind: checkpoint.Deleted}},
				sortedChanges(res.Changes))
			w.requireNoSecret(t, "RECORD-TEST-SECRET")
		})
	}
}

func sortedChanges(ch []checkpoint.Change) []checkpoint.Change {
	out := append([]checkpoint.Change(nil), ch...)
	slices.SortFunc(out, func(a, b checkpoint.Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Options.Protected takes the gate's lists as they are (the seeds are
// always added); an entry the gate would refuse is refused when the
// Checkpointer is built.
func TestOptionsProtected(t *testing.T) {
	ctx := context.Background()
	dir := newPlainDir(t)
	for _, bad := range []string{"", "[ab]", "~user/x", "a/../b", "/abs/*.pem"} {
		_, err := checkpoint.New(ctx, dir, &checkpoint.Options{ShadowRoot: t.TempDir(), Protected: &checkpoint.Protection{ReadWrite: []string{bad}}})
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "Options.Protected.ReadWrite[0]")
	}
	w := &boundaryWS{kind: "plain", dir: dir, shadow: t.TempDir()}
	var err error
	w.c, err = checkpoint.New(ctx, dir, &checkpoint.Options{ShadowRoot: w.shadow, Protected: &checkpoint.Protection{ReadWrite: []string{"*.PEM"}}})
	require.NoError(t, err)
	writeFile(t, dir, "certs/server.pem", "PEM-PRIVATE-KEY-CONTENT\n", 0o600)
	writeFile(t, dir, ".env", "DOTENV-STILL-PROTECTED\n", 0o600)
	cp, err := w.c.Create(ctx, "with a pem")
	require.NoError(t, err)
	writeFile(t, dir, "certs/server.pem", "PEM-CHANGED\n", 0o600)
	require.NoError(t, w.c.Restore(ctx, cp.ID))
	assert.Equal(t, "PEM-CHANGED\n", w.read(t, "certs/server.pem"))
	w.requireNoSecret(t, "PEM-PRIVATE-KEY-CONTENT", "PEM-CHANGED", "DOTENV-STILL-PROTECTED")
}

// The same boundaries hold for a workspace that is a subdirectory of a
// repository: records and restores use the workspace's paths.
func TestSubdirectoryWorkspaceBoundaries(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	ws := filepath.Join(repo, "src")
	writeFile(t, ws, ".gitignore", ".env\nout/\n", 0o644)
	writeFile(t, ws, ".env", "SUBDIR-SECRET\n", 0o600)
	writeFile(t, ws, "out/gen.bin", "ignored output\n", 0o644)
	writeFile(t, ws, "vendor/lib/lib.go", "package lib\n", 0o644)
	runGit(t, filepath.Join(ws, "vendor/lib"), "init", "-q")
	w := &boundaryWS{kind: "git", dir: repo, shadow: t.TempDir()}
	var err error
	w.c, err = checkpoint.New(ctx, ws, &checkpoint.Options{ShadowRoot: w.shadow})
	require.NoError(t, err)
	res, err := w.c.Batch(ctx, "agent op", func(context.Context) error {
		require.NoError(t, os.Remove(filepath.Join(ws, ".gitignore")))
		require.NoError(t, os.RemoveAll(filepath.Join(ws, "vendor/lib/.git")))
		require.NoError(t, os.RemoveAll(filepath.Join(ws, "out")))
		require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(ws, "out")))
		writeFile(t, ws, "main.go", "package broken\n", 0o644)
		return errFailedOp
	})
	require.ErrorIs(t, err, errFailedOp)
	require.True(t, res.RolledBack, "%v", err)
	assert.Equal(t, "SUBDIR-SECRET\n", w.read(t, "src/.env"))
	assert.Equal(t, "package lib\n", w.read(t, "src/vendor/lib/lib.go"))
	assert.Equal(t, "package main\n", w.read(t, "src/main.go"))
	assert.Equal(t, ".env\nout/\n", w.read(t, "src/.gitignore"))
	// The link that replaced the ignored directory is not covered by the
	// snapshot either way: it stays, and nothing was written through it.
	st, err := os.Lstat(filepath.Join(ws, "out"))
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeSymlink)
	w.requireNoSecret(t, "SUBDIR-SECRET")
}
