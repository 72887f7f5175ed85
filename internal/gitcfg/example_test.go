package gitcfg_test

import (
	"fmt"

	"github.com/reins-go/reins/internal/gitcfg"
)

// Parse a configuration file and ask which of its variables make git run a program.
func ExampleRunsProgram() {
	cfg := "[core]\n\tfilemode = true\n\tfsmonitor = .git/fsmonitor.sh\n[alias]\n\tst = status\n\tx = !sh -c 'id'\n"
	_ = gitcfg.Parse([]byte(cfg), func(e gitcfg.Entry) error {
		if why := gitcfg.RunsProgram(e); why != "" {
			fmt.Printf("line %d: %s %s\n", e.Line, e.Key(), why)
		}
		return nil
	})
	// Output:
	// line 3: core.fsmonitor names a program git runs to watch the file system
	// line 6: alias.x is an alias that runs a shell command
}
