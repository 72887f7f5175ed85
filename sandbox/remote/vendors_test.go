//go:build unix

package remote_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/remote"
)

// vendorCase builds one vendor backend for the tests below.
type vendorCase struct {
	name string // backend name
	cli  string // the CLI's name on PATH
	// auth sets what the backend needs to find credentials (t.Setenv).
	auth func(t *testing.T)
	// noAuth clears them.
	noAuth func(t *testing.T)
	build  func(t *testing.T, root string) sandbox.Sandbox
}

func clearEnv(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

func vendorCases() []vendorCase {
	return []vendorCase{
		{
			name: "modal", cli: "modal",
			auth: func(t *testing.T) { t.Setenv("MODAL_TOKEN_ID", "ak-test"); t.Setenv("MODAL_TOKEN_SECRET", "as-test") },
			noAuth: func(t *testing.T) {
				clearEnv(t, "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET")
				t.Setenv("MODAL_CONFIG_PATH", "/nonexistent/modal.toml")
			},
			build: func(t *testing.T, root string) sandbox.Sandbox {
				m, err := remote.NewModal(remote.ModalConfig{Root: root, Image: "debian@sha256:00"})
				require.NoError(t, err)
				return m
			},
		},
		{
			name: "daytona", cli: "daytona",
			auth:   func(t *testing.T) { t.Setenv("DAYTONA_API_KEY", "dtn-test") },
			noAuth: func(t *testing.T) { clearEnv(t, "DAYTONA_API_KEY"); t.Setenv("DAYTONA_CONFIG_DIR", t.TempDir()) },
			build: func(t *testing.T, root string) sandbox.Sandbox {
				d, err := remote.NewDaytona(remote.DaytonaConfig{Sandbox: "sb-1", RemoteDir: root})
				require.NoError(t, err)
				return d
			},
		},
		{
			name: "vercel-sandbox", cli: "sandbox",
			auth:   func(t *testing.T) { t.Setenv("VERCEL_AUTH_TOKEN", "vt-test") },
			noAuth: func(t *testing.T) { clearEnv(t, "VERCEL_AUTH_TOKEN", "VERCEL_OIDC_TOKEN") },
			build: func(t *testing.T, root string) sandbox.Sandbox {
				v, err := remote.NewVercelSandbox(remote.VercelSandboxConfig{RemoteDir: root})
				require.NoError(t, err)
				return v
			},
		},
	}
}

// TestVendorCLIMissing: with a PATH that lacks the CLI, every vendor
// backend reports 127 and names the missing CLI, and its probe agrees.
func TestVendorCLIMissing(t *testing.T) {
	for _, vc := range vendorCases() {
		t.Run(vc.name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			vc.auth(t)
			sb := vc.build(t, t.TempDir())
			res, err := runCmd(t, sb, sandbox.Command{Args: []string{"true"}})
			require.ErrorIs(t, err, sandbox.ErrUnavailable)
			assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
			assert.Contains(t, string(res.Stderr), "CLI is not installed")
			assert.Contains(t, string(res.Stderr), vc.cli)
			assert.Empty(t, res.Confinement.Enforced)
			perr := sb.(interface{ Probe(context.Context) error }).Probe(context.Background())
			require.ErrorIs(t, perr, sandbox.ErrUnavailable)
		})
	}
}

// TestVendorNotAuthenticated: the CLI is there (a stand-in first on
// PATH) but no credentials are: 127, a stderr that says so, and the CLI
// is never called.
func TestVendorNotAuthenticated(t *testing.T) {
	for _, vc := range vendorCases() {
		t.Run(vc.name, func(t *testing.T) {
			bin := t.TempDir()
			_, calls := standIn(t, bin, vc.cli, "exit 0")
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			vc.noAuth(t)
			sb := vc.build(t, t.TempDir())
			res, err := runCmd(t, sb, sandbox.Command{Args: []string{"true"}})
			require.ErrorIs(t, err, sandbox.ErrUnavailable)
			assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
			assert.Contains(t, string(res.Stderr), "not authenticated")
			assert.Empty(t, calls(), "an unauthenticated CLI is never started")
		})
	}
}

