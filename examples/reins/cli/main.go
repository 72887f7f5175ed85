// Package cli is the reins command line: decide or explain an action, list, show and switch
// profiles, trust a project's profile file, list the active permissions and where they came
// from (the managed tier included), read and verify an audit log, list, diff or rewind
// checkpoints, and operate a fleet of runs that share a run-state store. It shows how a host
// wires the packages together; every verb is a few calls of the public API. Command
// examples/reins is [Main] with the core module's stores; a module that brings another store
// (github.com/reins-go/reins/etcdstore, command etcdstore/cmd/reins) runs the same Main with
// its own [FleetBackend], so the verbs, their output, errors and exit codes are one code.
//
//	reins [-C dir] [--json] <command> [arguments]
//
// Run `reins help` for the commands and `reins help <command>` (or `<command> --help`) for one.
//
// Every verb reports an error the same way: one line on standard error, `reins: <verb>: what
// went wrong (what to do)`, or under --json one JSON object on standard error with the verb,
// the kind of error, the message and the exit code. The exit codes are one table (exitCodes),
// printed by `reins --help`, and every verb uses it: the same kind of error has the same code.
//
// Adding a verb is one entry in the command table (root) and a file of its own; a verb with
// subcommands (profile, audit) is a command whose sub lists them.
//
// It decides nothing itself and protects nothing: check and explain show what the gate would
// decide, and the fleet verbs change the shared run state that the runs read at their next
// decision. Whoever can run it with write access to a store (the file, the cluster's
// credentials) can halt or reset every run sharing it: guard that access, not this program.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/reins-go/reins/sandbox"
)

// Exit codes: one table for every verb.
const (
	exitOK       = 0 // success; check and explain: ALLOW
	exitDeny     = 1 // check and explain: DENY; a refusal (a loosening not confirmed); a log that does not verify
	exitConfirm  = 2 // check and explain: CONFIRM
	exitError    = 3 // something failed: a file that cannot be read or parsed, git, a backend
	exitUsage    = 4 // the command line is wrong
	exitNotFound = 5 // what the command line names does not exist
	// sandbox.ExitUnavailable (127): sandbox run's backend cannot run here; otherwise sandbox run
	// exits with the command's own status.
)

// exitCodes is the table `reins --help` prints.
var exitCodes = [][2]string{
	{"0", "ok; check and explain: ALLOW"},
	{"1", "denied: check and explain: DENY; a refusal (a loosening not confirmed); audit verify: the log does not verify"},
	{"2", "check and explain: CONFIRM (a human would be asked)"},
	{"3", "error: something failed (a file that cannot be read or parsed, git, a backend)"},
	{"4", "usage: the command line is wrong (see the command's --help)"},
	{"5", "not found: the checkpoint, grant, profile, file or workspace named does not exist"},
	{"127", "sandbox run: the backend cannot run here (otherwise sandbox run exits with the command's status)"},
}

// Options configure [Main]. A nil *Options, and every zero field, means the default.
type Options struct {
	// Fleet is the store the fleet verbs operate on. Default: [FileBackend], a reins.FileStore
	// named by -store, for the runs of one machine that share one file.
	Fleet *FleetBackend
}

// Main runs the command line args (without the program name) with the given streams and
// returns the exit code (the table `reins --help` prints).
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, opts *Options) int {
	c := &cli{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, fleet: FileBackend()}
	if opts != nil && opts.Fleet != nil {
		c.fleet = opts.Fleet
	}
	return c.main(args)
}

// cli is one invocation: its streams and the global flags.
type cli struct {
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string // -C: the workspace
	managed        string // -managed: the managed profile file ("": the loader's default)
	json           bool   // --json: machine-readable output
	fleet          *FleetBackend
}

// command is a node of the command tree: a verb with its subcommands, or a leaf that runs.
type command struct {
	name     string
	args     string // the argument synopsis, for help
	synopsis string // one line
	sub      []*command
	flags    func(fs *flag.FlagSet) // the leaf's own flags
	// backend says the leaf takes the fleet backend's flags (FleetBackend.Flags).
	backend bool
	// run runs the leaf. A non-nil error decides the exit code by its kind (see fail); otherwise
	// the code returned is the exit code.
	run func(c *cli, fs *flag.FlagSet) (int, error)
}

// root is the command table. A verb is one entry here.
var root = &command{name: "reins", synopsis: "govern what an AI coding agent may do", sub: []*command{
	profileCmd, permissionsCmd, trustCmd, checkCmd, explainCmd,
	timelineCmd, rewindCmd, diffCmd, auditCmd, replayCmd, grantsCmd, sandboxCmd, fleetCmd,
	{name: "help", args: "[command...]", synopsis: "show help for a command"},
}}

