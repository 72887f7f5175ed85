//go:build linux

package hardened_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// probeLine is one probe attack as a line of a script, its outcome
// labelled: "label: ESCAPED" or "label: blocked: ...".
func probeLine(label, attack string, args ...string) string {
	return fmt.Sprintf("printf '%s: '; %s %s %s %s; ", label, probeBin, escapeprobe.Arg, attack, strings.Join(args, " "))
}

// confineFixture is a workspace for the Confine tests: a file, a
// writable directory, a directory with an existing file and a symbolic
// link (where Confine will let the command create a file), a secret and
// a repository configuration.
func confineFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	for _, d := range []string{"w", "d", ".git"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
	}
	for name, content := range map[string]string{"f": "original", "d/old": "original", ".env": "SECRET=" + secret, ".git/config": "[core]\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	require.NoError(t, os.Symlink("old", filepath.Join(root, "d", "link")))
	return root
}

// TestHardenedConfine runs real commands under each kind of Confine and
// checks their effects on the host.
func TestHardenedConfine(t *testing.T) {
	t.Parallel()
	// Each case has a workspace of its own: root and j name the current
	// one.
	var root string
	var sb *hardened.Sandbox
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	run := func(t *testing.T, c *sandbox.Confine, script string) sandbox.Result {
		t.Helper()
		root = confineFixture(t)
		sb = newSandbox(t, root)
		require.True(t, sandbox.Enforcing(sb))
		for i, w := range c.Writable {
			if !filepath.IsAbs(w) {
				c.Writable[i] = j(w)
			}
		}
		res, err := runCmd(t, sb, sandbox.Command{Args: sh(script), Confine: c})
		require.NoError(t, err, "%s", res.Stderr)
		assert.True(t, res.Confinement.Has(sandbox.LayerConfine), "%v", res.Confinement.Enforced)
		assert.NotContains(t, string(res.Stdout)+string(res.Stderr), secret)
		return res
	}

	t.Run("read-only", func(t *testing.T) {
		res := run(t, &sandbox.Confine{}, `echo pwned > f; echo pwned > w/x; touch new; mkdir newdir; rm -f d/old; cat .env; `+
			`echo scratch > "$TMPDIR/t" && cat "$TMPDIR/t"; echo home > "$HOME/h" && cat "$HOME/h"; exit 0`)
		assert.Equal(t, "original", fileContent(t, j("f")))
		assert.Equal(t, "original", fileContent(t, j("d", "old")))
		assert.NoFileExists(t, j("w", "x"))
		assert.NoFileExists(t, j("new"))
		assert.NoDirExists(t, j("newdir"))
		assert.Equal(t, "scratch\nhome\n", string(res.Stdout), "the private /tmp and HOME stay writable")
	})
	t.Run("a writable directory and nothing else", func(t *testing.T) {
		run(t, &sandbox.Confine{Writable: []string{"w"}}, `echo in > w/x; mkdir -p w/a/b; echo pwned > f; touch new; exit 0`)
		assert.Equal(t, "in\n", fileContent(t, j("w", "x")))
		assert.DirExists(t, j("w", "a", "b"))
		assert.Equal(t, "original", fileContent(t, j("f")))
		assert.NoFileExists(t, j("new"))
	})
	t.Run("an existing file, written in place only", func(t *testing.T) {
		run(t, &sandbox.Confine{Writable: []string{"f"}}, `echo more >> f; rm -f f; mv f g; exit 0`)
		assert.Equal(t, "originalmore\n", fileContent(t, j("f")))
		assert.NoFileExists(t, j("g"))
	})
	t.Run("a file that does not exist: create rights in its directory", func(t *testing.T) {
		res := run(t, &sandbox.Confine{Writable: []string{"d/made"}},
			`echo made > d/made; mv d/made d/made2; mv d/made2 d/made; echo pwned > d/old; rm -f d/old; mv d/old d/x; `+
				`ln -sfn /etc/passwd d/link; rm -f d/link; echo pwned > f; echo other > d/other; exit 0`)
		assert.Equal(t, "made\n", fileContent(t, j("d", "made")))
		assert.Equal(t, "original", fileContent(t, j("d", "old")), "an entry that existed is pinned read-only")
		target, err := os.Readlink(j("d", "link"))
		require.NoError(t, err, "a pinned symbolic link cannot be removed")
		assert.Equal(t, "old", target, "a pinned symbolic link cannot be replaced")
		assert.Equal(t, "original", fileContent(t, j("f")))
		assert.Equal(t, "other\n", fileContent(t, j("d", "other")), "a create grant lets the command create any new name in the directory (documented)")
		assert.Empty(t, res.Confinement.Warnings)
	})
	t.Run("what cannot be granted is said", func(t *testing.T) {
		res := run(t, &sandbox.Confine{Writable: []string{"/etc/passwd", ".env", ".git/config"}}, `echo pwned >> .git/config; exit 0`)
		assert.Len(t, res.Confinement.Warnings, 3, "%q", res.Confinement.Warnings)
		assert.Equal(t, "[core]\n", fileContent(t, j(".git", "config")))
	})
}

