package cli

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

// backendNotes says what each backend confines, honestly: only an enforcing one is a boundary.
var backendNotes = map[string]string{
	"local":          "no confinement: the command runs as you on this host, in the workspace directory, with your files and network (not a security boundary)",
	"local-hardened": "Linux: namespaces, Landlock, seccomp, no capabilities; the workspace the only writable tree, secrets masked, no network; 127 where a layer is missing",
	"docker":         "a container with the workspace bound in (this CLI configures no image: 127)",
	"singularity":    "a container with the workspace bound in (this CLI configures no image: 127)",
	"apptainer":      "a container with the workspace bound in (this CLI configures no image: 127)",
	"ssh":            "another machine; its files and network are its own (this CLI configures no host: 127)",
	"modal":          "a vendor's sandbox (this CLI configures none: 127)",
	"daytona":        "a vendor's sandbox (this CLI configures none: 127)",
	"vercel-sandbox": "a vendor's sandbox (this CLI configures none: 127)",
}

func backendHelp() string {
	var b strings.Builder
	b.WriteString("the `backend`:")
	for _, name := range backends().Names() {
		note := backendNotes[name]
		if note == "" {
			note = "see its package's documentation"
		}
		fmt.Fprintf(&b, "\n    %s: %s", name, note)
	}
	return b.String()
}

var sandboxCmd = &command{name: "sandbox", args: "run", synopsis: "run a command in a sandbox backend", sub: []*command{
	{name: "run", args: "--backend B -- command [args...]", synopsis: "run a command in a backend, in the workspace; its exit status is the command's",
		flags: func(fs *flag.FlagSet) {
			fs.String("backend", "local-hardened", backendHelp())
			fs.Duration("timeout", 0, "stop the command after this `duration` (default: the sandbox's)")
		}, run: sandboxRun},
}}

func sandboxRun(c *cli, fs *flag.FlagSet) (int, error) {
	if fs.NArg() == 0 {
		return 0, usagef("want a command after -- (see 'reins sandbox run --help')")
	}
	ws, err := c.workspace()
	if err != nil {
		return 0, err
	}
	name := fs.Lookup("backend").Value.String()
	reg := backends()
	sb, err := reg.Open(c.ctx, name, ws)
	if errors.Is(err, sandbox.ErrUnknownBackend) {
		return 0, usagef("no backend %q: want one of %s", name, strings.Join(reg.Names(), ", "))
	}
	var unavailable *sandbox.UnavailableError
	if errors.As(err, &unavailable) || errors.Is(err, sandbox.ErrUnavailable) {
		// The honest answer of a backend that cannot run here: 127, and why.
		return 0, &cliError{kindUnavailable, fmt.Errorf("backend %s: %w", name, err)}
	}
	if err != nil {
		return 0, fmt.Errorf("backend %s: %w", name, err)
	}
	if closer, ok := sb.(interface{ Close() error }); ok {
		defer closer.Close()
	}
	cmd := sandbox.Command{Args: fs.Args(), Stdin: c.stdin}
	if d := fs.Lookup("timeout").Value.(flag.Getter).Get().(time.Duration); d > 0 {
		cmd.Timeout = d
	}
	res, err := sb.Run(c.ctx, cmd)
	if errors.Is(err, sandbox.ErrUnavailable) {
		return 0, &cliError{kindUnavailable, fmt.Errorf("backend %s: %w", name, err)}
	}
	if err != nil && !errors.Is(err, sandbox.ErrRefused) {
		return 0, fmt.Errorf("backend %s: %w", name, err)
	}
	type view struct {
		Backend string `json:"backend"`
		// Enforcing reports whether the backend enforces a confinement (local does not).
		Enforcing  bool     `json:"enforcing"`
		ExitCode   int      `json:"exit_code"`
		Stdout     string   `json:"stdout"`
		Stderr     string   `json:"stderr"`
		TimedOut   bool     `json:"timed_out,omitempty"`
		Enforced   []string `json:"enforced"`
		Missing    []string `json:"missing,omitempty"`
		Violations []string `json:"violations,omitempty"`
	}
	v := view{Backend: name, Enforcing: sandbox.Enforcing(sb), ExitCode: res.ExitCode, Stdout: string(res.Stdout), Stderr: string(res.Stderr),
		TimedOut: res.TimedOut, Enforced: strs(res.Confinement.Enforced), Missing: strs(res.Confinement.Missing), Violations: strs(res.Violations)}
	if c.json {
		if err := c.emit(v, nil); err != nil {
			return 0, err
		}
		return res.ExitCode, nil
	}
	_, _ = c.stdout.Write(res.Stdout)
	_, _ = c.stderr.Write(res.Stderr)
	for _, viol := range v.Violations {
		fmt.Fprintln(c.stderr, "reins: sandbox run: violation:", viol)
	}
	if res.TimedOut {
		fmt.Fprintln(c.stderr, "reins: sandbox run: the command timed out")
	}
	return res.ExitCode, nil
}