// errKind is the kind of an error, which decides its exit code.
type errKind int

const (
	kindError errKind = iota
	kindUsage
	kindNotFound
	kindDenied
	kindUnavailable // a sandbox backend that cannot run here
)

func (k errKind) String() string {
	return [...]string{"error", "usage", "not_found", "denied", "unavailable"}[k]
}

func (k errKind) code() int {
	return [...]int{exitError, exitUsage, exitNotFound, exitDeny, sandbox.ExitUnavailable}[k]
}

// cliError is an error of a known kind; what it says includes what to do about it.
type cliError struct {
	kind errKind
	err  error
}

func (e *cliError) Error() string { return e.err.Error() }
func (e *cliError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &cliError{kindUsage, fmt.Errorf(format, args...)}
}

func notFoundf(format string, args ...any) error {
	return &cliError{kindNotFound, fmt.Errorf(format, args...)}
}

func deniedf(format string, args ...any) error {
	return &cliError{kindDenied, fmt.Errorf(format, args...)}
}

// kindOf returns the kind of err: a cliError's, not found for a missing file, error otherwise.
func kindOf(err error) errKind {
	var ce *cliError
	switch {
	case errors.As(err, &ce):
		return ce.kind
	case errors.Is(err, fs.ErrNotExist):
		return kindNotFound
	}
	return kindError
}

// main runs the command line and returns the exit code.
func (c *cli) main(args []string) int {
	c.json = c.json || jsonRequested(args)
	verb, code, err := c.dispatch(root, args, nil)
	if err != nil {
		return c.fail(verb, err)
	}
	return code
}

// jsonRequested reports whether --json is among the flags (before "--"), so that an error found
// before it is parsed is reported as JSON too.
func jsonRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// fail reports err for verb on standard error, in the one format every verb uses, and returns its
// exit code.
func (c *cli) fail(verb []string, err error) int {
	kind := kindOf(err)
	msg := strings.TrimPrefix(err.Error(), "reins: ")
	name := strings.Join(verb, " ")
	if c.json {
		b, _ := json.Marshal(struct {
			Verb     string `json:"verb"`
			Kind     string `json:"error"`
			Message  string `json:"message"`
			ExitCode int    `json:"exit_code"`
		}{name, kind.String(), msg, kind.code()})
		fmt.Fprintf(c.stderr, "%s\n", b)
		return kind.code()
	}
	if name == "" {
		fmt.Fprintf(c.stderr, "reins: %s\n", msg)
	} else {
		fmt.Fprintf(c.stderr, "reins: %s: %s\n", name, msg)
	}
	return kind.code()
}

// dispatch walks args down the tree from cmd; path is the words that led here. It returns the
// verb (the path below the root) that the error, if any, belongs to.
func (c *cli) dispatch(cmd *command, args, path []string) ([]string, int, error) {
	path = append(path, cmd.name)
	verb := path[1:]
	fs := flag.NewFlagSet(strings.Join(path, " "), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.dir, "C", c.dirOrDot(), "the workspace `directory`")
	fs.BoolVar(&c.json, "json", c.json, "print JSON (errors too, on standard error)")
	fs.StringVar(&c.managed, "managed", c.managed, managedUsage)
	c.leafFlags(cmd, fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(cmd, path, fs)
			return verb, exitOK, nil
		}
		return verb, 0, usagef("%v (see '%s --help')", err, strings.Join(path, " "))
	}
	rest := fs.Args()
	if cmd.run != nil {
		code, err := cmd.run(c, fs)
		return verb, code, err
	}
	if len(rest) == 0 {
		if len(path) == 1 {
			c.help(cmd, path, fs)
			return verb, exitOK, nil
		}
		return verb, 0, usagef("a subcommand is needed: %s (see '%s --help')", subNames(cmd), strings.Join(path, " "))
	}
	if cmd == root && rest[0] == "help" {
		code, err := c.helpFor(rest[1:])
		return []string{"help"}, code, err
	}
	for _, s := range cmd.sub {
		if s.name == rest[0] {
			return c.dispatch(s, rest[1:], path)
		}
	}
	if len(path) == 1 {
		return []string{rest[0]}, 0, usagef("unknown command (see 'reins --help')")
	}
	return verb, 0, usagef("unknown subcommand %q: want %s (see '%s --help')", rest[0], subNames(cmd), strings.Join(path, " "))
}

// leafFlags registers cmd's own flags, and the fleet backend's when it takes them.
func (c *cli) leafFlags(cmd *command, fs *flag.FlagSet) {
	if cmd.backend {
		if b := c.fleetBackend(); b.Flags != nil {
			b.Flags(fs)
		}
	}
	if cmd.flags != nil {
		cmd.flags(fs)
	}
}

