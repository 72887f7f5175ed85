// Command mcp is an MCP server whose every tool call passes the reins gate first: the pattern for
// putting reins in front of any server built with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). [Gate], [AddTool] and [AddCommandTool] are the
// part to copy; this program wires them to three file tools and a shell tool over stdio, on a
// run that host.New wires (checkpoints, the hardened sandbox where this machine has it, the
// audit log).
//
// Usage:
//
//	mcp -workspace DIR [-profile NAME] [-audit FILE]
//
// Add it to an MCP client's configuration as a stdio server, for example
// {"command": "go", "args": ["run", "./examples/mcp", "-workspace", "/path/to/project"]}.
// The workspace must exist (it is never created). What each decision becomes:
//
//   - ALLOW: the tool runs, after a checkpoint where the decision asks for one (rolled back
//     when the tool fails); a shell line runs in the hardened sandbox, confined to what the
//     analysis claims (without that sandbox, such a line is asked about instead); a notice the
//     decision asks for is added to the tool's result, which the client shows.
//   - CONFIRM: the client's user is asked by elicitation, naming the action and its targets;
//     the answer, yes or no, is recorded with who gave it and its scope (this call, or the same
//     call again for the session). A client that cannot elicit gets a refusal.
//   - DENY, or a refusal: the tool's result, with isError set, says why and what could go
//     ahead instead, so the model can change course.
//
// A call of a tool the server does not have is answered "unknown tool" by the SDK, before
// anything is asked. A hard stop (a write outside the workspace, repeated failures of a tool)
// latches for the server's run: every later call is refused, saying why, until the server is
// restarted (its run state lives in memory). Every decision, approval and outcome is appended to the audit log (JSONL
// with a hash chain), default <workspace>/.reins/audit.jsonl.
//
// It lives in its own module so that the reins module does not depend on the SDK.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reins-go/reins/host"
	"github.com/reins-go/reins/profile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], &mcp.StdioTransport{}, os.Stderr))
}

// run is main with its transport and error output passed in, so that tests run the whole
// program over in-memory transports.
func run(ctx context.Context, args []string, t mcp.Transport, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ws := fs.String("workspace", "", "the project `directory` the tools work in (required)")
	profName := fs.String("profile", profile.Dev.Name(), "the reins profile to decide under")
	auditPath := fs.String("audit", "", "the audit log `file` (default: <workspace>/.reins/audit.jsonl)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcp -workspace DIR [-profile NAME] [-audit FILE]")
		fmt.Fprintln(stderr, "An MCP server over stdio whose file and shell tools pass the reins gate first.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *ws == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "mcp: -workspace is required and there are no positional arguments (see -help)")
		return 2
	}
	p, err := profile.Builtin(*profName)
	if err != nil {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	run, err := host.New(ctx, *ws, profile.Dev, &host.Options{Profile: &p, AuditPath: *auditPath, Logger: log,
		Approver: Approver(), Notifier: Notifier(log)})
	if err != nil {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return 1
	}
	defer run.Close()
	if !run.Sandboxed {
		log.Warn("mcp: shell lines the gate would allow are asked about instead", "why", run.SandboxErr)
	}
	server := NewServer(NewGate(run.Run, "files"), run.Workspace)
	if err := server.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return 1
	}
	return 0
}
