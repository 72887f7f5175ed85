//go:build linux

package hardened_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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
)

// TestHardenedDiesWithItsLauncher kills the host process that runs a
// sandboxed loop with SIGKILL and checks, on the host, that nothing it
// started survives: the loop stops writing, and the lock it held is free.
func TestHardenedDiesWithItsLauncher(t *testing.T) {
	requireHardened(t)
	testenv.RequireTool(t, "flock", "the test holds a lock from inside the sandbox (util-linux)")
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.Chmod(root, 0o755))
			marker := uniqueMarker("3599")
			script := "flock lock sleep " + marker + " & while :; do echo x >> f; sleep 0.05; done"
			self, err := os.Executable()
			require.NoError(t, err)
			launcher := exec.Command(self, launcherArg, root, script)
			var out bytes.Buffer
			launcher.Stdout, launcher.Stderr = &out, &out
			require.NoError(t, launcher.Start())
			done := make(chan struct{})
			go func() { _ = launcher.Wait(); close(done) }()

			// Wait until the loop writes and the lock is held: the two
			// jobs of the script run in no set order, and on a loaded
			// machine flock may take its lock long after the loop's
			// first writes.
			f, lock := filepath.Join(root, "f"), filepath.Join(root, "lock")
			deadline := time.Now().Add(time.Minute)
			for size(f) < 4 || !lockHeld(t, lock) {
				if time.Now().After(deadline) {
					_ = launcher.Process.Kill()
					t.Fatalf("the sandboxed loop never wrote (%d bytes) or the lock was never taken: %s", size(f), out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, launcher.Process.Signal(sig))
			<-done

			// Host-side evidence: nothing with the marker is left, the
			// file stops growing, and the lock is free.
			deadline = time.Now().Add(30 * time.Second)
			for len(testenv.Processes(t, marker)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("processes survived their launcher: %v", testenv.Processes(t, marker))
				}
				time.Sleep(50 * time.Millisecond)
			}
			s1 := size(f)
			time.Sleep(300 * time.Millisecond)
			assert.Equal(t, s1, size(f), "the loop kept writing after its launcher died")
			lf, err := os.OpenFile(lock, os.O_RDWR, 0)
			require.NoError(t, err)
			defer lf.Close()
			assert.NoError(t, unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB), "the lock taken inside the sandbox is still held")
		})
	}
}

// lockHeld reports whether someone holds an exclusive flock on p. It
// takes a shared lock for a moment when nobody does (a blocking flock
// in the sandbox then waits for the next try).
func lockHeld(t *testing.T, p string) bool {
	t.Helper()
	lf, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	require.NoError(t, err)
	defer lf.Close()
	err = unix.Flock(int(lf.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true
	}
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(lf.Fd()), unix.LOCK_UN))
	return false
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// TestHardenedTerminalInjection passes a real pseudo-terminal as stdin
// and tries TIOCSTI through it: the call fails, nothing reaches the
// terminal's input, the command runs in a session of its own, and the
// refusal is a violation.
func TestHardenedTerminalInjection(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t)
	e := newEscEnv(t)
	sb := e.sandbox(t)
	res, err := runCmd(t, sb, sandbox.Command{
		Args:  sh(probeBin + " reins-escape-probe tiocsti 'touch /tmp/pwned'; " + probeBin + " reins-escape-probe tiocsti-raw; ps -o sid= -p $$ 2>/dev/null; cat /proc/self/stat"),
		Stdin: slave,
	})
	require.NoError(t, err, "%s", res.Stderr)
	assertNoEscape(t, res)
	assert.Contains(t, string(res.Stdout), "blocked: ioctl(0, TIOCSTI)")
	assert.Contains(t, string(res.Stdout), "blocked: ioctl(0, 1<<32|TIOCSTI)")
	// Nothing was typed into the terminal.
	// Injected input would wait in the terminal's input queue, read on
	// the slave side.
	fds := []unix.PollFd{{Fd: int32(slave.Fd()), Events: unix.POLLIN}}
	if n, _ := unix.Poll(fds, 200); n > 0 && fds[0].Revents&unix.POLLIN != 0 {
		buf := make([]byte, 256)
		n, _ := unix.Read(int(slave.Fd()), buf)
		assert.NotContains(t, string(buf[:max(n, 0)]), "pwned", "input was injected into the terminal")
	}
	_ = master
	assert.True(t, res.Confinement.Has(sandbox.LayerSession))
	require.True(t, hasViolation(res, sandbox.ViolationRefusedSyscall, "TIOCSTI"), "violations: %v", res.Violations)
	assert.True(t, res.Escaped())
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testenv.Missing(t, "no pseudo-terminals here (/dev/ptmx): %v", err)
	}
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return m, s
}

