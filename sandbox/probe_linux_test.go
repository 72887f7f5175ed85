//go:build linux

package sandbox_test

import "github.com/reins-go/reins/sandbox/internal/escapeprobe"

func runProbe(args []string) (int, bool) {
	if len(args) > 1 && args[1] == escapeprobe.Arg {
		return escapeprobe.Main(args[2:]), true
	}
	return 0, false
}
