// Command hook is reins-hook-core: it puts the reins gate in front of the tools of three agent
// CLIs, Claude Code, Gemini CLI and Codex CLI, as their pre-tool and post-tool hook, from the same
// profiles and into the same audit log. The client starts reins-hook (examples/hook/front) for
// each call, which hands the call to this program, installed beside it (README.md in this
// directory says how, for each client, and when a client runs no hook at all).
//
//	reins-hook-core claude|gemini|codex [-state DIR] [-project DIR] [-max-actions N] [-max-failures N] [-codex-updated-input]
//	reins-hook-core exec -state DIR -ticket TICKET -- bash -c LINE
//	reins-hook-core reset [-state DIR] claude|gemini|codex SESSION
//	reins-hook-core daemon -socket PATH [-idle DURATION] -- claude|gemini|codex [flags]
//
// On Linux the front program keeps one core resident per situation (daemon_linux.go): the calls
// of a session then cost the front program's start-up and the decision, not this program's
// start-up; a resident core answers exactly as a core started for the call.
//
// # What one call does
//
// Before a tool runs, the hook maps the call (the client's own tool names and input fields) to a
// reins action, decides it under the user's and the project's reins profiles, records the
// decision, and answers. No answer drops an obligation of the decision:
//
//   - ALLOW with Sandbox (a shell line the gate lets through without asking): the command is
//     rewritten to run through "reins-hook-core exec" in the hardened sandbox, confined to what the
//     gate's analysis claims for the line (its writable paths, its network), with a signed
//     ticket (see ticket.go). Where the client lets no hook replace the input, or no enforcing
//     sandbox runs here, the line is asked about instead.
//   - ALLOW with Checkpoint: a checkpoint of what the tool may change is taken before it runs
//     (`reins timeline` lists it), and restored when the client reports that the tool failed.
//   - ALLOW with Notify: a message the client shows its user (systemMessage).
//   - CONFIRM: the client asks its user; the question waits in the session's run state and
//     the tool result, if the user approved, records the approval. Codex CLI cannot ask through
//     a hook: there the hook denies, with the reason.
//   - A call that asks the client to loosen its own sandbox (Claude Code's
//     dangerouslyDisableSandbox, Gemini CLI's additional_permissions) is never allowed without
//     asking; a search or glob whose pattern matches protected files is decided on those files.
//
// After the tool, the hook records the outcome; failures count towards the session's halt
// (three in a row of one tool by default), which, like every hard stop, holds for every later
// call of the session until `reins-hook-core reset`. The session's run state (halt, failures, the
// action budget, parked questions) lives in a reins.FileStore in the state directory, shared by
// the hook's processes; the audit log (audit.jsonl, hash-chained) is shared by every session and
// client. The state directory is protected: no tool the gate decides reads or writes it.
//
// # Failing closed the way each client understands it
//
// An input the hook cannot read, an internal error or a panic ends in exit status 2 with the
// reason on standard error, which all three clients read as "block this call". A missing or
// crashed binary, a timeout or another exit status is the client's to handle: see README.md.
//
// # The project and the profile
//
// The project is the client's project variable (CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR; Codex
// CLI sets none, so its session directory, the payload's cwd), or -project. Without a profile
// file the built-in PROFILE-SAFE applies, which runs no shell command at all: choose a profile
// (README.md). The loaded profile is cached in the state directory, keyed by the identity of
// the profile files, so a call whose files did not change neither reads nor validates them; on
// a miss the hook runs reins-hook-load (examples/hook/load), installed beside it, which links the
// profile loader and its JSON Schema validation so that this program does not pay their
// start-up on every call.
// The client's plan mode is decided as read-only exploration.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/reins-go/reins/examples/hook/internal/hookwire"
)

// maxInput bounds the hook's standard input; a larger payload is refused.
const maxInput = hookwire.MaxInput

// exitBlock is the exit status every client reads as "block this call".
const exitBlock = 2

func main() {
	// A hook lives for one call: collecting garbage would cost more than the memory it frees.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(512 << 20)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// injectPanic lets a test prove that a panic anywhere in the hook ends in exit 2.
var injectPanic func()

const usage = "usage: reins-hook-core claude|gemini|codex [flags] | exec -state DIR -ticket T -- bash -c LINE | reset [-state DIR] CLIENT SESSION | daemon -socket PATH -- CLIENT [flags]"

// run is main with its inputs and outputs passed in. It never panics, and a hook call never
// returns 1 (which Claude Code and Gemini CLI read as "go ahead").
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "reins hook: internal error, blocking the call: %v\n", r)
			code = exitBlock
		}
	}()
	if len(args) > 0 && args[0] == "daemon" {
		return runDaemon(ctx, args[1:], stderr)
	}
	return dispatch(ctx, args, stdin, stdout, stderr)
}