func hasViolation(res sandbox.Result, kind sandbox.ViolationKind, subject string) bool {
	for _, v := range res.Violations {
		if v.Kind == kind && strings.Contains(v.Subject, subject) {
			return true
		}
	}
	return false
}

// assertNoEscape checks that the attack did not report success.
func assertNoEscape(t *testing.T, res sandbox.Result) {
	t.Helper()
	out := string(res.Stdout) + string(res.Stderr)
	assert.NotContains(t, out, "ESCAPED", "the attack reported success")
}

// TestHardenedNoSetIDFiles tries every way to leave a set-user-ID or
// set-group-ID file in the workspace: chmod u+s and g+s, cp -p of a
// system setuid binary, install -m 4755, tar extraction, open with the
// mode. None may appear on the host, and each refusal is a violation.
func TestHardenedNoSetIDFiles(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	setuidBin := ""
	for _, c := range []string{"/usr/bin/passwd", "/usr/bin/su", "/bin/su", "/usr/bin/mount", "/usr/bin/newgrp"} {
		if fi, err := os.Stat(c); err == nil && fi.Mode()&fs.ModeSetuid != 0 {
			setuidBin = c
			break
		}
	}
	// A tar archive with a setuid and a setgid member, made on the host.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range []struct {
		name string
		mode int64
	}{{"tarsuid", 0o4755}, {"tarsgid", 0o2755}} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: m.name, Mode: m.mode, Size: 2, Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte("x\n"))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "setid.tar"), buf.Bytes(), 0o644))

	script := "cp /bin/sh ./sh1 && chmod u+s ./sh1; cp /bin/sh ./sh2 && chmod g+s ./sh2; cp /bin/sh ./sh3 && chmod 6755 ./sh3; " +
		"install -m 4755 /bin/sh ./sh4; tar -xpf setid.tar; " + probeBin + " reins-escape-probe setuid-open ./opened; "
	if setuidBin != "" {
		script += "cp -p " + setuidBin + " ./copied; "
	}
	script += "ls -l; true"
	res, err := runCmd(t, e.sandbox(t), sandbox.Command{Args: sh(script), Timeout: time.Minute})
	require.NoError(t, err, "%s", res.Stderr)
	assertNoEscape(t, res)
	// Host-side evidence: no set-id file anywhere in the workspace.
	require.NoError(t, filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		assert.Zero(t, fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid), "%s is set-id on the host: %v", p, fi.Mode())
		return nil
	}))
	assert.FileExists(t, filepath.Join(e.root, "sh1"), "the copy itself is allowed")
	assert.True(t, hasViolation(res, sandbox.ViolationRefusedSyscall, "set-user-ID"), "violations: %v", res.Violations)
}

// TestHardenedIdentity: a root launcher's command runs as the
// workspace's owner, with no capability, and cannot read /etc/shadow.
func TestHardenedIdentity(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	wantUID := os.Geteuid()
	if os.Geteuid() == 0 {
		wantUID = 65534
		require.NoError(t, os.Chown(e.root, 65534, 65534))
	}
	res, err := runCmd(t, e.sandbox(t), sandbox.Command{Args: sh("id -u; touch made; grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status; grep -c . /etc/shadow; grep -c . /etc/gshadow; cat /etc/shadow")})
	require.NoError(t, err, "%s", res.Stderr)
	out := string(res.Stdout)
	assert.True(t, strings.HasPrefix(out, fmt.Sprintf("%d\n", wantUID)), "uid: %s", out)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(e.root, "made"), &st))
	assert.Equal(t, uint32(wantUID), st.Uid, "files the command creates belong to the workspace owner")
	for _, c := range []string{"CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000"} {
		assert.Contains(t, out, c)
	}
	assert.NotContains(t, out, "root:", "/etc/shadow was readable")
	if os.Geteuid() == 0 {
		assert.True(t, res.Confinement.Has(sandbox.LayerIdentity), "%v", res.Confinement.Enforced)
	}
}

