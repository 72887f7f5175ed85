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

// TestHardenedUserWriteProtectedPaths: an entry of the policy's
// WriteProtectedPaths gets the treatment of the defaults' write-protected
// entries. The command reads it (it is not masked) and cannot write,
// truncate, rename, delete or replace it; a DeniedPaths entry next to it
// stays masked; an argument that names it is refused, as one that names
// .git is. The directories that hold it cannot be moved away either (a
// new config/ would hold a new deploy.yaml).
func TestHardenedUserWriteProtectedPaths(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	const deploy = "deploy-canary-9c41"
	files := map[string]string{
		"config/deploy.yaml": deploy,
		"secrets/prod.json":  secret,
		"config/other.yaml":  "other",
		// A default write-protected entry of two components, for the
		// same moves of its parent.
		".github/workflows/ci.yml": "ci",
	}
	for name, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(e.root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.root, name), []byte(body), 0o644))
	}
	sb := e.sandbox(t, func(c *hardened.Config) {
		c.Policy.DeniedPaths = []string{"secrets/prod.json"}
		c.Policy.WriteProtectedPaths = []string{"config/deploy.yaml"}
	})
	res, err := runCmd(t, sb, sandbox.Command{Args: sh(`
cat config/deploy.yaml; echo
cat secrets/prod.json; echo
echo pwned >> config/deploy.yaml
echo pwned > config/deploy.yaml
printf "" > config/deploy.yaml
truncate -s 0 config/deploy.yaml
chmod 777 config/deploy.yaml
mv config/deploy.yaml config/moved.yaml
rm -f config/deploy.yaml
echo pwned > config/new.yaml; mv -f config/new.yaml config/deploy.yaml
ln -f config/other.yaml config/deploy.yaml
ln -sf /etc/passwd config/deploy.yaml
mv config config-old; mkdir -p config; echo pwned > config/deploy.yaml
mv .github gh-old; mkdir -p .github/workflows; echo pwned > .github/workflows/ci.yml
rm -rf config .github
echo edited > config/other.yaml
true`)})
	require.NoError(t, err, "%s", res.Stderr)
	out := string(res.Stdout)
	assert.Contains(t, out, deploy, "a write-protected file stays readable: %s", res.Stderr)
	assert.NotContains(t, out, secret, "a denied file stays masked")
	assert.Equal(t, deploy, fileContent(t, filepath.Join(e.root, "config", "deploy.yaml")), "config/deploy.yaml was changed")
	fi, err := os.Lstat(filepath.Join(e.root, "config", "deploy.yaml"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "mode changed")
	assert.NoFileExists(t, filepath.Join(e.root, "config", "moved.yaml"))
	assert.NoDirExists(t, filepath.Join(e.root, "config-old"), "the directory that holds it was moved")
	assert.NoDirExists(t, filepath.Join(e.root, "gh-old"), "the directory that holds .github/workflows was moved")
	assert.Equal(t, "ci", fileContent(t, filepath.Join(e.root, ".github", "workflows", "ci.yml")))
	assert.Equal(t, secret, fileContent(t, filepath.Join(e.root, "secrets", "prod.json")))
	assert.Equal(t, "edited\n", fileContent(t, filepath.Join(e.root, "config", "other.yaml")), "the rest of the directory stays writable: %s", res.Stderr)

	// Named in an argument, it is refused, as .git is.
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "config", "other.yaml"), []byte("other"), 0o644))
	// A glob that matches it is refused too, through a link included: it
	// is not masked, so the glob would show what it holds.
	require.NoError(t, os.Symlink("config", filepath.Join(e.root, "cfg")))
	for _, args := range [][]string{{"cat", "config/deploy.yaml"}, {"sh", "-c", "echo x >> config/deploy.yaml"}, {"sh", "-c", "cat config/*"}, {"sh", "-c", "cat cf*/*"}} {
		res, err := runCmd(t, sb, sandbox.Command{Args: args})
		require.ErrorIs(t, err, sandbox.ErrRefused, "%q ran: %s", args, res.Stdout)
		require.NotEmpty(t, res.Violations)
		assert.Equal(t, sandbox.ViolationDeniedPath, res.Violations[0].Kind)
	}
	assert.Equal(t, deploy, fileContent(t, filepath.Join(e.root, "config", "deploy.yaml")))
}

// TestHardenedUserWriteProtectedCreated: a run that creates a path a
// WriteProtectedPaths entry names reports it, as for a new .envrc.
func TestHardenedUserWriteProtectedCreated(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	sb := e.sandbox(t, func(c *hardened.Config) { c.Policy.WriteProtectedPaths = []string{"config/deploy.yaml"} })
	res, err := runCmd(t, sb, sandbox.Command{Args: sh("mkdir -p config && echo planted > config/deploy.yaml")})
	require.NoError(t, err, "%s", res.Stderr)
	var created []string
	for _, v := range res.Violations {
		if v.Kind == sandbox.ViolationProtectedCreated {
			created = append(created, v.Subject)
		}
	}
	assert.Contains(t, created, filepath.Join(e.root, "config", "deploy.yaml"), "%v", res.Violations)
}

// TestHardenedWriteProtectedPathsValidated: a bad entry is an error naming
// the field and its index.
func TestHardenedWriteProtectedPathsValidated(t *testing.T) {
	t.Parallel()
	_, err := hardened.New(hardened.Config{Root: t.TempDir(), Policy: sandbox.FsNetPolicy{WriteProtectedPaths: []string{"ok", "a/../b"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FsNetPolicy.WriteProtectedPaths[1]")
}
