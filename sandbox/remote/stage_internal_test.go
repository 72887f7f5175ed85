//go:build unix

package remote

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

func TestStageWorkspace(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "proj")
	outside := t.TempDir()
	for _, p := range []string{".git/config", ".env", "src/main.go", "src/.ssh/id_ed25519", "secrets/prod.json", "secrets/dev.json"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(p), 0o640))
	}
	require.NoError(t, os.Symlink("../.env", filepath.Join(root, "src", "env-link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out-link")))
	require.NoError(t, os.Symlink("main.go", filepath.Join(root, "src", "ok-link")))
	m, err := pathmatch.New([]string{"secrets/prod.json"}, nil)
	require.NoError(t, err)
	dir, cleanup, err := stageWorkspace(root, m)
	require.NoError(t, err)
	assert.Equal(t, "proj", filepath.Base(dir))
	var got []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		got = append(got, rel)
		return nil
	}))
	sort.Strings(got)
	assert.Equal(t, []string{".", "secrets", "secrets/dev.json", "src", "src/main.go", "src/ok-link"}, got)
	fi, err := os.Stat(filepath.Join(dir, "src", "main.go"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	cleanup()
	assert.NoDirExists(t, filepath.Dir(dir))
}
