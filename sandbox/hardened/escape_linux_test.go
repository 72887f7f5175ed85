//go:build linux

package hardened_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
	"github.com/reins-go/reins/sandbox/internal/escapeprobe"
)

// escEnv is the scene of one escape attempt: a workspace, a sibling
// directory outside it, and a read-only directory.
type escEnv struct {
	root, outside, roDir string
}

const secret = "TOP-SECRET-4711"

func newEscEnv(t *testing.T) escEnv {
	t.Helper()
	e := escEnv{root: t.TempDir(), outside: t.TempDir(), roDir: t.TempDir()}
	for _, d := range []string{e.outside, e.roDir} {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.outside, "target"), []byte("original"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.roDir, "file"), []byte("original"), 0o644))
	return e
}

func (e escEnv) sandbox(t *testing.T, mods ...func(*hardened.Config)) *hardened.Sandbox {
	t.Helper()
	return newSandbox(t, e.root, append([]func(*hardened.Config){func(c *hardened.Config) {
		c.ReadOnlyPaths = append(c.ReadOnlyPaths, e.roDir)
	}}, mods...)...)
}

// sh runs script from a file in the probe directory (read-only in the
// sandbox): the argument check sees only the file's name, so the
// attack reaches the kernel layers it is about. The argument check has
// tests of its own (TestHardenedArgumentCheck).
func sh(script string) []string {
	sum := sha256.Sum256([]byte(script))
	p := filepath.Join(probeDir, "script-"+hex.EncodeToString(sum[:12])+".sh")
	if _, err := os.Stat(p); err != nil {
		tmp, err := os.CreateTemp(probeDir, "script-*")
		if err == nil {
			_, err = tmp.WriteString(script)
			tmp.Close()
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), p)
		}
		if err != nil {
			panic(err)
		}
	}
	return []string{"sh", p}
}

func probe(attack string, args ...string) []string {
	return append([]string{probeBin, escapeprobe.Arg, attack}, args...)
}

// assertNotEscaped checks the sandbox side: the attack did not report
// success and leaked no secret.
func assertNotEscaped(t *testing.T, res sandbox.Result, err error) {
	t.Helper()
	require.NoError(t, err, "the sandbox itself must work: %s", res.Stderr)
	out := string(res.Stdout) + string(res.Stderr)
	assert.NotContains(t, out, "ESCAPED", "the attack reported success")
	assert.NotContains(t, out, secret, "a secret reached the command")
	assert.True(t, res.Confinement.Has(sandbox.LayerLandlock) && res.Confinement.Has(sandbox.LayerSeccomp), "enforced: %v", res.Confinement.Enforced)
}

