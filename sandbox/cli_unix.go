//go:build unix

package sandbox

import (
	"context"

	"github.com/reins-go/reins/sandbox/internal/proc"
)

// runCLI runs a CLI process in its own process group (see proc.Run).
func runCLI(ctx context.Context, p cliProc) cliOut {
	pr := proc.Run(ctx, proc.Spec{
		Path:       p.path,
		Args:       p.args,
		Env:        p.env,
		Stdin:      p.stdin,
		Timeout:    p.timeout,
		MaxOutput:  max(p.maxOutput, 1),
		StdoutW:    p.stdoutW,
		StderrW:    p.stderrW,
		BeforeKill: p.beforeKill,
	})
	return cliOut{
		status:    cliStatus{exitCode: pr.ExitCode, timedOut: pr.TimedOut, duration: pr.Duration, startErr: pr.StartErr},
		stdout:    pr.Stdout.Bytes(),
		stderr:    pr.Stderr.Bytes(),
		stdoutCut: pr.Stdout.Truncated(),
		stderrCut: pr.Stderr.Truncated(),
	}
}
