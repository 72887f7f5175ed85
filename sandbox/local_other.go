//go:build !unix

package sandbox

import "context"

// runLocal cannot run a command here: local needs process groups.
func runLocal(ctx context.Context, conf Confinement, cmd Command, dir string, env []string) (Result, error) {
	return unavailableResult(conf, &UnavailableError{Backend: "local", Reason: "local requires a Unix system (process groups)"})
}

// unavailableResult is the honest result of a command that did not run.
func unavailableResult(conf Confinement, err *UnavailableError) (Result, error) {
	return Result{
		ExitCode:    ExitUnavailable,
		Stderr:      []byte(err.Error() + "; the command did not run\n"),
		Confinement: conf,
	}, err
}
