package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// helloBinary builds a hello-world Go program once: the baseline of BenchmarkHookCPU.
var helloBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "reins-hello-")
	if err != nil {
		return "", err
	}
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Env = dir, buildEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

// cpuOf runs cmd and returns the user and system CPU time its process used.
func cpuOf(b *testing.B, cmd *exec.Cmd) time.Duration {
	b.Helper()
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s", out)
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// BenchmarkHookCPU measures the CPU time of one hook call against a hello-world Go binary, both
// built and run in the same invocation, alternating, and reports the ratio. The call is the
// everyday one: Claude Code's PreToolUse of a Read inside the project under a user profile file
// (PROFILE-DEV), with the profile cache warm and the session's resident core running, as for
// every call after a session's first. A call's CPU time is the front program's (user + system,
// from the kernel's accounting of the process) plus what the resident core spent on it (its
// threads' CPU time over the loop, divided by the calls). The target: ratio <= 1.5.
// "started" is the same call with REINS_HOOK_DAEMON=off: the core started for the call.
func BenchmarkHookCPU(b *testing.B) {
	for _, mode := range []string{"resident", "started"} {
		b.Run(mode, func(b *testing.B) { benchHookCPU(b, mode == "started") })
	}
}

func benchHookCPU(b *testing.B, started bool) {
	hook, err := hookBinary()
	require.NoError(b, err)
	hello, err := helloBinary()
	require.NoError(b, err)
	ws, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	cfg, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
	require.NoError(b, os.MkdirAll(filepath.Join(cfg, "reins"), 0o700))
	require.NoError(b, os.WriteFile(filepath.Join(cfg, "reins", "profile.json"), []byte(`{"active_profile": "PROFILE-DEV"}`), 0o600))
	require.NoError(b, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hi\n"), 0o644))
	payload := `{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"` + ws + `","permission_mode":"default",` +
		`"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + filepath.Join(ws, "README.md") + `"},"tool_use_id":"toolu_1"}`
	env := append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "CLAUDE_PROJECT_DIR="+ws, "XDG_CACHE_HOME="+b.TempDir())
	if started {
		env = append(env, "REINS_HOOK_DAEMON=off")
	}
	call := func() *exec.Cmd {
		c := exec.Command(hook, "claude", "-state", state)
		c.Env, c.Dir, c.Stdin = env, ws, strings.NewReader(payload)
		return c
	}
	// Warm: the first call of a session loads and caches the profile (and starts the resident
	// core).
	out, err := call().CombinedOutput()
	require.NoError(b, err, "%s", out)
	require.Contains(b, string(out), `"permissionDecision":"allow"`)
	daemon := residentCPU(b, state, started)
	before := daemon()

	var hookCPU, helloCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hookCPU += cpuOf(b, call())
		helloCPU += cpuOf(b, exec.Command(hello))
	}
	b.StopTimer()
	resident := daemon() - before
	hookCPU += resident
	b.ReportMetric(float64(hookCPU.Microseconds())/float64(b.N), "hook-cpu-µs/op")
	b.ReportMetric(float64(resident.Microseconds())/float64(b.N), "of-which-resident-µs/op")
	b.ReportMetric(float64(helloCPU.Microseconds())/float64(b.N), "hello-cpu-µs/op")
	if helloCPU > 0 {
		b.ReportMetric(float64(hookCPU)/float64(helloCPU), "ratio")
	}
}

// residentCPU returns a function that reads the CPU time the state directory's resident core
// has used so far (the sum of its threads' run time, /proc/PID/task/*/schedstat), or nothing
// when none runs.
func residentCPU(b *testing.B, state string, none bool) func() time.Duration {
	pids, err := filepath.Glob(filepath.Join(state, "daemon", "*.pid"))
	require.NoError(b, err)
	if none {
		require.Empty(b, pids, "no resident core when the core is started for each call")
		return func() time.Duration { return 0 }
	}
	require.Len(b, pids, 1, "the session's resident core")
	pb, err := os.ReadFile(pids[0])
	require.NoError(b, err)
	pid := strings.TrimSpace(string(pb))
	return func() time.Duration {
		tasks, err := filepath.Glob(filepath.Join("/proc", pid, "task", "*", "schedstat"))
		require.NoError(b, err)
		require.NotEmpty(b, tasks, "the resident core %s is running", pid)
		var sum time.Duration
		for _, t := range tasks {
			f, err := os.ReadFile(t)
			require.NoError(b, err)
			ns, err := strconv.ParseInt(strings.Fields(string(f))[0], 10, 64)
			require.NoError(b, err)
			sum += time.Duration(ns)
		}
		return sum
	}
}
