//go:build !linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/reins-go/reins/examples/hook/internal/hookwire"
)

// viaDaemon: a resident core runs only on Linux.
func viaDaemon(string, []string, []string) (int, bool) { return 0, false }

// corePath is reins-hook-core beside this program.
func corePath() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exe), hookwire.CoreName+filepath.Ext(exe)), nil // .exe on Windows
}

// startCore runs the core for this call, with this program's standard streams, and exits with
// its status.
func startCore(core string, args []string, hookCall bool) {
	cmd := exec.Command(core, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		fail(hookCall, "cannot run "+core+" (install it beside this program): "+err.Error())
	}
	os.Exit(0)
}
