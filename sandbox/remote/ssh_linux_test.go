//go:build linux

package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/remote"
	"github.com/reins-go/reins/sandbox/sandboxtest"
)

// sshd is a real OpenSSH server on 127.0.0.1 for one test, with a host
// key and a user key generated in a temporary directory.
type sshd struct {
	port       int
	userKey    string
	knownHosts string
	user       string
}

// lockedBuffer is a bytes.Buffer safe for a writer goroutine and a
// reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startSSHD starts sshd in the foreground (-D -e) with a dedicated
// configuration and stops it when t ends. A missing sshd, ssh or
// ssh-keygen skips the test, or fails it in strict mode (see
// internal/testenv).
func startSSHD(t testing.TB) *sshd {
	t.Helper()
	const install = "install openssh-server and openssh-client (apt-get install -y openssh-server openssh-client)"
	sshdPath := testenv.RequireTool(t, "sshd", "the ssh backend's tests run a loopback sshd; "+install)
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		testenv.RequireTool(t, tool, "the ssh backend drives the ssh client; "+install)
	}
	if os.Geteuid() == 0 {
		// sshd needs its privilege-separation directory; a package
		// installed without a service manager may not have made it.
		require.NoError(t, os.MkdirAll("/run/sshd", 0o755))
	}
	u, err := user.Current()
	require.NoError(t, err)

	dir := t.TempDir()
	keygen := func(name string) string {
		p := filepath.Join(dir, name)
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "reins-test", "-f", p).CombinedOutput()
		require.NoError(t, err, "ssh-keygen: %s", out)
		return p
	}
	hostKey := keygen("host_key")
	userKey := keygen("user_key")
	pub, err := os.ReadFile(userKey + ".pub")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600))
	hostPub, err := os.ReadFile(hostKey + ".pub")
	require.NoError(t, err)
	fields := strings.Fields(string(hostPub))
	require.GreaterOrEqual(t, len(fields), 2)

	var (
		cmd    *exec.Cmd
		port   int
		logBuf lockedBuffer
	)
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port = l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
		config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile none
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 200
MaxSessions 100
PrintMotd no
LogLevel ERROR
`, port, hostKey, filepath.Join(dir, "authorized_keys"))
		cfgPath := filepath.Join(dir, "sshd_config")
		require.NoError(t, os.WriteFile(cfgPath, []byte(config), 0o600))
		cmd = exec.Command(sshdPath, "-D", "-e", "-f", cfgPath)
		cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		if waitListening(port, exited) {
			t.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			})
			break
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if attempt == 2 {
			t.Fatalf("sshd did not start: %s", logBuf.String())
		}
	}
	known := filepath.Join(dir, "known_hosts")
	line := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, fields[0], fields[1])
	require.NoError(t, os.WriteFile(known, []byte(line), 0o600))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sshd log:\n%s", logBuf.String())
		}
	})
	return &sshd{port: port, userKey: userKey, knownHosts: known, user: u.Username}
}

// waitListening polls the port until it accepts a connection, the
// server exits, or 10 seconds pass.
func waitListening(port int, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func (s *sshd) config(remoteDir string, p sandbox.FsNetPolicy) remote.SSHConfig {
	return remote.SSHConfig{
		Host: "127.0.0.1", Port: s.port, User: s.user,
		IdentityFile: s.userKey, KnownHostsFile: s.knownHosts,
		RemoteDir: remoteDir, Policy: p,
	}
}

func (s *sshd) backend(t testing.TB, remoteDir string, p sandbox.FsNetPolicy, mods ...func(*remote.SSHConfig)) *remote.SSH {
	t.Helper()
	cfg := s.config(remoteDir, p)
	for _, m := range mods {
		m(&cfg)
	}
	b, err := remote.NewSSH(cfg)
	require.NoError(t, err)
	return b
}

// TestSSH runs the ssh backend through a real sshd on 127.0.0.1: the
// conformance kit, hostile arguments, exit codes, output, the env
// allowlist, timeouts and failures. It is never skipped on Linux.
func TestSSH(t *testing.T) {
	srv := startSSHD(t)

	t.Run("Conformance", func(t *testing.T) {
		sandboxtest.Run(t, func(t *testing.T, p sandbox.FsNetPolicy) (sandbox.Sandbox, string) {
			root := t.TempDir()
			return srv.backend(t, root, p), root
		})
	})

	t.Run("Registry", func(t *testing.T) {
		t.Parallel()
		r := &sandbox.Registry{}
		require.NoError(t, remote.Register(r, remote.Options{SSH: srv.config("", sandbox.FsNetPolicy{})}))
		require.NoError(t, r.Probe(context.Background(), "ssh"))
		root := t.TempDir()
		sb, err := r.Open(context.Background(), "ssh", root)
		require.NoError(t, err)
		res, err := runCmd(t, sb, sandbox.Command{Args: []string{"pwd"}})
		require.NoError(t, err, "%s", res.Stderr)
		assert.Equal(t, root+"\n", string(res.Stdout))
	})

	t.Run("Probe", func(t *testing.T) {
		t.Parallel()
		require.NoError(t, srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{}).Probe(context.Background()))
		err := srv.backend(t, "/nonexistent/reins", sandbox.FsNetPolicy{}).Probe(context.Background())
		require.ErrorIs(t, err, sandbox.ErrUnavailable, "a missing remote root is reported")
	})

	t.Run("HostileArgumentsArriveVerbatim", func(t *testing.T) {
		t.Parallel()
		// The remote side records the argv it received, NUL-separated;
		// it must equal what was sent, byte for byte.
		for _, shell := range []string{"", "bash", "sh"} {
			t.Run("shell="+shell, func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				rec := writeArgvRecorder(t, root, "record-argv")
				b := srv.backend(t, root, sandbox.FsNetPolicy{}, func(c *remote.SSHConfig) { c.Shell = shell })
				args := remote.HostileArgs
				if shell == "sh" {
					args = printableHostileArgs() // dash has no $'...'
				}
				out := filepath.Join(root, "argv-all")
				res, err := runCmd(t, b, sandbox.Command{Args: append([]string{rec, out}, args...)})
				require.NoError(t, err, "%s", res.Stderr)
				got, err := os.ReadFile(out)
				require.NoError(t, err)
				received := remote.SplitNUL(got)
				require.Len(t, received, len(args), "%q", received)
				for i, a := range args {
					assert.Equal(t, a, received[i], "argument %d", i)
				}
			})
		}
	})

	t.Run("ProgramNameWithEquals", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		writeArgvRecorder(t, root, "rec=x")
		res, err := runCmd(t, srv.backend(t, root, sandbox.FsNetPolicy{}), sandbox.Command{Args: []string{"./rec=x", filepath.Join(root, "out"), "a=b"}})
		require.NoError(t, err, "%s", res.Stderr)
		got, err := os.ReadFile(filepath.Join(root, "out"))
		require.NoError(t, err)
		assert.Equal(t, []string{"a=b"}, remote.SplitNUL(got))
	})

	t.Run("ExitCodesAndOutput", func(t *testing.T) {
		t.Parallel()
		b := srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{})
		tests := []struct {
			script         string
			code           int
			stdout, stderr string
		}{
			{"exit 0", 0, "", ""},
			{"printf 'a\\000b'; exit 3", 3, "a\x00b", ""},
			{"echo out; echo err >&2; exit 255", 255, "out\n", "err\n"},
			{"printf 'no newline' >&2; exit 1", 1, "", "no newline"},
			{"kill -TERM $$", 128 + int(syscall.SIGTERM), "", ""},
		}
		for _, tt := range tests {
			res, err := runCmd(t, b, sandbox.Command{Args: []string{"sh", "-c", tt.script}})
			require.NoError(t, err, "%q: %s", tt.script, res.Stderr)
			assert.Equal(t, tt.code, res.ExitCode, "%q", tt.script)
			assert.Equal(t, tt.stdout, string(res.Stdout), "%q", tt.script)
			assert.Equal(t, tt.stderr, string(res.Stderr), "%q", tt.script)
			assert.Equal(t, "ssh", res.Confinement.Backend)
			assert.True(t, res.Confinement.Has(sandbox.LayerRemoteHost))
		}
	})

	t.Run("EnvAllowlist", func(t *testing.T) {
		// The allowlist is applied with an "env -i" prefix on the remote
		// side rather than SendEnv/AcceptEnv: AcceptEnv is the server's
		// choice (by default only LANG and LC_*), SendEnv silently drops
		// what the server refuses, and neither can remove the variables
		// sshd itself sets. This test sets a host variable, so it is not
		// parallel.
		t.Setenv("REINS_SSH_HOST_ONLY", "host-secret")
		b := srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{EnvAllowlist: []string{"PATH", "SSH_CONNECTION", "REINS_A", "REINS_HOST_ONLY"}})
		res, err := runCmd(t, b, sandbox.Command{Args: []string{"env"}, Env: []string{"REINS_A=a value", "REINS_B=not allowed"}})
		require.NoError(t, err, "%s", res.Stderr)
		env := string(res.Stdout)
		assert.Contains(t, env, "REINS_A=a value\n")
		assert.Contains(t, env, "SSH_CONNECTION=127.0.0.1 ", "an allowed variable keeps the remote session's value")
		assert.Contains(t, env, "PATH=")
		assert.Contains(t, env, "REINS_B=not allowed", "Command.Env is honoured, allowlisted or not")
		assert.NotContains(t, env, "host-secret", "the host environment never travels")
		assert.NotContains(t, env, "SSH_CLIENT", "sshd's other variables are removed")
		assert.True(t, res.Confinement.Has(sandbox.LayerEnv))

		open := srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{})
		res, err = runCmd(t, open, sandbox.Command{Args: []string{"env"}, Env: []string{"REINS_A=x"}})
		require.NoError(t, err)
		assert.Contains(t, string(res.Stdout), "SSH_CLIENT=", "without an allowlist the session's environment stays")
		assert.Contains(t, string(res.Stdout), "REINS_A=x\n")
		assert.False(t, res.Confinement.Has(sandbox.LayerEnv))
	})

	t.Run("TimeoutKillsTheRemoteSession", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		marker := "41." + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
		b := srv.backend(t, root, sandbox.FsNetPolicy{})
		start := time.Now()
		res, err := runCmd(t, b, sandbox.Command{
			Args:    []string{"sh", "-c", "sleep " + marker + " & (sleep 2; touch late) & echo started; sleep " + marker},
			Timeout: 2 * time.Second,
		})
		require.NoError(t, err)
		assert.True(t, res.TimedOut)
		assert.NotZero(t, res.ExitCode)
		assert.Less(t, time.Since(start), 20*time.Second)
		testenv.WaitGone(t, marker, 30*time.Second)
		time.Sleep(2500 * time.Millisecond)
		assert.NoFileExists(t, filepath.Join(root, "late"))
	})

	t.Run("LeftoverProcessesDieWithTheCommand", func(t *testing.T) {
		t.Parallel()
		marker := "42." + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
		res, err := runCmd(t, srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{}), sandbox.Command{
			Args: []string{"sh", "-c", "sleep " + marker + " >/dev/null 2>&1 & exit 0"},
		})
		require.NoError(t, err, "%s", res.Stderr)
		assert.Equal(t, 0, res.ExitCode)
		testenv.WaitGone(t, marker, 30*time.Second)
	})

	t.Run("DeniedPaths", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
		b := srv.backend(t, root, sandbox.FsNetPolicy{})
		for _, args := range [][]string{
			{"cat", ".git/config"},
			{"sh", "-c", "echo x > .env"},
			{"sh", "-c", "cd .git && ls"},
			{"sh", "-c", "python3 -c 'print(1)'"},
		} {
			res, err := runCmd(t, b, sandbox.Command{Args: args})
			require.ErrorIs(t, err, sandbox.ErrRefused, "%q", args)
			assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
		}
		assert.NoFileExists(t, filepath.Join(root, ".env"))
	})

	t.Run("ConnectionFailureIsHonest", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
		b := srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{}, func(c *remote.SSHConfig) { c.Port = port })
		res, err := runCmd(t, b, sandbox.Command{Args: []string{"true"}})
		require.ErrorIs(t, err, sandbox.ErrUnavailable)
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
		assert.Contains(t, string(res.Stderr), "refused")
		require.ErrorIs(t, b.Probe(context.Background()), sandbox.ErrUnavailable)

		bad := srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{}, func(c *remote.SSHConfig) { c.IdentityFile = filepath.Join(t.TempDir(), "missing") })
		res, err = runCmd(t, bad, sandbox.Command{Args: []string{"true"}})
		require.ErrorIs(t, err, sandbox.ErrUnavailable, "an authentication failure never looks like success")
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	})

	t.Run("CLIMissing", func(t *testing.T) {
		b := srv.backend(t, t.TempDir(), sandbox.FsNetPolicy{}, func(c *remote.SSHConfig) { c.CLI = filepath.Join(t.TempDir(), "ssh") })
		res, err := runCmd(t, b, sandbox.Command{Args: []string{"true"}})
		require.ErrorIs(t, err, sandbox.ErrUnavailable)
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
		assert.Contains(t, string(res.Stderr), "ssh CLI is not installed")
	})
}

func TestNewSSHErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []remote.SSHConfig{
		{RemoteDir: "/w"},
		{Host: "-oProxyCommand=x", RemoteDir: "/w"},
		{Host: "user@host", RemoteDir: "/w"},
		{Host: "h", RemoteDir: "relative"},
		{Host: "h", RemoteDir: "/w", Port: 70000},
		{Host: "h", RemoteDir: "/w", User: "-x"},
		{Host: "h", RemoteDir: "/w", Options: []string{"-oProxyCommand=x"}},
		{Host: "h", RemoteDir: "/w", Shell: "bash -x"},
		{Host: "h", RemoteDir: "/w", Policy: sandbox.FsNetPolicy{DeniedPaths: []string{"a\nb"}}},
	} {
		_, err := remote.NewSSH(cfg)
		assert.Error(t, err, "NewSSH(%+v)", cfg)
	}
}

// BenchmarkRunSSH measures the ssh backend on /bin/true through the
// loopback sshd (a new connection per run). Compare it with
// BenchmarkExecDirect in the same invocation.
func BenchmarkRunSSH(b *testing.B) {
	srv := startSSHD(b)
	benchRun(b, srv.backend(b, b.TempDir(), sandbox.FsNetPolicy{}))
}
