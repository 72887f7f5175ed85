package checkpoint_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/internal/fspath"
)

// writeModes are the two ways a path-scoped snapshot is stored: loose
// objects written by the package, or git's fast-import (repositories whose
// refs or objects are not plain files).
var writeModes = []string{"loose", "git"}

// fsck runs "git fsck --full --strict" on the repository holding the
// checkpoints: every object the package wrote itself must be well formed
// and every ref must point at a valid commit.
func (w *boundaryWS) fsck(t *testing.T) {
	t.Helper()
	cmd := exec.Command("git", "--git-dir="+w.gitDir(t), "fsck", "--full", "--strict", "--no-dangling", "--no-progress")
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git fsck: %s", out)
	require.NotContains(t, string(out), "error", "git fsck: %s", out)
}

// covered reports whether the workspace-relative p is one of scope or
// below one of them.
func covered(p string, scope []string) bool {
	for _, s := range scope {
		if p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// A checkpoint scoped to a write set holding directories: a restore puts
// back exactly what the paths held (content, executable bit, links,
// absence), below a directory what a full snapshot covers there (ignored
// files, secrets and nested repositories are left alone, files the user's
// repository tracks although ignored are covered), and touches nothing
// outside the paths. Its undo checkpoint undoes it. Both ways of storing
// it give well-formed objects.
func TestSnapshotPathsDirectory(t *testing.T) {
	for _, kind := range kinds {
		for _, mode := range writeModes {
			t.Run(kind+"/"+mode, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				w := newBoundaryWS(t, kind, func(dir string) {
					writeFile(t, dir, "out/a.txt", "a\n", 0o644)
					writeFile(t, dir, "out/sub/b.sh", "#!/bin/sh\n", 0o755)
					require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "out/link")))
					writeFile(t, dir, "out/x.log", "ignored, never recorded\n", 0o644)
					writeFile(t, dir, "out/.env", "SCOPED-SECRET-1\n", 0o600)
					writeFile(t, dir, "out/nest/r/f.txt", "nested repository\n", 0o644)
					runGit(t, filepath.Join(dir, "out/nest/r"), "init", "-q")
					writeFile(t, dir, "other.txt", "outside the write set\n", 0o644)
					writeFile(t, dir, "build/keep", "ignored, outside\n", 0o644)
					require.NoError(t, os.Mkdir(filepath.Join(dir, "keep"), 0o755)) // empty, outside
					if kind == "git" {
						writeFile(t, dir, "out/tracked.log", "tracked although ignored\n", 0o644)
						runGit(t, dir, "add", "-f", "out/tracked.log")
					}
				})
				checkpoint.SetLoose(w.c, mode == "loose")
				var user userState
				if kind == "git" {
					user = readUserState(t, w.dir)
				}
				scope := []string{"out", "README.md", filepath.Join(w.dir, "gen/new.txt"), "keep/new.txt"}
				cp, err := w.c.CreateWith(ctx, checkpoint.CreateOptions{Label: "exec", CorrelationID: "d-1", Paths: scope})
				require.NoError(t, err)
				// gen does not exist: its absence is what is covered.
				require.Equal(t, []string{"README.md", "gen", "keep/new.txt", "out"}, cp.Paths)
				snap := readTree(t, w.dir, nil)

				writeFile(t, w.dir, "out/a.txt", "changed\n", 0o644)
				require.NoError(t, os.Chmod(filepath.Join(w.dir, "out/sub/b.sh"), 0o644))
				require.NoError(t, os.Remove(filepath.Join(w.dir, "out/link")))
				writeFile(t, w.dir, "out/new.txt", "created\n", 0o644)
				writeFile(t, w.dir, "out/newdir/c.txt", "created\n", 0o644)
				writeFile(t, w.dir, "out/x.log", "ignored, changed\n", 0o644)
				writeFile(t, w.dir, "out/y.log", "ignored, created\n", 0o644)
				writeFile(t, w.dir, "out/.env", "SCOPED-SECRET-2\n", 0o600)
				writeFile(t, w.dir, "out/nest/r/g.txt", "nested, created\n", 0o644)
				writeFile(t, w.dir, "gen/new.txt", "created\n", 0o644)
				writeFile(t, w.dir, "keep/new.txt", "created\n", 0o644)
				writeFile(t, w.dir, "gen/deep/z.txt", "created\n", 0o644)
				writeFile(t, w.dir, "README.md", "changed\n", 0o644)
				writeFile(t, w.dir, "other.txt", "changed outside\n", 0o644)
				writeFile(t, w.dir, "new2.txt", "created outside\n", 0o644)
				if kind == "git" {
					writeFile(t, w.dir, "out/tracked.log", "tracked, changed\n", 0o644)
				}
				before := readTree(t, w.dir, nil)

				res, err := w.c.Rewind(ctx, cp.ID)
				require.NoError(t, err)
				after := readTree(t, w.dir, nil)
				leftAlone := func(p string) bool {
					return strings.HasSuffix(p, ".log") && p != "out/tracked.log" || isTestSecret(p) || strings.HasPrefix(p, "out/nest/r/")
				}
				for _, tree := range []map[string]entry{snap, before, after} {
					for p := range tree {
						if covered(p, cp.Paths) && !leftAlone(p) {
							assert.Equal(t, fmt.Sprint(snap[p]), fmt.Sprint(after[p]), "covered %s is as snapshotted", p)
						} else {
							assert.Equal(t, fmt.Sprint(before[p]), fmt.Sprint(after[p]), "%s is outside the write set or left alone", p)
						}
					}
				}
				assert.NoDirExists(t, filepath.Join(w.dir, "gen"), "the covered absence, directories included")
				assert.NoDirExists(t, filepath.Join(w.dir, "out/newdir"))
				assert.NoFileExists(t, filepath.Join(w.dir, "keep/new.txt"))
				assert.DirExists(t, filepath.Join(w.dir, "keep"), "outside the paths: an empty directory stays")
				assert.Equal(t, cp.Paths, res.Undo.Paths, "the undo checkpoint has the same scope")

				// The restore is undone by its undo checkpoint, outside the
				// paths nothing moves either way.
				_, err = w.c.Rewind(ctx, res.Undo.ID)
				require.NoError(t, err)
				assert.Equal(t, before, readTree(t, w.dir, nil))
				if kind == "git" {
					assert.Equal(t, user, readUserState(t, w.dir))
				}
				w.requireNoSecret(t, "SCOPED-SECRET-1", "SCOPED-SECRET-2")
				w.fsck(t)
			})
		}
	}
}

