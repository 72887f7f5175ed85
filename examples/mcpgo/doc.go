// Package mcpgo puts the tools of a github.com/mark3labs/mcp-go server under reins: every
// tools/call passes a reins run (reins.Run.Do, or Run.DoCommand for a shell tool) before the
// tool's handler runs, so each call is decided (ALLOW, DENY, CONFIRM) on what it does, and an
// allowed call's obligations are carried out: a checkpoint before it, a notice, the sandbox for
// a command line. It is an adapter module of its own (this module depends on mcp-go; reins
// does not).
//
// # Usage
//
// Build the server, start a run over the workspace (host.New wires the checkpointer, sandbox,
// notifier and audit log), describe the tools that touch files, and govern the server:
//
//	s := server.NewMCPServer("files", "1.0.0", server.WithElicitation())
//	run, err := host.New(ctx, workspace, profile.Dev, &host.Options{Approver: mcpgo.Elicit(s)})
//	if err != nil {
//		return err
//	}
//	defer run.Close()
//	g, err := mcpgo.Govern(s, run, mcpgo.Options{TrustAnnotations: true, Specs: map[string]reins.ToolSpec{
//		"read_file":  {Operation: policy.OpRead, Reads: []string{"path"}},
//		"write_file": {Operation: policy.OpWrite, Writes: []string{"path"}},
//	}})
//	if err != nil {
//		return err
//	}
//	s.AddTool(g.Shell("bash", "Runs a bash command line in the workspace."))
//
// The server's own tools are added with s.AddTool as usual, before or after Govern.
// TrustAnnotations says the tools' annotations are the host's own; leave it out for a server
// that registers other servers' tools (see Annotations below).
//
// # What the model sees
//
// A call the run refuses (the gate, the human, an obligation that could not be honoured, an
// input its spec cannot read) is answered as a tool result with IsError set and a message
// that gives the reason and the alternatives, as the MCP specification asks for tool errors,
// so the model reads why; _meta["reins/denial"] holds the same as data. A tool mcp-go does not
// know is rejected by mcp-go before reins is asked. A CONFIRM is put to the approver of the
// run: Elicit asks the client's user through MCP elicitation, and the answer is recorded with
// who gave it.
//
// # Annotations
//
// A tool's MCP annotations (readOnlyHint, destructiveHint, openWorldHint) are mapped to risk
// only upward (reins.ToolAnnotations): from a server the host does not trust they only ever
// raise the risk the spec declares, and a tool without a spec stays unknown (destructive).
// Options.TrustAnnotations lets the annotations of the host's own tools describe a tool that
// has no spec. mcp.NewTool writes the specification's defaults into every tool it builds
// (destructive, open-world), which cannot be told from hints the author gave: from an
// untrusted server they count (so, under most profiles, every such tool is asked about or
// refused), while for the host's own tools that have a spec they count as silence.
//
// # What it does not protect
//
// Only what the spec names is decided: a tool that reads a path from a field its spec does not
// name reads it unchecked, and a tool without a spec is decided as unknown (destructive), which
// under most profiles means asked about or refused. A tool that runs a command line itself
// (not through Governor.Shell) gets no sandbox. Middleware added after Govern runs inside
// reins' and could change a call after it was decided. Tools registered with s.AddTaskTool are
// hidden, since mcp-go runs their handlers outside its tool middleware. A hard stop latches
// the run: every later call is refused until the host calls Run.Reset.
package mcpgo
