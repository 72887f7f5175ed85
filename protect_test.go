package reins_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

// TestUserDeniedPathsNeverReachTheCheckpointStore (issue 23, part 4): the denied_paths a user
// adds to a profile (several components, a glob) are protected by the gate, and the same list,
// handed once to the checkpointer (Gate.Protections), keeps them out of every object and every
// file under the checkpoint store, through the run's own checkpoints, a rollback and a
// workspace that is and one that is not a git repository.
func TestUserDeniedPathsNeverReachTheCheckpointStore(t *testing.T) {
	testenv.RequireTool(t, "git", "checkpoints are git snapshots (apt-get install git)")
	for _, repo := range []bool{true, false} {
		name := "plain directory"
		if repo {
			name = "git repository"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ws := t.TempDir()
			if repo {
				ws = gitWorkspace(t)
			}
			secrets := map[string]string{
				"secrets/prod.json":     "canary-prod-7b1f0e",
				"deploy/keys/tls.key":   "canary-key-43d2aa",
				"docs/notes/prod.json":  "canary-notes-no", // prod.json alone is not protected: stored
				"README.md":             "readme",
				"secrets/public.txt":    "canary-public-no",
				"config/service.secret": "canary-glob-9e0c1d",
			}
			for p, body := range secrets {
				require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(ws, p), []byte(body), 0o644))
			}
			p := profile.Autonomous.Profile()
			p.ProtectedPaths = append(p.ProtectedPaths, "secrets/prod.json", "deploy/keys", "config/*.secret")
			g, err := gate.New(p, &gate.Options{Workspace: []string{ws}})
			require.NoError(t, err)
			rw, w := g.Protections()
			shadow := t.TempDir()
			cp, err := checkpoint.New(ctx, ws, &checkpoint.Options{ShadowRoot: shadow, Protected: &checkpoint.Protection{ReadWrite: rw, Write: w}})
			require.NoError(t, err)
			local, err := sandbox.NewLocal(sandbox.LocalConfig{Root: ws})
			require.NoError(t, err)
			r, err := reins.New(ctx, p, &reins.Options{Workspace: []string{ws}, Audit: audit.Discard, Checkpointer: cp,
				Sandbox: local, TrustAnalysis: true, Notifier: reins.NotifierFunc(func(context.Context, reins.Notice) error { return nil })})
			require.NoError(t, err)
			defer r.Close()

			// The gate denies them, whatever the spelling.
			for _, target := range []string{"secrets/prod.json", "./secrets/../secrets/prod.json", "deploy/keys/tls.key", "config/service.secret"} {
				d, err := r.Check(ctx, policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{target}})
				require.NoError(t, err)
				assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", target, d)
			}
			// The run's checkpoints: an edit, then a command that fails and is rolled back.
			out, err := r.Do(ctx, policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"README.md"}},
				func(context.Context, gate.Decision) error {
					return os.WriteFile(filepath.Join(ws, "README.md"), []byte("edited"), 0o644)
				})
			require.NoError(t, err)
			require.NotEmpty(t, out.CheckpointID, "the edit was checkpointed")
			out, _, err = r.DoCommand(ctx, policy.Action{Tool: "bash", Operation: policy.OpShell,
				Command: "echo junk > extra.txt && false"}, sandbox.Command{})
			require.Error(t, err)
			require.True(t, out.RolledBack, "%s", out.Decision)
			for p, body := range secrets {
				if p == "README.md" {
					continue // the approved edit
				}
				b, err := os.ReadFile(filepath.Join(ws, p))
				require.NoError(t, err, "a rollback leaves %s in place", p)
				assert.Equal(t, body, string(b))
			}

			// Nothing under the checkpoint store holds a protected file: no object, no file.
			var gitDirs []string
			if repo {
				gitDirs = append(gitDirs, filepath.Join(ws, ".git"))
			}
			_ = filepath.WalkDir(shadow, func(p string, e fs.DirEntry, err error) error {
				if err == nil && e.IsDir() && filepath.Base(p) == "repo" {
					gitDirs = append(gitDirs, p)
				}
				return nil
			})
			require.NotEmpty(t, gitDirs)
			var everything bytes.Buffer
			for _, dir := range gitDirs {
				cmd := exec.Command("git", "--git-dir="+dir, "cat-file", "--batch-all-objects", "--batch")
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				objs, err := cmd.Output()
				require.NoError(t, err)
				everything.Write(objs)
			}
			for _, root := range append([]string{shadow}, gitDirs...) {
				require.NoError(t, filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
					if err != nil || !e.Type().IsRegular() {
						return err
					}
					b, err := os.ReadFile(p)
					if err == nil {
						everything.Write(b)
					}
					return nil
				}))
			}
			all := everything.String()
			assert.Contains(t, all, "canary-notes-no", "an unprotected file is stored (the scan sees the store)")
			for p, body := range secrets {
				if strings.HasSuffix(body, "-no") || body == "readme" {
					continue
				}
				assert.NotContains(t, all, body, "%s reached the checkpoint store", p)
			}
		})
	}
}