// TestHardenedReportsCreatedProtectedPaths plants a .git and a .env
// during a run; the kernel cannot stop that in a writable workspace, so
// the run reports them.
func TestHardenedReportsCreatedProtectedPaths(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	require.NoError(t, os.MkdirAll(filepath.Join(e.root, ".git"), 0o755))
	res, err := runCmd(t, e.sandbox(t), sandbox.Command{Args: sh("mkdir -p sub/.git/hooks && echo '#!/bin/sh' > sub/.git/hooks/post-checkout; echo A=1 > .env")})
	require.NoError(t, err, "%s", res.Stderr)
	assert.True(t, hasViolation(res, sandbox.ViolationProtectedCreated, filepath.Join("sub", ".git")), "%v", res.Violations)
	assert.True(t, hasViolation(res, sandbox.ViolationProtectedCreated, ".env"), "%v", res.Violations)
	assert.False(t, hasViolation(res, sandbox.ViolationProtectedCreated, e.root+"/.git"), "the .git that was there before is not new")
	assert.True(t, res.Escaped())
}

// TestHardenedNoFalseDenials covers policies that used to refuse
// ordinary work: /dev/shm as a writable path, a writable directory under
// a denied one, an allowed path that does not exist, and Command.Env.
func TestHardenedNoFalseDenials(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	secretDir := filepath.Join(e.outside, "secret")
	outDir := filepath.Join(secretDir, "out")
	require.NoError(t, os.MkdirAll(outDir, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(secretDir, "key"), []byte(secret), 0o644))
	missing := filepath.Join(e.outside, "does-not-exist")
	sb := e.sandbox(t, func(c *hardened.Config) {
		c.Policy.AllowedPaths = []string{"/dev/shm", outDir, missing}
		c.Policy.DeniedPaths = []string{secretDir}
		c.ReadOnlyPaths = append(c.ReadOnlyPaths, e.outside)
	})
	res, err := runCmd(t, sb, sandbox.Command{
		Args: sh(`echo shm > /dev/shm/reins-test-$$ && rm /dev/shm/reins-test-$$ && echo out > ` + outDir + `/w && cat ` + secretDir + `/key; echo "env=$REINS_GIVEN"`),
		Env:  []string{"REINS_GIVEN=yes"},
	})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	assert.Equal(t, "out\n", fileContent(t, filepath.Join(outDir, "w")))
	assert.NotContains(t, string(res.Stdout), secret)
	assert.Contains(t, string(res.Stdout), "env=yes")
	assert.Contains(t, strings.Join(res.Confinement.Warnings, "\n"), missing, "the missing allowed path is reported")
}

// TestHardenedNamesEveryMissingLayer: without namespaces (best effort),
// the result names each one that is missing.
func TestHardenedNamesEveryMissingLayer(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	sb := e.sandbox(t, func(c *hardened.Config) {
		c.BestEffort = true
		c.SimulateMissing = []sandbox.Layer{sandbox.LayerUserNS, sandbox.LayerMountNS, sandbox.LayerPIDNS, sandbox.LayerNetNS}
	})
	res, err := runCmd(t, sb, sandbox.Command{Args: []string{"true"}})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Subset(t, res.Confinement.Missing, []sandbox.Layer{sandbox.LayerUserNS, sandbox.LayerMountNS, sandbox.LayerPIDNS, sandbox.LayerNetNS})
}

