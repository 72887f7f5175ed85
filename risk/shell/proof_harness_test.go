//go:build linux

package shell_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk/shell"
)

// Tests of the proof harness itself: the trace reader, and that each class of finding is
// reported when a line does more than a claim says.

func TestProofTraceLines(t *testing.T) {
	c, ok := parseTraceLine(`openat(AT_FDCWD</w/ws>, "src/a, b.go", O_RDONLY|O_CLOEXEC) = 3</w/ws/src/a, b.go>`)
	require.True(t, ok)
	assert.Equal(t, "openat", c.name)
	assert.Equal(t, []string{"AT_FDCWD</w/ws>", `"src/a, b.go"`, "O_RDONLY|O_CLOEXEC"}, c.args)
	assert.True(t, c.ok())
	c, ok = parseTraceLine(`execve("/usr/bin/x", ["x", "a)b"], 0x7ffc /* 2 vars */) = -1 ENOENT (No such file or directory)`)
	require.True(t, ok)
	assert.False(t, c.ok())
	assert.Len(t, c.args, 3)
	_, ok = parseTraceLine("+++ exited with 0 +++")
	assert.False(t, ok)
	_, ok = parseTraceLine("--- SIGCHLD {si_signo=SIGCHLD} ---")
	assert.False(t, ok)

	for in, want := range map[string]string{`"a\"b"`: `a"b`, `"\x41\102\n"`: "AB\n", `"x"...`: "x", `"\\"`: `\`} {
		got, ok := unquote(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok = unquote("NULL")
	assert.False(t, ok)
	assert.Equal(t, "/w", fdPath("AT_FDCWD</w>"))
	assert.Equal(t, "", fdPath("3<socket:[123]>"))
	assert.Equal(t, "AF_INET 127.0.0.1:80", sockAddr(`connect(3<socket:[1]>, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, 16) = -1`))
	assert.Equal(t, "AF_UNIX /run/nscd/socket", sockAddr(`connect(3<socket:[1]>, {sa_family=AF_UNIX, sun_path="/run/nscd/socket"}, 110) = -1`))
	assert.Equal(t, "AF_INET6 ::1:53", sockAddr(`sendto(3, "x", 1, 0, {sa_family=AF_INET6, sin6_port=htons(53), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 1`))
	assert.Equal(t, "", sockAddr(`sendto(3<socket:[1]>, "x", 1, MSG_NOSIGNAL, NULL, 0) = 1`))
}

// TestProofTraceFiles: a run is the tree under its shell (other processes' files are not
// read); the working directory follows chdir and passes to children at the clone; plain-path
// calls are joined to it; unfinished calls are put back together; a clone in another PID
// namespace is followed by strace's pid; a tree is complete only when strace finished every
// file.
func TestProofTraceFiles(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "tr")
	write := func(pid, text string) {
		require.NoError(t, os.WriteFile(prefix+"."+pid, []byte(strings.TrimLeft(text, "\n")), 0o644))
	}
	write("10", `
execve("/usr/bin/bash", ["bash", "-c", "x"], 0x1 /* 1 vars */) = 0
chdir("src") = 0
clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 11 in strace's PID NS */
mkdir("out", 0777) = -1 EROFS (Read-only file system)
+++ exited with 0 +++
`)
	write("11", `
openat(AT_FDCWD, "a.go", O_WRONLY|O_CREAT|O_TRUNC, 0666 <unfinished ...>
<... openat resumed>) = 3</w/src/a.go>
rename("a.go", "/w/b.go") = 0
execve("/usr/bin/cat", ["cat"], 0x1 /* 1 vars */) = 0
`)
	write("12", `
execve("/usr/bin/other", ["other"], 0x1 /* 1 vars */) = 0
+++ exited with 0 +++
`)
	_, err := collectTrace(prefix, 10, time.Now().Add(50*time.Millisecond))
	require.Error(t, err, "process 11's file is not finished")
	require.NoError(t, os.WriteFile(prefix+".11", append(must(os.ReadFile(prefix+".11")), "+++ killed by SIGKILL +++\n"...), 0o644))
	procs, err := collectTrace(prefix, 10, time.Now().Add(time.Second))
	require.NoError(t, err)
	require.Len(t, procs, 2)
	events := traceEvents(procs, 10, "/w")
	var got []string
	for _, e := range events {
		got = append(got, e.Syscall+" "+e.Path)
	}
	assert.Equal(t, []string{"execve /usr/bin/bash", "openat /w/src/a.go", "rename /w/src/a.go", "rename /w/b.go",
		"execve /usr/bin/cat", "mkdir /w/src/out"}, got)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestProofCatches runs lines that do more than a claim says, each held to the claim of a
// tamer line, and checks that the harness reports each class of finding: it is what shows the
// proofs can fail. TestProofCatchesAMisclassifiedRow shows the same end to end, through a
// table row made to lie.
func TestProofCatches(t *testing.T) {
	h := newProofHarness(t, t.TempDir())
	for _, c := range []struct {
		line, claimOf, class, detail string
	}{
		{"sort -o out.txt data.txt", "sort data.txt", classWrite, "$FIXTURE/ws/out.txt"},
		{"cat $HOME/.aws/credentials", "cat data.txt", classRead, "$FIXTURE/home/.aws/credentials"},
		{"cat .env", "cat data.txt", classRead, "$FIXTURE/ws/.env"},
		{"sh -c 'cat data.txt'", "cat data.txt", classExec, "sh"},
		{"./hook.sh", "cat data.txt", classExec, "$FIXTURE/ws/hook.sh"},
		{"echo > /dev/tcp/127.0.0.1/9", "echo", classNetwork, "AF_INET 127.0.0.1:9"},
		{"mkdir -p /tmp/reins-proof-never", "cat data.txt", classWrite, "/tmp/reins-proof-never"},
		{"rm data.txt", "cat data.txt", classWrite, "$FIXTURE/ws/data.txt"},
	} {
		t.Run(c.line, func(t *testing.T) {
			fx, err := reserveFixture(h.parent)
			require.NoError(t, err)
			defer os.RemoveAll(fx.run)
			claimed, _ := shell.Analyze(c.claimOf, &shell.Options{Dir: fx.ws, Home: fx.home, TempDir: fx.tmp})
			run := traceLine(context.Background(), h.tools, h.tpl, fx, c.line)
			require.NoError(t, run.Err)
			require.False(t, run.TimedOut, "%q did not finish in time: the machine is too loaded to prove anything", c.line)
			sec, err := newProofSecrets(fx)
			require.NoError(t, err)
			findings := newClaim(claimed, fx).check(fx, sec, run.Events)
			var got []string
			for _, f := range findings {
				if f.Class == c.class && strings.Contains(f.Detail, c.detail) {
					return
				}
				got = append(got, f.String())
			}
			t.Fatalf("%q held to the claim of %q: want a finding %q naming %s, got %v (output %q)", c.line, c.claimOf, c.class, c.detail, got, run.Output)
		})
	}
	// ... and that the claim of the line itself covers what it does.
	for _, line := range []string{"sort -o out.txt data.txt", "cat $HOME/.aws/credentials", "grep -r TODO .", "cd src && cat a.go"} {
		r := h.prove(context.Background(), proofRow{Entry: "self", Line: line})
		require.NoError(t, r.Err, line)
		require.Empty(t, r.Skipped, line)
		assert.Empty(t, r.Findings, "%q: %v (output %q)", line, r.Findings, r.Output)
	}
}