// A scoped checkpoint is in the timeline like any other: listed with its
// paths, its commit's subject says it is scoped, Diff compares just its
// paths, and Prune deletes its ref.
func TestSnapshotPathsTimeline(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var events []checkpoint.Event
			w := newBoundaryWS(t, kind, nil)
			c, err := checkpoint.New(ctx, w.dir, &checkpoint.Options{ShadowRoot: w.shadow, OnEvent: func(ev checkpoint.Event) {
				events = append(events, ev)
			}})
			require.NoError(t, err)
			full, err := c.Snapshot(ctx, "full", "d-0")
			require.NoError(t, err)
			id, err := c.SnapshotPaths(ctx, "exec go build", "d-1", []string{"src"})
			require.NoError(t, err)
			require.Len(t, events, 2)
			assert.Equal(t, checkpoint.Created, events[1].Kind)
			assert.Equal(t, []string{"src"}, events[1].Checkpoint.Paths)

			writeFile(t, w.dir, "src/main.go", "package main // edited\n", 0o644)
			writeFile(t, w.dir, "src/gen.go", "package main // generated\n", 0o644)
			writeFile(t, w.dir, "README.md", "outside\n", 0o644)
			changes, err := c.Diff(ctx, id)
			require.NoError(t, err)
			assert.ElementsMatch(t, []checkpoint.Change{{Path: "src/gen.go", Kind: checkpoint.Added}, {Path: "src/main.go", Kind: checkpoint.Modified}}, changes)

			list, err := c.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 2)
			assert.Equal(t, id, list[0].ID)
			assert.True(t, list[0].Scoped())
			assert.Equal(t, []string{"src"}, list[0].Paths)
			assert.Equal(t, "exec go build", list[0].Label)
			assert.Equal(t, "d-1", list[0].CorrelationID)
			assert.Equal(t, full, list[1].ID)
			cmd := exec.Command("git", "--git-dir="+w.gitDir(t), "log", "-1", "--format=%s", checkpoint.RefPrefix+id)
			cmd.Env = gitEnv()
			out, err := cmd.Output()
			require.NoError(t, err)
			assert.Equal(t, "reins checkpoint: [scoped to src] exec go build\n", string(out))

			// git's own maintenance (refs packed, loose objects packed,
			// unreachable ones pruned) keeps the checkpoint whole.
			gc := exec.Command("git", "--git-dir="+w.gitDir(t), "gc", "-q", "--prune=now")
			gc.Env = gitEnv()
			out, err = gc.CombinedOutput()
			require.NoError(t, err, "git gc: %s", out)
			require.NoError(t, c.Restore(ctx, id))
			assert.Equal(t, "package main\n", w.read(t, "src/main.go"))
			assert.NoFileExists(t, filepath.Join(w.dir, "src/gen.go"))
			assert.Equal(t, "outside\n", w.read(t, "README.md"))
			list, err = c.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 3)

			pruned, err := c.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1})
			require.NoError(t, err)
			require.Len(t, pruned, 2)
			assert.Equal(t, full, pruned[1].ID)
			w.fsck(t)
		})
	}
}

