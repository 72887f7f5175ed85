//go:build !unix

package sandbox

import "context"

func runLocal(ctx context.Context, conf Confinement, cmd Command, dir string, env []string) (Result, error) {
	return unavailableResult(conf, &UnavailableError{Backend: "local", Reason: "local requires a Unix system (process groups)"})
}
