//go:build unix

package sandbox

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/proc"
)

func runLocal(ctx context.Context, conf Confinement, cmd Command, dir string, env []string) (Result, error) {
	path, err := lookPath(cmd.Args[0], dir, env)
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

// lookPath finds file in the PATH of env, relative names against dir.
func lookPath(file, dir string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		return file, nil
	}
	pathEnv, _ := envlist.Lookup(env, "PATH")
	if pathEnv == "" {
		pathEnv = "/usr/local/bin:/usr/bin:/bin"
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, file)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}