// TestHardenedConfineReusesItsLauncher: a launcher per policy key, the
// Confine part of it: the same Confine again reuses the launcher, a
// different one gets its own.
func TestHardenedConfineReusesItsLauncher(t *testing.T) {
	t.Parallel()
	root := confineFixture(t)
	sb := newSandbox(t, root)
	runOK := func(c *sandbox.Confine) {
		t.Helper()
		res, err := runCmd(t, sb, sandbox.Command{Args: []string{"true"}, Confine: c})
		require.NoError(t, err, "%s", res.Stderr)
		require.Equal(t, 0, res.ExitCode)
	}
	w := filepath.Join(root, "w")
	runOK(&sandbox.Confine{Writable: []string{w}})
	starts := hardened.LauncherStarts(sb)
	runOK(&sandbox.Confine{Writable: []string{w}})
	runOK(&sandbox.Confine{Writable: []string{w + "/"}})
	assert.Equal(t, starts, hardened.LauncherStarts(sb), "the same Confine reuses its launcher")
	runOK(&sandbox.Confine{})
	runOK(&sandbox.Confine{Writable: []string{w}, Network: true})
	assert.Equal(t, starts+2, hardened.LauncherStarts(sb), "each other Confine gets a launcher of its own")
}

// listener accepts connections on this host's loopback and records what
// each sends.
type listener struct {
	net.Listener
	mu   sync.Mutex
	got  []string
	done chan struct{}
}

func newListener(t *testing.T) *listener {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	ln := &listener{Listener: l, done: make(chan struct{})}
	go func() {
		defer close(ln.done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			b, _ := io.ReadAll(c)
			c.Close()
			ln.mu.Lock()
			ln.got = append(ln.got, string(b))
			ln.mu.Unlock()
		}
	}()
	t.Cleanup(func() { l.Close(); <-ln.done })
	return ln
}

