package gate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Issue 23, "Boundaries, round three", at the gate: each class under the four profiles the
// issue names, for declared targets and for paths a command line names. The file's tests are
// named TestBoundary3*: TestBoundary3AsNonRoot reruns them as an unprivileged user.

// boundary3Profiles are the profiles every class is checked under.
var boundary3Profiles = []string{profile.ProfileSafe, profile.ProfileDev, profile.ProfileFullAuto, profile.PermissionReadOnly}

// b3 is one gate of a class's table: check reports a decision and clears a latched hard stop,
// so one gate answers every row.
type b3 struct {
	*fixture
	name string
}

func (f b3) declared(t *testing.T, op policy.Operation, target string) gate.Decision {
	t.Helper()
	return f.decide(t, policy.Action{Tool: "fs", Operation: op, Targets: []string{target}})
}

func (f b3) shell(t *testing.T, line string) gate.Decision {
	t.Helper()
	return f.decide(t, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line})
}

func (f b3) decide(t *testing.T, a policy.Action) gate.Decision {
	t.Helper()
	return f.check(t, a) // the decider latches nothing: every check starts from a clean state
}

// forEachProfile runs fn with a fresh fixture per profile; setup prepares the workspace
// before the gate is built (nil for none). The profiles get a DENY rule for anything outside
// the workspace, so a decision shows where the gate thinks a target lands.
func forEachProfile(t *testing.T, setup func(t *testing.T, ws string), fn func(t *testing.T, f b3)) {
	t.Helper()
	for _, name := range boundary3Profiles {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, builtin(name).WithRules(outsideRule))
			if setup != nil {
				setup(t, f.ws)
				// Rebuild on the prepared workspace, as a host starting now would.
				g, err := gate.New(builtin(name).WithRules(outsideRule), &gate.Options{Workspace: []string{f.ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
				require.NoError(t, err)
				f.g = g
			}
			fn(t, b3{f, name})
		})
	}
}

// outsideRule denies anything decided as outside the workspace, under every profile.
var outsideRule = policy.Rule{ID: "deny-outside", Priority: -1, Action: policy.Deny, Reason: "outside the workspace",
	Condition: policy.Condition{OutsideWorkspace: true}}

func assertBoundary(t *testing.T, d gate.Decision, rule, what string) {
	t.Helper()
	assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", what, d)
	assert.Equal(t, policy.LayerBoundary, d.Layer, "%s: %s", what, d)
	assert.Equal(t, rule, d.RuleID, "%s: %s", what, d)
}

func assertNotBoundary(t *testing.T, d gate.Decision, what string) {
	t.Helper()
	assert.NotEqual(t, policy.LayerBoundary, d.Layer, "%s: %s", what, d)
}

// assertOutside: the target was decided as outside the workspace (the outside rule or the
// external-write hard stop), never as a file inside it.
func assertOutside(t *testing.T, d gate.Decision, what string) {
	t.Helper()
	assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", what, d)
	assert.Contains(t, []string{"deny-outside", gate.CheckHardStopExternalWrite}, d.RuleID, "%s: %s", what, d)
}

