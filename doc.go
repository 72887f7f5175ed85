// Package reins governs how autonomously an AI coding agent may act. Every action an agent
// wants to take (read a file, write one, run a shell command, reach the network, delete
// something) goes through a [Run], which decides ALLOW, DENY or CONFIRM with the gate (package
// gate), carries out the obligations that come with it (checkpoint first, notify the user, run
// in a sandbox), runs the action, rolls the workspace back when it fails, and records every
// step.
//
// # Quick start
//
//	r, err := reins.New(ctx, profile.Dev.Profile(), &reins.Options{
//		Workspace:    []string{"/path/to/project"},
//		Audit:        sink,     // an audit.Sink; nil means audit.Discard
//		Approver:     approver, // answers CONFIRM; nil means CONFIRM is a denial
//		Checkpointer: cp,       // checkpoint.New(ctx, workspace, nil)
//		Notifier:     notifier,
//		Sandbox:      hardened, // runs what must be confined
//	})
//	if err != nil { ... }
//	defer r.Close()
//	out, err := r.Do(ctx, action, func(ctx context.Context, d gate.Decision) error { return runTheTool(ctx) })
//	switch {
//	case errors.Is(err, gate.ErrDenied): // the gate (or the human) said no; nothing ran
//	case err != nil:                     // the tool failed; out.RolledBack says whether it was undone
//	}
//
// # One run, one owner
//
// Deciding is a pure function of the compiled profile (a [gate.Gate]), a snapshot of the run
// state ([gate.State]) and the action, and returns the decision with its trace. Everything
// else belongs to the Run: the halt latch, failure counts, budget meters, standing grants,
// parked approvals, operations in flight, profile switches, the clock, and every audit record.
// [Run.Do] is a straight pipeline of small steps, one method each: admit (snapshot, decide,
// latch, record), approve (a grant's use, or the approver), obligations, run, settle.
// Explanations shown to an approver and the alternatives offered after a denial read the
// decision's own trace: nothing is decided twice.
//
// # Run state
//
// The run state sits behind a small interface, [Store]: Load a snapshot, Update it with one
// atomic check-and-update. [MemoryStore] is the default (the state lives with the Run);
// [FileStore] shares it between the processes of one machine (an agent CLI's hook, started once
// per tool call), and keeps "always" grants beside the user profile file. A store shared by
// several runs makes one halt, one budget and one set of grants span them: a use count or a
// budget is checked and updated in one step, so two agents racing for the last use of a grant
// cannot both have it. The conformance kit reinstest.TestStore checks an implementation.
//
// # Approvals and grants
//
// An [Approver] gets the action, the decision and its explanation, and answers with a verdict,
// a scope ([Once], [ForSession], [Always]), an optional note and who decided. An answer that does
// not come within Options.ApprovalTimeout (300 s by default, the gate spec's) is a denial, and
// so are an error and a panic (recovered, recorded). Without an approver, Options.Headless
// decides: [HeadlessDeny] (the default) or [HeadlessPark], which queues the action for review
// ([Run.Parked], [Run.Resolve]) and returns a [*ParkedError].
//
// A session or always answer becomes a [Grant]: exactly what was approved, no wider. A grant
// for a command covers that line as written (not under another wrapper, not chained with
// another command), in the directory where it was approved, with the environment it was
// approved with; its use count is kept with it in its store. Before an always grant is kept,
// the approver sees a [Proposal]: what it would match and the near misses it would not. A grant
// file edited to hold anything broader than an approval is refused (Grant.Validate).
//
// # Errors
//
// A refusal matches gate.ErrDenied: a [*gate.DeniedError] whose decision is the gate's Deny or
// a fresh Deny of the approval or obligation layer (no stale rule or obligations), with the
// alternatives the engine knows; or a [*ParkedError]. The action's own failure is an
// [*ActionError], which never matches gate.ErrDenied, even when the tool's error does.
//
// # Fail-closed semantics
//
// A decision that cannot be recorded is a Deny; so is one whose run state cannot be read (an
// unreachable store). A CONFIRM with nobody to ask is a Deny. An obligation that cannot be
// honoured (no checkpointer, a failed snapshot, no notifier, no sandbox runner) refuses the
// action before it runs.
//
// # What it does not protect
//
// The gate decides; only a sandbox enforces. A Run runs what it is given through the runner the
// decision calls for; a host that runs tools itself after [Run.Check] must honour the
// obligations itself. Hard stops protect a run (and every run sharing its store), not a
// machine.
package reins
