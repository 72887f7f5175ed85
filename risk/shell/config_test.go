package shell_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk/shell"
)

// TestConfigReported: a command whose classification holds only while configuration in its
// directory tree is absent or trusted says so, with the directory it looks from.
func TestConfigReported(t *testing.T) {
	for _, c := range []struct {
		line string
		want []shell.Config
	}{
		{"git status", []shell.Config{{Kind: shell.ConfigRepository, Dir: "/w"}}},
		{"git -C sub log", []shell.Config{{Kind: shell.ConfigRepository, Dir: "/w/sub"}}},
		{"cd /x && git diff", []shell.Config{{Kind: shell.ConfigRepository, Dir: "/x"}}},
		{`cd "$D" && git status`, []shell.Config{{Kind: shell.ConfigRepository, Dir: ""}}},
		{"cargo metadata --no-deps", []shell.Config{{Kind: shell.ConfigFiles, Dir: "/w", Up: true,
			Names: []string{".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain"}}}},
		{"cargo --version", []shell.Config{{Kind: shell.ConfigFiles, Dir: "/w", Up: true,
			Names: []string{".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain"}}}},
		{"ls -la", nil},
	} {
		an, err := shell.Analyze(c.line, &shell.Options{Dir: "/w"})
		require.NoError(t, err, c.line)
		var got []shell.Config
		for _, cmd := range an.Commands {
			got = append(got, cmd.Config...)
		}
		assert.Equal(t, c.want, got, c.line)
	}
}
