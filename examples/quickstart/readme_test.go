package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeCommands returns the commands of the README's "Try it" block, comments removed: the
// newcomer's set-up commands, which .ci/run extracts the same way and runs as written.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	defer f.Close()
	var cmds []string
	section, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			if block {
				t.Fatal("README.md: the Try it block is not closed")
			}
			section = line == "## Try it"
		case section && !block && strings.HasPrefix(line, "```sh"):
			block = true
		case block && strings.HasPrefix(line, "```"):
			return cmds
		case block:
			if i := strings.Index(line, "#"); i >= 0 {
				line = line[:i]
			}
			if line = strings.TrimSpace(line); line != "" {
				cmds = append(cmds, line)
			}
		}
	}
	require.NoError(t, sc.Err())
	t.Fatal("README.md has no ## Try it section with a ```sh block")
	return nil
}

// TestReadmeCommands pins the README's promise to a newcomer: exactly two commands, the demo and
// the test suite, so that the README, this package and CI cannot drift apart.
func TestReadmeCommands(t *testing.T) {
	assert.Equal(t, []string{"go run ./examples/quickstart", "go test ./..."}, readmeCommands(t))
}

// TestReadmeShowsTheOutput: the README shows the quickstart's real output, verbatim.
func TestReadmeShowsTheOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole quickstart (-short)")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	start := strings.Index(readme, "## What the quickstart shows")
	require.GreaterOrEqual(t, start, 0, "README.md has no quickstart output section")
	open := strings.Index(readme[start:], "```text\n")
	require.GreaterOrEqual(t, open, 0)
	body := readme[start+open+len("```text\n"):]
	end := strings.Index(body, "```")
	require.GreaterOrEqual(t, end, 0)

	var out strings.Builder
	require.NoError(t, run(context.Background(), t.TempDir(), &out))
	assert.Equal(t, body[:end], out.String(), "update README.md with the output of go run ./examples/quickstart")
}