// Issue 24: the event kinds' text is the audit log's record kind, so a
// host records an event with audit.Kind(ev.Kind.String()) and no table.
func TestEventKindsAreAuditKinds(t *testing.T) {
	for k, want := range map[checkpoint.EventKind]audit.Kind{
		checkpoint.Created:  audit.KindCheckpointCreated,
		checkpoint.Restored: audit.KindCheckpointRestored,
		checkpoint.Pruned:   audit.KindCheckpointPruned,
	} {
		assert.Equal(t, want, audit.Kind(k.String()))
		b, err := k.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, string(want), string(b))
		var back checkpoint.EventKind
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, k, back)
	}
	for _, bad := range []checkpoint.EventKind{0, 4, 255} {
		_, err := bad.MarshalText()
		assert.Error(t, err)
		assert.Equal(t, fmt.Sprintf("EventKind(%d)", bad), bad.String())
	}
	k := checkpoint.Created
	for _, bad := range []string{"", "CheckpointCreated", "checkpoint_Created", "created", "checkpoint_created "} {
		assert.Error(t, k.UnmarshalText([]byte(bad)), bad)
		assert.Equal(t, checkpoint.Created, k, "unchanged on error")
	}
}

// scanStore fails when any file under dir (the repository's git directory
// or the shadow root: objects, index files, the private state) holds one
// of the canaries as plain bytes.
func scanStore(t *testing.T, dir string, canaries []string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, c := range canaries {
			assert.False(t, bytes.Contains(b, []byte(c)), "%s holds canary %q", p, c)
		}
		return nil
	}))
}

// Issue 23, part 4: the checkpointer takes the protection entries the
// gate takes, in any form: several components, globs, absolute paths,
// paths under ~, of either class. A matching file never reaches any object
// or any file of the checkpoint store, through full and scoped snapshots,
// restores, rewinds, batch rollbacks, Diff and Prune, and every snapshot
// restores around it without deleting or changing it.
func TestProtectedEntriesNeverStored(t *testing.T) {
	for _, kind := range kinds {
		for _, mode := range writeModes {
			if kind == "plain" && mode == "git" {
				continue // fast-import stores the same way in both kinds
			}
			t.Run(kind+"/"+mode, func(t *testing.T) {
				ctx := context.Background()
				w := &boundaryWS{kind: kind, dir: newWorkspace(t, kind), shadow: t.TempDir()}
				t.Setenv("HOME", w.dir) // ~ entries reach into the workspace
				// The gate's lists: the defaults, the user's entries, the seeds.
				def := fspath.Defaults()
				prot := checkpoint.Protection(fspath.Lists{
					ReadWrite: append(def.ReadWrite, "secrets/prod.json", "*.key", filepath.Join(w.dir, "vault"), "~/home-secret/token.txt"),
					Write:     append(def.Write, "deploy/prod.tf"),
				}.WithSeeds())
				var err error
				w.c, err = checkpoint.New(ctx, w.dir, &checkpoint.Options{ShadowRoot: w.shadow, Protected: &prot})
				require.NoError(t, err)
				checkpoint.SetLoose(w.c, mode == "loose")
				gen := 0
				var canaries []string
				files := []string{"secrets/prod.json", "config/Secrets/PROD.json", "tls/server.key", "vault/a/b.txt", "home-secret/token.txt", "deploy/prod.tf"}
				plant := func() map[string]string {
					gen++
					m := map[string]string{}
					for _, f := range files {
						c := fmt.Sprintf("CANARY-%s-%d-%s", strings.ReplaceAll(f, "/", "_"), gen, t.Name())
						canaries = append(canaries, c)
						writeFile(t, w.dir, f, c+"\n", 0o600)
						m[f] = c + "\n"
					}
					return m
				}
				same := func(want map[string]string, when string) {
					t.Helper()
					for f, c := range want {
						assert.Equal(t, c, w.read(t, f), "%s: %s changed or deleted", when, f)
					}
				}
				writeFile(t, w.dir, "secrets/dev.json", "not protected\n", 0o644)
				want := plant()
				full, err := w.c.Create(ctx, "full")
				require.NoError(t, err)
				same(want, "full snapshot")
				scoped, err := w.c.CreateWith(ctx, checkpoint.CreateOptions{Paths: []string{"secrets", "vault", "tls", "home-secret/token.txt", "deploy/prod.tf", "README.md"}})
				require.NoError(t, err)
				assert.ElementsMatch(t, []string{"vault", "home-secret/token.txt", "deploy/prod.tf"}, scoped.Skipped)

				// The agent's work changes them: restores leave the new content.
				want = plant()
				writeFile(t, w.dir, "README.md", "edited\n", 0o644)
				_, err = w.c.Rewind(ctx, scoped.ID)
				require.NoError(t, err)
				same(want, "scoped restore")
				res, err := w.c.Rewind(ctx, full.ID)
				require.NoError(t, err)
				same(want, "full restore")
				_, err = w.c.Rewind(ctx, res.Undo.ID)
				require.NoError(t, err)
				same(want, "rewind of a restore")
				_, err = w.c.Batch(ctx, "agent op", func(context.Context) error {
					want = plant()
					writeFile(t, w.dir, "README.md", "half-done\n", 0o644)
					return errFailedOp
				})
				require.ErrorIs(t, err, errFailedOp)
				same(want, "batch rollback")
				_, err = w.c.BatchWith(ctx, checkpoint.CreateOptions{Paths: []string{"secrets", "tls/server.key"}}, func(context.Context) error {
					want = plant()
					return errFailedOp
				})
				require.ErrorIs(t, err, errFailedOp)
				same(want, "scoped batch rollback")
				// Created after the snapshot: still never deleted.
				require.NoError(t, os.RemoveAll(filepath.Join(w.dir, "vault")))
				want = plant()
				_, err = w.c.RewindN(ctx, 3)
				require.NoError(t, err)
				same(want, "RewindN")
				_, err = w.c.Diff(ctx, scoped.ID)
				require.NoError(t, err)
				_, err = w.c.Diff(ctx, full.ID)
				require.NoError(t, err)
				_, err = w.c.Prune(ctx, checkpoint.PruneOptions{KeepLast: 2})
				require.NoError(t, err)
				assert.Equal(t, "not protected\n", w.read(t, "secrets/dev.json"))

				w.requireNoSecret(t, canaries...)
				scanStore(t, w.gitDir(t), canaries)
				scanStore(t, w.shadow, canaries)
				w.fsck(t)
			})
		}
	}
}

