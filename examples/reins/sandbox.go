package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/container"

	// The opt-in to local-hardened: its child entry point, go-landlock and seccomp.
	"github.com/reins-go/reins/sandbox/hardened"
	"github.com/reins-go/reins/sandbox/remote"
)

// backends is every backend reins has: the built-in registry (local),
// local-hardened, the containers, ssh and the vendors' sandboxes. The CLI
// has no settings for them (no image, no host), so those report, when
// asked for, that they are not configured (127).
func backends() *sandbox.Registry {
	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{})
	// A fresh registry: every name is free, so none of these fails.
	_ = hardened.Register(r, hardened.Config{})
	_ = container.Register(r, container.Options{})
	_ = remote.Register(r, remote.Options{})
	return r
}

var sandboxCmd = &command{name: "sandbox", args: "run", synopsis: "run a command in a sandbox backend", sub: []*command{
	{name: "run", args: "--backend B -- command [args...]", synopsis: "run a command confined to the workspace; its exit status is the command's",
		flags: func(fs *flag.FlagSet) {
			fs.String("backend", "local-hardened", "the `backend`: "+strings.Join(backends().Names(), ", "))
			fs.Duration("timeout", 0, "stop the command after this `duration` (default: the sandbox's)")
		}, run: sandboxRun},
}}

func sandboxRun(c *cli, fs *flag.FlagSet) (int, error) {
	if fs.NArg() == 0 {
		return exitError, usagef("sandbox run wants a command after -- (see 'reins sandbox run --help')")
	}
	ws, err := c.workspace()
	if err != nil {
		return exitError, err
	}
	name := fs.Lookup("backend").Value.String()
	reg := backends()
	sb, err := reg.Open(c.ctx, name, ws)
	if errors.Is(err, sandbox.ErrUnknownBackend) {
		return exitError, usagef("no backend %q (backends: %s)", name, strings.Join(reg.Names(), ", "))
	}
	var unavailable *sandbox.UnavailableError
	if errors.As(err, &unavailable) {
		// The honest answer of a backend that cannot run here: 127, and why.
		fmt.Fprintf(c.stderr, "reins: %v\n", err)
		return sandbox.ExitUnavailable, nil
	}
	if err != nil {
		return exitError, fmt.Errorf("backend %s: %w", name, err)
	}
	if closer, ok := sb.(interface{ Close() error }); ok {
		defer closer.Close()
	}
	cmd := sandbox.Command{Args: fs.Args(), Stdin: c.stdin}
	if d := fs.Lookup("timeout").Value.(flag.Getter).Get().(time.Duration); d > 0 {
		cmd.Timeout = d
	}
	res, err := sb.Run(c.ctx, cmd)
	if err != nil {
		return exitError, fmt.Errorf("backend %s: %w", name, err)
	}
	type view struct {
		Backend    string   `json:"backend"`
		ExitCode   int      `json:"exit_code"`
		Stdout     string   `json:"stdout"`
		Stderr     string   `json:"stderr"`
		TimedOut   bool     `json:"timed_out,omitempty"`
		Enforced   []string `json:"enforced"`
		Missing    []string `json:"missing,omitempty"`
		Violations []string `json:"violations,omitempty"`
	}
	v := view{Backend: name, ExitCode: res.ExitCode, Stdout: string(res.Stdout), Stderr: string(res.Stderr), TimedOut: res.TimedOut,
		Enforced: strs(res.Confinement.Enforced), Missing: strs(res.Confinement.Missing), Violations: strs(res.Violations)}
	if c.json {
		if err := c.emit(v, nil); err != nil {
			return exitError, err
		}
		return res.ExitCode, nil
	}
	_, _ = c.stdout.Write(res.Stdout)
	_, _ = c.stderr.Write(res.Stderr)
	for _, viol := range v.Violations {
		fmt.Fprintln(c.stderr, "reins: sandbox violation:", viol)
	}
	if res.TimedOut {
		fmt.Fprintln(c.stderr, "reins: the command timed out")
	}
	return res.ExitCode, nil
}