// TestHardenedEscapes runs every escape attempt against local-hardened
// and checks, on the host, that its effect is absent.
func TestHardenedEscapes(t *testing.T) {
	t.Parallel()
	home, _ := os.UserHomeDir()
	tests := []struct {
		name  string
		setup func(t *testing.T, e escEnv)
		args  func(e escEnv) []string
		env   []string
		check func(t *testing.T, e escEnv, res sandbox.Result)
	}{
		{
			name: "write to a sibling directory",
			args: func(e escEnv) []string {
				return sh("echo pwned > ../" + filepath.Base(e.outside) + "/new; echo pwned > " + e.outside + "/new2")
			},
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.NoFileExists(t, filepath.Join(e.outside, "new"))
				assert.NoFileExists(t, filepath.Join(e.outside, "new2"))
			},
		},
		{
			name: "write to /tmp",
			args: func(e escEnv) []string { return sh("touch /tmp/reins-escape-" + filepath.Base(e.root)) },
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.NoFileExists(t, "/tmp/reins-escape-"+filepath.Base(e.root))
			},
		},
		{
			name: "write to $HOME",
			args: func(e escEnv) []string {
				return sh(`touch "$HOME/reins-escape-` + filepath.Base(e.root) + `" "` + home + `/reins-escape-` + filepath.Base(e.root) + `"`)
			},
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.NoFileExists(t, filepath.Join(home, "reins-escape-"+filepath.Base(e.root)), "the caller's home")
				assert.NoFileExists(t, filepath.Join(e.outside, "reins-escape-"+filepath.Base(e.root)), "the command's $HOME")
			},
		},
		{
			name: "write to /etc",
			args: func(e escEnv) []string { return sh("touch /etc/reins-escape-" + filepath.Base(e.root)) },
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.NoFileExists(t, "/etc/reins-escape-"+filepath.Base(e.root))
			},
		},
		{
			name: "truncate outside",
			args: func(e escEnv) []string {
				return sh("truncate -s 0 " + e.outside + "/target; : > " + e.outside + "/target; truncate -s 0 " + e.roDir + "/file")
			},
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.Equal(t, "original", fileContent(t, filepath.Join(e.outside, "target")))
				assert.Equal(t, "original", fileContent(t, filepath.Join(e.roDir, "file")))
			},
		},
		{
			name: "write through a symlink to an outside file",
			setup: func(t *testing.T, e escEnv) {
				require.NoError(t, os.Symlink(filepath.Join(e.outside, "target"), filepath.Join(e.root, "link")))
				require.NoError(t, os.Symlink(filepath.Join(e.outside, "created"), filepath.Join(e.root, "dangling")))
			},
			args: func(escEnv) []string { return sh("echo pwned > link; echo pwned >> link; echo pwned > dangling") },
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.Equal(t, "original", fileContent(t, filepath.Join(e.outside, "target")))
				assert.NoFileExists(t, filepath.Join(e.outside, "created"))
			},
		},
		{
			name: "write through a symlink to an outside directory",
			setup: func(t *testing.T, e escEnv) {
				require.NoError(t, os.Symlink(e.outside, filepath.Join(e.root, "dirlink")))
			},
			args: func(escEnv) []string { return sh("touch dirlink/new; mkdir dirlink/newdir; rm -f dirlink/target") },
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.NoFileExists(t, filepath.Join(e.outside, "new"))
				assert.NoDirExists(t, filepath.Join(e.outside, "newdir"))
				assert.FileExists(t, filepath.Join(e.outside, "target"))
			},
		},
		{
			name: "hardlink an outside file in and write it",
			args: func(e escEnv) []string {
				return sh("ln " + e.outside + "/target hl; echo pwned > hl; ln " + e.roDir + "/file hl2; echo pwned > hl2")
			},
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.Equal(t, "original", fileContent(t, filepath.Join(e.outside, "target")))
				assert.Equal(t, "original", fileContent(t, filepath.Join(e.roDir, "file")))
				for link, target := range map[string]string{"hl": filepath.Join(e.outside, "target"), "hl2": filepath.Join(e.roDir, "file")} {
					// "echo > hl" creates a plain file when ln failed; it must not be the outside inode.
					if li, err := os.Stat(filepath.Join(e.root, link)); err == nil {
						ti, err := os.Stat(target)
						require.NoError(t, err)
						assert.False(t, os.SameFile(li, ti), "%s is a hard link to %s", link, target)
					}
				}
			},
		},
		{
			name: "rename a file out",
			setup: func(t *testing.T, e escEnv) {
				require.NoError(t, os.WriteFile(filepath.Join(e.root, "mine"), []byte("x"), 0o644))
			},
			args: func(e escEnv) []string {
				return sh("mv mine " + e.outside + "/moved; mv " + e.roDir + "/file stolen; test -e mine && echo mine-stayed; mv mine /tmp/moved-" + filepath.Base(e.root))
			},
			check: func(t *testing.T, e escEnv, res sandbox.Result) {
				assert.Contains(t, string(res.Stdout), "mine-stayed", "the rename out of the workspace must fail")
				// The sandbox's /tmp is a private tmpfs: the last mv succeeds
				// inside it, and nothing reaches the host's /tmp.
				assert.NoFileExists(t, filepath.Join(e.outside, "moved"))
				assert.NoFileExists(t, "/tmp/moved-"+filepath.Base(e.root))
				assert.FileExists(t, filepath.Join(e.roDir, "file"))
			},
		},
		{
			name: "chmod and utimes on outside files",
			args: func(e escEnv) []string {
				return sh("chmod 777 " + e.roDir + "/file " + e.outside + "/target; touch -d 2001-01-01 " + e.roDir + "/file " + e.outside + "/target")
			},
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				for _, p := range []string{filepath.Join(e.roDir, "file"), filepath.Join(e.outside, "target")} {
					fi, err := os.Stat(p)
					require.NoError(t, err)
					assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "%s mode changed", p)
					assert.Greater(t, fi.ModTime().Year(), 2001, "%s mtime changed", p)
				}
			},
		},
		{
			name: "write .git/config and .git/hooks",
			setup: func(t *testing.T, e escEnv) {
				require.NoError(t, os.MkdirAll(filepath.Join(e.root, ".git", "hooks"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(e.root, ".git", "config"), []byte("original"), 0o644))
			},
			args: func(escEnv) []string {
				return sh("echo pwned >> .git/config; echo '#!/bin/sh' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; mv .git .git-old; rm -rf .git; cat .git/config")
			},
			check: func(t *testing.T, e escEnv, res sandbox.Result) {
				assert.Equal(t, "original", fileContent(t, filepath.Join(e.root, ".git", "config")))
				assert.NoFileExists(t, filepath.Join(e.root, ".git", "hooks", "pre-commit"))
				assert.NoDirExists(t, filepath.Join(e.root, ".git-old"))
				assert.Contains(t, string(res.Stdout), "original", ".git stays readable")
			},
		},
		{
			name: "read .env, .ssh, id_rsa and configured denied paths",
			setup: func(t *testing.T, e escEnv) {
				for _, p := range []string{".env", ".env.local", "sub/.ENV", ".ssh/id_rsa", "id_rsa", "keys/id_ed25519", "config/prod.secret"} {
					require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(e.root, p)), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(e.root, p), []byte(secret), 0o644))
				}
				require.NoError(t, os.Symlink(".env", filepath.Join(e.root, "innocent")))
			},
			args: func(escEnv) []string {
				return sh("cat .env .env.local sub/.ENV .ssh/id_rsa id_rsa keys/id_ed25519 config/prod.secret innocent; ls -a .ssh; cp .env copy && cat copy")
			},
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.Equal(t, secret, fileContent(t, filepath.Join(e.root, ".env")), "the mask must not damage the file")
				// A masked file reads as empty: the copy holds nothing.
				assert.Empty(t, fileContent(t, filepath.Join(e.root, "copy")))
			},
		},
		{
			name: "read $HOME/.ssh outside the workspace",
			setup: func(t *testing.T, e escEnv) {
				require.NoError(t, os.MkdirAll(filepath.Join(e.outside, ".ssh"), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(e.outside, ".ssh", "id_ed25519"), []byte(secret), 0o600))
			},
			args: func(e escEnv) []string { return sh(`cat "$HOME/.ssh/id_ed25519" /root/.ssh/* 2>&1`) },
			env:  nil, // HOME is set per case below
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.Equal(t, secret, fileContent(t, filepath.Join(e.outside, ".ssh", "id_ed25519")))
			},
		},
		{
			name: ".git replaced by a symlink before the run",
			setup: func(t *testing.T, e escEnv) {
				require.NoError(t, os.MkdirAll(filepath.Join(e.outside, "fakegit", "hooks"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(e.outside, "fakegit", "config"), []byte("original"), 0o644))
				require.NoError(t, os.Symlink(filepath.Join(e.outside, "fakegit"), filepath.Join(e.root, ".git")))
			},
			args: func(escEnv) []string { return sh("echo pwned >> .git/config; touch .git/hooks/post-checkout") },
			check: func(t *testing.T, e escEnv, _ sandbox.Result) {
				assert.Equal(t, "original", fileContent(t, filepath.Join(e.outside, "fakegit", "config")))
				assert.NoFileExists(t, filepath.Join(e.outside, "fakegit", "hooks", "post-checkout"))
			},
		},
		{
			name: "io_uring",
			args: func(escEnv) []string { return probe("io_uring") },
			check: func(t *testing.T, _ escEnv, res sandbox.Result) {
				assert.Contains(t, string(res.Stdout), "blocked: io_uring_setup: operation not permitted")
			},
		},
		{
			name: "mount and umount",
			args: func(e escEnv) []string {
				return sh(probeBin + " " + escapeprobe.Arg + " mount " + e.root + "; " + probeBin + " " + escapeprobe.Arg + " umount /proc; " + probeBin + " " + escapeprobe.Arg + " unshare-user")
			},
			check: func(t *testing.T, e escEnv, res sandbox.Result) {
				out := string(res.Stdout)
				assert.Contains(t, out, "blocked: mount: operation not permitted")
				assert.Contains(t, out, "blocked: umount2: operation not permitted")
				assert.Contains(t, out, "blocked: unshare(CLONE_NEWUSER): operation not permitted")
			},
		},
		{
			name: "netlink and packet sockets",
			args: func(escEnv) []string {
				return sh(probeBin + " " + escapeprobe.Arg + " netlink; " + probeBin + " " + escapeprobe.Arg + " packet")
			},
			check: func(t *testing.T, _ escEnv, res sandbox.Result) {
				assert.Contains(t, string(res.Stdout), "blocked: socket(AF_NETLINK): address family not supported")
				assert.Contains(t, string(res.Stdout), "blocked: socket(AF_PACKET): address family not supported")
			},
		},
		{
			// The supervisor of refused calls must survive notifications
			// that a signal withdraws before it receives them: when it
			// stopped there, the next refused call waited for the timeout.
			name: "refused calls under a stream of signals",
			args: func(escEnv) []string {
				return sh(probeBin + " " + escapeprobe.Arg + " netlink-under-signals 300; " + probeBin + " " + escapeprobe.Arg + " packet")
			},
			check: func(t *testing.T, _ escEnv, res sandbox.Result) {
				assert.False(t, res.TimedOut, "a refused call was never answered")
				assert.Contains(t, string(res.Stdout), "blocked: 300 refused calls answered under signals: socket(AF_NETLINK): address family not supported")
				assert.Contains(t, string(res.Stdout), "blocked: socket(AF_PACKET): address family not supported")
				assert.True(t, hasViolation(res, sandbox.ViolationRefusedSyscall, "socket"), "violations: %v", res.Violations)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEscEnv(t)
			if tt.setup != nil {
				tt.setup(t, e)
			}
			sb := e.sandbox(t, func(c *hardened.Config) {
				c.Policy.DeniedPaths = []string{"config/prod.secret"}
			})
			res, err := runCmd(t, sb, sandbox.Command{Args: tt.args(e), Env: []string{"HOME=" + e.outside}, Timeout: time.Minute})
			assertNotEscaped(t, res, err)
			tt.check(t, e, res)
		})
	}
}

