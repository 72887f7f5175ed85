// Package langchaingo puts the tools of a github.com/tmc/langchaingo agent under reins: a
// wrapped tools.Tool passes a reins run on every Call (reins.Run.Do, or Run.DoCommand for the
// shell tool), so each call is decided (ALLOW, DENY, CONFIRM) on what it does, and an allowed
// call's obligations are carried out: a checkpoint before it, a notice, the sandbox for a
// command line. It is an adapter module of its own (this module depends on langchaingo; reins
// does not).
//
// # Usage
//
// Start a run over the workspace (host.New wires the checkpointer, sandbox, notifier and audit
// log), wrap the tools that touch files with a spec of their input, and hand them to the agent:
//
//	run, err := host.New(ctx, workspace, profile.Dev, &host.Options{Approver: approver})
//	if err != nil {
//		return err
//	}
//	defer run.Close()
//	agentTools := []tools.Tool{
//		reinslc.Wrap(run, readFile, reins.ToolSpec{Operation: policy.OpRead, Reads: []string{reins.WholeInput}}),
//		reinslc.Wrap(run, writeFile, reins.ToolSpec{Operation: policy.OpWrite, Writes: []string{"path"}}),
//		reinslc.Shell(run, "bash", "Runs a bash command line in the workspace."),
//	}
//	executor := agents.NewExecutor(agents.NewOneShotAgent(llm, agentTools))
//
// (reinslc is this package, imported under a name that does not read as langchaingo's own.)
// A langchaingo tool takes one string: reins.WholeInput makes that string the path (or
// command line, or host); a tool whose input is a JSON object names its fields instead, and
// the input is then read strictly (reins.ToolSpec).
//
// # What the model sees
//
// A refusal (the gate, the human, an obligation that could not be honoured, an input its spec
// cannot read) is the tool's observation: the reason and the alternatives, with a nil error,
// so langchaingo's executor goes on and the model reads why. A tool's own error stays an error
// (the executor ends the run on it), after the workspace is rolled back.
//
// # What it does not protect
//
// Only what the spec names is decided: a tool that reads a path its spec does not name reads it
// unchecked, and a tool with an empty spec is decided as unknown (destructive). A tool that
// runs a command line itself (not through Shell) gets no sandbox. Tools handed to the agent
// unwrapped do not pass reins at all. A hard stop latches the run: every later call is refused
// until the host calls Run.Reset.
package langchaingo