// TestBoundary3ProcessState: paths through the process state (/proc/self, /proc/<pid>,
// /proc/thread-self, /dev/fd, /dev/std*, and every spelling reaching them, a link in the
// workspace included) are refused as ambiguous, in declared targets and command lines: the
// gate's own working directory, root and descriptors are not the command's (part 1).
func TestBoundary3ProcessState(t *testing.T) {
	t.Parallel()
	if _, err := os.Lstat("/proc/self/cwd"); err != nil {
		t.Skipf("no procfs here (%v): only Linux's procfs has links that depend on the reader", err)
	}
	pid := strconv.Itoa(os.Getpid())
	setup := func(t *testing.T, ws string) {
		require.NoError(t, os.Symlink("/dev/fd", filepath.Join(ws, "fdlink")))
		require.NoError(t, os.Symlink("/proc/self", filepath.Join(ws, "me")))
	}
	forEachProfile(t, setup, func(t *testing.T, f b3) {
		for _, target := range []string{
			"/proc/self/cwd/.aws/credentials", "/proc/self/cwd/src/pkg/main.go", "/proc/./self/cwd/x", "//proc/self/cwd/x",
			"/proc/self/root/etc/passwd", "/proc/self/root" + f.ws + "/README.md", "/proc/thread-self/cwd/x", "/proc/" + pid + "/cwd/x",
			"/proc/1/root/etc/shadow", "/proc/self/fd/0", "/dev/fd/3", "/dev/stdout", "/dev/stdin", "fdlink/1", "me/cwd/x",
			"/proc/self/fd/../cwd/x", "/proc/self/../self/cwd",
		} {
			for _, op := range []policy.Operation{policy.OpRead, policy.OpWrite} {
				assertBoundary(t, f.declared(t, op, target), gate.CheckAmbiguousPath, string(op)+" "+target)
			}
		}
		for _, line := range []string{
			"cd ~ && cat /proc/self/cwd/.aws/credentials",
			"cd .. && echo x > /proc/self/cwd/f",
			"cat /proc/self/fd/../cwd/.ssh/id_rsa",
			"cat /proc/thread-self/root/etc/shadow",
			"cat /proc/" + pid + "/cwd/README.md",
			"cp /proc/self/root/etc/passwd copy",
			"cat fdlink/3",
			"echo x > me/cwd/f",
			"cat /dev/./stdin",
		} {
			assertBoundary(t, f.shell(t, line), gate.CheckAmbiguousPath, line)
		}
		// The reader's own information and the ordinary streams are no boundary matter.
		assertNotBoundary(t, f.declared(t, policy.OpRead, "/proc/cpuinfo"), "read /proc/cpuinfo")
		assertNotBoundary(t, f.declared(t, policy.OpRead, "/proc/self/status"), "read /proc/self/status")
		for _, line := range []string{"cat /proc/cpuinfo", "cat README.md > /dev/stderr", "echo hi 2>/dev/null", "cat < /dev/stdin"} {
			assertNotBoundary(t, f.shell(t, line), line)
		}
	})
}

// TestBoundary3HardLinks: a hard link in the workspace to a protected file is that file for the
// gate (its class, for reads and writes), whether it existed when the gate started or was made
// after; making one is a write to the protected file (part 2).
func TestBoundary3HardLinks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows gives no inode numbers through os.Lstat: there is no identity index there")
	}
	setup := func(t *testing.T, ws string) {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".vscode", "settings.json"), []byte("{}"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=x"), 0o600))
		require.NoError(t, os.Link(filepath.Join(ws, ".git", "config"), filepath.Join(ws, "alias")))
		require.NoError(t, os.Link(filepath.Join(ws, ".vscode", "settings.json"), filepath.Join(ws, "src", "settings")))
		require.NoError(t, os.Link(filepath.Join(ws, ".env"), filepath.Join(ws, "docs", "env.txt")))
		require.NoError(t, os.Link(filepath.Join(ws, "README.md"), filepath.Join(ws, "docs", "readme-copy.md")))
	}
	forEachProfile(t, setup, func(t *testing.T, f b3) {
		for _, tc := range []struct {
			target      string
			read, write bool // denied by the boundary
		}{
			{"alias", true, true},
			{"docs/env.txt", true, true},
			{"src/settings", false, true},
			{"docs/readme-copy.md", false, false}, // several names, none protected
			{"README.md", false, false},
		} {
			r, w := f.declared(t, policy.OpRead, tc.target), f.declared(t, policy.OpWrite, tc.target)
			if tc.read {
				assertBoundary(t, r, gate.CheckProtectedPath, "read "+tc.target)
				assert.Contains(t, r.Reason, "another name of", tc.target)
			} else {
				assertNotBoundary(t, r, "read "+tc.target)
			}
			if tc.write {
				assertBoundary(t, w, gate.CheckProtectedPath, "write "+tc.target)
			} else {
				assertNotBoundary(t, w, "write "+tc.target)
			}
		}
		for _, line := range []string{"cat alias", "echo '[core] fsmonitor = x' >> alias", "sed -i s/a/b/ src/settings", "cat docs/env.txt",
			"ln .git/config alias2", "ln .vscode/settings.json s2", "ln -t build .env", "cp -l .vscode/settings.json s3", "cp --link alias a3"} {
			assertBoundary(t, f.shell(t, line), gate.CheckProtectedPath, line)
		}
		assertNotBoundary(t, f.shell(t, "cat src/settings"), "cat src/settings")
		assertNotBoundary(t, f.shell(t, "cat docs/readme-copy.md"), "cat docs/readme-copy.md")

		// A link made after the gate started, and after it built its index.
		require.NoError(t, os.Link(filepath.Join(f.ws, ".git", "config"), filepath.Join(f.ws, "build", "later-"+f.name)))
		later := "build/later-" + f.name
		assertBoundary(t, f.declared(t, policy.OpRead, later), gate.CheckProtectedPath, "read "+later)
		assertBoundary(t, f.shell(t, "echo x >> "+later), gate.CheckProtectedPath, "append to "+later)
	})
}

