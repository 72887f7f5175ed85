package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/remote"
	"github.com/reins-go/reins/sandbox/sandboxtest"
)

// TestConformance runs the kit against the vendor backends. Their CLIs
// are not installed here, so the kit checks the honest 127, which is
// then the whole test, and says so in the log. ssh runs the whole kit in
// TestSSH, against a real sshd.
func TestConformance(t *testing.T) {
	backends := map[string]func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error){
		"modal": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return remote.NewModal(remote.ModalConfig{Root: root, Policy: p})
		},
		"daytona": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return remote.NewDaytona(remote.DaytonaConfig{Sandbox: "reins-conformance", RemoteDir: root, Policy: p})
		},
		"vercel-sandbox": func(root string, p sandbox.FsNetPolicy) (sandbox.Sandbox, error) {
			return remote.NewVercelSandbox(remote.VercelSandboxConfig{RemoteDir: root, Policy: p})
		},
	}
	for _, name := range []string{"modal", "daytona", "vercel-sandbox"} {
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