// listenerSaw counts what a host listener received during the run.
type hostListener struct {
	addr string
	got  chan string
	stop func()
}

func tcpListener(t *testing.T, network, addr string) hostListener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	require.NoError(t, err)
	got := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			got <- "connection from " + c.RemoteAddr().String()
			c.Close()
		}
	}()
	return hostListener{addr: ln.Addr().String(), got: got, stop: func() { ln.Close() }}
}

func TestHardenedNetworkEscapes(t *testing.T) {
	t.Parallel()
	tcp4 := tcpListener(t, "tcp4", "127.0.0.1:0")
	defer tcp4.stop()
	tcp6 := tcpListener(t, "tcp6", "[::1]:0")
	defer tcp6.stop()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer udp.Close()
	sockDir := t.TempDir()
	sockPath := filepath.Join(sockDir, "host.sock")
	unixLn := tcpListener(t, "unix", sockPath)
	defer unixLn.stop()
	require.NoError(t, os.Chmod(sockDir, 0o755))
	require.NoError(t, os.Chmod(sockPath, 0o777))

	attacks := []struct {
		name string
		args []string
		seen hostListener
	}{
		{"tcp to 127.0.0.1", probe("tcp4", tcp4.addr), tcp4},
		{"tcp to ::1", probe("tcp6", tcp6.addr), tcp6},
		{"mptcp to 127.0.0.1", probe("mptcp", tcp4.addr), tcp4},
		{"host unix socket", probe("unix", sockPath), unixLn},
		{"udp to 127.0.0.1", probe("udp", udp.LocalAddr().String()), hostListener{}},
	}
	for _, withNetNS := range []bool{true, false} {
		name := "netns"
		var mods []func(*hardened.Config)
		if !withNetNS {
			name = "seccomp-and-landlock-only"
			mods = append(mods, func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerNetNS} })
		}
		t.Run(name, func(t *testing.T) {
			e := newEscEnv(t)
			sb := e.sandbox(t, mods...)
			for _, a := range attacks {
				res, err := runCmd(t, sb, sandbox.Command{Args: a.args, Timeout: 30 * time.Second})
				assertNotEscaped(t, res, err)
				assert.Contains(t, string(res.Stdout), "blocked:", "%s: %s", a.name, res.Stdout)
				assert.Equal(t, 1, res.ExitCode, "%s: %s %s", a.name, res.Stdout, res.Stderr)
				assert.Equal(t, withNetNS, res.Confinement.Has(sandbox.LayerNetNS))
			}
		})
	}
	// Host-side evidence: no listener saw anything.
	time.Sleep(100 * time.Millisecond)
	for _, l := range []hostListener{tcp4, tcp6, unixLn} {
		select {
		case s := <-l.got:
			t.Errorf("listener %s saw %s", l.addr, s)
		default:
		}
	}
	require.NoError(t, udp.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	buf := make([]byte, 64)
	n, from, err := udp.ReadFrom(buf)
	assert.Error(t, err, "the UDP listener received %q from %v", buf[:n], from)
}

