package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Loose objects written by scoped snapshots are rolled into a pack once
// the estimate passes the limit, and stay readable.
func TestLooseObjectsArePacked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	c, err := New(ctx, dir, &Options{ShadowRoot: t.TempDir()})
	require.NoError(t, err)
	require.True(t, c.loose)
	var ids []string
	// Until the sample directory holds an object (each snapshot writes a
	// few; about one in 256 objects lands there).
	for i := 0; c.looseEstimate() == 0; i++ {
		require.Less(t, i, 2000, "no object in the sample directory")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte(fmt.Sprintf("edit %d\n", i)), 0o644))
		cp, err := c.CreateWith(ctx, CreateOptions{Label: "edit", Paths: []string{"a.txt"}})
		require.NoError(t, err)
		ids = append(ids, cp.ID)
	}
	gitDir := filepath.Join(c.private, "repo")
	count := func() (loose int) {
		out, err := exec.Command("git", "--git-dir="+gitDir, "count-objects").Output()
		require.NoError(t, err)
		_, err = fmt.Sscanf(string(out), "%d objects", &loose)
		require.NoError(t, err)
		return loose
	}
	require.NotZero(t, count())
	c.maybeRepack(ctx, 1)
	assert.Zero(t, count(), "every loose object is in a pack")
	assert.Zero(t, c.looseEstimate())
	// Every checkpoint still restores.
	require.NoError(t, c.Restore(ctx, ids[0]))
	b, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "edit 0\n", string(b))
	out, err := exec.Command("git", "--git-dir="+gitDir, "fsck", "--full", "--strict", "--no-dangling").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.False(t, strings.Contains(string(out), "error"), "%s", out)
}

// The package writes objects and refs itself only where they are plain
// files and nothing it does not know changes what they mean.
func TestLooseOK(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		reftable     bool
		want         bool
	}{
		{"plain", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n", false, true},
		{"sha256", "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n", false, true},
		{"worktree config", "[extensions]\n\tworktreeConfig = true\n", false, true},
		{"partial clone", "[extensions]\n\tpartialClone = origin\n", false, true},
		{"reftable config", "[extensions]\n\trefStorage = reftable\n", false, false},
		{"reftable directory", "[core]\n\tbare = true\n", true, false},
		{"compat object format", "[extensions]\n\tcompatObjectFormat = sha256\n", false, false},
		{"unknown extension", "[Extensions]\n\tsomethingNew = true\n", false, false},
		{"extension after a comment", "[extensions] # x\n; c\n\tfoo\n", false, false},
		{"other sections", "[remote \"origin\"]\n\turl = x\n[core]\n\tbare = false\n", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config"), []byte(tc.config), 0o644))
			if tc.reftable {
				require.NoError(t, os.Mkdir(filepath.Join(dir, "reftable"), 0o755))
			}
			assert.Equal(t, tc.want, looseOK(dir))
		})
	}
	assert.False(t, looseOK(t.TempDir()), "no config: left to git")
}