func (l *listener) received() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// receivedWhen returns what the listener received once it holds n
// connections' worth, or what it has after a generous bound (a loaded
// machine may take a while to schedule the accepting goroutine).
func (l *listener) receivedWhen(n int) []string {
	deadline := time.Now().Add(30 * time.Second)
	for len(l.received()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return l.received()
}

// TestHardenedConfineNetwork proves network on against off with the
// same command: a loopback listener on this host. A fresh network
// namespace has a loopback of its own, so reaching this host's listener
// proves the command shares the host's network; with the network off the
// command cannot even make the socket (seccomp), in a namespace with no
// interface.
func TestHardenedConfineNetwork(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("policy AllowNetwork %v", allow), func(t *testing.T) {
			t.Parallel()
			ln := newListener(t)
			sb := newSandbox(t, t.TempDir(), func(c *hardened.Config) { c.Policy.AllowNetwork = allow })
			attack := probe("tcp4", ln.Addr().String())

			res, err := runCmd(t, sb, sandbox.Command{Args: attack, Confine: &sandbox.Confine{Network: true}})
			require.NoError(t, err, "%s", res.Stderr)
			assert.Contains(t, string(res.Stdout), "ESCAPED", "Confine.Network true reaches this host's loopback: %s", res.Stdout)
			assert.Equal(t, []string{"escaped"}, ln.receivedWhen(1), "the listener on this host got the command's bytes")
			assert.False(t, res.Confinement.Has(sandbox.LayerNetNS))

			res, err = runCmd(t, sb, sandbox.Command{Args: attack, Confine: &sandbox.Confine{}})
			require.NoError(t, err, "%s", res.Stderr)
			assert.Contains(t, string(res.Stdout), "blocked", "Confine.Network false cuts the network: %s", res.Stdout)
			assert.True(t, res.Confinement.Has(sandbox.LayerNetNS))
			assert.True(t, res.Escaped(), "the refused socket is reported")
			assert.Equal(t, []string{"escaped"}, ln.received(), "nothing more reached the listener")
		})
	}
}

// TestHardenedBestEffortRefusesConfine: a best-effort sandbox may run
// with no confinement at all, so it does not enforce Confine and refuses
// it.
func TestHardenedBestEffortRefusesConfine(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sb := newSandbox(t, root, func(c *hardened.Config) { c.BestEffort = true })
	assert.False(t, sandbox.Enforcing(sb))
	res, err := runCmd(t, sb, sandbox.Command{Args: []string{"touch", "ran"}, Confine: &sandbox.Confine{Writable: []string{root}}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.NoFileExists(t, filepath.Join(root, "ran"))
}

// TestHardenedRunsShareNothing: whatever one run leaves (files, modes,
// extended attributes, System V IPC objects, processes), the next run of
// the same launcher does not see it.
func TestHardenedRunsShareNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	sb := newSandbox(t, root)
	marker := uniqueMarker("4711")
	first := `touch /tmp/left "$HOME/left" /dev/shm/left; chmod 700 /tmp /dev/shm; chmod 755 "$HOME"; ` +
		probeLine("xattr-tmp", "setxattr", "/tmp") + probeLine("xattr-home", "setxattr", `"$HOME"`) + probeLine("xattr-shm", "setxattr", "/dev/shm") +
		probeLine("shm", "shm-create", "5e1f") + "(setsid sleep " + marker + " >/dev/null 2>&1 &); exit 0"
	res, err := runCmd(t, sb, sandbox.Command{Args: sh(first)})
	require.NoError(t, err, "%s", res.Stderr)
	// The first run did leave all of it (else the test proves nothing).
	for _, l := range []string{"xattr-tmp: ESCAPED", "xattr-home: ESCAPED", "xattr-shm: ESCAPED", "shm: ESCAPED"} {
		require.Contains(t, string(res.Stdout), l, "the first run could not leave its traces: %s", res.Stdout)
	}
	starts := hardened.LauncherStarts(sb)

	second := `ls -A /tmp "$HOME" /dev/shm; stat -c '%n %a' /tmp "$HOME" /dev/shm; ` +
		probeLine("xattr-tmp", "xattr-seen", "/tmp") + probeLine("xattr-home", "xattr-seen", `"$HOME"`) + probeLine("xattr-shm", "xattr-seen", "/dev/shm") +
		probeLine("shm", "shm-seen", "5e1f") + `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline; echo; done; exit 0`
	res, err = runCmd(t, sb, sandbox.Command{Args: sh(second)})
	require.NoError(t, err, "%s", res.Stderr)
	out := string(res.Stdout)
	assert.Equal(t, starts, hardened.LauncherStarts(sb), "both runs went through the same launcher")
	assert.NotContains(t, out, "left", "a file of the first run")
	assert.Contains(t, out, "/tmp 1777\n", "the mode of /tmp")
	assert.Contains(t, out, "/tmp/home 700\n", "the mode of HOME")
	assert.Contains(t, out, "/dev/shm 1777\n", "the mode of /dev/shm")
	assert.NotContains(t, out, "ESCAPED", "an extended attribute or an IPC object of the first run: %s", out)
	assert.NotContains(t, out, marker, "a process of the first run")
	testenv.WaitGone(t, marker, 30*time.Second)
}

// TestHardenedIPCWithoutPIDNamespace: a run without its own pid
// namespace still gets its own IPC namespace, and reaches none of the
// host's System V objects; one that cannot have one is refused.
func TestHardenedIPCWithoutPIDNamespace(t *testing.T) {
	t.Parallel()
	const key = 0x5e1e
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|0o666)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	_, err = unix.SysvShmGet(key, 0, 0)
	require.NoError(t, err, "the host sees its own segment")

	sb := newSandbox(t, t.TempDir(), func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerPIDNS} })
	res, err := runCmd(t, sb, sandbox.Command{Args: probe("shm-seen", fmt.Sprintf("%x", key))})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Contains(t, string(res.Stdout), "blocked", "the host's segment is out of reach")
	assert.True(t, res.Confinement.Has(sandbox.LayerIPCNS))
	assert.Contains(t, res.Confinement.Missing, sandbox.LayerPIDNS)

	sb = newSandbox(t, t.TempDir(), func(c *hardened.Config) { c.SimulateMissing = []sandbox.Layer{sandbox.LayerIPCNS} })
	res, err = runCmd(t, sb, sandbox.Command{Args: probe("shm-seen", fmt.Sprintf("%x", key))})
	require.ErrorIs(t, err, sandbox.ErrUnavailable, "without an IPC namespace the run is refused")
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), string(sandbox.LayerIPCNS))
	assert.NotContains(t, string(res.Stdout), "ESCAPED")
}

