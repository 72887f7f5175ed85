//go:build !unix

package backend

import (
	"context"
	"errors"

	"github.com/reins-go/reins/sandbox"
)

// RunCLI cannot run a CLI here: the backends need process groups.
func RunCLI(ctx context.Context, p Proc) Out {
	return Out{Status: Status{ExitCode: sandbox.ExitUnavailable, StartErr: errors.New("the CLI backends require a Unix system (process groups)")}}
}
