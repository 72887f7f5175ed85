// Package host wires a reins run the way most hosts would by hand: [New] takes a workspace and
// a preset and returns a [Run] whose every obligation can be honoured from the first call. It
// sits above the root package, which decides and runs actions through whatever collaborators it
// is given, and gives it these:
//
//   - the gate's one protection list (gate.Gate.Protections), handed once to the checkpointer
//     (never stored in a checkpoint, never touched by a restore) and to the sandboxes (masked);
//   - a checkpointer over the workspace (package checkpoint: the workspace's own git repository,
//     or a shadow repository for a plain directory), for the Checkpoint obligation;
//   - the hardened sandbox (package sandbox/hardened) where this machine provides it, for the
//     Sandbox obligation: a shell line the gate allows runs confined to what its analysis
//     claims. Where it does not (not Linux, no Landlock, namespaces refused, or
//     Options.NoSandbox), there is no sandbox, and every such line is asked about (CONFIRM)
//     instead of allowed: Run.Sandboxed and Run.SandboxErr say which, so a host can tell its
//     user;
//   - the local runner, with the full shell analysis as its script reader
//     (shellanalysis.Read), for commands that need no sandbox and for lines a human approved
//     to run unconfined;
//   - a notifier (the host's, or one that logs), for the Notify obligation;
//   - an audit sink (a JSONL file with a hash chain, by default <workspace>/.reins/audit.jsonl,
//     which the gate write-protects and the checkpoints leave alone).
//
// Run.Close closes all of it. With the tool middleware of the root package (reins.Guard), a host
// embeds reins in about ten lines:
//
//	run, err := host.New(ctx, "/path/to/project", profile.Dev, &host.Options{Approver: approver})
//	if err != nil {
//		return err
//	}
//	defer run.Close()
//	read := reins.Guard(run, reins.ToolSpec{Tool: "read_file", Operation: policy.OpRead, Reads: []string{"path"}},
//		readFile, reins.Denial.Message)
//	bash := reins.GuardCommand[string](run, reins.ToolSpec{Tool: "bash", Command: reins.WholeInput},
//		reins.CommandOutput, reins.Denial.Message)
//
// # What it does not protect
//
// The lists handed to the checkpointer and the sandboxes are those of the profile the run starts
// with; a later profile switch changes what the gate protects, not what they were given. The
// sandboxes get each protection class in its own field (sandbox.FsNetPolicy.DeniedPaths and
// WriteProtectedPaths): a secret is masked, a write-protected path stays readable and is never
// written. Their argument checks still refuse a command word that names a write-protected path
// (as they refuse .git), which the gate would let read. Without the hardened sandbox nothing confines a command a human approved: the
// local runner is not a security boundary. The default notifier only logs; a host whose user
// must see a notification passes its own.
package host
