package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/policy"
)

// PathArgs is the input of read_file and delete_file.
type PathArgs struct {
	Path string `json:"path" jsonschema:"the file's path, relative to the workspace"`
}

// WriteArgs is the input of write_file.
type WriteArgs struct {
	Path    string `json:"path" jsonschema:"the file's path, relative to the workspace"`
	Content string `json:"content" jsonschema:"the new content"`
}

// CommandArgs is the input of run_command.
type CommandArgs struct {
	Command string `json:"command" jsonschema:"a shell command line, run with bash"`
	Dir     string `json:"dir,omitempty" jsonschema:"the directory it runs in, relative to the workspace (default: the workspace)"`
}

// NewServer returns an MCP server with three file tools and a shell tool in workspace ws, every
// call gated by g. The file tools open files through an os.Root, so even a call the gate let
// through cannot leave the workspace: the gate decides, the root enforces; the shell tool runs
// in the run's sandbox.
func NewServer(g *Gate, ws string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "reins-files", Version: "v0.2.0"}, nil)
	text := func(format string, args ...any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
	}
	inRoot := func(f func(r *os.Root) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
		r, err := os.OpenRoot(ws)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return f(r)
	}
	AddTool(g, s, &mcp.Tool{Name: "read_file", Description: "Read a file of the workspace."},
		reins.ToolSpec{Operation: policy.OpRead, Reads: []string{"path"}},
		func(ctx context.Context, in PathArgs) (*mcp.CallToolResult, error) {
			return inRoot(func(r *os.Root) (*mcp.CallToolResult, error) {
				b, err := r.ReadFile(in.Path)
				if err != nil {
					return nil, err
				}
				return text("%s", b), nil
			})
		})
	AddTool(g, s, &mcp.Tool{Name: "write_file", Description: "Create or replace a file of the workspace."},
		reins.ToolSpec{Operation: policy.OpWrite, Writes: []string{"path"}},
		func(ctx context.Context, in WriteArgs) (*mcp.CallToolResult, error) {
			return inRoot(func(r *os.Root) (*mcp.CallToolResult, error) {
				if err := r.WriteFile(in.Path, []byte(in.Content), 0o644); err != nil {
					return nil, err
				}
				return text("wrote %d bytes to %s", len(in.Content), in.Path), nil
			})
		})
	AddTool(g, s, &mcp.Tool{Name: "delete_file", Description: "Delete a file of the workspace."},
		reins.ToolSpec{Operation: policy.OpDelete, Writes: []string{"path"}},
		func(ctx context.Context, in PathArgs) (*mcp.CallToolResult, error) {
			return inRoot(func(r *os.Root) (*mcp.CallToolResult, error) {
				if err := r.Remove(in.Path); err != nil {
					return nil, err
				}
				return text("deleted %s", in.Path), nil
			})
		})
	AddCommandTool[CommandArgs](g, s, &mcp.Tool{Name: "run_command", Description: "Run a shell command line in the workspace."},
		reins.ToolSpec{Command: "command", WorkDir: "dir"})
	return s
}
