// Command reins is a command-line front end to the library, with the verbs of the
// specifications it grew from: decide or explain an action, list, show and switch profiles, list
// the active permissions, read and verify an audit log, and list, diff or rewind checkpoints. It
// shows how a host wires the packages together; every verb is a few calls of the public API.
//
//	reins [-C dir] [--json] <command> [arguments]
//
// Run `reins help` for the commands and `reins help <command>` (or `<command> --help`) for one.
// Exit codes: 0 success (and ALLOW for check and explain), 1 DENY or a failed verification,
// 2 CONFIRM, 3 an error (with what to do about it on standard error).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// Exit codes.
const (
	exitOK      = 0
	exitDeny    = 1 // a DENY, or a verification that failed
	exitConfirm = 2
	exitError   = 3
)

func main() {
	c := &cli{ctx: context.Background(), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(c.main(os.Args[1:]))
}

// cli is one invocation: its streams and the global flags.
type cli struct {
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string // -C: the workspace
	json           bool   // --json: machine-readable output
}

// command is a node of the command tree: a verb with its subcommands, or a leaf that runs.
type command struct {
	name     string
	args     string // the argument synopsis, for help
	synopsis string // one line
	sub      []*command
	flags    func(fs *flag.FlagSet) // the leaf's own flags
	run      func(c *cli, fs *flag.FlagSet) (int, error)
}

// usageError is a mistake in the command line; the message says what to run instead.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

var root = &command{name: "reins", synopsis: "govern what an AI coding agent may do", sub: []*command{
	profileCmd, permissionsCmd, checkCmd, explainCmd,
	timelineCmd, rewindCmd, diffCmd, auditCmd, replayCmd, grantsCmd, sandboxCmd,
	{name: "help", args: "[command...]", synopsis: "show help for a command"},
}}

// main runs the command line and returns the exit code; errors go to stderr with a hint.
func (c *cli) main(args []string) int {
	code, err := c.dispatch(root, args, nil)
	if err != nil {
		fmt.Fprintln(c.stderr, "reins:", err)
		var ue *usageError
		if errors.As(err, &ue) {
			return exitError
		}
		if code == exitOK {
			code = exitError
		}
	}
	return code
}

// dispatch walks args down the tree from cmd; path is the words that led here.
func (c *cli) dispatch(cmd *command, args, path []string) (int, error) {
	path = append(path, cmd.name)
	fs := flag.NewFlagSet(strings.Join(path, " "), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.dir, "C", c.dirOrDot(), "the workspace `directory`")
	fs.BoolVar(&c.json, "json", c.json, "print JSON instead of a table")
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(cmd, path, fs)
			return exitOK, nil
		}
		return exitError, usagef("%v (see '%s --help')", err, strings.Join(path, " "))
	}
	rest := fs.Args()
	if cmd.run != nil {
		return cmd.run(c, fs)
	}
	if len(rest) == 0 {
		c.help(cmd, path, fs)
		if len(path) == 1 {
			return exitOK, nil
		}
		return exitError, usagef("%s needs a subcommand", strings.Join(path, " "))
	}
	if cmd == root && rest[0] == "help" {
		return c.helpFor(rest[1:])
	}
	for _, s := range cmd.sub {
		if s.name == rest[0] {
			return c.dispatch(s, rest[1:], path)
		}
	}
	return exitError, usagef("unknown command %q (see '%s --help')", strings.Join(append(path, rest[0]), " "), strings.Join(path, " "))
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
			return exitError, usagef("no command %q (see 'reins help')", strings.Join(append(path, w), " "))
		}
		cmd, path = next, append(path, w)
	}
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.String("C", ".", "the workspace `directory`")
	fs.Bool("json", false, "print JSON instead of a table")
	if cmd.flags != nil {
		cmd.flags(fs)
	}
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
		fmt.Fprintf(w, " [flags] %s\n", cmd.args)
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	if len(path) == 1 {
		fmt.Fprintln(w, "\nexit codes: 0 ok or ALLOW, 1 DENY or a failed verification, 2 CONFIRM, 3 error")
	}
}

// workspace returns the absolute workspace directory, which must exist.
func (c *cli) workspace() (string, error) {
	ws, err := filepath.Abs(c.dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory (pass the project with -C dir)", ws)
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

// exactArgs checks the number of positional arguments of a leaf.
func exactArgs(fs *flag.FlagSet, n int, what string) error {
	if fs.NArg() != n {
		return usagef("%s wants %s (see '%s --help')", fs.Name(), what, fs.Name())
	}
	return nil
}
