//go:build unix

package backend

import (
	"context"

	"github.com/reins-go/reins/sandbox/internal/proc"
)

// RunCLI runs a CLI process in its own process group (see [proc.Run]).
func RunCLI(ctx context.Context, p Proc) Out {
	pr := proc.Run(ctx, proc.Spec{
		Path:       p.Path,
		Args:       p.Args,
		Env:        p.Env,
		Stdin:      p.Stdin,
		Timeout:    p.Timeout,
		MaxOutput:  max(p.MaxOutput, 1),
		StdoutW:    p.StdoutW,
		StderrW:    p.StderrW,
		BeforeKill: p.BeforeKill,
	})
	return Out{
		Status:    Status{ExitCode: pr.ExitCode, TimedOut: pr.TimedOut, Duration: pr.Duration, StartErr: pr.StartErr},
		Stdout:    pr.Stdout.Bytes(),
		Stderr:    pr.Stderr.Bytes(),
		StdoutCut: pr.Stdout.Truncated(),
		StderrCut: pr.Stderr.Truncated(),
	}
}