// TestVendorNeverFakesSuccess: a CLI that exits 0 without running the
// script (a stand-in first on PATH) is reported as unavailable, never as
// the command's success.
func TestVendorNeverFakesSuccess(t *testing.T) {
	for _, vc := range vendorCases() {
		t.Run(vc.name, func(t *testing.T) {
			bin := t.TempDir()
			_, calls := standIn(t, bin, vc.cli, "echo 'all good'; exit 0")
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			vc.auth(t)
			res, err := runCmd(t, vc.build(t, t.TempDir()), sandbox.Command{Args: []string{"true"}})
			require.ErrorIs(t, err, sandbox.ErrUnavailable)
			assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
			assert.Contains(t, string(res.Stderr), "without reporting the command's exit status")
			assert.Len(t, calls(), 1)
		})
	}
}

// TestVendorStdinRefused: the vendor CLIs cannot pass standard input,
// so a command with Stdin is refused rather than run without it.
func TestVendorStdinRefused(t *testing.T) {
	for _, vc := range vendorCases() {
		t.Run(vc.name, func(t *testing.T) {
			res, err := runCmd(t, vc.build(t, t.TempDir()), sandbox.Command{Args: []string{"cat"}, Stdin: strings.NewReader("x")})
			require.ErrorIs(t, err, sandbox.ErrUnavailable)
			assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
		})
	}
}

// The golden tests below use a stand-in executable placed first on
// PATH that records its arguments. They only check how each backend
// builds the CLI's argument vector, not what the vendor does with it.

// scriptOf replaces the script argument at index i of argv by a
// placeholder and returns it.
func scriptOf(t *testing.T, argv []string, i int) string {
	t.Helper()
	require.Greater(t, len(argv), i)
	s := argv[i]
	argv[i] = "<script>"
	return s
}

