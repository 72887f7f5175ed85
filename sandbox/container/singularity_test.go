//go:build unix

package container_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/container"
)

// TestSingularityCLIMissing: with a PATH that lacks the CLI, singularity
// and apptainer report 127 and name the missing CLI, and their probes
// agree.
func TestSingularityCLIMissing(t *testing.T) {
	for _, name := range []string{"singularity", "apptainer"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			cfg := container.SingularityConfig{Root: t.TempDir(), Image: "docker://debian@sha256:00"}
			s, err := container.NewSingularity(cfg)
			if name == "apptainer" {
				s, err = container.NewApptainer(cfg)
			}
			require.NoError(t, err)
			res, err := runCmd(t, s, sandbox.Command{Args: []string{"true"}})
			require.ErrorIs(t, err, sandbox.ErrUnavailable)
			assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
			assert.Contains(t, string(res.Stderr), name+" CLI is not installed")
			assert.Empty(t, res.Confinement.Enforced)
			require.ErrorIs(t, s.Probe(context.Background()), sandbox.ErrUnavailable)
		})
	}
}

// TestSingularityArgvGolden uses a stand-in apptainer placed first on
// PATH that records its arguments and environment. It checks how the
// backend builds the CLI's argument vector, not what apptainer does with
// it.
func TestSingularityArgvGolden(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	extra := t.TempDir()
	bin := t.TempDir()
	envOut := filepath.Join(bin, "env")
	_, calls := standIn(t, bin, "apptainer", "env > '"+envOut+"'; echo out; echo err >&2; exit 4")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("REINS_ALLOWED", "host value")
	t.Setenv("APPTAINER_BIND", "/etc:/host-etc")
	s, err := container.NewApptainer(container.SingularityConfig{
		Root: root, Image: "docker://debian@sha256:00", CPUs: 1.5, MemoryBytes: 1 << 30, PIDs: 100,
		Policy: sandbox.FsNetPolicy{AllowedPaths: []string{extra}, EnvAllowlist: []string{"REINS_ALLOWED", "REINS_CMD"}},
	})
	require.NoError(t, err)
	res, err := runCmd(t, s, sandbox.Command{Args: []string{"ls", "-la", "a b"}, Dir: "sub", Env: []string{"REINS_CMD=x=y", "REINS_OTHER=no"}})
	require.NoError(t, err)
	assert.Equal(t, 4, res.ExitCode, "the command's exit status")
	assert.Equal(t, "out\n", string(res.Stdout))
	assert.Equal(t, "apptainer", res.Confinement.Backend)
	require.Len(t, calls(), 1)
	argv := calls()[0][1:]
	maskIdx := -1
	for i, a := range argv {
		if strings.HasSuffix(a, ":/workspace/.env:ro") {
			maskIdx = i
		}
	}
	require.GreaterOrEqual(t, maskIdx, 0, "%q", argv)
	want := []string{"exec", "--containall", "--cleanenv", "--no-privs", "--no-home", "--net", "--network", "none",
		"--cpus", "1.5", "--memory", "1073741824", "--memory-swap", "1073741824", "--pids-limit", "100",
		"--bind", root + ":/workspace", "--bind", extra + ":" + extra,
		"--bind", root + "/.git:/workspace/.git:ro", "--bind", "/dev/null:/workspace/.env:ro",
		"--pwd", "/workspace/sub", "docker://debian@sha256:00", "ls", "-la", "a b"}
	assert.Equal(t, want, argv)
	env, err := os.ReadFile(envOut)
	require.NoError(t, err)
	assert.Contains(t, string(env), "APPTAINERENV_REINS_ALLOWED=host value\n")
	assert.Contains(t, string(env), "APPTAINERENV_REINS_CMD=x=y\n")
	assert.Contains(t, string(env), "APPTAINERENV_REINS_OTHER=no", "Command.Env is honoured, allowlisted or not")
	assert.NotContains(t, string(env), "APPTAINER_BIND", "the host cannot add binds behind the backend's back")

	// The CLI's own failure is not the command's exit status.
	standIn(t, bin, "apptainer", "echo 'FATAL:   could not open image img.sif: no such file' >&2; exit 255")
	res, err = runCmd(t, s, sandbox.Command{Args: []string{"true"}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "could not open image")
}

func TestNewSingularityErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	comma := filepath.Join(t.TempDir(), "a,b")
	require.NoError(t, os.Mkdir(comma, 0o755))
	for _, cfg := range []container.SingularityConfig{
		{Image: "img.sif"},
		{Root: root},
		{Root: root, Image: "--writable"},
		{Root: comma, Image: "img.sif"},
		{Root: root, Image: "img.sif", CPUs: -1},
		{Root: root, Image: "img.sif", Policy: sandbox.FsNetPolicy{AllowedPaths: []string{comma}}},
		{Root: root, Image: "img.sif", Policy: sandbox.FsNetPolicy{AllowedPaths: []string{"/does/not/exist"}}},
		{Root: root, Image: "img.sif", Policy: sandbox.FsNetPolicy{DeniedPaths: []string{""}}},
	} {
		_, err := container.NewSingularity(cfg)
		assert.Error(t, err, "NewSingularity(%+v)", cfg)
	}
}

