//go:build unix

package sandbox

import (
	"context"

	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/proc"
)

func runLocal(ctx context.Context, conf Confinement, cmd Command, dir string, env []string) (Result, error) {
	path, err := envlist.LookPath(cmd.Args[0], dir, env)
	if err != nil {
		return Result{ExitCode: ExitUnavailable, Stderr: []byte("sandbox: local: " + err.Error() + "\n"), Confinement: conf}, nil
	}
	conf.Enforced = append(conf.Enforced, LayerProcessGroup)
	pr := proc.Run(ctx, proc.Spec{
		Path:      path,
		Args:      cmd.Args,
		Dir:       dir,
		Env:       env,
		Stdin:     cmd.Stdin,
		Timeout:   cmd.timeout(),
		MaxOutput: cmd.maxOutput(),
	})
	r := Result{
		ExitCode:        pr.ExitCode,
		Stdout:          pr.Stdout.Bytes(),
		Stderr:          pr.Stderr.Bytes(),
		StdoutTruncated: pr.Stdout.Truncated(),
		StderrTruncated: pr.Stderr.Truncated(),
		TimedOut:        pr.TimedOut,
		Duration:        pr.Duration,
		Confinement:     conf,
	}
	if pr.StartErr != nil {
		r.ExitCode = ExitUnavailable
		r.Stderr = append(r.Stderr, []byte("sandbox: local: "+pr.StartErr.Error()+"\n")...)
	}
	return r, nil
}
