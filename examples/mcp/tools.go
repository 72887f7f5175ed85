package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reins-go/reins/policy"
)

// Specs describe the server's tools to the gate.
var Specs = map[string]ToolSpec{
	"read_file":   {Operation: policy.OpRead, PathArgs: []string{"path"}},
	"write_file":  {Operation: policy.OpWrite, PathArgs: []string{"path"}},
	"delete_file": {Operation: policy.OpDelete, PathArgs: []string{"path"}},
}

// PathArgs is the input of the file tools.
type PathArgs struct {
	Path string `json:"path" jsonschema:"the file's path, relative to the workspace"`
}

// WriteArgs is the input of write_file.
type WriteArgs struct {
	Path    string `json:"path" jsonschema:"the file's path, relative to the workspace"`
	Content string `json:"content" jsonschema:"the new content"`
}

// NewServer returns an MCP server with three file tools in workspace ws, every call gated by g.
// The tools themselves open files through an os.Root, so even a call the gate let through
// cannot leave the workspace: the gate decides, the root enforces.
func NewServer(g Checker, ws string, approve Approver) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "reins-files", Version: "v0.1.0"}, nil)
	s.AddReceivingMiddleware(Middleware(g, Options{Server: "files", Tools: Specs, Approve: approve}))
	text := func(format string, args ...any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
	}
	withRoot := func(f func(r *os.Root) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, any, error) {
		r, err := os.OpenRoot(ws)
		if err != nil {
			return nil, nil, err
		}
		defer r.Close()
		res, err := f(r)
		return res, nil, err
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read_file", Description: "Read a file of the workspace."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in PathArgs) (*mcp.CallToolResult, any, error) {
			return withRoot(func(r *os.Root) (*mcp.CallToolResult, error) {
				b, err := r.ReadFile(in.Path)
				if err != nil {
					return nil, err
				}
				return text("%s", b), nil
			})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write_file", Description: "Create or replace a file of the workspace."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in WriteArgs) (*mcp.CallToolResult, any, error) {
			return withRoot(func(r *os.Root) (*mcp.CallToolResult, error) {
				if err := r.WriteFile(in.Path, []byte(in.Content), 0o644); err != nil {
					return nil, err
				}
				return text("wrote %d bytes to %s", len(in.Content), in.Path), nil
			})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "delete_file", Description: "Delete a file of the workspace."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in PathArgs) (*mcp.CallToolResult, any, error) {
			return withRoot(func(r *os.Root) (*mcp.CallToolResult, error) {
				if err := r.Remove(in.Path); err != nil {
					return nil, err
				}
				return text("deleted %s", in.Path), nil
			})
		})
	return s
}
