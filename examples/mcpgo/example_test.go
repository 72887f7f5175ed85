package mcpgo_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/examples/mcpgo"
	"github.com/reins-go/reins/host"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// An mcp-go server under reins: its write_file tool is described by a spec, and Govern puts
// every call through the run. A write to notes.txt is checkpointed and runs; a write to .env is
// refused, and the model reads why as the call's result.
func ExampleGovern() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "reins-mcpgo-example-")
	defer os.RemoveAll(ws)
	shadow, _ := os.MkdirTemp("", "reins-mcpgo-example-shadow-") // checkpoints of a plain directory
	defer os.RemoveAll(shadow)

	s := server.NewMCPServer("files", "1.0.0", server.WithElicitation())
	s.AddTool(mcp.NewTool("write_file", mcp.WithString("path", mcp.Required()), mcp.WithString("content")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			path := req.GetString("path", "")
			if err := os.WriteFile(filepath.Join(ws, path), []byte(req.GetString("content", "")), 0o644); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText("wrote " + path), nil
		})

	// The ten lines.
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Approver: mcpgo.Elicit(s),
		ShadowRoot: shadow, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer run.Close()
	g, err := mcpgo.Govern(s, run, mcpgo.Options{TrustAnnotations: true, Specs: map[string]reins.ToolSpec{
		"write_file": {Operation: policy.OpWrite, Writes: []string{"path"}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	s.AddTool(g.Shell("bash", "Runs a bash command line in the workspace."))

	// A client, in process here, calls the tools as a model would.
	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	_ = c.Start(ctx)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		fmt.Println(err)
		return
	}
	for _, path := range []string{"notes.txt", ".env"} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "write_file"
		req.Params.Arguments = map[string]any{"path": path, "content": "hello\n"}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("isError=%v %s\n", res.IsError, res.Content[0].(mcp.TextContent).Text)
	}
	timeline, _ := run.Checkpointer.List(ctx)
	fmt.Println("checkpoints:", len(timeline))
	// Output:
	// isError=false wrote notes.txt
	// isError=true reins denied this call of write_file; it did not run. Reason: target ".env" is protected (.env).
	// checkpoints: 1
}
