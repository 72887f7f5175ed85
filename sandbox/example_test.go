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
	fmt.Println(errors.Is(err, sandbox.ErrRefused), res.ExitCode, res.Violations[0].Kind)
	res, err = sb.Run(context.Background(), sandbox.Command{Args: []string{"echo", "hello"}})
	fmt.Print(string(res.Stdout), err)
	// Output:
	// true 126 denied-path
	// hello
	// <nil>
}

// A registry maps the backend names that profiles use to backends. The
// built-in registry holds this package's own backend; the sub-packages
// add theirs with their Register functions.
func ExampleRegistry() {
	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{})
	fmt.Println(r.Names())
	_, err := r.Open(context.Background(), "podman", os.TempDir())
	fmt.Println(errors.Is(err, sandbox.ErrUnknownBackend))
	// Output:
	// [local]
	// true
}
