// Package gate is where reins decides: every action an agent wants to take passes
// [Gate.Decide] and gets ALLOW, DENY or CONFIRM, with obligations (checkpoint first, notify the
// user, run in a sandbox).
//
// Deciding is a pure function of the compiled profile (a Gate), a snapshot of the run's state
// ([State]: a latched halt, an exhausted budget, standing grants) and the action, like
// cedar-go's Authorize. The gate holds no run state, records nothing and latches nothing: the
// run that owns the state (package reins, the module's root) takes the snapshot, records the
// decision and latches the hard stop a decision names in [Decision.Latch]. A [Trace] passed to
// Decide collects how the decision was reached, and [Trace.Explanation] reads it: an explanation
// shown to a human is the decision's own, never a second decision.
//
// # Quick start
//
//	g, err := gate.New(profile.Dev.Profile(), &gate.Options{Workspace: []string{"/path/to/project"}})
//	if err != nil { ... }
//	d := g.Decide(nil, policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"main.go"}}, nil)
//	switch d.Verdict {
//	case policy.Allow:   // honour d.Obligations, then act
//	case policy.Confirm: // ask a human; no approver means no
//	default:             // Deny: show d.Reason
//	}
//
// Most hosts use a reins.Run instead, which records every decision and carries out its
// obligations.
//
// # The decision order
//
// Decide walks the same layers, in this order; the first layer that decides wins:
//
//  1. Halted: a latched hard stop ([State].Halt), or the emergency-stop mode, denies everything
//     until the run is reset.
//  2. Hard stops: a budget meter exhausted ([State].Exhausted), a write outside the workspace.
//     Each denies and names its cause in [Decision.Latch] for the run to latch. (A sandbox
//     escape signal and a tool failing 3 times in a row latch where the run sees them, and reach
//     the gate as [State].Halt.)
//  3. Boundaries: two protection classes, one source for gate and sandbox (internal/fspath).
//     Secrets (profile ProtectedPaths: .env, .env.local, .env.*, .ssh, id_rsa, id_ed25519, the
//     user's credential stores such as ~/.aws) are neither read nor written; write-protected
//     paths (WriteProtectedPaths: shell rc files, .envrc, .mcp.json, editor and agent
//     configuration, .reins, and the user configuration directory reins loads profiles from)
//     are never written. The seeds' six names hold whatever the profile says, and the seeds'
//     .git is denied outright, reads included (its config can hold tokens); git's own commands
//     name no path under it and are decided by the analysis. Matched on the
//     path components of every target and of every path a shell command reads or writes, after
//     symlink-safe resolution; targets that cannot be resolved, or that the kernel and a lexical
//     join read differently, are denied. In every mode, the most autonomous included.
//  4. Permission mode: plan denies every action; read-only denies all but read-only ones.
//  5. The active profile's rules, by priority; the first match wins.
//  6. The autonomy matrix: (autonomy band, risk level) to a verdict and obligations, exactly as
//     the autonomy seed's table gives it.
//
// An action is split into parts (each risk level it carries, times each target), layers 5 and 6
// decide every part, and the strictest part decides the action. (Decide stops at a denied part
// that no later part could outrank, which gives the same decision; a full Trace, as Explain's,
// decides and lists every part.) Nothing a user saves can outrank layers 1 to 4.
//
// The code reads the same way: decide.go has one method per layer, called in this order.
//
// # Check ids
//
// [Decision.RuleID] names the deciding rule of the profile, or, when a built-in check decided,
// that check's id. The ids are constants, spelled one way: lower-case words joined by '-', after
// a group and ':' for checks that come in families. (Layer names, [policy.Layer.String], are another
// vocabulary, spelled as audit records write them: the layer "hard_stop" decides by the check
// "hard-stop:budget".)
//
//	layer       check id                           constant
//	input       context                            CheckContext
//	input       invalid-risk                       CheckInvalidRisk
//	input       unparsable-command                 CheckUnparsableCommand
//	halted      halted                             CheckHalted
//	halted      emergency-stop                     CheckEmergencyStop
//	hard_stop   hard-stop:budget                   CheckHardStopBudget
//	hard_stop   hard-stop:external-write           CheckHardStopExternalWrite
//	boundary    unresolvable-path                  CheckUnresolvablePath
//	boundary    ambiguous-path                     CheckAmbiguousPath
//	boundary    protected-path                     CheckProtectedPath
//	mode        mode:plan                          CheckModePlan
//	mode        mode:read-only                     CheckModeReadOnly
//	rule        grant:<id>                         CheckGrantPrefix (a standing grant)
//	matrix      matrix                             CheckMatrix
//	rule/matrix opaque-command                     CheckOpaqueCommand
//	rule/matrix max-files-per-plan                 CheckMaxFilesPerPlan
//	audit       audit                              CheckAudit
//	approval    approval:none, approval:refused,   CheckApprovalNone, CheckApprovalRefused,
//	            approval:timeout, approval:error,  CheckApprovalTimeout, CheckApprovalError,
//	            approval:once, approval:session,   CheckApprovalOnce, CheckApprovalSession,
//	            approval:always                    CheckApprovalAlways
//	obligation  obligation:checkpoint,             CheckObligationCheckpoint,
//	            obligation:notify,                 CheckObligationNotify,
//	            obligation:sandbox                 CheckObligationSandbox
//
// The approval and obligation checks are the run's (package reins). Audit records of a latched hard
// stop name its cause's check ([Cause.CheckID]: hard-stop:sandbox-escape,
// hard-stop:tool-failures, hard-stop:manual, hard-stop:emergency-stop, and the two above), and a
// reset record names [CheckReset].
//
// # Obligations
//
// A decision that is not a Deny carries the autonomy matrix's obligations for the profile's band
// and the action's risk levels (whichever layer decided), the deciding rule's own obligations,
// and the seed's checkpoint discipline: every mutating or destructive action that goes ahead is
// checkpointed first, and so is every exec part (a program the analysis cannot prove read-only)
// unless the profile sets [profile.ExecCheckpoints] off. A command whose every part is read-only
// ("git status", "ls", "grep -r") carries no checkpoint. The cost is one workspace snapshot per
// such command; package checkpoint's benchmarks measure it against "git status".
//
// # Workspace confinement
//
// Each target is resolved against the workspace roots (relative targets against the first) as
// the kernel reads it when a writer creates it: every symbolic link followed, ".." applied to
// the real directory it follows, and past a component that does not exist yet, the directories
// a writer would create, until a ".." climbs back into existing ones. So a link inside the
// workspace that points outside is outside, "/w/app-evil" is not inside "/w/app", and
// "nonexist/../link_out/x" follows link_out. A target with ".." is also read lexically
// (filepath.Join's reading); where the two readings name different files ("inlink/../esc/x"
// after a link, "file/../x" after a file) the target is denied as ambiguous
// ([CheckAmbiguousPath]), because hosts differ in which reading they use. A path that cannot be
// resolved (a loop, a NUL byte, more than 40 links, a permission error) is denied. Trusted paths
// of the profile count as workspace.
//
// For the same reason a target is denied as ambiguous when the process that opens it decides
// where it leads: a path through a /proc link to a process's state (/proc/self/cwd,
// /proc/<pid>/root, /dev/fd/N, /dev/stdin, however spelled or linked to), and a declared target
// (or working directory) starting with ~user or a $ expansion other than $HOME (~ and $HOME are
// the home directory, as a shell expands them; a $ later in a path is literal). Every root is
// checked on use to still be the directory the gate found; one moved away or replaced by a link
// (a committed symlink checked out by git) is not a starting point, and its targets are decided
// by what they lead to now. Protection is by name and by identity: a hard link to a protected
// file has that file's protection, and making one (ln without -s, cp -l) writes its source.
//
// # Fail-closed semantics
//
// The zero Verdict is Deny. An action whose risk is unknown is treated as destructive; a command line the gate
// cannot analyse is never auto-approved (at least Confirm). A Confirm with no human to ask must be
// treated as Deny by the host.
//
// # Concurrency and cost
//
// A Gate is immutable and safe for concurrent use; Decide takes no lock. An allowed Decide
// without a trace allocates nothing (with a Trace on the caller's stack, nothing for actions of
// up to 16 parts). Its only I/O, per target, is a root check, the resolution (one openat2 for a
// clean path on Linux, an lstat per component otherwise) and one lstat for identity; the
// identity index is built (bounded by fspath.MaxIndexEntries) the first time a target has
// several links, and rebuilt when one changed. For git commands it stats the repository
// configuration files it caches. See the benchmarks for what that costs.
//
// # Platforms
//
// The decision order is the same everywhere. Path confinement and protected-path matching follow
// the host's rules: drive letters, UNC volumes and "\\" on Windows, and case-insensitive names
// on Windows and macOS, where two spellings of one file must not escape a protection. On Linux a
// target is resolved with one openat2 call on the whole path (RESOLVE_NO_SYMLINKS,
// RESOLVE_NO_MAGICLINKS); elsewhere, or when a symbolic link lies on the path, it is resolved
// component by component with the same result. /proc links are recognised on Linux only;
// Windows has no identity index.
//
// # Security model and limitations
//
// The gate decides; only a sandbox enforces. It sees what the action declares and what its paths
// resolve to at the moment of the check: a file that changes between the check and the action
// (a symbolic link swapped in by a concurrent process) is the sandbox's to stop, which is why
// the hardened sandbox re-checks at use time in the kernel. Hard stops protect a run, not a
// machine: they latch in the run's state (and every run that shares its store).
package gate
