package hardened_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

// A hardened run reports the layers that were in force; a host checks
// for the ones it requires.
func ExampleSandbox_Run() {
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	h, err := hardened.New(hardened.Config{Root: root})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	res, err := h.Run(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "echo data > out.txt; cat /etc/hostname > /dev/null; touch /tmp/escape"}})
	if errors.Is(err, sandbox.ErrUnavailable) {
		fmt.Println("not available here:", err)
		return
	}
	fmt.Println("exit:", res.ExitCode)
	fmt.Println("landlock:", res.Confinement.Has(sandbox.LayerLandlock), "seccomp:", res.Confinement.Has(sandbox.LayerSeccomp))
}

// A registry that holds local-hardened, for profiles that name it. A
// host that wants the other built-in backends too starts from
// sandbox.NewBuiltinRegistry instead of an empty registry.
func ExampleRegister() {
	var r sandbox.Registry
	if err := hardened.Register(&r, hardened.Config{Policy: sandbox.FsNetPolicy{AllowNetwork: false}}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Names())
	// Output:
	// [local-hardened]
}
