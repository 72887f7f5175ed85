package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/examples/hook/internal/hookwire"
	"github.com/reins-go/reins/internal/testenv"
)

// peerEnv makes the test binary a bare peer of a resident core (see TestMain): it hands the
// socket named by the variable one call (its standard input) and prints the answer.
const peerEnv = "REINS_HOOK_TEST_PEER"

func TestMain(m *testing.M) {
	if sock := os.Getenv(peerEnv); sock != "" {
		os.Exit(peer(sock))
	}
	os.Exit(m.Run())
}

func peer(sock string) int {
	addr, done, err := hookwire.SocketAddr(sock)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	c, err := net.Dial("unix", addr)
	done()
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer c.Close()
	if err := hookwire.WriteCall(c, []byte(`{}`)); err != nil {
		fmt.Println("no answer:", err) // the core hung up at once
		return 0
	}
	a, err := hookwire.ReadAnswer(c)
	if err != nil {
		fmt.Println("no answer:", err)
		return 0
	}
	fmt.Printf("answered %d\n", a.Code)
	return 0
}

// daemons returns the resident cores of a state directory: socket path to pid.
func daemons(t *testing.T, state string) map[string]int {
	t.Helper()
	out := map[string]int{}
	socks, err := filepath.Glob(filepath.Join(hookwire.DaemonDir(state), "*.sock"))
	require.NoError(t, err)
	for _, s := range socks {
		b, err := os.ReadFile(strings.TrimSuffix(s, ".sock") + ".pid")
		require.NoError(t, err, "a live socket has a pid file")
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		out[s] = pid
	}
	return out
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// The calls a resident core answers are answered exactly as a core started for each call
// answers them: the same decisions and exit statuses for allow, ask, deny, a latched halt, a
// malformed and a huge input, and the same audit records.
func TestDaemonAnswersAsAStartedCore(t *testing.T) {
	calls := func(w *world) []string {
		return []string{
			w.claude("PreToolUse", "Read", "t1", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil),
			w.claude("PreToolUse", "Bash", "t2", map[string]any{"command": "rm -rf src"}, nil),
			w.claude("PreToolUse", "Read", "t3", map[string]any{"file_path": filepath.Join(w.ws, ".env")}, nil),
			`{"session_id":`,
			`{"session_id":"s","x":"` + strings.Repeat("a", maxInput) + `"}`,
			w.claude("PreToolUse", "Bash", "t4", map[string]any{"command": "rm -rf ~"}, nil),
			w.claude("PreToolUse", "Read", "t5", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil),
		}
	}
	type seen struct {
		code     int
		decision string
		blocked  bool
	}
	answers := func(w *world, env []string) ([]seen, []audit.Kind) {
		var out []seen
		for _, c := range calls(w) {
			r := w.binary(w.ws, c, env, "claude", "-state", w.state)
			out = append(out, seen{r.code, r.decision(), r.stderr != ""})
		}
		var kinds []audit.Kind
		for _, rec := range records(t, w) {
			kinds = append(kinds, rec.Kind)
		}
		return out, kinds
	}
	resident := newWorld(t).dev()
	got, gotKinds := answers(resident, nil)
	require.Len(t, daemons(t, resident.state), 1, "one resident core answered the calls")
	started := newWorld(t).dev()
	want, wantKinds := answers(started, []string{"REINS_HOOK_DAEMON=off"})
	assert.Empty(t, daemons(t, started.state), "REINS_HOOK_DAEMON=off starts the core for each call")
	assert.Equal(t, want, got)
	assert.Equal(t, wantKinds, gotKinds)
	assert.Equal(t, []seen{{0, "allow", false}, {0, "ask", false}, {0, "deny", false}, {exitBlock, "", true},
		{exitBlock, "", true}, {0, "deny", false}, {0, "deny", false}}, got, "the halt after rm -rf ~ holds for the next call")
	v, err := audit.Verify(filepath.Join(resident.state, "audit.jsonl"))
	require.NoError(t, err)
	assert.Positive(t, v.Records)
}

// Only a peer of the same user in the same user, mount and pid namespaces is answered: a
// process in other namespaces (as a command in the hardened sandbox is) reaches the socket and
// gets nothing.
func TestDaemonRefusesPeersInOtherNamespaces(t *testing.T) {
	w := newWorld(t).dev()
	r := w.binary(w.ws, w.claude("PreToolUse", "Read", "t1", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil),
		nil, "claude", "-state", w.state)
	require.Equal(t, "allow", r.decision(), r.stderr)
	ds := daemons(t, w.state)
	require.Len(t, ds, 1)
	var sock string
	for s := range ds {
		sock = s
	}
	run := func(sys *syscall.SysProcAttr) string {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), peerEnv+"="+sock)
		cmd.SysProcAttr = sys
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	assert.Equal(t, "answered 2", run(nil), "a peer like the front program is answered (here: a malformed call)")
	if err := exec.Command("unshare", "--user", "--map-root-user", "true").Run(); err != nil {
		testenv.Missing(t, "user namespaces cannot be created here (unshare --user: %v)", err)
	}
	uid, gid := os.Getuid(), os.Getgid()
	other := run(&syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}})
	assert.True(t, strings.HasPrefix(other, "no answer:"), "a peer in other namespaces: %s", other)
}

