/*
Package sandbox is where a command that the gate allowed actually runs.
It holds what every backend shares: the [Sandbox] interface, [Command],
[Result] with its [Confinement] and [Violation] report, the policy
([FsNetPolicy]), the [Registry] that maps backend names to backends, and
the backends that need nothing but this host: "local" ([NewLocal]) and
the git worktree wrapper ([NewWorktree]). The conformance kit for any
backend is package sandbox/sandboxtest.

In the decision flow the gate decides and the sandbox enforces. When a
decision carries the Sandbox obligation, the gate hands the command to a
[Sandbox] (through its own small runner interface, which [Sandbox.Run]
satisfies) and reads back a [Result]: exit code, capped output, whether
the command timed out, what confinement was actually in force
([Confinement]) and any escape attempt the backend observed
([Result.Violations]). A violation is the gate's "sandbox escape signal"
hard stop. It imports no other reins package besides internal ones:
the shell analysis of package risk/shell is linked only by a host that
imports package sandbox/script/shellanalysis (see "Shell scripts under
local").

# Confinement derived from the analysis

The gate's shell analysis proposes; the sandbox enforces. When the gate
lets a shell line run without asking, the decision carries what the
analysis claimed, and the host passes it as [Command.Confine]: the paths
the line may write (Confine.Writable; nothing else the backend would let
it write is writable, and a private, empty temporary directory is
always there) and whether it may use the network (Confine.Network,
which overrides the policy's AllowNetwork either way). A wrong
classification then fails inside the sandbox instead of doing harm.

Only a backend that enforces Confine satisfies a decision's Sandbox
obligation; [Enforcing] tells them apart (a backend implements
EnforcesConfine() bool). A backend that does not enforce it refuses a
command with Confine set (exit code 127, [ErrUnavailable], a reason),
never running it unconfined:

  - enforcing: local-hardened (package sandbox/hardened: namespaces, the
    mount tree, Landlock and seccomp), docker, singularity and apptainer
    (package sandbox/container: a read-only workspace bind, writable
    binds of what Confine grants, --network none), vercel-sandbox
    (package sandbox/remote: a sandbox made for the one command and
    removed after it, so nothing it writes reaches this host; its
    network policy follows Confine.Network), and a worktree when what it
    wraps enforces it;
  - not enforcing: local (it confines nothing), ssh (the remote host's
    files and network are its own), modal (no network switch) and
    daytona (the sandbox keeps the network and files it was created
    with).

What a Confine.Writable entry grants is the same on every enforcing
backend on this host: an existing directory or file is writable in
place (it cannot itself be removed or renamed: it is a mount point); a
path that does not exist gives its nearest existing directory create
rights: the command may create new entries there (any name, not only
the one listed) and write, rename or remove what it created, while every
entry that existed there is pinned read-only. An entry outside the
backend's writable paths, or matching a denied path, grants nothing and
is named in Confinement.Warnings. Confinement.Enforced lists
[LayerConfine] when a Confine was enforced.

What Confine does not do: Network is all or nothing (no host-level
filtering: a line whose analysis names one allowed host gets the whole
network), reads are not narrowed beyond the backend's policy (the
denied paths stay masked, everything else it shows stays readable), and
the container backends cannot pin a symbolic link, so a Confine whose
create grant would expose one is refused there.

# Choosing a backend

Each backend that needs more than this package lives in a sub-package;
importing one is the opt-in to what it links, and importing package
sandbox alone links none of them (no init hook, no go-landlock, no cgo
wrapper):

  - local (this package): the host itself, with path and argument
    checks. Not a security boundary: for trusted commands and tests.
  - local-hardened (package sandbox/hardened, Linux only): the host
    kernel as the boundary (namespaces, Landlock, seccomp); the default
    for an agent's commands on a Linux host.
  - worktree (this package): a git worktree of its own around any of
    them, so that what a command changes lands on a branch.
  - docker, singularity, apptainer (package sandbox/container): a
    container engine on this host, with the workspace bound into it.
  - ssh, modal, daytona, vercel-sandbox (package sandbox/remote): another
    machine, or a vendor's sandbox, reached through its CLI; the
    workspace is what is there.

Every backend keeps the same contract ([Sandbox]): a missing backend,
tool, daemon or layer is exit code 127 and [ErrUnavailable], never a
fabricated success; a refused command is 126 and [ErrRefused].

# Quick start

	h, err := hardened.New(hardened.Config{Root: "/work/project"}) // package sandbox/hardened
	if err != nil {
		return err
	}
	res, err := h.Run(ctx, sandbox.Command{Args: []string{"go", "test", "./..."}, Timeout: 10 * time.Minute})
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		// exit code 127: a required layer is missing; nothing ran
	case errors.Is(err, sandbox.ErrRefused):
		// exit code 126: the policy refused the command; see res.Violations
	case res.Escaped():
		// the command tried something forbidden: stop the agent
	}

Commands are argument vectors, never shell strings built by
concatenation. A [Command] carries a working directory (inside the root),
extra environment, stdin, a timeout ([DefaultTimeout] when zero) and an
output cap per stream ([DefaultMaxOutput] when zero).

# The policy

[FsNetPolicy] mirrors the seed's policy: AllowedPaths (extra writable
directories), AllowNetwork, DeniedPaths and EnvAllowlist.
[DefaultDeniedPaths] (.git, .env, .env.local, .ssh, id_rsa, id_ed25519, then
the rest of the gate's two protection classes: .env.*, ~/.aws and the other
credential stores, .envrc, shell rc files, editor and agent configuration)
always apply; DeniedPaths adds to them, and ~/ or $HOME/ entries are expanded
(an entry that cannot be honoured is an error). A name may hold * and ?
(.env.*). A relative entry matches wherever
its components appear as consecutive components of a path, an absolute
entry matches that path and everything below it, and matching is
case-insensitive. Paths are checked as written and again with every
symlink followed, including the intermediate hops, so a link named
"innocent" that points at .git is refused like .git itself; a path that
cannot be resolved is refused.

A non-empty EnvAllowlist clears the environment and forwards only the
listed variables of the host environment, so host secrets such as
OPENAI_API_KEY never reach the command. Command.Env is never filtered:
every pair the host puts there reaches the command, on every backend.

# Backends

local ([NewLocal]) runs the command directly in its own process group.
Before it starts, the working directory must resolve inside the root and
name no denied path, and every argument that could name a path (each
argument and the value of --opt=value) is checked against the denied
paths after resolution. The check over-approximates: an argument that
merely looks like a denied path ("https://host/x/.git") is refused too.
An empty EnvAllowlist passes the host environment through (the seed's
behaviour). When the command ends, times out or its context is done,
the whole process group is killed with SIGKILL.

# Shell scripts under local

When the command is "sh -c SCRIPT" (or bash, dash, zsh, ksh, mksh,
ash), local reads the script with a [script.Reader], started in the
working directory, with ~ and $HOME taken from the command's
environment, and checks, like arguments:

  - every path the reader says the script reads or writes, its
    redirections included, joined to the directory the script is in at
    that point, so "cd sub && echo x > link" checks sub/link and follows
    the link;
  - every literal word of every command, and the literal values of
    environment assignments ("FOO=.env tool") and of short options
    ("-o.env"), relative to the start directory and to every directory
    a literal cd leads to, because a program may take any word as a
    path;
  - globs two ways: the pattern itself is refused when some run of its
    components can match a denied entry (".e*", "[.]git", "id_*",
    "secrets/*.json"), a wildcard there matching a leading "." too; then the glob is
    expanded against the file system as the shell would (a wildcard
    does not match a leading "." unless the script mentions dotglob or a
    relative, in which case it does and case is ignored) and every
    match is checked. A lone "*" is not refused for what it might match
    later; only what it matches now is checked.

It fails closed: a script the reader cannot read is refused, and so is
every command the reader marks unreadable. LocalConfig.Scripts chooses
the reader:

  - nil: [script.Builtin], which links nothing but a shell parser. It
    reads lists and pipelines of simple commands whose program it knows
    to open only what its arguments name (cat, ls, grep, cp, mv, rm,
    mkdir, sort, wc, diff and a few more, each with the short options
    it knows, and builtins that open nothing, such as echo, test and
    sleep), with literal words. Anything else is unreadable: another
    program (go, git, make, python), a long option, an environment
    assignment, a variable or substitution in a path argument, a glob
    that could expand to an option, a compound command (if, for, a
    function). So "rm -rf build && exit 3" runs, while "go test ./..."
    is refused under local with this reader.
  - shellanalysis.Read (package sandbox/script/shellanalysis): the full
    shell analysis of package risk/shell, with its option tables for
    some 180 programs. It refuses every command the analysis reports as
    opaque (a non-literal path argument or redirection target, a
    relative path after a cd to an unknown directory, code handed to
    another interpreter such as python -c, a script read from a pipe or
    a file, a computed program name), except a call of a function the
    script defines, whose body is analysed where it is defined; and a
    command with an argument or assignment the analysis cannot spell
    out ("tool $F", "X=$(cat f) tool"), unless the program never opens
    its arguments (echo, printf, test, [, sleep, kill and a few more).
    Importing it links risk/shell; a host that imports the gate links it
    anyway.
  - a host's own [script.Reader].

FuzzBuiltinAtLeastAsStrict (package sandbox/internal/argcheck) checks
that the built-in reader refuses every script the full analysis
refuses. Each refusal has exit code 126, an error matching [ErrRefused]
and a [ViolationUncheckable] or [ViolationDeniedPath] whose Detail, also
on stderr, says why. A reader sees what the script spells out, not what
programs compute at run time (python -c 'open(".e"+"nv")' is refused
only because its code is unreadable), and a file a script creates
between the check and its use is not seen.

local is NOT a security boundary. It does not confine writes outside the
root, reads, the network, or what a program computes at run time
(python -c 'open(".e"+"nv")'); it does not close descriptors that the
host leaked without O_CLOEXEC; a process that leaves the process group
(setsid) survives it. Use it for trusted commands and for tests.

local-hardened (package sandbox/hardened, Linux only) is a security
boundary: namespaces, a private read-only mount tree with the protected
paths masked or read-only, Landlock, a seccomp filter and no
capabilities, in a process tree that dies with its launcher. Its package
documentation says what it enforces, what it only detects and what
stays invisible. Importing package sandbox alone links none of it: no
init hook, no go-landlock, no cgo wrapper.

The container backends (package sandbox/container) and the remote and
vendor backends (package sandbox/remote) drive the real CLI of a
container engine, of ssh or of a vendor, with an argument vector built
from the policy; their package documentation says what each enforces.

# Performance

Measured with go test -bench on the 2-core development machine, under
load from other work, against a baseline of the same invocation (the
benchmarks of sandbox/internal/argcheck): the check of a typical
"sh -c" script (a cd, a pipeline, a redirection, a glob) with the full
shell analysis costs 8 to 10 times the argument check of a plain
argument vector of similar length (BenchmarkCheckScript against
BenchmarkCheckArgsPlain); BenchmarkCheckScriptBuiltin gives the
built-in reader's. BenchmarkRunLocal against BenchmarkExecDirect in this package
gives what local adds to a short command.

# Worktrees and the registry

[NewWorktree] runs "git worktree add -B <branch> <parent>/<prefix>-<branch>"
and wraps local (or, through WorktreeConfig.New, any backend such as
local-hardened) rooted at
the new worktree; it fails clearly when the directory is not in a git
repository, and [Worktree.Close] removes the worktree (the branch stays).

A profile names its backend; a [Registry], built and passed by the host,
maps names to backends with an availability probe each.
[NewBuiltinRegistry] holds this package's "local"; each sub-package's
Register adds its own backends, from configuration templates, to the
same registry (hardened.Register, container.Register, remote.Register).
Nothing registers itself globally. A third-party backend implements
[Sandbox], reports exit code 127 and [ErrUnavailable] when its tool is
missing, and runs the conformance kit in package sandboxtest.
*/
package sandbox