func subNames(cmd *command) string {
	names := make([]string, len(cmd.sub))
	for i, s := range cmd.sub {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

func (c *cli) dirOrDot() string {
	if c.dir == "" {
		return "."
	}
	return c.dir
}

// helpFor prints the help of the command named by words (help profile set).
func (c *cli) helpFor(words []string) (int, error) {
	cmd, path := root, []string{"reins"}
	for _, w := range words {
		var next *command
		for _, s := range cmd.sub {
			if s.name == w {
				next = s
			}
		}
		if next == nil {
			return 0, usagef("no command %q (see 'reins --help')", strings.Join(append(path[1:], w), " "))
		}
		cmd, path = next, append(path, w)
	}
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.String("C", ".", "the workspace `directory`")
	fs.Bool("json", false, "print JSON (errors too, on standard error)")
	fs.String("managed", "", managedUsage)
	c.leafFlags(cmd, fs)
	c.help(cmd, path, fs)
	return exitOK, nil
}

func (c *cli) help(cmd *command, path []string, fs *flag.FlagSet) {
	w := c.stdout
	name := strings.Join(path, " ")
	fmt.Fprintf(w, "%s: %s\n\nusage: %s", name, cmd.synopsis, name)
	switch {
	case len(cmd.sub) > 0:
		fmt.Fprintln(w, " [-C dir] [--json] <command> [arguments]")
		fmt.Fprintln(w, "\ncommands:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, s := range cmd.sub {
			fmt.Fprintf(tw, "  %s %s\t%s\n", s.name, s.args, s.synopsis)
		}
		tw.Flush()
	default:
		fmt.Fprintln(w, strings.TrimRight(" [flags] "+cmd.args, " "))
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	if len(path) > 1 {
		fmt.Fprintln(w, "\nexit codes: see 'reins --help'")
		return
	}
	fmt.Fprintln(w, "\nerrors: one line on standard error, \"reins: <verb>: ...\"; under --json one JSON object")
	fmt.Fprintln(w, "there: {\"verb\", \"error\" (the kind below), \"message\", \"exit_code\"}")
	fmt.Fprintln(w, "\nexit codes (every command):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range exitCodes {
		fmt.Fprintf(tw, "  %s\t%s\n", e[0], e[1])
	}
	tw.Flush()
}

// workspace returns the absolute workspace directory, which must exist.
func (c *cli) workspace() (string, error) {
	ws, err := filepath.Abs(c.dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return "", notFoundf("workspace %s is not a directory (pass the project with -C dir)", ws)
	}
	return ws, nil
}

// emit prints v as indented JSON under --json, or calls table otherwise.
func (c *cli) emit(v any, table func(w io.Writer)) error {
	if c.json {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

// exactArgs checks the number of positional arguments of a leaf: it wants what, and the error
// points to see (the leaf's help when "").
func exactArgs(fs *flag.FlagSet, n int, what, see string) error {
	if fs.NArg() == n {
		return nil
	}
	if see == "" {
		see = fs.Name() + " --help"
	}
	got := plural(fs.NArg(), "argument")
	if fs.NArg() > 0 {
		got += " (" + strings.Join(fs.Args(), " ") + ")"
	}
	return usagef("want %s, got %s (see '%s')", what, got, see)
}

// existingFile checks that path (an argument naming a file to read) exists: missing, it is not
// found (exit 5), and the message names it.
func existingFile(path, what string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFoundf("no %s %s", what, path)
	case err != nil:
		return err
	case st.IsDir():
		return usagef("%s is a directory, not %s", path, what)
	}
	return nil
}

// confirm asks a yes/no question on standard error and reads the answer from standard input;
// anything but y or yes (or no answer) is no. Under --json nothing is asked (standard error holds
// only the JSON error): the answer is no, and the verb's --yes confirms instead.
func (c *cli) confirm(question string) bool {
	if c.json {
		return false
	}
	fmt.Fprintf(c.stderr, "%s [y/N] ", question)
	line, _ := readLine(c.stdin)
	if f, ok := c.stdin.(*os.File); !ok || !isTerminal(f) {
		fmt.Fprintln(c.stderr) // a terminal echoes the answer's newline; end the line otherwise
	}
	answer := strings.TrimSpace(strings.ToLower(line))
	return answer == "y" || answer == "yes"
}

// readLine reads one line, at most 1 KiB, from r, byte by byte so that nothing after it is
// consumed.
func readLine(r io.Reader) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for len(b) < 1024 {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				break
			}
			b = append(b, one[0])
		}
		if err != nil {
			return string(b), err
		}
	}
	return string(b), nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