// TestHardenedWorkloads runs everyday work under the default policy:
// it must all succeed.
func TestHardenedWorkloads(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git", "the workload runs git status, log and diff")
	requireHardened(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "go is not in PATH: %v", err)
	}
	repo := newRepo(t)
	if os.Geteuid() == 0 {
		require.NoError(t, filepath.WalkDir(repo, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, 65534, 65534)
		}))
	}
	require.NoError(t, os.Chmod(repo, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".env"), []byte("SECRET="+secret), 0o644))
	mod := filepath.Join(repo, "mod")
	require.NoError(t, os.MkdirAll(mod, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "m.go"), []byte("package m\n\n// Two is 2.\nfunc Two() int { return 2 }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(2)\n\t}\n}\n"), 0o644))
	if os.Geteuid() == 0 {
		require.NoError(t, filepath.WalkDir(repo, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, 65534, 65534)
		}))
	}
	sb := newSandbox(t, repo, func(c *hardened.Config) {
		c.ReadOnlyPaths = append(c.ReadOnlyPaths, filepath.Dir(filepath.Dir(goBin)))
	})
	steps := []struct{ name, script string }{
		{"go build and test", "cd mod && go build ./... && go test -count=1 ./..."},
		{"git status, log, diff", "echo more >> README && git status --short && git log --oneline && git diff --stat"},
		{"grep -r over masked files", "grep -r hello . && grep -rc SECRET . ; grep -r hello . >/dev/null"},
		{"find and tar", "find . -name '*.go' | sort && tar -cf /tmp/ws.tar . && tar -tf /tmp/ws.tar >/dev/null"},
		{"python3", "python3 -c 'import os, tempfile; print(os.path.isdir(tempfile.gettempdir()), os.environ[\"HOME\"])'"},
		{"sed -i", "printf 'a\\nb\\n' > s.txt && sed -i 's/a/c/' s.txt && cat s.txt"},
		{"mkdir -p and rm -rf", "mkdir -p x/y/z && touch x/y/z/f && rm -rf x && test ! -e x"},
	}
	if _, err := exec.LookPath("rg"); err == nil {
		steps = append(steps, struct{ name, script string }{"rg", "rg -n hello . && rg -c SECRET . ; true"})
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			res, err := runCmd(t, sb, sandbox.Command{Args: sh(s.script), Timeout: 5 * time.Minute})
			require.NoError(t, err, "%s", res.Stderr)
			assert.Equal(t, 0, res.ExitCode, "stdout: %s\nstderr: %s", res.Stdout, res.Stderr)
			assert.NotContains(t, string(res.Stdout), secret)
		})
	}
	_ = context.Background
}

// TestHardenedProtectionLists: the shared lists apply in the sandbox.
// Secrets (.env.production) read as empty; write-protected files (shell
// rc files, git, editor and agent configuration) are read-only.
func TestHardenedProtectionLists(t *testing.T) {
	t.Parallel()
	e := newEscEnv(t)
	writeProtected := []string{".bashrc", ".gitconfig", ".zshrc", ".mcp.json", ".vscode/settings.json", ".claude/settings.json",
		".codex/config.toml", ".idea/workspace.xml", ".gitmodules", ".ripgreprc", ".envrc", "sub/.git/config"}
	for _, p := range append(writeProtected, ".env.production") {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(e.root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.root, p), []byte(secret), 0o644))
	}
	script := "cat .env.production; echo; "
	for _, p := range writeProtected {
		script += "echo pwned >> " + p + "; rm -f " + p + "; "
	}
	script += "head -c 4 .bashrc; echo; true"
	res, err := runCmd(t, e.sandbox(t), sandbox.Command{Args: sh(script)})
	require.NoError(t, err, "%s", res.Stderr)
	assert.NotContains(t, string(res.Stdout), secret[4:], "a secret was readable, or the readable check printed too much")
	assert.Contains(t, string(res.Stdout), secret[:4], "write-protected files stay readable")
	for _, p := range append(writeProtected, ".env.production") {
		assert.Equal(t, secret, fileContent(t, filepath.Join(e.root, p)), "%s was changed", p)
	}
}
