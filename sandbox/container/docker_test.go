//go:build unix

package container_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/container"
)

// TestDockerCLIMissing runs with a PATH that has no docker: 127, a
// stderr that names the missing CLI, and the registry probe agrees.
func TestDockerCLIMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	d, err := container.NewDocker(container.DockerConfig{Root: t.TempDir(), Image: "debian"})
	require.NoError(t, err)
	res, err := runCmd(t, d, sandbox.Command{Args: []string{"true"}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "docker CLI is not installed")
	assert.Empty(t, res.Confinement.Enforced, "nothing ran, nothing was enforced")
	err = d.Probe(context.Background())
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), "docker CLI is not installed")
}

// TestDockerDaemonUnreachable uses the real docker CLI against a socket
// where no daemon listens: 127, "daemon is unreachable", and nothing but
// "docker version" was called (a wrapper first on PATH records every
// call before handing it to the real CLI).
func TestDockerDaemonUnreachable(t *testing.T) {
	real := testenv.RequireTool(t, "docker", "this test drives the real docker CLI against a socket without a daemon (apt-get install docker.io or docker-ce-cli); TestDockerCLIMissing covers its absence")
	bin := t.TempDir()
	_, calls := standIn(t, bin, "docker", "exec '"+real+"' \"$@\"")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	root := t.TempDir()
	d, err := container.NewDocker(container.DockerConfig{Root: root, Image: "debian", Host: "unix://" + filepath.Join(t.TempDir(), "no-daemon.sock")})
	require.NoError(t, err)
	res, err := runCmd(t, d, sandbox.Command{Args: []string{"touch", "ran"}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "daemon is unreachable")
	assert.Contains(t, string(res.Stderr), "no-daemon.sock", "docker's own message is kept")
	assert.NoFileExists(t, filepath.Join(root, "ran"))
	for _, c := range calls() {
		assert.Contains(t, c, "version", "only the preflight may run: %q", c)
		assert.NotContains(t, c, "run", "nothing may be run: %q", c)
	}
	require.ErrorIs(t, d.Probe(context.Background()), sandbox.ErrUnavailable)
}

// TestDockerExitCodes drives the backend with a stand-in docker (first
// on PATH) that answers "version" and then fails "run" in docker's
// ways. It checks how exit codes are reported, not what docker does.
func TestDockerExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		run      string
		wantCode int
		wantErr  error
		stderr   string
	}{
		{"the command's exit status", "printf out; printf err >&2; exit 3", 3, nil, "err"},
		{"docker's own failure (125)", "printf 'docker: Error response from daemon: pull access denied for x\\n' >&2; exit 125", sandbox.ExitUnavailable, sandbox.ErrUnavailable, "pull access denied"},
		{"a command that cannot be invoked (126)", "printf 'docker: Error response from daemon: failed to create task: permission denied\\n' >&2; exit 126", sandbox.ExitUnavailable, sandbox.ErrUnavailable, "docker exit code 126"},
		{"the command's own 126", "printf 'sh: 1: ./x: Permission denied\\n' >&2; exit 126", 126, nil, "Permission denied"},
		{"a program missing in the image (127)", "printf 'docker: Error response from daemon: exec: \"nope\": executable file not found in $PATH\\n' >&2; exit 127", 127, nil, "executable file not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			_, calls := standIn(t, bin, "docker", `case "$1" in version) echo 28.0.0;; rm) exit 0;; run) `+tt.run+`;; esac`)
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			d, err := container.NewDocker(container.DockerConfig{Root: t.TempDir(), Image: "img"})
			require.NoError(t, err)
			res, err := runCmd(t, d, sandbox.Command{Args: []string{"sh", "-c", "exit 3"}})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, "docker", res.Confinement.Backend)
				assert.True(t, res.Confinement.Has(sandbox.LayerNetworkOff))
			}
			assert.Equal(t, tt.wantCode, res.ExitCode)
			assert.Contains(t, string(res.Stderr), tt.stderr)
			require.Len(t, calls(), 2, "version, then run")
			assert.Equal(t, "run", calls()[1][1])
		})
	}
}

// TestDockerTimeoutRemovesTheContainer checks, with a stand-in docker
// whose "run" hangs, that a timeout removes the container by name.
func TestDockerTimeoutRemovesTheContainer(t *testing.T) {
	bin := t.TempDir()
	_, calls := standIn(t, bin, "docker", `case "$1" in version) echo 28.0.0;; rm) exit 0;; run) exec sleep 30;; esac`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	d, err := container.NewDocker(container.DockerConfig{Root: t.TempDir(), Image: "img"})
	require.NoError(t, err)
	start := time.Now()
	res, err := runCmd(t, d, sandbox.Command{Args: []string{"sleep", "30"}, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.NotZero(t, res.ExitCode)
	assert.Less(t, time.Since(start), 20*time.Second)
	cs := calls()
	require.GreaterOrEqual(t, len(cs), 3, "version, run, rm")
	var name string
	for _, a := range cs[1] {
		if n, ok := strings.CutPrefix(a, "--name="); ok {
			name = n
		}
	}
	require.NotEmpty(t, name)
	assert.Equal(t, []string{"rm", "--force", name}, cs[2][1:])
}
