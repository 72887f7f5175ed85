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

// A hardened run reports the layers that were in force; a host checks
// for the ones it requires.
func ExampleHardened_Run() {
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	h, err := sandbox.NewHardened(sandbox.HardenedConfig{Root: root})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := h.Run(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "echo data > out.txt; cat /etc/hostname > /dev/null; touch /tmp/escape"}})
	if errors.Is(err, sandbox.ErrUnavailable) {
		fmt.Println("not available here:", err)
		return
	}
	fmt.Println("exit:", res.ExitCode)
	fmt.Println("landlock:", res.Confinement.Has(sandbox.LayerLandlock), "seccomp:", res.Confinement.Has(sandbox.LayerSeccomp))
}

// A registry maps the backend names that profiles use to backends.
func ExampleRegistry() {
	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{})
	fmt.Println(r.Names())
	_, err := r.Open(context.Background(), "podman", os.TempDir())
	fmt.Println(errors.Is(err, sandbox.ErrUnknownBackend))
	// Output:
	// [apptainer daytona docker local local-hardened modal singularity ssh vercel-sandbox]
	// true
}