func TestHardenedForeignABIIsKilled(t *testing.T) {
	t.Parallel()
	if !escapeprobe.Int80Supported() {
		t.Skip("int 0x80 and x32 exist on x86 only; the seccomp VM test covers the architecture check")
	}
	for _, attack := range []string{"int80", "x32"} {
		e := newEscEnv(t)
		res, err := runCmd(t, e.sandbox(t), sandbox.Command{Args: probe(attack), Timeout: 30 * time.Second})
		require.NoError(t, err)
		if attack == "int80" && strings.Contains(string(res.Stderr), "signal SIGSEGV") && !strings.Contains(string(res.Stdout), "returned") {
			// A kernel without IA32 emulation (ia32_emulation=0) faults
			// on int 0x80 before seccomp sees a system call: the path
			// does not exist here, which is as good as the kill.
			t.Logf("int80: the kernel has no 32-bit emulation (the probe faulted); nothing to kill")
			continue
		}
		assert.Equal(t, 128+int(syscall.SIGSYS), res.ExitCode, "%s: stdout %s stderr %s", attack, res.Stdout, res.Stderr)
		assert.Contains(t, string(res.Stdout), "before "+attack)
		assert.NotContains(t, string(res.Stdout), "returned", "%s returned instead of killing the process", attack)
		require.True(t, res.Escaped(), attack)
		assert.Equal(t, sandbox.ViolationForbiddenSyscall, res.Violations[0].Kind)
	}
}

