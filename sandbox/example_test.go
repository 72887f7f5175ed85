package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reins-go/reins/sandbox"
)

// The local backend refuses a command whose argument names a denied
// path, before anything runs.
func Example() {
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	sb, err := sandbox.NewLocal(sandbox.LocalConfig{Root: root})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sb.Run(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "echo x > .git/config"}})
	fmt.Println(errors.Is(err, sandbox.ErrDenied), res.ExitCode, res.Violations[0].Kind)
	res, err = sb.Run(context.Background(), sandbox.Command{Args: []string{"echo", "hello"}})
	fmt.Print(string(res.Stdout), err)
	// Output:
	// true 126 denied-path
	// hello
	// <nil>
}

// A registry maps the backend names that profiles use to backends.
func ExampleRegistry() {
	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{})
	fmt.Println(r.Names())
	_, err := r.Open(context.Background(), "podman", os.TempDir())
	fmt.Println(errors.Is(err, sandbox.ErrUnknownBackend))
	// Output:
	// [apptainer daytona docker local modal singularity ssh vercel-sandbox]
	// true
}

// A backend that drives a CLI reports a missing tool with exit code 127
// and runs nothing; here the docker CLI is not where the configuration
// says.
func ExampleNewDocker() {
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	d, err := sandbox.NewDocker(sandbox.DockerConfig{
		Root:  root,
		Image: "debian@sha256:4b6ba4b7dd9e0b9c1e1d2e7f5c0e0b3a5c8f4e6d2a1b0c9d8e7f6a5b4c3d2e1f",
		CLI:   "/nonexistent/docker",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := d.Run(context.Background(), sandbox.Command{Args: []string{"make", "test"}})
	fmt.Println(errors.Is(err, sandbox.ErrUnavailable), res.ExitCode)
	fmt.Print(string(res.Stderr))
	// Output:
	// true 127
	// sandbox: docker: unavailable: the docker CLI is not installed: "/nonexistent/docker" is not in PATH (install the docker CLI, or set DockerConfig.CLI); the command did not run
}

// The ssh backend runs an argument vector on another host; nothing in
// the arguments is interpreted by the remote shell.
func ExampleNewSSH() {
	s, err := sandbox.NewSSH(sandbox.SSHConfig{
		Host:           "build-1.internal",
		User:           "agent",
		IdentityFile:   "/etc/reins/agent_ed25519",
		KnownHostsFile: "/etc/reins/known_hosts",
		RemoteDir:      "/srv/work/project",
		Policy:         sandbox.FsNetPolicy{EnvAllowlist: []string{"PATH", "HOME", "GOFLAGS"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Probe(context.Background()); err != nil {
		fmt.Println("not reachable:", err)
		return
	}
	res, err := s.Run(context.Background(), sandbox.Command{Args: []string{"go", "test", "./...", "-run", "Test(A|B)$"}, Dir: "svc"})
	fmt.Println(res.ExitCode, err)
}
