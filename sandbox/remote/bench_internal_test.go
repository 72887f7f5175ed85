package remote

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// BenchmarkRemoteScriptBuild measures building the framed script of a
// remote or vendor backend for a ten-argument command.
func BenchmarkRemoteScriptBuild(b *testing.B) {
	m, err := pathmatch.New(nil, nil)
	require.NoError(b, err)
	denied, err := deniedCasePatterns(m)
	require.NoError(b, err)
	s := remoteScript{nonce: "reins0123456789abcdef01234567", root: "/w", dir: "/w/pkg", denied: denied,
		clearEnv: true, keep: []string{"PATH", "HOME"}, set: []string{"GOFLAGS=-mod=mod"}, handshake: true,
		args: []string{"go", "test", "-run", "Test(A|B)$", "./...", "-count=1", "-v", "a b", "$HOME", "x\ny"}}
	for b.Loop() {
		if _, err := s.build(); err != nil {
			b.Fatal(err)
		}
	}
}