func TestModalArgvGolden(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("SECRET=1"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main"), 0o644))
	bin := t.TempDir()
	listing := filepath.Join(bin, "uploaded")
	// The stand-in lists what --add-local would upload.
	_, calls := standIn(t, bin, "modal", `while [ $# -gt 0 ]; do if [ "$1" = --add-local ]; then (cd "$2" && find . | sort > '`+listing+`'); fi; shift; done`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("MODAL_TOKEN_ID", "ak")
	t.Setenv("MODAL_TOKEN_SECRET", "as")
	m, err := remote.NewModal(remote.ModalConfig{Root: root, Image: "python:3.12@sha256:00", CPU: 2, MemoryMiB: 1024, GPU: "t4",
		Secrets: []string{"s1"}, Volumes: []string{"v1"}, Region: "us-east", Environment: "dev"})
	require.NoError(t, err)
	_, err = runCmd(t, m, sandbox.Command{Args: []string{"printf", "%s", `a "quoted" \ arg`}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable, "the stand-in runs nothing")
	require.Len(t, calls(), 1)
	argv := calls()[0][1:]
	script := scriptOf(t, argv, len(argv)-1)
	require.Len(t, argv, 21)
	assert.Equal(t, []string{"shell", "--env", "dev", "--image", "python:3.12@sha256:00", "--add-local"}, argv[:6])
	assert.Equal(t, "proj", filepath.Base(argv[6]), "the staged copy keeps the workspace's name")
	assert.Equal(t, []string{"--volume", "v1", "--secret", "s1", "--cpu", "2", "--memory", "1024", "--gpu", "t4", "--region", "us-east", "--cmd", "<script>"}, argv[7:])
	uploaded, err := os.ReadFile(listing)
	require.NoError(t, err)
	assert.Equal(t, ".\n./main.go\n", string(uploaded), "denied paths are never uploaded")
	// modal wraps --cmd as /bin/bash -c "<cmd>" and splits it with shlex:
	// only \ and " are escaped.
	unescaped := strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(script)
	assert.Contains(t, unescaped, "cd /mnt/proj ||")
	assert.Contains(t, unescaped, `printf %s 'a "quoted" \ arg'`)
	assert.NotContains(t, strings.ReplaceAll(script, `\"`, ""), `"`, "every double quote is escaped")
}

func TestDaytonaArgvGolden(t *testing.T) {
	bin := t.TempDir()
	_, calls := standIn(t, bin, "daytona", "exit 0")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DAYTONA_API_KEY", "k")
	d, err := remote.NewDaytona(remote.DaytonaConfig{Sandbox: "my-sandbox", RemoteDir: "/home/daytona/project"})
	require.NoError(t, err)
	_, err = runCmd(t, d, sandbox.Command{Args: []string{"go", "test", "./..."}, Dir: "pkg"})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	require.Len(t, calls(), 1)
	argv := calls()[0][1:]
	wrapped := scriptOf(t, argv, len(argv)-1)
	assert.Equal(t, []string{"exec", "my-sandbox", "--timeout", "300", "--", "bash", "-c", "<script>"}, argv)
	enc, ok := strings.CutPrefix(wrapped, `eval "$(printf %s `)
	require.True(t, ok, wrapped)
	enc, ok = strings.CutSuffix(enc, ` | base64 -d)"`)
	require.True(t, ok, wrapped)
	assert.NotContains(t, wrapped, "'", "no single quote for daytona's re-splitting to trip on")
	script, err := base64.StdEncoding.DecodeString(enc)
	require.NoError(t, err)
	assert.Contains(t, string(script), "cd /home/daytona/project ||")
	assert.Contains(t, string(script), "cd /home/daytona/project/pkg ||")
	assert.Contains(t, string(script), "env -- go test ./...")
}

func TestVercelSandboxArgvGolden(t *testing.T) {
	bin := t.TempDir()
	envOut := filepath.Join(bin, "env")
	_, calls := standIn(t, bin, "sandbox", "env > '"+envOut+"'")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	clearEnv(t, "VERCEL_AUTH_TOKEN", "VERCEL_OIDC_TOKEN")
	v, err := remote.NewVercelSandbox(remote.VercelSandboxConfig{Runtime: "node24", VCPUs: 4, Project: "p", Team: "t", Token: "secret-token",
		Policy: sandbox.FsNetPolicy{EnvAllowlist: []string{"PATH", "NODE_ENV"}}})
	require.NoError(t, err)
	_, err = runCmd(t, v, sandbox.Command{Args: []string{"npm", "test"}, Env: []string{"NODE_ENV=test"}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	require.Len(t, calls(), 1)
	argv := calls()[0][1:]
	script := scriptOf(t, argv, len(argv)-1)
	assert.Equal(t, []string{"run", "--rm", "--runtime", "node24", "--vcpus", "4", "--timeout", "360s", "--network-policy", "deny-all",
		"--project", "p", "--scope", "t", "--", "bash", "-c", "<script>"}, argv)
	assert.Contains(t, script, "cd /vercel/sandbox ||")
	assert.Contains(t, script, `env -i -- ${PATH+"PATH=$PATH"} ${NODE_ENV+"NODE_ENV=$NODE_ENV"} 'NODE_ENV=test' npm test`)
	assert.NotContains(t, strings.Join(calls()[0], " "), "secret-token", "the token never appears in the arguments")
	env, err := os.ReadFile(envOut)
	require.NoError(t, err)
	assert.Contains(t, string(env), "VERCEL_AUTH_TOKEN=secret-token\n")

	allow, err := remote.NewVercelSandbox(remote.VercelSandboxConfig{Snapshot: "snap_1", Token: "x", Policy: sandbox.FsNetPolicy{AllowNetwork: true}})
	require.NoError(t, err)
	_, _ = runCmd(t, allow, sandbox.Command{Args: []string{"true"}})
	argv = calls()[1][1:]
	scriptOf(t, argv, len(argv)-1)
	assert.Equal(t, []string{"run", "--rm", "--snapshot", "snap_1", "--timeout", "360s", "--network-policy", "allow-all", "--", "bash", "-c", "<script>"}, argv)

	// A Confine decides the network either way; the sandbox is removed
	// after the run, so nothing it writes reaches this host.
	require.True(t, sandbox.Enforcing(allow))
	_, _ = runCmd(t, allow, sandbox.Command{Args: []string{"true"}, Confine: &sandbox.Confine{Writable: []string{"/x"}}})
	argv = calls()[2][1:]
	scriptOf(t, argv, len(argv)-1)
	assert.Equal(t, []string{"run", "--rm", "--snapshot", "snap_1", "--timeout", "360s", "--network-policy", "deny-all", "--", "bash", "-c", "<script>"}, argv)
	_, _ = runCmd(t, v, sandbox.Command{Args: []string{"true"}, Confine: &sandbox.Confine{Network: true}})
	argv = calls()[3][1:]
	scriptOf(t, argv, len(argv)-1)
	assert.Contains(t, argv, "allow-all", "Confine.Network true lets the command reach the network the policy denies")
}

// TestRemoteRefusesConfine: ssh, modal and daytona cannot enforce a
// Confine; a command with one is refused (127) before any CLI runs.
func TestRemoteRefusesConfine(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var all []func() [][]string
	for _, name := range []string{"ssh", "modal", "daytona"} {
		_, calls := standIn(t, bin, name, "exit 0")
		all = append(all, calls)
	}
	sshB, err := remote.NewSSH(remote.SSHConfig{Host: "example.invalid", RemoteDir: "/srv"})
	require.NoError(t, err)
	modal, err := remote.NewModal(remote.ModalConfig{Root: t.TempDir()})
	require.NoError(t, err)
	daytona, err := remote.NewDaytona(remote.DaytonaConfig{Sandbox: "s", RemoteDir: "/home/daytona"})
	require.NoError(t, err)
	for _, sb := range []sandbox.Sandbox{sshB, modal, daytona} {
		assert.False(t, sandbox.Enforcing(sb))
		res, err := runCmd(t, sb, sandbox.Command{Args: []string{"true"}, Confine: &sandbox.Confine{Network: true}})
		require.ErrorIs(t, err, sandbox.ErrUnavailable, "%T", sb)
		assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
		assert.Contains(t, string(res.Stderr), "cannot confine")
	}
	for _, calls := range all {
		assert.Empty(t, calls(), "a CLI ran for a refused Confine")
	}
}

// TestVendorTransportEmulated runs the daytona and vercel-sandbox
// backends against stand-ins that run the script with the local bash,
// the way the vendor would in its sandbox: it checks the backends'
// quoting, framing and decoding end to end, not the vendors.
func TestVendorTransportEmulated(t *testing.T) {
	bin := t.TempDir()
	// daytona exec SANDBOX --timeout N -- bash -c SCRIPT: run the last
	// argument; its output reaches the CLI's stdout only (daytona merges
	// the streams).
	standIn(t, bin, "daytona", `for a; do last=$a; done; bash -c "$last" 2>&1`)
	standIn(t, bin, "sandbox", `echo '$ sandbox exec banner' >&2; for a; do last=$a; done; bash -c "$last"; echo 'CLI done'`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DAYTONA_API_KEY", "k")
	t.Setenv("VERCEL_AUTH_TOKEN", "t")
	for _, name := range []string{"daytona", "vercel-sandbox"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			rec := writeArgvRecorder(t, root, "record-argv")
			var sb sandbox.Sandbox
			var err error
			if name == "daytona" {
				sb, err = remote.NewDaytona(remote.DaytonaConfig{Sandbox: "s", RemoteDir: root})
			} else {
				sb, err = remote.NewVercelSandbox(remote.VercelSandboxConfig{RemoteDir: root, Token: "t"})
			}
			require.NoError(t, err)
			res, err := runCmd(t, sb, sandbox.Command{Args: append([]string{rec, filepath.Join(root, "argv")}, remote.HostileArgs...)})
			require.NoError(t, err, "%s", res.Stderr)
			got, err := os.ReadFile(filepath.Join(root, "argv"))
			require.NoError(t, err)
			assert.Equal(t, remote.HostileArgs, remote.SplitNUL(got))

			res, err = runCmd(t, sb, sandbox.Command{Args: []string{"sh", "-c", "printf out; printf err >&2; exit 5"}})
			require.NoError(t, err)
			assert.Equal(t, 5, res.ExitCode)
			assert.Equal(t, "out", string(res.Stdout))
			assert.Equal(t, "err", string(res.Stderr))
			assert.Equal(t, name, res.Confinement.Backend)

			require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(root, "escape")))
			res, err = runCmd(t, sb, sandbox.Command{Args: []string{"touch", "x"}, Dir: "escape"})
			require.ErrorIs(t, err, sandbox.ErrRefused, "the far side follows the link and refuses")
			assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
		})
	}
}