// TestHardenedMasksSecretsInReadOnlyPaths: a secret inside a read-only
// directory is masked like one in the workspace.
func TestHardenedMasksSecretsInReadOnlyPaths(t *testing.T) {
	t.Parallel()
	ro := t.TempDir()
	require.NoError(t, os.Chmod(ro, 0o755))
	for _, p := range []string{".ssh/id_ed25519", "app/.env", "plain.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ro, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ro, p), []byte(secret), 0o644))
	}
	sb := newSandbox(t, t.TempDir(), func(c *hardened.Config) { c.ReadOnlyPaths = append(c.ReadOnlyPaths, ro) })
	res, err := runCmd(t, sb, sandbox.Command{Args: sh("cat " + ro + "/.ssh/id_ed25519 " + ro + "/app/.env; echo; cat " + ro + "/plain.txt")})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, "\n"+secret, string(res.Stdout), "the secrets read as nothing, the plain file as itself")
}

// TestHardenedHardLinks: a command cannot make a hard link (a name that
// would outlive the run: a link named .env to a file it reads, later
// written through by the host), and the refusal is not a violation:
// git, which tries a link first, falls back and works.
func TestHardenedHardLinks(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git", "the test commits with git inside the sandbox")
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a"), []byte("x"), 0o644))
	sb := newSandbox(t, root)
	res, err := runCmd(t, sb, sandbox.Command{Args: sh(probeLine("alias", "link", "a", "alias") + probeLine("env", "link", "a", "sub.env") +
		probeLine("tmp", "link", "a", "/tmp/a") + "exit 0")})
	require.NoError(t, err, "%s", res.Stderr)
	assert.NotContains(t, string(res.Stdout), "ESCAPED", "%s", res.Stdout)
	assert.Contains(t, string(res.Stdout), "operation not permitted")
	assert.False(t, res.Escaped(), "a refused link is not a violation: %v", res.Violations)
	assert.NoFileExists(t, filepath.Join(root, "alias"))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(root, "a"), &st))
	assert.EqualValues(t, 1, st.Nlink)

	res, err = runCmd(t, sb, sandbox.Command{Args: sh(`cd /tmp && git init -q r && cd r && echo x > f && git add f && ` +
		`git -c user.email=a@b.c -c user.name=n -c core.hooksPath=/dev/null commit -qm m && git log --oneline | wc -l`)})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	assert.Equal(t, "1\n", string(res.Stdout))
	assert.False(t, res.Escaped(), "%v", res.Violations)
}

