package container_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/container"
)

// A backend that drives a CLI reports a missing tool with exit code 127
// and runs nothing; here the docker CLI is not where the configuration
// says.
func ExampleNewDocker() {
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	d, err := container.NewDocker(container.DockerConfig{
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

// The apptainer backend, on a host whose PATH has no apptainer: the run
// is refused with exit code 127 before anything starts.
func ExampleNewApptainer() {
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	empty, _ := os.MkdirTemp("", "example-path-")
	defer os.RemoveAll(empty)
	defer os.Setenv("PATH", os.Getenv("PATH"))
	os.Setenv("PATH", empty)

	a, err := container.NewApptainer(container.SingularityConfig{Root: root, Image: "docker://debian@sha256:00"})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Run(context.Background(), sandbox.Command{Args: []string{"go", "test", "./..."}})
	fmt.Println(errors.Is(err, sandbox.ErrUnavailable), res.ExitCode)
	// Output:
	// true 127
}

// A host adds this package's backends to its registry next to the
// local ones; a profile then names one, and Open probes it first.
func ExampleRegister() {
	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{})
	err := container.Register(r, container.Options{
		Docker: container.DockerConfig{Image: "debian@sha256:00", CLI: "/nonexistent/docker"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Names())
	_, err = r.Open(context.Background(), "docker", os.TempDir())
	fmt.Println(errors.Is(err, sandbox.ErrUnavailable))
	// Output:
	// [apptainer docker local singularity]
	// true
}