// TestBoundary3ReplacedRoots: a nested trusted root that is no longer the directory the gate
// opened is detected on the next check, and its targets are decided by what they lead to now
// (part 3): replaced by a link out of the workspace by hand, and by git checking out a
// committed symbolic link.
func TestBoundary3ReplacedRoots(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	for _, how := range []string{"rename", "git"} {
		t.Run(how, func(t *testing.T) {
			for _, name := range boundary3Profiles {
				t.Run(name, func(t *testing.T) {
					top, err := filepath.EvalSymlinks(t.TempDir())
					require.NoError(t, err)
					ws, outside := filepath.Join(top, "ws"), filepath.Join(top, "outside")
					lib := filepath.Join(ws, "vendor", "lib")
					require.NoError(t, os.MkdirAll(filepath.Join(lib, "pkg"), 0o755))
					require.NoError(t, os.MkdirAll(filepath.Join(outside, "pkg"), 0o755))
					for _, f := range []string{filepath.Join(lib, "pkg", "a.go"), filepath.Join(outside, "pkg", "a.go"), filepath.Join(ws, "README.md")} {
						require.NoError(t, os.WriteFile(f, []byte("package a\n"), 0o644))
					}
					var replace func()
					switch how {
					case "rename":
						replace = func() {
							require.NoError(t, os.Rename(lib, lib+".old"))
							require.NoError(t, os.Symlink("../../outside", lib))
						}
					case "git":
						git := testenv.RequireTool(t, "git", "the test checks out a committed symbolic link; .ci/run installs git")
						run := func(args ...string) {
							c := exec.Command(git, append([]string{"-C", ws, "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"}, args...)...)
							c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+top)
							out, err := c.CombinedOutput()
							require.NoError(t, err, "git %v: %s", args, out)
						}
						run("init", "-q", "-b", "main")
						run("add", "-A")
						run("commit", "-q", "-m", "lib as a directory")
						run("checkout", "-q", "-b", "evil")
						run("rm", "-q", "-r", "vendor/lib")
						require.NoError(t, os.RemoveAll(lib))
						require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755)) // git rm took the empty parent
						require.NoError(t, os.Symlink("../../outside", lib))
						run("add", "-A")
						run("commit", "-q", "-m", "lib as a link out")
						run("checkout", "-q", "main")
						replace = func() { run("checkout", "-q", "evil") }
					}
					p := builtin(name).WithRules(outsideRule)
					p.TrustedPaths = []string{lib}
					g, err := gate.New(p, &gate.Options{Workspace: []string{ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
					require.NoError(t, err)
					f := b3{&fixture{g: g, ws: ws}, name}
					inside := []string{filepath.Join(lib, "pkg", "a.go"), filepath.Join(lib, "pkg", "b.go"), "vendor/lib/pkg/a.go"}
					for _, target := range inside {
						d := f.declared(t, policy.OpRead, target)
						assert.NotEqual(t, "deny-outside", d.RuleID, "before: read %s: %s", target, d)
					}
					replace()
					fi, err := os.Lstat(lib)
					require.NoError(t, err)
					require.NotZero(t, fi.Mode()&os.ModeSymlink, "vendor/lib is a link now")
					for _, target := range inside {
						assertOutside(t, f.declared(t, policy.OpRead, target), "after: read "+target)
						assertOutside(t, f.declared(t, policy.OpWrite, target), "after: write "+target)
					}
					assertOutside(t, f.shell(t, "cat "+filepath.Join(lib, "pkg", "a.go")), "after: cat")
					assertOutside(t, f.shell(t, "echo x > vendor/lib/pkg/a.go"), "after: echo >")
				})
			}
		})
	}
}

