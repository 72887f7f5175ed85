package remote

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/argcheck"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
)

// remoteScripts is how the remote backends read an "sh -c" script in a
// command's arguments: with the full shell analysis, paths as written.
var remoteScripts = argcheck.Scripts{Read: shellanalysis.Read}

// scriptRun is one run of a CLI that runs a framed remoteScript.
type scriptRun struct {
	conf      sandbox.Confinement
	cli       string // what ran the script, for messages ("ssh to host")
	path      string
	argv      []string // argv[0] included
	env       []string
	stdin     io.Reader
	timeout   time.Duration
	maxOutput int
	nonce     string
	files     bool   // the script was built with files set
	handshake bool   // the script was built with handshake set
	dir       string // Command.Dir, for violations
	// beforeKill, if set, stops the command on the far side when the
	// timeout or ctx ends the run; it gets the stderr frame, whose
	// opening line carries the far side's process id.
	beforeKill func(stderr *frame)
}

// run runs the CLI and turns the framed output into a Result.
func (r scriptRun) run(ctx context.Context) (sandbox.Result, error) {
	outMax := r.maxOutput
	if r.files {
		// Both streams arrive base64-encoded on stdout.
		outMax = 3*r.maxOutput + 4096
	}
	outF, errF := newFrame(r.nonce, outMax), newFrame(r.nonce, r.maxOutput)
	p := backend.Proc{
		Path: r.path, Args: r.argv, Env: r.env, Stdin: r.stdin, Timeout: r.timeout,
		StdoutW: outF, StderrW: errF,
	}
	if r.beforeKill != nil {
		p.BeforeKill = func() { r.beforeKill(errF) }
	}
	if r.handshake {
		stdin, stop, err := r.goSignal(ctx, errF)
		if err != nil {
			return backend.Unavailable(r.conf, &sandbox.UnavailableError{Backend: r.conf.Backend, Reason: "making the stdin pipe: " + err.Error()})
		}
		defer stop()
		p.Stdin = stdin
	}
	st := backend.RunCLI(ctx, p).Status
	o, e := outF.result(), errF.result()
	chatter := append(o.chatter, e.chatter...)
	if !r.files {
		return scriptOutcome(r.conf, st, r.dir, e.kind, e.ended, o.out, e.out, o.truncated, e.truncated, chatter, r.cli)
	}
	if !o.ended || st.TimedOut {
		return scriptOutcome(r.conf, st, r.dir, o.kind, o.ended, nil, nil, false, false, chatter, r.cli)
	}
	if _, isExit := exitMark(o.kind); !isExit {
		return scriptOutcome(r.conf, st, r.dir, o.kind, true, nil, o.out, false, false, chatter, r.cli)
	}
	fo, ok := parseFiles(o.out, r.nonce)
	if !ok {
		return scriptOutcome(r.conf, st, r.dir, "", false, nil, nil, false, false, append(chatter, o.out...), r.cli)
	}
	return scriptOutcome(r.conf, st, r.dir, o.kind, true, fo.stdout, fo.stderr, fo.stdoutCut, fo.stderrCut, chatter, r.cli)
}

