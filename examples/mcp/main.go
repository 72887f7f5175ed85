// Command mcp is an MCP server whose every tool call passes the reins gate first: the pattern for
// putting reins in front of any server built with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). [Middleware] is the part to copy; this program wires
// it to three file tools over stdio.
//
// Usage:
//
//	mcp -workspace DIR [-profile NAME] [-audit FILE]
//
// Add it to an MCP client's configuration as a stdio server, for example
// {"command": "go", "args": ["run", "./examples/mcp", "-workspace", "/path/to/project"]}.
// A CONFIRM is put to the user through MCP elicitation; a client that cannot elicit gets a
// denial. From protocol version 2026-07-28 on, a server may not elicit while it serves a request
// (multi round-trip requests): with such a client this example denies a CONFIRM and says why. A
// host that wants approvals there gates inside its tool handlers, which can return input
// requests, instead of in receiving middleware. Every decision is appended to the audit log (JSONL with a hash chain), default
// <workspace>/.reins/audit.jsonl.
//
// It lives in its own module so that the reins module does not depend on the SDK.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
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
	profName := fs.String("profile", profile.ProfileDev, "the reins profile to decide under")
	auditPath := fs.String("audit", "", "the audit log `file` (default: <workspace>/.reins/audit.jsonl)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcp -workspace DIR [-profile NAME] [-audit FILE]")
		fmt.Fprintln(stderr, "An MCP server over stdio whose file tools pass the reins gate first.")
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
	if *auditPath == "" {
		*auditPath = filepath.Join(*ws, ".reins", "audit.jsonl")
	}
	if err := os.MkdirAll(filepath.Dir(*auditPath), 0o700); err != nil {
		fmt.Fprintf(stderr, "mcp: audit log: %v\n", err)
		return 1
	}
	log, err := audit.OpenJSONL(*auditPath, nil)
	if err != nil {
		fmt.Fprintf(stderr, "mcp: audit log: %v\n", err)
		return 1
	}
	defer log.Close(context.Background())
	g, err := reins.New(ctx, p, &reins.Options{Workspace: []string{*ws}, Audit: log})
	if err != nil {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return 1
	}
	defer g.Close()
	server := NewServer(g, *ws, elicitApproval)
	if err := server.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "mcp: %v\n", err)
		return 1
	}
	return 0
}

// elicitApproval asks the user, through the client, whether a CONFIRM may go ahead. An error (a
// client that cannot elicit, or one on a protocol version that forbids it here) is a no.
func elicitApproval(ctx context.Context, req mcp.Request, a policy.Action, d gate.Decision) (bool, error) {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok {
		return false, errors.New("no server session to ask")
	}
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{
		Message: fmt.Sprintf("reins asks: allow %s? %s", a.Tool, d.Reason),
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"approve": map[string]any{"type": "boolean"}},
			"required":   []string{"approve"},
		},
	})
	if err != nil {
		return false, err
	}
	yes, _ := res.Content["approve"].(bool)
	return res.Action == "accept" && yes, nil
}