// TestBoundary3HomeSpellings: a declared target that starts with ~ or $HOME is the home
// directory, as a shell expands it, never a folder named "~" in the workspace; ~user and other
// leading $ expansions are refused as ambiguous (part 5). Not parallel: it sets HOME.
func TestBoundary3HomeSpellings(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("k"), 0o600))
	t.Setenv("HOME", home)
	setup := func(t *testing.T, ws string) {
		// What the literal reading would find: a folder named "~" (and "$HOME") in the workspace.
		for _, d := range []string{"~/.aws", "$HOME/.aws", "${HOME}/.aws"} {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
		}
	}
	forEachProfile(t, setup, func(t *testing.T, f b3) {
		for _, target := range []string{"~/.aws/credentials", "$HOME/.aws/credentials", "${HOME}/.aws/credentials", "~/.aws", "~/../" + filepath.Base(home) + "/.aws/config"} {
			assertBoundary(t, f.declared(t, policy.OpRead, target), gate.CheckProtectedPath, "read "+target)
			// A write is stopped one layer earlier, as a write outside the workspace, where
			// the profile halts on one.
			w := f.declared(t, policy.OpWrite, target)
			assert.Equal(t, policy.Deny, w.Verdict, "write %s: %s", target, w)
			assert.Contains(t, []string{gate.CheckProtectedPath, gate.CheckHardStopExternalWrite}, w.RuleID, "write %s: %s", target, w)
		}
		for _, target := range []string{"~/notes.txt", "$HOME/notes.txt", "~"} {
			assertOutside(t, f.declared(t, policy.OpRead, target), "read "+target)
			assertOutside(t, f.declared(t, policy.OpWrite, target), "write "+target)
		}
		for _, target := range []string{"~root/.ssh/id_rsa", "~+/x", "~-/x", "$TMPDIR/x", "${XDG_CONFIG_HOME}/gh/hosts.yml", "$AWS_SHARED_CREDENTIALS_FILE", "$(pwd)/x", "${HOME}x"} {
			for _, op := range []policy.Operation{policy.OpRead, policy.OpWrite} {
				assertBoundary(t, f.declared(t, op, target), gate.CheckAmbiguousPath, string(op)+" "+target)
			}
		}
		// A "$" further in is literal, as a file name holds it (Outer$Inner.class).
		assertNotBoundary(t, f.declared(t, policy.OpRead, "build/Outer$Inner.class"), "read build/Outer$Inner.class")
	})
	_, err = os.Stat(filepath.Join(home, "notes.txt"))
	assert.True(t, os.IsNotExist(err))
}

// TestBoundary3GitDirectory: direct reads and writes of .git are denied, declared or in a
// command line (remote URLs in .git/config can hold tokens), while git's own commands, which
// name no .git path, are decided as before (part 6).
func TestBoundary3GitDirectory(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, ws string) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[remote \"origin\"]\n\turl = https://user:token@example.com/r.git\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub", ".git"), 0o755))
		if runtime.GOOS != "windows" { // symbolic links need a privilege there
			require.NoError(t, os.Symlink(".git", filepath.Join(ws, "gitlink")))
		}
	}
	forEachProfile(t, setup, func(t *testing.T, f b3) {
		targets := []string{".git/config", ".git/HEAD", ".git", "sub/.git/config", ".GIT/config", f.ws + "/.git/config"}
		lines := []string{"cat .git/config", "grep url .git/config", "less .git/config", "head .git/HEAD", "ls .git",
			"cd .git && cat config", "cp .git/config copy", "tar czf r.tgz .git", "echo x >> .git/config"}
		if runtime.GOOS != "windows" {
			targets, lines = append(targets, "gitlink/config"), append(lines, "cat gitlink/config")
		}
		for _, target := range targets {
			for _, op := range []policy.Operation{policy.OpRead, policy.OpWrite, policy.OpDelete} {
				assertBoundary(t, f.declared(t, op, target), gate.CheckProtectedPath, string(op)+" "+target)
			}
		}
		for _, line := range lines {
			assertBoundary(t, f.shell(t, line), gate.CheckProtectedPath, line)
		}
		for _, line := range []string{"git status", "git log --oneline -5", "git diff", "git diff --stat HEAD"} {
			d := f.shell(t, line)
			assertNotBoundary(t, d, line)
			if d.Verdict == policy.Deny { // PROFILE-SAFE blocks every shell line by a rule
				assert.Equal(t, policy.LayerRule, d.Layer, "%s under %s: %s", line, f.name, d)
			}
		}
	})
}