// TestSingularityConfineArgv checks the argument vector of a confined
// run with a stand-in apptainer: the workspace read-only, writable binds
// of what Confine grants (a parent before what lies in it), read-only
// binds of the entries it pins, the network switch of the Confine; and
// that a symbolic link the engine cannot pin refuses the run.
func TestSingularityConfineArgv(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src", "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "src", "a.go"), nil, 0o644))
	bin := t.TempDir()
	_, calls := standIn(t, bin, "apptainer", "exit 0")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	s, err := container.NewApptainer(container.SingularityConfig{Root: root, Image: "img.sif", Policy: sandbox.FsNetPolicy{AllowNetwork: true}})
	require.NoError(t, err)
	require.True(t, sandbox.Enforcing(s))

	res, err := runCmd(t, s, sandbox.Command{Args: []string{"ls"}, Confine: &sandbox.Confine{}})
	require.NoError(t, err)
	assert.True(t, res.Confinement.Has(sandbox.LayerConfine))
	assert.True(t, res.Confinement.Has(sandbox.LayerNetworkOff), "Confine.Network false cuts the network the policy allows")
	assert.Equal(t, []string{"exec", "--containall", "--cleanenv", "--no-privs", "--no-home", "--net", "--network", "none",
		"--bind", root + ":/workspace:ro", "--pwd", "/workspace", "img.sif", "ls"}, calls()[0][1:])

	res, err = runCmd(t, s, sandbox.Command{Args: []string{"make"}, Confine: &sandbox.Confine{Network: true,
		Writable: []string{root + "/src/pkg", root + "/src/new.go"}}})
	require.NoError(t, err)
	assert.False(t, res.Confinement.Has(sandbox.LayerNetworkOff))
	assert.Equal(t, []string{"exec", "--containall", "--cleanenv", "--no-privs", "--no-home",
		"--bind", root + ":/workspace:ro", "--bind", root + "/src:/workspace/src:rw",
		"--bind", root + "/src/pkg:/workspace/src/pkg:rw", "--bind", root + "/src/a.go:/workspace/src/a.go:ro",
		"--pwd", "/workspace", "img.sif", "make"}, calls()[1][1:])

	require.NoError(t, os.Symlink("a.go", filepath.Join(root, "src", "link")))
	res, err = runCmd(t, s, sandbox.Command{Args: []string{"make"}, Confine: &sandbox.Confine{Writable: []string{root + "/src/new.go"}}})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "symbolic link")
	assert.Len(t, calls(), 2, "the CLI must not run")
}