// Scoped checkpoints in repositories of every shape: SHA-256 object ids,
// a linked worktree (refs in the common git directory, objects shared),
// a workspace that is a subdirectory of its repository. Each restores and
// leaves well-formed objects and refs.
func TestSnapshotPathsRepositoryShapes(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []string{"sha256", "worktree", "subdirectory"} {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			format := "sha1"
			if shape == "sha256" {
				format = "sha256"
			}
			runGit(t, repo, "init", "-q", "--object-format="+format, "-b", "main")
			writeFile(t, repo, "ws/src/main.go", "package main\n", 0o644)
			writeFile(t, repo, "ws/README.md", "# readme\n", 0o644)
			runGit(t, repo, "add", "-A")
			runGit(t, repo, "commit", "-q", "-m", "initial")
			ws, gitDir := repo, filepath.Join(repo, ".git")
			switch shape {
			case "worktree":
				ws = filepath.Join(t.TempDir(), "wt")
				runGit(t, repo, "worktree", "add", "-q", "-b", "second", ws)
			case "subdirectory":
				ws = filepath.Join(repo, "ws")
			}
			prefix := "ws/"
			if shape == "subdirectory" {
				prefix = ""
			}
			c := newCheckpointer(t, ws, nil)
			require.True(t, checkpoint.Loose(c))
			id, err := c.SnapshotPaths(ctx, "exec", "", []string{prefix + "src", filepath.Join(ws, prefix+"out/new.txt")})
			require.NoError(t, err)
			want := readTree(t, ws, nil)
			writeFile(t, ws, prefix+"src/main.go", "package main // edited\n", 0o755)
			writeFile(t, ws, prefix+"src/gen.go", "package main\n", 0o644)
			writeFile(t, ws, prefix+"out/new.txt", "created\n", 0o644)
			require.NoError(t, c.Restore(ctx, id))
			assert.Equal(t, want, readTree(t, ws, nil))
			assert.NoDirExists(t, filepath.Join(ws, prefix+"out"))
			list, err := c.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 2)
			if shape == "worktree" {
				main := newCheckpointer(t, repo, nil)
				other, err := main.List(ctx)
				require.NoError(t, err)
				assert.Empty(t, other, "the main worktree has checkpoints of its own")
			}
			cmd := exec.Command("git", "--git-dir="+gitDir, "fsck", "--full", "--strict", "--no-dangling", "--no-progress")
			cmd.Env = gitEnv()
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "git fsck: %s", out)
		})
	}
}
