package hardened

import (
	"time"

	"github.com/reins-go/reins/sandbox"
)

// backendName is the registry name of this backend.
const backendName = "local-hardened"

// timeout is cmd's timeout, [sandbox.DefaultTimeout] when zero.
func timeout(cmd sandbox.Command) time.Duration {
	if cmd.Timeout == 0 {
		return sandbox.DefaultTimeout
	}
	return cmd.Timeout
}

// maxOutput is cmd's output cap, [sandbox.DefaultMaxOutput] when zero.
func maxOutput(cmd sandbox.Command) int {
	if cmd.MaxOutput == 0 {
		return sandbox.DefaultMaxOutput
	}
	return cmd.MaxOutput
}
