package shell_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// TestProofFoundClaims holds the claims the tracer proofs corrected (issue 22): each line's
// reads and writes, as the program was seen making them.
func TestProofFoundClaims(t *testing.T) {
	for _, tc := range []struct {
		line          string
		reads, writes []string
		exec          bool
		opaque        bool // touches files it does not name, and runs as exec
	}{
		// A compressor writes the outputs of every mode its words allow: the last of -d, -z
		// and -t wins in bzip2, xz and zstd.
		{line: "bunzip2 -t a.bz2", reads: []string{"a.bz2"}},
		{line: "bunzip2 -dt -zd --decompress data.txt", writes: []string{"data.txt", "data.txt.bz2", "data.txt.out"}},
		{line: "bzip2 -t -d a.bz2", writes: []string{"a.bz2", "a"}},
		{line: "bzip2 -d data.txt", writes: []string{"data.txt", "data.txt.out"}}, // no suffix: NAME.out
		{line: "unzstd -z data.txt", writes: []string{"data.txt", "data.txt.zst"}},
		{line: "xz -d -z data.txt", writes: []string{"data.txt", "data.txt.xz"}},
		{line: "lz4 -r data.txt", writes: []string{"data.txt", "data.txt.lz4"}},
		{line: "lz4cat --rm data.txt.lz4", reads: []string{"data.txt.lz4"}, writes: []string{"data.txt.lz4"}},
		{line: "gzip -c data.txt", reads: []string{"data.txt"}},
		// gunzip NAME decompresses NAME.gz into NAME and removes NAME.gz.
		{line: "gunzip a", writes: []string{"a", "a.gz", "a.z", "a-gz", "a-z", "a_z", "a.tgz", "a.taz"}},
		// git grep reads the files it searches.
		{line: "git grep TODO", reads: []string{"."}},
		{line: "git grep --no-index TODO", reads: []string{"."}},
		{line: "git grep TODO src", reads: []string{"src"}},
		{line: "git grep -e TODO HEAD -- src", reads: []string{"HEAD", "src"}},
		// git rev-parse --resolve-git-dir reads the file it is given.
		{line: "git rev-parse --resolve-git-dir /h/.ssh/id_rsa", reads: []string{"/h/.ssh/id_rsa"}},
		// xxd's options end at its first operand: what follows is the output file.
		{line: "xxd -include a.bin -i", reads: []string{"a.bin"}, writes: []string{"-i"}},
		{line: "xxd -i a.bin", reads: []string{"a.bin"}},
		// lsattr with no operand opens every file of the working directory.
		{line: "lsattr", reads: []string{"."}},
		{line: "lsattr -d src", reads: []string{"src"}},
		// fd -l runs ls on what it finds.
		{line: "fdfind --list-details a src", reads: []string{"src"}, exec: true},
		{line: "fd -la src", reads: []string{"src"}, exec: true},
		// "-" is a file for the programs that give it no meaning (FuzzProof: mv - 0 renamed it).
		{line: "mv - 0", writes: []string{"-", "0"}},
		{line: "rm -- -", writes: []string{"-"}},
		{line: "cp - x", reads: []string{"-"}, writes: []string{"x"}},
		{line: "cat -", reads: nil},
		// go env without names, or with a cgo name, runs the C compiler (FuzzProof: go env).
		{line: "go env", opaque: true},
		{line: "go env -json", opaque: true},
		{line: "go env GOGCCFLAGS", opaque: true},
		{line: "go env GOPATH GOROOT"},
		// Wrappers that start programs of their own, whatever the command (FuzzProof: a bare
		// xvfb-run started awk, cat, fmt, getopt and stty; with a command, Xvfb and xauth).
		{line: "xvfb-run", exec: true},
		{line: "xvfb-run ls", exec: true},
		{line: "dbus-run-session ls", exec: true},
		{line: "unbuffer ls", exec: true},
		{line: "valgrind -q ls", exec: true},
		{line: "chronic ls", reads: []string{"."}}, // runs the command and nothing else
		{line: "timeout 5 ls", reads: []string{"."}},
		// pipenv loads the project's .env on every start (FuzzProof: plain pipenv read .env).
		{line: "pipenv", opaque: true},
		{line: "pipenv --version", opaque: true},
		{line: "pipenv graph", opaque: true},
	} {
		t.Run(tc.line, func(t *testing.T) {
			an, err := shell.Analyze(tc.line, &shell.Options{Dir: "/w", Home: "/h"})
			require.NoError(t, err)
			if tc.exec {
				assert.True(t, an.ExecutesCode, "%s: runs a program", tc.line)
				return
			}
			if tc.opaque {
				assert.True(t, an.Opaque, "%s: opaque", tc.line)
				assert.True(t, an.Risk.Has(risk.Exec), "%s: exec", tc.line)
				return
			}
			require.False(t, an.Opaque, "%s: opaque", tc.line)
			assert.ElementsMatch(t, tc.reads, raws(an.Reads), "%s: reads", tc.line)
			assert.ElementsMatch(t, tc.writes, raws(an.Writes), "%s: writes", tc.line)
		})
	}
}

func raws(ps []shell.Path) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Raw)
	}
	return out
}

// TestGoListTrustsTheRepository: go list of a main package runs git to stamp its version, so
// its command carries the repository configuration the gate judges as it does git's.
func TestGoListTrustsTheRepository(t *testing.T) {
	an, err := shell.Analyze("go list", &shell.Options{Dir: "/w", Home: "/h"})
	require.NoError(t, err)
	require.Len(t, an.Commands, 1)
	var kinds []shell.ConfigKind
	for _, c := range an.Commands[0].Config {
		kinds = append(kinds, c.Kind)
	}
	assert.Contains(t, kinds, shell.ConfigRepository)
}
