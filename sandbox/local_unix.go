//go:build unix

package sandbox

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
)

func runLocal(ctx context.Context, conf Confinement, cmd Command, dir string, env []string) (Result, error) {
	path, err := lookPath(cmd.Args[0], dir, env)
	if err != nil {
		return Result{ExitCode: ExitUnavailable, Stderr: []byte("sandbox: local: " + err.Error() + "\n"), Confinement: conf}, nil
	}
	conf.Enforced = append(conf.Enforced, LayerProcessGroup)
	pr := runProcess(ctx, procSpec{
		path:      path,
		args:      cmd.Args,
		dir:       dir,
		env:       env,
		stdin:     cmd.Stdin,
		timeout:   cmd.timeout(),
		maxOutput: cmd.maxOutput(),
	})
	return pr.result(conf, "local"), nil
}

// result converts a procResult into a Result.
func (pr *procResult) result(conf Confinement, backend string) Result {
	r := Result{
		ExitCode:        pr.exitCode,
		Stdout:          pr.stdout.bytes(),
		Stderr:          pr.stderr.bytes(),
		StdoutTruncated: pr.stdout.truncated,
		StderrTruncated: pr.stderr.truncated,
		TimedOut:        pr.timedOut,
		Duration:        pr.duration,
		Confinement:     conf,
	}
	if pr.startErr != nil {
		r.ExitCode = ExitUnavailable
		r.Stderr = append(r.Stderr, []byte("sandbox: "+backend+": "+pr.startErr.Error()+"\n")...)
	}
	return r
}

// lookPath finds file in the PATH of env, relative names against dir.
func lookPath(file, dir string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		return file, nil
	}
	pathEnv, _ := lookupEnv(env, "PATH")
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
