package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
)

// execTimeout bounds a confined line; the client kills it sooner at its own timeout (the
// sandbox dies with this process).
const execTimeout = 8 * time.Hour

// execMaxOutput bounds what a confined line prints, each of stdout and stderr.
const execMaxOutput = 16 << 20

// runExec is the exec subcommand: the command line the hook rewrote a shell call into,
//
//	reins-hook exec -state DIR -ticket TICKET -- bash -c LINE
//
// It verifies the ticket (signed by the hook with the key in DIR: see ticket), checks that LINE
// and the working directory are the ones it was issued for, and runs LINE in the hardened sandbox
// with the ticket's policy: the project and the home directory read-only, the protected paths
// (and the state directory) masked, only the ticket's writable paths writable besides a private
// temporary directory, the network only if the ticket allows it. Nothing runs when any check
// fails (exit 126) or the sandbox cannot run here (exit 127). A violation the sandbox reports
// halts the session the ticket belongs to.
func runExec(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	state := fs.String("state", "", "the hook's state directory")
	tk := fs.String("ticket", "", "the signed policy")
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "reins-hook exec: "+format+"\n", a...)
		return code
	}
	if err := fs.Parse(args); err != nil {
		return fail(sandbox.ExitDenied, "bad arguments: %v (usage: exec -state DIR -ticket TICKET -- bash -c LINE)", err)
	}
	rest := fs.Args()
	if *state == "" || *tk == "" || len(rest) != 3 || rest[0] != "bash" || rest[1] != "-c" {
		return fail(sandbox.ExitDenied, "usage: exec -state DIR -ticket TICKET -- bash -c LINE")
	}
	line := rest[2]
	t, masked, err := verifyTicket(*state, *tk, time.Now())
	if err != nil {
		return fail(sandbox.ExitDenied, "refused: %v", err)
	}
	if lineHash(line) != t.Line {
		return fail(sandbox.ExitDenied, "refused: the ticket was issued for another command line")
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail(sandbox.ExitDenied, "refused: no working directory: %v", err)
	}
	if !sameDir(wd, t.Dir) {
		return fail(sandbox.ExitDenied, "refused: the ticket was issued for the directory %s, not %s", t.Dir, wd)
	}
	s, err := hardened.New(hardened.Config{Root: t.Project, Policy: sandbox.FsNetPolicy{DeniedPaths: masked}})
	if err != nil {
		return fail(sandbox.ExitUnavailable, "the hardened sandbox: %v", err)
	}
	defer s.Close()
	res, err := s.Run(ctx, sandbox.Command{Args: []string{"bash", "-c", line}, Dir: t.Dir, Stdin: stdin,
		Timeout: execTimeout, MaxOutput: execMaxOutput,
		Confine: &sandbox.Confine{Writable: slices.Clone(t.Writable), Network: t.Network}})
	_, _ = stdout.Write(res.Stdout)
	_, _ = stderr.Write(res.Stderr)
	if res.StdoutTruncated || res.StderrTruncated {
		fmt.Fprintf(stderr, "reins-hook exec: output cut at %d bytes\n", execMaxOutput)
	}
	var v []string
	for _, x := range res.Violations {
		if x.Kind != sandbox.ViolationUncheckable {
			v = append(v, x.String())
		}
	}
	if len(v) > 0 {
		fmt.Fprintf(stderr, "reins-hook exec: the sandbox stopped: %s\n", strings.Join(v, "; "))
		if err := haltSession(ctx, *state, t, "sandbox escape signal: "+strings.Join(v, "; ")); err != nil {
			fmt.Fprintf(stderr, "reins-hook exec: the session could not be halted: %v\n", err)
		}
	}
	code := res.ExitCode
	if err != nil {
		fmt.Fprintf(stderr, "reins-hook exec: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code < 0 || code > 255 {
		code = 1
	}
	return code
}

// sameDir reports whether two directories are the same once symbolic links are followed.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// haltSession latches the sandbox-escape hard stop in the run state of the ticket's session.
func haltSession(ctx context.Context, stateDir string, t ticket, reason string) error {
	c := clients[t.Client]
	if c == nil {
		return fmt.Errorf("the ticket names no known client")
	}
	h := &hook{c: c, stateDir: stateDir, maxFailures: 3, env: os.Getenv}
	rt, err := h.open(ctx, &call{c: c, session: t.Session, project: t.Project, cwd: t.Dir, key: "exec"})
	if err != nil {
		return err
	}
	defer rt.close(ctx)
	rt.r.RecordViolation(ctx, reason)
	return nil
}