func TestHardenedHostProcessIsUntouchable(t *testing.T) {
	t.Parallel()
	victim := exec.Command("sleep", "60")
	require.NoError(t, victim.Start())
	defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
	pid := strconv.Itoa(victim.Process.Pid)

	for _, withPIDNS := range []bool{true, false} {
		e := newEscEnv(t)
		var mods []func(*hardened.Config)
		if !withPIDNS {
			mods = append(mods, func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerPIDNS} })
		}
		sb := e.sandbox(t, mods...)
		escapeFile := filepath.Join(e.outside, "via-proc-root")
		res, err := runCmd(t, sb, sandbox.Command{Args: sh(fmt.Sprintf("%[1]s %[2]s ptrace %[3]s; %[1]s %[2]s kill %[3]s; kill -9 %[3]s; cat /proc/%[3]s/environ; touch /proc/%[3]s/root%[4]s; ls /proc/%[3]s/root/",
			probeBin, escapeprobe.Arg, pid, escapeFile)), Timeout: 30 * time.Second})
		assert.NoFileExists(t, escapeFile, "wrote through the victim's /proc/PID/root")
		assertNotEscaped(t, res, err)
		assert.Contains(t, string(res.Stdout), "blocked: ptrace(PTRACE_ATTACH")
		assert.Contains(t, string(res.Stdout), "blocked: kill(")
		// Host-side evidence: the victim is alive.
		require.NoError(t, victim.Process.Signal(syscall.Signal(0)), "pid namespace %v: the victim died", withPIDNS)
	}
}

