//go:build linux

package hardened_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

// A missing layer stops the command with exit code 127 unless the host
// opted into best effort.
func ExampleConfig_bestEffort() {
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	cfg := hardened.Config{Root: root, SimulateMissing: []sandbox.Layer{sandbox.LayerSeccomp}}
	strict, _ := hardened.New(cfg)
	res, err := strict.Run(context.Background(), sandbox.Command{Args: []string{"true"}})
	fmt.Println(res.ExitCode, errors.Is(err, sandbox.ErrUnavailable))

	cfg.BestEffort = true
	lenient, _ := hardened.New(cfg)
	res, err = lenient.Run(context.Background(), sandbox.Command{Args: []string{"true"}})
	fmt.Println(res.ExitCode, err, res.Confinement.Missing)
	// Output:
	// 127 true
	// 0 <nil> [seccomp]
}
