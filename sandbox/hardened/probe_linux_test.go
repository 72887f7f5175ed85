//go:build linux

package hardened_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
	"github.com/reins-go/reins/sandbox/internal/escapeprobe"
)

// launcherArg makes the test binary a launcher: "bin reins-test-launcher
// ROOT SCRIPT" runs SCRIPT with sh in local-hardened rooted at ROOT and
// prints the outcome; the lifetime test kills it mid-run.
const launcherArg = "reins-test-launcher"

func runProbe(args []string) (int, bool) {
	if len(args) > 1 && args[1] == escapeprobe.Arg {
		return escapeprobe.Main(args[2:]), true
	}
	if len(args) == 4 && args[1] == launcherArg {
		h, err := hardened.New(hardened.Config{Root: args[2]})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2, true
		}
		res, err := h.Run(context.Background(), sandbox.Command{Args: []string{"sh", "-c", args[3]}, Timeout: 10 * time.Minute})
		fmt.Println("launcher: exit", res.ExitCode, err)
		return 0, true
	}
	return 0, false
}