func TestHardenedEnvAndDescriptorsDoNotLeak(t *testing.T) {
	t.Setenv("REINS_TEST_API_KEY", secret)
	// A descriptor opened without O_CLOEXEC, as careless host code might.
	secretFile := filepath.Join(t.TempDir(), "fd-secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(secret), 0o600))
	fd, err := unix.Open(secretFile, unix.O_RDONLY, 0)
	require.NoError(t, err)
	defer unix.Close(fd)

	e := newEscEnv(t)
	res, err := runCmd(t, e.sandbox(t), sandbox.Command{
		Args: sh(fmt.Sprintf("env; tr '\\0' '\\n' < /proc/self/environ; cat /proc/1/environ; cat <&%[1]d; %[2]s %[3]s readfd %[1]d; ls -l /proc/self/fd", fd, probeBin, escapeprobe.Arg)),
	})
	assertNotEscaped(t, res, err)
	assert.Contains(t, string(res.Stdout), "blocked: read(", "the inherited descriptor must be closed")
	assert.NotContains(t, string(res.Stdout), "REINS_TEST_API_KEY")
}

func TestHardenedOrphansDieWithTheRun(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	marker := uniqueMarker("31")
	res, err := runCmd(t, e.sandbox(t), sandbox.Command{
		Args:    sh("setsid sleep " + marker + " & (trap '' HUP TERM; sleep " + marker + ") & sleep 60"),
		Timeout: 500 * time.Millisecond,
	})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	// Host-side evidence: no process with the marker is left.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := testenv.Processes(t, marker)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived the timeout: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHardenedRefusesWithoutLayer covers the honest 127 paths: each
// required layer, simulated as missing, stops the command before it
// runs; a marker file proves it did not.
func TestHardenedRefusesWithoutLayer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mod     func(*hardened.Config)
		wantErr string
	}{
		{"landlock", func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerLandlock} }, "landlock"},
		{"landlock below minimum", func(c *hardened.Config) { c.MinLandlockABI = 99 }, "at least 99 is required"},
		{"seccomp", func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerSeccomp} }, "seccomp"},
		{"no_new_privs", func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerNoNewPrivs} }, "no-new-privs"},
		{"capabilities", func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerCaps} }, "capabilities"},
		{"mount namespace", func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerMountNS} }, "mount-namespace"},
		{"root without mount namespace or uid mapping", func(c *hardened.Config) {
			c.SimulateMissing = []sandbox.Layer{sandbox.LayerMountNS, sandbox.LayerUserNS}
		}, "mount-namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEscEnv(t)
			res, err := runCmd(t, e.sandbox(t, tt.mod), sandbox.Command{Args: sh("touch marker")})
			require.ErrorIs(t, err, sandbox.ErrUnavailable)
			assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
			assert.Contains(t, string(res.Stderr), tt.wantErr)
			assert.Contains(t, string(res.Stderr), "the command did not run")
			assert.Empty(t, res.Confinement.Enforced, "no layer may be claimed for a refused run")
			assert.NoFileExists(t, filepath.Join(e.root, "marker"), "the command ran")
			assert.Error(t, e.sandbox(t, tt.mod).Probe(context.Background()), "Probe must report the missing layer")
		})
	}
}

func TestHardenedBestEffortSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	sb := e.sandbox(t, func(c *hardened.Config) {
		c.BestEffort = true
		c.SimulateMissing = []sandbox.Layer{sandbox.LayerLandlock, sandbox.LayerSeccomp}
	})
	res, err := runCmd(t, sb, sandbox.Command{Args: sh("touch marker")})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.FileExists(t, filepath.Join(e.root, "marker"))
	assert.ElementsMatch(t, []sandbox.Layer{sandbox.LayerLandlock, sandbox.LayerSeccomp}, res.Confinement.Missing)
	assert.Len(t, res.Confinement.Warnings, 2)
	assert.False(t, res.Confinement.Has(sandbox.LayerLandlock))
	assert.True(t, res.Confinement.Has(sandbox.LayerMountNS))
}

func TestHardenedProbeAndConfinementReport(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	sb := e.sandbox(t)
	require.NoError(t, sb.Probe(context.Background()))
	res, err := runCmd(t, sb, sandbox.Command{Args: []string{"true"}})
	require.NoError(t, err)
	for _, l := range []sandbox.Layer{sandbox.LayerMountNS, sandbox.LayerCaps, sandbox.LayerNoNewPrivs, sandbox.LayerLandlock,
		sandbox.LayerSeccomp, sandbox.LayerRlimits, sandbox.LayerFDs, sandbox.LayerPIDNS, sandbox.LayerNetNS, sandbox.LayerUserNS} {
		assert.True(t, res.Confinement.Has(l), "layer %s not enforced on this host: %v", l, res.Confinement)
	}
	assert.GreaterOrEqual(t, res.Confinement.LandlockABI, hardened.DefaultMinLandlockABI)
	assert.Empty(t, res.Confinement.Missing)
}

// TestEscapesAsNonRoot reruns the hardened suites as an unprivileged
// user (uid and gid 65534) through util-linux's setpriv.
func TestEscapesAsNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already running as a non-root user: the suites in this run are the non-root run")
	}
	setpriv := testenv.RequireTool(t, "setpriv", "the non-root escape run drops to uid 65534 with util-linux's setpriv; .ci/run installs it")
	dir, err := os.MkdirTemp("", "reins-nonroot-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.Chown(dir, 65534, 65534))
	bin := filepath.Join(dir, "sandbox.test")
	// The copy is written before t.Parallel: while it is open for writing, a
	// fork in another test would inherit the descriptor, and executing the
	// copy would fail with "text file busy" (ETXTBSY) until that child execs.
	require.NoError(t, copyExecutable(bin))
	// In parallel with the root run's own parallel tests: most of both
	// is the cold build cache of the go workload, which leaves the
	// second core idle part of the time.
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
		bin, "-test.run=^(TestHardened.*|TestConformance)$", "-test.skip=^TestConformance$/^(local|worktree|docker|singularity|apptainer|modal|daytona|vercel-sandbox)$", "-test.v", "-test.count=1")
	c.Dir = dir
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=" + dir}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "non-root run failed:\n%s", out)
	assert.Contains(t, string(out), "--- PASS: TestHardenedEscapes")
	assert.Contains(t, string(out), "--- PASS: TestHardenedNetworkEscapes")
	assert.Contains(t, string(out), "--- PASS: TestConformance/local-hardened")
	assert.Contains(t, string(out), "--- PASS: TestHardenedForeignABIIsKilled")
	for _, name := range []string{"TestHardenedDiesWithItsLauncher", "TestHardenedTerminalInjection", "TestHardenedNoSetIDFiles",
		"TestHardenedIdentity", "TestHardenedReportsCreatedProtectedPaths", "TestHardenedNoFalseDenials", "TestHardenedWorkloads",
		"TestHardenedConfine", "TestHardenedConfineNetwork", "TestHardenedConfineReusesItsLauncher", "TestHardenedRunsShareNothing",
		"TestHardenedIPCWithoutPIDNamespace", "TestHardenedMasksSecretsInReadOnlyPaths", "TestHardenedHardLinks", "TestHardenedArgumentCheck"} {
		assert.Contains(t, string(out), "--- PASS: "+name)
	}
	assert.NotContains(t, string(out), "--- SKIP")
	t.Logf("non-root run: %d tests passed", strings.Count(string(out), "--- PASS"))
}
