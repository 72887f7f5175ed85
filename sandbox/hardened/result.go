package hardened

import (
	"time"

	"github.com/reins-go/reins/sandbox"
)

// backendName is the registry name of this backend.
const backendName = "local-hardened"

// unavailableResult is the honest result of a command that did not run.
func unavailableResult(conf sandbox.Confinement, err *sandbox.UnavailableError) (sandbox.Result, error) {
	return sandbox.Result{
		ExitCode:    sandbox.ExitUnavailable,
		Stderr:      []byte(err.Error() + "; the command did not run\n"),
		Confinement: conf,
	}, err
}

// deniedResult is the result of a command the policy refused.
func deniedResult(conf sandbox.Confinement, vs []sandbox.Violation) (sandbox.Result, error) {
	err := &sandbox.RefusedError{Backend: conf.Backend, Violations: vs}
	return sandbox.Result{
		ExitCode:    sandbox.ExitDenied,
		Stderr:      []byte(err.Error() + "\n"),
		Confinement: conf,
		Violations:  vs,
	}, err
}

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
