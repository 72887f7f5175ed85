package container

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// TestDockerRunArgsGolden checks the exact "docker run" argument vector
// for a range of policies.
func TestDockerRunArgsGolden(t *testing.T) {
	t.Setenv("REINS_HOST_VAR", "from-host")
	t.Setenv("REINS_OVERRIDDEN", "host-value")
	root := t.TempDir()
	extra := t.TempDir()
	me := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("S=1"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", ".ssh"), 0o755))
	comma := filepath.Join(t.TempDir(), `a,b"c`)
	require.NoError(t, os.Mkdir(comma, 0o755))

	base := []string{"run", "--rm", "--name=NAME", "--init"}
	hardening := []string{"--cap-drop=ALL", "--security-opt=no-new-privileges", "--read-only", "--tmpfs=/tmp:rw,exec,nosuid,nodev"}
	join := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name string
		cfg  DockerConfig
		cmd  sandbox.Command
		want []string
	}{
		{
			name: "defaults in an empty workspace",
			cfg:  DockerConfig{Root: extra, Image: "debian@sha256:0123"},
			cmd:  sandbox.Command{Args: []string{"ls", "-la", "a b"}},
			want: join(base, []string{"--network=none", "--cpus=2", "--memory=2147483648", "--memory-swap=2147483648", "--pids-limit=512"},
				hardening, []string{"--user=" + me, "--mount=type=bind,source=" + extra + ",target=/workspace", "--workdir=/workspace",
					"debian@sha256:0123", "ls", "-la", "a b"}),
		},
		{
			name: "network allowed, custom limits, runtime, user, stdin, subdirectory",
			cfg: DockerConfig{Root: root, Image: "alpine:3", Runtime: "runsc", User: "1000:1000",
				Policy: sandbox.FsNetPolicy{AllowNetwork: true}, Limits: DockerLimits{CPUs: 0.5, MemoryBytes: 256 << 20, PIDs: 64}},
			cmd: sandbox.Command{Args: []string{"cat"}, Dir: "sub", Stdin: strings.NewReader("x")},
			want: join([]string{"run", "--rm", "--name=NAME", "--init", "--interactive", "--cpus=0.5", "--memory=268435456", "--memory-swap=268435456", "--pids-limit=64"},
				hardening, []string{"--user=1000:1000", "--runtime=runsc",
					"--mount=type=bind,source=" + root + ",target=/workspace",
					"--mount=type=bind,source=" + root + "/.git,target=/workspace/.git,readonly",
					"--mount=type=bind,source=/dev/null,target=/workspace/.env,readonly",
					"--mount=type=tmpfs,target=/workspace/sub/.ssh,tmpfs-mode=0",
					"--workdir=/workspace/sub", "alpine:3", "cat"}),
		},
		{
			name: "no limits, allowed paths with CSV quoting, env allowlist",
			cfg: DockerConfig{Root: root, Image: "img", Limits: DockerLimits{CPUs: -1, MemoryBytes: -1, PIDs: -1},
				Policy: sandbox.FsNetPolicy{AllowedPaths: []string{comma}, EnvAllowlist: []string{"PATH_NOT_SET_ANYWHERE", "REINS_HOST_VAR", "REINS_OVERRIDDEN", "REINS_CMD"}}},
			cmd: sandbox.Command{Args: []string{"env"}, Env: []string{"REINS_OVERRIDDEN=from-cmd", "REINS_CMD=x y", "REINS_NOT_ALLOWED=z"}},
			want: join(base, []string{"--network=none"}, hardening, []string{"--user=" + me,
				"--mount=type=bind,source=" + root + ",target=/workspace",
				`--mount=type=bind,"source=` + strings.ReplaceAll(comma, `"`, `""`) + `","target=` + strings.ReplaceAll(comma, `"`, `""`) + `"`,
				"--mount=type=bind,source=" + root + "/.git,target=/workspace/.git,readonly",
				"--mount=type=bind,source=/dev/null,target=/workspace/.env,readonly",
				"--mount=type=tmpfs,target=/workspace/sub/.ssh,tmpfs-mode=0",
				"--workdir=/workspace", "-e", "REINS_HOST_VAR", "-e", "REINS_OVERRIDDEN=from-cmd", "-e", "REINS_CMD=x y", "-e", "REINS_NOT_ALLOWED=z", "img", "env"}),
		},
		{
			name: "without an allowlist only Command.Env is forwarded",
			cfg:  DockerConfig{Root: extra, Image: "img", Limits: DockerLimits{CPUs: -1, MemoryBytes: -1, PIDs: -1}},
			cmd:  sandbox.Command{Args: []string{"--version"}, Env: []string{"A=1", "A=2", "B=3"}},
			want: join(base, []string{"--network=none"}, hardening, []string{"--user=" + me,
				"--mount=type=bind,source=" + extra + ",target=/workspace", "--workdir=/workspace",
				"-e", "A=2", "-e", "B=3", "img", "--version"}),
		},
	}
	// A workspace for Confine: a directory with a file, and a file.
	cw := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cw, "src", "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cw, "src", "a.go"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(cw, "go.mod"), nil, 0o644))
	tests = append(tests, []struct {
		name string
		cfg  DockerConfig
		cmd  sandbox.Command
		want []string
	}{
		{
			name: "confined read-only: the workspace read-only, no network even where the policy allows it",
			cfg:  DockerConfig{Root: cw, Image: "img", Limits: DockerLimits{CPUs: -1, MemoryBytes: -1, PIDs: -1}, Policy: sandbox.FsNetPolicy{AllowNetwork: true}},
			cmd:  sandbox.Command{Args: []string{"ls"}, Confine: &sandbox.Confine{}},
			want: join(base, []string{"--network=none"}, hardening, []string{"--user=" + me,
				"--mount=type=bind,source=" + cw + ",target=/workspace,readonly", "--workdir=/workspace", "img", "ls"}),
		},
		{
			name: "confined writes: a file, a directory, a new file whose directory's entries are pinned; network on",
			cfg:  DockerConfig{Root: cw, Image: "img", Limits: DockerLimits{CPUs: -1, MemoryBytes: -1, PIDs: -1}},
			cmd: sandbox.Command{Args: []string{"make"}, Confine: &sandbox.Confine{Network: true,
				Writable: []string{cw + "/go.mod", cw + "/src/pkg", cw + "/src/new.go", "/elsewhere/x"}}},
			want: join(base, hardening, []string{"--user=" + me,
				"--mount=type=bind,source=" + cw + ",target=/workspace,readonly",
				"--mount=type=bind,source=" + cw + "/go.mod,target=/workspace/go.mod",
				"--mount=type=bind,source=" + cw + "/src,target=/workspace/src",
				"--mount=type=bind,source=" + cw + "/src/pkg,target=/workspace/src/pkg",
				"--mount=type=bind,source=" + cw + "/src/a.go,target=/workspace/src/a.go,readonly",
				"--workdir=/workspace", "img", "make"}),
		},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDocker(tt.cfg)
			require.NoError(t, err)
			dir, vs := backend.Workdir(d.root, d.match, tt.cmd.Dir)
			require.Empty(t, vs)
			masks, ro, err := pathmatch.FindProtected(d.match, append([]string{d.root}, d.extra...))
			require.NoError(t, err)
			hostKeys, pairs := containerEnv(d.cfg.Policy.EnvAllowlist, tt.cmd.Env)
			plan, uerr := planConfine("docker", tt.cmd, append([]string{d.root}, d.extra...), d.match)
			require.Nil(t, uerr)
			got, err := d.runArgs(tt.cmd, dir, "NAME", hostKeys, pairs, masks, ro, plan)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNewDockerErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, cfg := range []DockerConfig{
		{Image: "img"},
		{Root: root},
		{Root: root, Image: "--privileged"},
		{Root: root, Image: "img", Runtime: "--x"},
		{Root: root, Image: "img", Policy: sandbox.FsNetPolicy{AllowedPaths: []string{"/does/not/exist"}}},
		{Root: root, Image: "img", Policy: sandbox.FsNetPolicy{DeniedPaths: []string{""}}},
	} {
		_, err := NewDocker(cfg)
		assert.Error(t, err, "NewDocker(%+v)", cfg)
	}
}
