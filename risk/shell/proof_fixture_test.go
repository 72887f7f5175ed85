//go:build linux

package shell_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fixture a proof runs a line in: a throwaway directory holding a workspace with files of
// the kinds the tables' programs read (text, CSV, JSON, YAML, Go, binary, archives, a git
// repository with one commit), a home directory, a private temporary directory and a sibling
// directory, with canary secrets planted in the workspace and the home directory. Every run
// sees the template made once per test through an overlay of its own, so that what one line
// writes cannot change what the next one sees.
//
//	root/ws        the workspace: the line's working directory and Options.Dir
//	root/home      HOME and Options.Home
//	root/tmp       TMPDIR and Options.TempDir
//	root/sibling   "../sibling/file", for lines that read beside the workspace

// proofCanaries are the planted secrets, relative to the fixture root. Each holds a line unique
// to its fixture; each has a name the default protection lists hold (internal/fspath), so the
// gate would refuse a line that names it.
var proofCanaries = []string{
	"ws/.env",
	"ws/config/.env.local",
	"ws/id_rsa",
	"home/.ssh/id_ed25519",
	"home/.ssh/id_rsa",
	"home/.aws/credentials",
	"home/.netrc",
	"home/.git-credentials",
	"home/.config/gh/hosts.yml",
}

// proofProbe is the value the generated lines give an option that takes one: a canary in the
// home directory, outside the workspace so that no claimed read of the workspace covers it. It
// is an executable script too, so that an option that runs its value is seen running it.
const proofProbe = "$HOME/.ssh/id_ed25519"

// proofTemplate is a fixture template: a directory to copy for each run.
type proofTemplate struct {
	dir    string
	hasGit bool
}

