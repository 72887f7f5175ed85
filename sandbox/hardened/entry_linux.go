//go:build linux

package hardened

import (
	"os"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/proto"
)

// ChildMain turns this process into the sandbox child when it was started
// as one (argv[0] is the sentinel the hardened backend uses); it then
// never returns. Otherwise it returns at once.
//
// The package's init calls it, so a program that imports this package
// needs nothing more. It is exported for programs that want the dispatch
// to happen at a point of their choosing, for example first thing in
// TestMain or main, before other initialisation with side effects.
func ChildMain() {
	if len(os.Args) == 0 || os.Args[0] != proto.ChildArg0 {
		return
	}
	childMain()
	os.Exit(sandbox.ExitUnavailable) // not reached
}

func init() {
	ChildMain()
}