// goSignal returns the CLI's stdin for a handshake script: once the
// script's opening line (with the far side's process id) has arrived it
// carries "go SECONDS WHOLE" (the time left before the deadline) and
// then Command.Stdin. If the run ends first, or no time is left, it is
// closed without the line and the script does not start the command.
// stop releases the pipe once the CLI has exited.
func (r scriptRun) goSignal(ctx context.Context, stderr *frame) (*os.File, func(), error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(r.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	done := make(chan struct{})
	go func() {
		defer pw.Close()
		select {
		case <-stderr.startCh:
		case <-done:
			return
		case <-ctx.Done():
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		if _, err := fmt.Fprintf(pw, "go %s %s\n", strconv.FormatFloat(left.Seconds(), 'f', 3, 64), backend.Seconds(left)); err != nil {
			return
		}
		if r.stdin != nil {
			_, _ = io.Copy(pw, r.stdin)
		}
	}()
	return pr, func() { close(done); pr.Close() }, nil
}

// vendorRun is one run of a vendor CLI backend (modal, daytona,
// vercel-sandbox): the shared checks, the script and the framing.
type vendorRun struct {
	conf   sandbox.Confinement
	cmd    sandbox.Command
	root   string // the working root on the vendor's side
	match  pathmatch.Matcher
	denied []string
	allow  []string
	files  bool
	// layers are enforced beyond the working-directory, argument and env
	// checks.
	layers   []sandbox.Layer
	watchdog bool
	// env is the CLI's environment; nil means the host's.
	env       []string
	preflight func() (string, *sandbox.UnavailableError)
	// prepare, if set, runs after the preflight; the function it returns
	// runs when the run is over.
	prepare  func() (func(), *sandbox.UnavailableError)
	argv     func(cli, script string) []string
	describe string
	// noConfine says why the backend does not enforce a Confine; empty
	// when it does (its argv then honours cmd.Confine).
	noConfine string
}

func runVendor(ctx context.Context, v vendorRun) (sandbox.Result, error) {
	conf, cmd := v.conf, v.cmd
	if err := cmd.Validate(); err != nil {
		return backend.Invalid(conf, err)
	}
	if cmd.Confine != nil && v.noConfine != "" {
		return backend.RefuseConfine(conf, v.noConfine)
	}
	if cmd.Stdin != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: conf.Backend, Reason: v.describe + " cannot pass standard input to the command; Command.Stdin must be nil"})
	}
	dir, vs := lexicalWorkdir(v.root, v.match, cmd.Dir)
	if len(vs) > 0 {
		return backend.Denied(conf, vs)
	}
	if vs := backend.Violations(argcheck.Lexical(v.match, dir, cmd.Args, remoteScripts)); len(vs) > 0 {
		return backend.Denied(conf, vs)
	}
	cli, uerr := v.preflight()
	if uerr != nil {
		return backend.Unavailable(conf, uerr)
	}
	if v.prepare != nil {
		cleanup, uerr := v.prepare()
		if uerr != nil {
			return backend.Unavailable(conf, uerr)
		}
		defer cleanup()
	}
	nonce, err := newNonce()
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: conf.Backend, Reason: err.Error()})
	}
	clear, keep, set := remoteEnv(v.allow, cmd.Env)
	s := remoteScript{
		nonce: nonce, root: v.root, dir: dir, denied: v.denied,
		clearEnv: clear, keep: keep, set: set, args: cmd.Args,
		files: v.files, maxOutput: backend.MaxOutput(cmd),
	}
	if v.watchdog {
		s.watchdog = backend.Timeout(cmd)
	}
	script, err := s.build()
	if err != nil {
		return backend.Invalid(conf, fmt.Errorf("%w: %v", sandbox.ErrInvalidCommand, err))
	}
	conf.Enforced = append([]sandbox.Layer{sandbox.LayerWorkdir, sandbox.LayerArgs}, v.layers...)
	if clear {
		conf.Enforced = append(conf.Enforced, sandbox.LayerEnv)
	}
	env := v.env
	if env == nil {
		env = envlist.Host()
	}
	return scriptRun{
		conf: conf, cli: v.describe, path: cli, argv: v.argv(cli, script), env: env,
		timeout: backend.Timeout(cmd), maxOutput: backend.MaxOutput(cmd), nonce: nonce, files: v.files, dir: cmd.Dir,
	}.run(ctx)
}

// vendorDir checks a vendor's working root.
func vendorDir(field, dir, def string) (string, error) {
	if dir == "" {
		dir = def
	}
	if !path.IsAbs(dir) {
		return "", fmt.Errorf("sandbox: %s %q is not absolute", field, dir)
	}
	return path.Clean(dir), nil
}
