//go:build !unix

package sandbox

import (
	"context"
	"errors"
)

// runCLI cannot run a CLI here: the backends need process groups.
func runCLI(ctx context.Context, p cliProc) cliOut {
	return cliOut{status: cliStatus{exitCode: ExitUnavailable, startErr: errors.New("the CLI backends require a Unix system (process groups)")}}
}
