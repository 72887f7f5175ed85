// Package backend holds what the backend sub-packages of package sandbox
// (sandbox/container, sandbox/remote) share: the honest results of a
// command that did not run, the working-directory check in sandbox
// types, looking up a CLI, running one in its own process group, and
// registering backends with their availability probes.
package backend

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// PreflightTimeout bounds the availability checks the CLI backends run
// (docker version, ssh connection checks).
const PreflightTimeout = 15 * time.Second

// CleanupTimeout bounds the calls that stop a command on the far side
// after a timeout (docker rm -f, a remote kill).
const CleanupTimeout = 15 * time.Second

// Timeout is cmd's timeout, [sandbox.DefaultTimeout] when zero.
func Timeout(cmd sandbox.Command) time.Duration {
	if cmd.Timeout == 0 {
		return sandbox.DefaultTimeout
	}
	return cmd.Timeout
}

// MaxOutput is cmd's output cap, [sandbox.DefaultMaxOutput] when zero.
func MaxOutput(cmd sandbox.Command) int {
	if cmd.MaxOutput == 0 {
		return sandbox.DefaultMaxOutput
	}
	return cmd.MaxOutput
}

// Invalid is the result of a malformed command (err from
// [sandbox.Command.Validate]): exit code [sandbox.ExitDenied].
func Invalid(conf sandbox.Confinement, err error) (sandbox.Result, error) {
	return sandbox.Result{ExitCode: sandbox.ExitDenied, Stderr: []byte(err.Error() + "\n"), Confinement: conf}, err
}

// Unavailable is the honest result of a command that did not run.
func Unavailable(conf sandbox.Confinement, err *sandbox.UnavailableError) (sandbox.Result, error) {
	return sandbox.Result{
		ExitCode:    sandbox.ExitUnavailable,
		Stderr:      []byte(err.Error() + "; the command did not run\n"),
		Confinement: conf,
	}, err
}

// RefuseConfine is the honest result of a backend that does not enforce
// [sandbox.Command.Confine] and was given one: exit code 127, an error
// matching [sandbox.ErrUnavailable] that says why, and nothing run.
func RefuseConfine(conf sandbox.Confinement, why string) (sandbox.Result, error) {
	return Unavailable(conf, &sandbox.UnavailableError{Backend: conf.Backend, Layer: sandbox.LayerConfine,
		Reason: conf.Backend + " cannot confine a command (Command.Confine is set): " + why + "; run it in a backend that enforces it (see sandbox.Enforcing)"})
}

// Denied is the result of a command the policy refused.
func Denied(conf sandbox.Confinement, vs []sandbox.Violation) (sandbox.Result, error) {
	err := &sandbox.RefusedError{Backend: conf.Backend, Violations: vs}
	return sandbox.Result{
		ExitCode:    sandbox.ExitDenied,
		Stderr:      []byte(err.Error() + "\n"),
		Confinement: conf,
		Violations:  vs,
	}, err
}

// Violations turns the refusals of the internal checks into violations.
func Violations(rs []pathmatch.Refusal) []sandbox.Violation {
	if len(rs) == 0 {
		return nil
	}
	vs := make([]sandbox.Violation, len(rs))
	for i, r := range rs {
		vs[i] = sandbox.Violation{Kind: sandbox.ViolationKind(r.Kind), Subject: r.Subject, Detail: r.Detail}
	}
	return vs
}

// Workdir checks that dir resolves, on this host, inside root and names
// no denied path; it returns the resolved directory (see
// [pathmatch.Workdir]).
func Workdir(root string, m pathmatch.Matcher, dir string) (string, []sandbox.Violation) {
	resolved, r := pathmatch.Workdir(root, m, dir)
	if r != nil {
		return "", Violations([]pathmatch.Refusal{*r})
	}
	return resolved, nil
}

// FindCLI looks a CLI up in the host's PATH: configured (a name or a
// path) or def. The error names the CLI and says how to get it.
func FindCLI(backend, configured, def, install string) (string, *sandbox.UnavailableError) {
	name := configured
	if name == "" {
		name = def
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", &sandbox.UnavailableError{Backend: backend, Reason: fmt.Sprintf("the %s CLI is not installed: %q is not in PATH (%s)", def, name, install)}
	}
	return p, nil
}

// Seconds renders d as whole seconds, rounded up, at least 1.
func Seconds(d time.Duration) string {
	return strconv.FormatInt(int64(math.Max(1, math.Ceil(d.Seconds()))), 10)
}

// LastLines returns the last n non-empty lines of b, trimmed, for an
// error message.
func LastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// Prober is a backend with an availability probe.
type Prober interface {
	Probe(ctx context.Context) error
}

// ProbeBuilt returns the registry probe of a backend built from a
// template: it builds the backend (rooted at a fresh empty directory
// when needsRoot, else at "/") and probes it; a template that cannot
// build a backend makes it unavailable ("not configured").
func ProbeBuilt(name string, needsRoot bool, build func(root string) (Prober, error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		root := "/"
		if needsRoot {
			dir, err := os.MkdirTemp("", "reins-probe-")
			if err != nil {
				return &sandbox.UnavailableError{Backend: name, Reason: "probe: " + err.Error()}
			}
			defer os.RemoveAll(dir)
			root = dir
		}
		p, err := build(root)
		if err != nil {
			return &sandbox.UnavailableError{Backend: name, Reason: "not configured: " + err.Error()}
		}
		return p.Probe(ctx)
	}
}

// Entry is one backend for [Register].
type Entry struct {
	Name    string
	Backend sandbox.Backend
}

// Register adds every entry to r, in order. If one fails (a name already
// taken), those added so far are removed again and the error names it.
func Register(r *sandbox.Registry, entries []Entry) error {
	var undo []func()
	for _, e := range entries {
		unregister, err := r.Register(e.Name, e.Backend)
		if err != nil {
			for _, u := range undo {
				u()
			}
			return err
		}
		undo = append(undo, unregister)
	}
	return nil
}