// A resident core that goes idle removes its socket before it stops taking calls and answers
// the calls already queued: calls made across many idle endings, one at a time and eight at
// once, are all answered, none blocked.
func TestDaemonEndsWithoutLosingCalls(t *testing.T) {
	w := newWorld(t).dev()
	read := w.claude("PreToolUse", "Read", "t1", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil)
	env := []string{"REINS_HOOK_DAEMON_IDLE=30ms"}
	pids := map[int]bool{}
	for i := range 12 {
		r := w.binary(w.ws, read, env, "claude", "-state", w.state)
		require.Equal(t, 0, r.code, "call %d: %s", i, r.stderr)
		require.Equal(t, "allow", r.decision())
		for _, pid := range daemons(t, w.state) {
			pids[pid] = true
		}
		time.Sleep(time.Duration(i%4) * 25 * time.Millisecond)
	}
	assert.Greater(t, len(pids), 1, "the resident core ended and was started again")
	var wg sync.WaitGroup
	results := make([]result, 8)
	for round := range 3 {
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = w.binary(w.ws, read, env, "claude", "-state", w.state)
			}()
		}
		wg.Wait()
		for i, r := range results {
			assert.Equal(t, 0, r.code, "round %d call %d: %s", round, i, r.stderr)
			assert.Equal(t, "allow", r.decision(), "round %d call %d", round, i)
		}
		time.Sleep(100 * time.Millisecond)
	}
	v, err := audit.Verify(filepath.Join(w.state, "audit.jsonl"))
	require.NoError(t, err, "the calls of several resident cores keep one chain")
	assert.GreaterOrEqual(t, v.Records, 12+24)
}

// A resident core ends when its socket goes (the state directory deleted), and the next call
// starts another.
func TestDaemonEndsWithItsSocket(t *testing.T) {
	w := newWorld(t).dev()
	read := w.claude("PreToolUse", "Read", "t1", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil)
	require.Equal(t, "allow", w.binary(w.ws, read, nil, "claude", "-state", w.state).decision())
	ds := daemons(t, w.state)
	require.Len(t, ds, 1)
	for sock, pid := range ds {
		require.NoError(t, os.Remove(sock))
		deadline := time.Now().Add(10 * time.Second)
		for alive(pid) {
			require.True(t, time.Now().Before(deadline), "the resident core %d outlived its socket", pid)
			time.Sleep(20 * time.Millisecond)
		}
	}
	require.Equal(t, "allow", w.binary(w.ws, read, nil, "claude", "-state", w.state).decision())
	assert.Len(t, daemons(t, w.state), 1)
}

// The front program hands over only what it reads as the core would: arguments it does not
// know start the core for the call (which says what is wrong); a core that is not installed
// blocks a hook call and is exit 127 for any other verb; the core refuses a daemon socket
// outside its state directory.
func TestFrontProgram(t *testing.T) {
	w := newWorld(t).dev()
	read := w.claude("PreToolUse", "Read", "t1", map[string]any{"file_path": filepath.Join(w.ws, "README.md")}, nil)
	r := w.binary(w.ws, read, nil, "claude", "-state", w.state, "-frob")
	assert.Equal(t, exitBlock, r.code)
	assert.Contains(t, r.stderr, "bad arguments")
	assert.Empty(t, daemons(t, w.state), "no resident core for arguments the front does not read")
	r = w.binary(w.ws, read, []string{"REINS_HOOK_DAEMON_IDLE=soon"}, "claude", "-state", w.state)
	assert.Equal(t, "allow", r.decision(), "a resident core that cannot start: the core is started for the call: %s", r.stderr)
	assert.Empty(t, daemons(t, w.state))
	r = w.binary(w.ws, read, nil, "claude", "--state="+w.state, "-max-failures", "2")
	assert.Equal(t, "allow", r.decision(), r.stderr)
	assert.Len(t, daemons(t, w.state), 1, "the flag forms the core reads")

	bin, err := hookBinary()
	require.NoError(t, err)
	lone := filepath.Join(t.TempDir(), "reins-hook")
	b, err := os.ReadFile(bin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lone, b, 0o755))
	for _, tc := range []struct {
		args []string
		code int
	}{{[]string{"claude", "-state", w.state}, exitBlock}, {[]string{"reset", "claude", "s"}, 127}} {
		cmd := exec.Command(lone, tc.args...)
		cmd.Stdin = strings.NewReader(read)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, tc.code, ee.ExitCode(), "%v", tc.args)
		assert.Contains(t, errb.String(), hookwire.CoreName, "%v", tc.args)
	}

	core := filepath.Join(filepath.Dir(bin), hookwire.CoreName)
	out, err := exec.Command(core, "daemon", "-socket", filepath.Join(t.TempDir(), "x.sock"), "--", "claude", "-state", w.state).CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitBlock, ee.ExitCode())
	assert.Contains(t, string(out), "is not a socket path in "+hookwire.DaemonDir(w.state))
}
