package container_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/container"
	"github.com/reins-go/reins/sandbox/sandboxtest"
)

// TestConformance runs the kit against every backend of this package.
// Where the CLI or the daemon is missing (docker has no engine here;
// singularity and apptainer are not installed) the kit checks the honest
// 127, which is then the whole test, and says so in the log.
func TestConformance(t *testing.T) {
	backends := map[string]func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error){
		"docker": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return container.NewDocker(container.DockerConfig{Root: root, Image: "debian:stable-slim", Policy: p})
		},
		"singularity": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return container.NewSingularity(container.SingularityConfig{Root: root, Image: "docker://debian:stable-slim", Policy: p})
		},
		"apptainer": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return container.NewApptainer(container.SingularityConfig{Root: root, Image: "docker://debian:stable-slim", Policy: p})
		},
	}
	for _, name := range []string{"docker", "singularity", "apptainer"} {
		t.Run(name, func(t *testing.T) {
			sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
				root := t.TempDir()
				sb, err := backends[name](root, p)
				require.NoError(t, err)
				return sb, root
			})
		})
	}
}
