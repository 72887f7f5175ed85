//go:build unix

package sandbox

import "context"

// runCLI runs a CLI process in its own process group (see runProcess).
func runCLI(ctx context.Context, p cliProc) cliOut {
	pr := runProcess(ctx, procSpec{
		path:       p.path,
		args:       p.args,
		env:        p.env,
		stdin:      p.stdin,
		timeout:    p.timeout,
		maxOutput:  max(p.maxOutput, 1),
		stdoutW:    p.stdoutW,
		stderrW:    p.stderrW,
		beforeKill: p.beforeKill,
	})
	return cliOut{
		status:    cliStatus{exitCode: pr.exitCode, timedOut: pr.timedOut, duration: pr.duration, startErr: pr.startErr},
		stdout:    pr.stdout.bytes(),
		stderr:    pr.stderr.bytes(),
		stdoutCut: pr.stdout.truncated,
		stderrCut: pr.stderr.truncated,
	}
}
