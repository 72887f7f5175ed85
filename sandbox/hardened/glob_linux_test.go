//go:build linux

package hardened_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

// TestHardenedGlobs (issue 22): the argument check lets a script's glob
// through when what it matches of the denied paths is masked by the
// run, and the run then shows no secret; a glob that reaches what the
// kernel leaves readable (.git) is still refused.
func TestHardenedGlobs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	for _, d := range []string{".git", "secrets", "src"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
	}
	for name, content := range map[string]string{
		".env": "TOKEN=" + secret, "secrets/key": secret, ".git/config": "[remote]\n\turl = https://" + secret + "@example.com\n",
		"src/x.go": "package x\n", "a.txt": "a\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	require.NoError(t, os.Symlink(".env", filepath.Join(root, "envlink")))
	tests := []struct {
		script  string
		refused bool
	}{
		{"ls -d */", false},
		{"du -sh * | sort -h", false},
		{"cat *", false},                  // envlink reads the masked .env: empty
		{"cat */*; head -c 100 *", false}, // secrets/ is an empty directory there
		{"grep -r TOKEN *", false},
		{"cat .e*", true},
		{"shopt -s dotglob; cat */*", true}, // .git/config
		{"cat */config", true},              // bash passes it on as written
		{"eval true; cat */*", true},
	}
	for _, confine := range []*sandbox.Confine{nil, {}} {
		sb := newSandbox(t, root, func(c *hardened.Config) { c.Policy.DeniedPaths = []string{"secrets"} })
		for _, tt := range tests {
			res, err := runCmd(t, sb, sandbox.Command{Args: []string{"bash", "-c", tt.script}, Confine: confine})
			out := string(res.Stdout) + string(res.Stderr)
			assert.NotContains(t, out, secret, "%q showed a secret", tt.script)
			if tt.refused {
				require.ErrorIs(t, err, sandbox.ErrRefused, "%q (confine %v): %s", tt.script, confine, out)
				assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
				continue
			}
			require.NoError(t, err, "%q (confine %v): %s", tt.script, confine, out)
		}
	}
	// With BestEffort a run may go without the masks: no glob is
	// excused by them.
	sb := newSandbox(t, root, func(c *hardened.Config) {
		c.Policy.DeniedPaths = []string{"secrets"}
		c.BestEffort = true
	})
	_, err := runCmd(t, sb, sandbox.Command{Args: []string{"bash", "-c", "ls -d */"}})
	require.ErrorIs(t, err, sandbox.ErrRefused, "secrets/ is not known masked")
}