// TestBoundary3AsNonRoot reruns this file's tests as an unprivileged user (uid and gid 65534)
// through util-linux's setpriv: permissions decide what the gate may read of /proc and of the
// workspace (TestBoundary3UnreadableDirectory only runs there).
func TestBoundary3AsNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already running as a non-root user: this run is the non-root run")
	}
	setpriv := testenv.RequireTool(t, "setpriv", "the non-root run drops to uid 65534 with util-linux's setpriv; .ci/run installs it")
	dir, err := os.MkdirTemp("", "reins-gate-nonroot-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.Chown(dir, 65534, 65534))
	bin := filepath.Join(dir, "gate.test")
	self, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	c := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
		bin, "-test.run=^TestBoundary3", "-test.v", "-test.count=1")
	c.Dir = dir
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=" + dir, testenv.StrictEnv + "=" + os.Getenv(testenv.StrictEnv)}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "non-root run failed:\n%s", out)
	for _, name := range []string{"TestBoundary3ProcessState", "TestBoundary3HardLinks", "TestBoundary3ReplacedRoots", "TestBoundary3HomeSpellings",
		"TestBoundary3GitDirectory", "TestBoundary3UnreadableDirectory"} {
		assert.Contains(t, string(out), "--- PASS: "+name)
	}
	t.Logf("non-root run: %d tests passed", strings.Count(string(out), "--- PASS"))
}

// TestBoundary3UnreadableDirectory: as an unprivileged user, a directory the gate may enter but
// not list hides a file's other names from the identity index, so a file with several names
// that the index does not know is refused (unknown is not allowed); a directory nobody may
// enter hides nothing anyone could link. Only meaningful where permissions apply (not root).
func TestBoundary3UnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory: TestBoundary3AsNonRoot runs this as uid 65534")
	}
	t.Parallel()
	forEachProfile(t, func(t *testing.T, ws string) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), nil, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "one.txt"), nil, 0o644))
		require.NoError(t, os.Mkdir(filepath.Join(ws, "hidden"), 0o755))
		require.NoError(t, os.Link(filepath.Join(ws, "a.txt"), filepath.Join(ws, "hidden", "b.txt")))
		require.NoError(t, os.Chmod(filepath.Join(ws, "hidden"), 0o311)) // enter, not list
		t.Cleanup(func() { _ = os.Chmod(filepath.Join(ws, "hidden"), 0o755) })
	}, func(t *testing.T, f b3) {
		d := f.declared(t, policy.OpRead, "a.txt")
		assertBoundary(t, d, gate.CheckProtectedPath, "read a.txt")
		assert.Contains(t, d.Reason, fspath.IncompleteIndexEntry)
		assertNotBoundary(t, f.declared(t, policy.OpRead, "one.txt"), "read one.txt")
		require.NoError(t, os.Chmod(filepath.Join(f.ws, "hidden"), 0o200)) // nobody may enter
		g, err := gate.New(builtin(f.name), &gate.Options{Workspace: []string{f.ws}, ConfigDir: filepath.Join(t.TempDir(), "reins")})
		require.NoError(t, err)
		d = g.Decide(nil, policy.Action{Tool: "fs", Operation: policy.OpRead, Targets: []string{"a.txt"}}, nil)
		assertNotBoundary(t, d, "read a.txt, hidden closed")
	})
}