// dispatch is run without its recovery: a resident core (daemon.go) recovers itself, and ends
// after a panic.
func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "reins hook: "+usage+"; blocking the call")
		return exitBlock
	}
	switch args[0] {
	case "exec":
		return runExec(ctx, args[1:], stdin, stdout, stderr)
	case "reset":
		return runReset(ctx, args[1:], stdout, stderr)
	}
	c := clients[args[0]]
	if c == nil {
		fmt.Fprintf(stderr, "reins hook: unknown client %q (%s); blocking the call\n", args[0], usage)
		return exitBlock
	}
	h, err := newHook(c, args[1:])
	if err == nil {
		err = prepareState(h.stateDir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v; blocking the call\n", err)
		return exitBlock
	}
	if injectPanic != nil {
		injectPanic()
	}
	out, err := h.handle(ctx, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v; blocking the call\n", err)
		return exitBlock
	}
	if out != nil {
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(out); err != nil {
			fmt.Fprintf(stderr, "reins hook: writing the answer: %v; blocking the call\n", err)
			return exitBlock
		}
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return exitBlock
		}
	}
	return 0
}

func newHook(c *client, args []string) (*hook, error) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	h := &hook{c: c, env: os.Getenv}
	fs.StringVar(&h.stateDir, "state", os.Getenv("REINS_HOOK_STATE"), "the state directory")
	fs.StringVar(&h.projectFlag, "project", "", "the project directory (default: the client's project variable)")
	fs.IntVar(&h.maxActions, "max-actions", 0, "the session's action budget (0: none)")
	fs.IntVar(&h.maxFailures, "max-failures", 3, "consecutive failures of one tool that halt the session")
	fs.BoolVar(&h.codexRewrite, "codex-updated-input", false, "the Codex CLI calling the hook applies updatedInput (rewrite shell lines to run confined)")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("bad arguments: %v (flags: -state DIR, -project DIR, -max-actions N, -max-failures N)", err)
	}
	if fs.NArg() > 0 || h.maxActions < 0 || h.maxFailures < 1 {
		return nil, errors.New("bad arguments (flags: -state DIR, -project DIR, -max-actions N >= 0, -max-failures N >= 1)")
	}
	if h.projectFlag != "" && !filepath.IsAbs(h.projectFlag) {
		return nil, fmt.Errorf("bad arguments: -project %q is not an absolute path", h.projectFlag)
	}
	var err error
	if h.stateDir, err = stateDir(h.stateDir); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this program's path: %v", err)
	}
	if h.exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, fmt.Errorf("cannot find this program's path: %v", err)
	}
	return h, nil
}

// stateDir returns the state directory (see hookwire.StateDir).
func stateDir(dir string) (string, error) { return hookwire.StateDir(dir, os.Getenv, os.UserHomeDir) }

// handle reads one call and answers it.
func (h *hook) handle(ctx context.Context, stdin io.Reader) (any, error) {
	b, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook input: %v", err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("the hook input is larger than %d bytes", maxInput)
	}
	k, err := h.c.parse(b, h.env, h.projectFlag)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(k.project); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the project directory %s is not a directory", k.project)
	}
	rt, err := h.open(ctx, k)
	if err != nil {
		return nil, err
	}
	defer rt.close(ctx)
	var ans *answer
	if k.ev == evPre {
		ans, err = rt.pre(ctx)
	} else {
		ans, err = rt.post(ctx)
	}
	if err != nil {
		return nil, err
	}
	return h.c.render(k.ev, k.eventName, ans), nil
}

// runReset clears a session's halt, failure counts and exhausted budgets, as a human decides.
func runReset(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reset", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("state", os.Getenv("REINS_HOOK_STATE"), "the state directory")
	reason := fs.String("reason", "reset by the user", "recorded with the reset")
	if err := fs.Parse(args); err != nil || fs.NArg() != 2 || clients[fs.Arg(0)] == nil || !isID(fs.Arg(1)) {
		fmt.Fprintln(stderr, "reins hook: usage: reset [-state DIR] [-reason TEXT] claude|gemini|codex SESSION")
		return exitBlock
	}
	sd, err := stateDir(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v\n", err)
		return exitBlock
	}
	h := &hook{c: clients[fs.Arg(0)], stateDir: sd, maxFailures: 3, env: os.Getenv}
	if _, err := os.Stat(h.sessionFile(fs.Arg(1))); err != nil {
		fmt.Fprintf(stderr, "reins hook: no session %s of %s in %s\n", fs.Arg(1), fs.Arg(0), sd)
		return exitBlock
	}
	// The run needs a workspace for its gate; a reset decides nothing in it.
	project, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v\n", err)
		return exitBlock
	}
	rt, err := h.open(ctx, &call{c: h.c, session: fs.Arg(1), project: project, cwd: project, key: "reset"})
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: %v\n", err)
		return exitBlock
	}
	defer rt.close(ctx)
	if err := rt.r.Reset(ctx, *reason); err != nil {
		fmt.Fprintf(stderr, "reins hook: %v\n", err)
		return exitBlock
	}
	fmt.Fprintf(stdout, "session %s of %s reset\n", fs.Arg(1), fs.Arg(0))
	return 0
}
