package container

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// TestDockerWriteProtectedPaths: a WriteProtectedPaths entry is bound
// read-only, as the defaults' write-protected entries are, and a
// DeniedPaths entry is masked; a bad entry names its field.
func TestDockerWriteProtectedPaths(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"config/deploy.yaml", "secrets/prod.json"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	d, err := NewDocker(DockerConfig{Root: root, Image: "debian@sha256:0123", Policy: sandbox.FsNetPolicy{
		DeniedPaths: []string{"secrets/prod.json"}, WriteProtectedPaths: []string{"config/deploy.yaml"}}})
	require.NoError(t, err)
	masks, ro, err := pathmatch.FindProtected(d.match, []string{d.root})
	require.NoError(t, err)
	got, err := d.runArgs(sandbox.Command{Args: []string{"true"}}, d.root, "NAME", nil, nil, masks, ro, nil)
	require.NoError(t, err)
	deploy := filepath.Join(d.root, "config", "deploy.yaml")
	prod := filepath.Join(d.root, "secrets", "prod.json")
	assert.Contains(t, got, "--mount=type=bind,source="+deploy+",target=/workspace/config/deploy.yaml,readonly")
	assert.Contains(t, got, "--mount=type=bind,source=/dev/null,target=/workspace/secrets/prod.json,readonly")
	assert.NotContains(t, ro, prod)
	assert.NotContains(t, got, "--mount=type=bind,source=/dev/null,target=/workspace/config/deploy.yaml,readonly", "not masked")

	_, err = NewDocker(DockerConfig{Root: root, Image: "debian@sha256:0123", Policy: sandbox.FsNetPolicy{WriteProtectedPaths: []string{"a/../b"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FsNetPolicy.WriteProtectedPaths[0]")
}