// TestHardenedArgumentCheck: the seed's argument check. An argument
// that names a denied path (.git included) is refused, in an argument
// vector and in the words of an "sh -c" script; git itself still reads
// .git, and a script's commands the reader cannot read are left to the
// kernel.
func TestHardenedArgumentCheck(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git", "the test runs git inside the sandbox")
	repo := newRepo(t)
	require.NoError(t, os.Chmod(repo, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".env"), []byte(secret), 0o644))
	require.NoError(t, os.Symlink(".git", filepath.Join(repo, "innocent")))
	sb := newSandbox(t, repo)
	for _, args := range [][]string{
		{"cat", ".git/config"},
		{"cat", "innocent/config"},
		{"git", "--git-dir=.git", "log"},
		{"cat", ".env"},
		{"sh", "-c", "cat .git/config"},
		{"bash", "-c", "cd .git && cat config"},
		{"sh", "-c", "cat ~/.ssh/id_rsa"},
		{"sh", "-c", "cat .e*"},
	} {
		res, err := runCmd(t, sb, sandbox.Command{Args: args})
		require.ErrorIs(t, err, sandbox.ErrRefused, "%q ran: %s", args, res.Stdout)
		assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
		require.NotEmpty(t, res.Violations)
		assert.Equal(t, sandbox.ViolationDeniedPath, res.Violations[0].Kind, "%q: %v", args, res.Violations)
		assert.Empty(t, res.Stdout)
	}
	for _, args := range [][]string{
		{"git", "log", "--oneline"},
		{"sh", "-c", "git status --short && git log --oneline | wc -l"},
		{"sh", "-c", "echo .gitignore > .gitignore.txt && go version >/dev/null 2>&1; true"},
	} {
		res, err := runCmd(t, sb, sandbox.Command{Args: args})
		require.NoError(t, err, "%q: %s", args, res.Stderr)
		assert.Equal(t, 0, res.ExitCode, "%q: %s", args, res.Stderr)
		assert.True(t, res.Confinement.Has(sandbox.LayerArgs))
	}
}

// TestNewFallsBackToTheAccountHome: with HOME unset or not absolute,
// New takes the account's home directory for the ~ entries of the
// denied paths instead of failing.
func TestNewFallsBackToTheAccountHome(t *testing.T) {
	for _, home := range []string{"", "relative/home"} {
		t.Setenv("HOME", home)
		sb, err := hardened.New(hardened.Config{Root: t.TempDir()})
		require.NoError(t, err, "HOME=%q", home)
		require.NoError(t, sb.Close())
	}
}

// TestHardenedMountinfoShowsNamesNotContents documents what the mount
// table shows a command (see "Security model and limitations"): the
// place of every masked path, never what it held.
func TestHardenedMountinfoShowsNamesNotContents(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte(secret), 0o644))
	sb := newSandbox(t, root)
	res, err := runCmd(t, sb, sandbox.Command{Args: []string{"cat", "/proc/self/mountinfo"}})
	require.NoError(t, err, "%s", res.Stderr)
	resolved, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	assert.Contains(t, string(res.Stdout), resolved+"/.env ", "the mount over a masked file is listed (it cannot be hidden)")
	assert.NotContains(t, string(res.Stdout), secret)
}