// newProofTemplate writes the template under dir (a test's temporary directory).
func newProofTemplate(tb testing.TB, dir string) *proofTemplate {
	tb.Helper()
	root := filepath.Join(dir, "template")
	text := "alpha 1\nbeta 2\ngamma 3\nTODO: delta 4\n"
	files := map[string]string{
		"ws/README.md":       "# fixture\n\nA workspace for the tracer proofs.\n",
		"ws/a.txt":           "apple\nbanana\ncherry\n",
		"ws/b.txt":           "apple\nblueberry\ncherry\n",
		"ws/data.txt":        "b 2\na 1\nc 3\na 1\n",
		"ws/data.csv":        "name,n\na,1\nb,2\n",
		"ws/file.txt":        text,
		"ws/in.txt":          text,
		"ws/input.txt":       text,
		"ws/big.txt":         strings.Repeat(text, 50),
		"ws/log.txt":         "started\nfinished\n",
		"ws/notes.md":        "- note\n",
		"ws/list":            "a.txt\x00b.txt\x00",
		"ws/names.txt":       "a.txt\nb.txt\n",
		"ws/package.json":    "{\"name\": \"fixture\", \"version\": \"1.0.0\", \"list\": [1, 2]}\n",
		"ws/config.yaml":     "name: fixture\nlist:\n  - 1\n  - 2\n",
		"ws/go.mod":          "module example.com/fixture\n\ngo 1.22\n",
		"ws/main.go":         "package main\n\nfunc main() {}\n",
		"ws/src/a.go":        "package src\n\n// TODO: a\nfunc A() int { return 1 }\n",
		"ws/src/b.go":        "package src\n\nfunc B() int { return 2 }\n",
		"ws/calc.bc":         "1+2\n",
		"ws/dump.hex":        "00000000: 6869 0a                                  hi.\n",
		"ws/sums.txt":        "",
		"ws/fix.diff":        "",
		"ws/.gitignore":      "*.log\n.env\n.env.*\nid_rsa\n",
		"ws/config/app.ini":  "[app]\nname=fixture\n",
		"home/.bash_history": "ls\n",
		"sibling/file":       "beside the workspace\n",
	}
	for rel, body := range files {
		writeProofFile(tb, root, rel, body, 0o644)
	}
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	writeProofFile(tb, root, "ws/a.bin", string(bin), 0o644)
	writeProofFile(tb, root, "ws/bin.dat", string(bin), 0o644)
	writeProofFile(tb, root, "ws/hook.sh", "#!/bin/sh\necho hook\n", 0o755)
	writeProofFile(tb, root, "ws/run.sh", "#!/bin/sh\necho run\n", 0o755)
	writeProofFile(tb, root, "ws/a.gz", gzipped(tb, "apple\n"), 0o644)
	writeProofFile(tb, root, "ws/pkg.tar", tarred(tb, false), 0o644)
	writeProofFile(tb, root, "ws/pkg.tar.gz", tarred(tb, true), 0o644)
	writeProofFile(tb, root, "ws/archive.zip", zipped(tb), 0o644)
	for _, d := range []string{"tmp", "ws/empty", "ws/bin"} {
		require.NoError(tb, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	// Canaries: executable scripts whose text is unique, so that a program that reads, runs or
	// copies one is seen doing so.
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	for _, c := range proofCanaries {
		writeProofFile(tb, root, c, fmt.Sprintf("#!/bin/sh\n# REINS-CANARY %s %s\necho canary\n", c, hex.EncodeToString(id)), 0o755)
	}
	require.NoError(tb, os.Chmod(filepath.Join(root, "home/.ssh"), 0o700))
	sums := ""
	for _, f := range []string{"a.txt", "b.txt"} {
		sums += fmt.Sprintf("%s  %s\n", strings.Repeat("0", 64), f)
	}
	writeProofFile(tb, root, "ws/sums.txt", sums, 0o644)

	t := &proofTemplate{dir: root}
	if git, err := exec.LookPath("git"); err == nil {
		// One commit, made with a home and configuration of its own (nothing of the user's).
		env := []string{"HOME=" + filepath.Join(root, "home"), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=proof",
			"GIT_AUTHOR_EMAIL=proof@example.invalid", "GIT_COMMITTER_NAME=proof", "GIT_COMMITTER_EMAIL=proof@example.invalid",
			"PATH=" + os.Getenv("PATH")}
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A", "."}, {"commit", "-q", "-m", "fixture"}, {"tag", "v1"}} {
			cmd := exec.Command(git, args...)
			cmd.Dir, cmd.Env = filepath.Join(root, "ws"), env
			out, err := cmd.CombinedOutput()
			require.NoError(tb, err, "git %v: %s", args, out)
		}
		t.hasGit = true
	}
	return t
}

func writeProofFile(tb testing.TB, root, rel, body string, mode os.FileMode) {
	tb.Helper()
	p := filepath.Join(root, rel)
	require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(tb, os.WriteFile(p, []byte(body), mode))
	require.NoError(tb, os.Chmod(p, mode))
}

func gzipped(tb testing.TB, s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(s))
	require.NoError(tb, err)
	require.NoError(tb, w.Close())
	return b.String()
}

func tarred(tb testing.TB, gz bool) string {
	var b bytes.Buffer
	var out io.Writer = &b
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&b)
		out = zw
	}
	w := tar.NewWriter(out)
	require.NoError(tb, w.WriteHeader(&tar.Header{Name: "member.txt", Mode: 0o644, Size: 6}))
	_, err := w.Write([]byte("member"))
	require.NoError(tb, err)
	require.NoError(tb, w.Close())
	if zw != nil {
		require.NoError(tb, zw.Close())
	}
	return b.String()
}

func zipped(tb testing.TB) string {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	f, err := w.Create("member.txt")
	require.NoError(tb, err)
	_, err = f.Write([]byte("member"))
	require.NoError(tb, err)
	require.NoError(tb, w.Close())
	return b.String()
}

// proofFixture is one run's fixture: the template seen through an overlay whose upper layer is
// the run's own directory (the server mounts it, see proof_run_test.go).
type proofFixture struct {
	run                        string // the run's directory: upper, work, fx and trace in it
	root, ws, home, tmp, trace string
}

// reserveFixture makes a new run directory under parent (symbolic links resolved) with the
// fixture's mount point, the overlay's upper and work directories and strace's output directory:
// the fixture's paths are known before anything runs, so that a line is analysed against them.
func reserveFixture(parent string) (*proofFixture, error) {
	dir, err := os.MkdirTemp(parent, "run")
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	for _, d := range []string{"fx", "upper", "work", "trace"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	root := filepath.Join(dir, "fx")
	return &proofFixture{run: dir, root: root, ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"),
		tmp: filepath.Join(root, "tmp"), trace: filepath.Join(dir, "trace")}, nil
}
