/*
Package sandbox is where a command that the gate allowed actually runs:
on the host ("local"), in a hardened Linux sandbox ("local-hardened",
package sandbox/hardened), in
a dedicated git worktree ("worktree") wrapping either of them, in a
container ("docker", "singularity", "apptainer"), on another machine
("ssh"), or in a vendor's sandbox ("modal", "daytona", "vercel-sandbox").

In the decision flow the gate decides and the sandbox enforces. When a
decision carries the Sandbox obligation, the gate hands the command to a
[Sandbox] (through its own small runner interface, which [Sandbox.Run]
satisfies) and reads back a [Result]: exit code, capped output, whether
the command timed out, what confinement was actually in force
([Confinement]) and any escape attempt the backend observed
([Result.Violations]). A violation is the gate's "sandbox escape signal"
hard stop. This package imports no other reins package.

# Quick start

	h, err := hardened.New(hardened.Config{Root: "/work/project"}) // package sandbox/hardened
	if err != nil {
		return err
	}
	res, err := h.Run(ctx, sandbox.Command{Args: []string{"go", "test", "./..."}, Timeout: 10 * time.Minute})
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		// exit code 127: a required layer is missing; nothing ran
	case errors.Is(err, sandbox.ErrDenied):
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
ash), local reads the script with the shell analysis of package
risk/shell (shell.Analyze, started in the working directory, with ~ and
$HOME taken from the command's environment) and checks, like arguments:

  - every path the analysis says the script reads or writes, its
    redirections included, joined to the directory the script is in at
    that point, so "cd sub && echo x > link" checks sub/link and follows
    the link; nested scripts (bash -c '...', eval of literal text) are
    analysed too;
  - every literal word of every command, and the literal values of
    environment assignments ("FOO=.env tool"), relative to the start
    directory and to every directory a literal cd leads to, because a
    program the analysis does not know may take any word as a path;
  - globs two ways: the pattern itself is refused when some run of its
    components can match a denied entry (".e*", "[.]git", "id_*",
    "secrets/*.json"), a wildcard there matching a leading "." too; then the glob is
    expanded against the file system as the shell would (a wildcard
    does not match a leading "." unless the script mentions dotglob or a
    relative, in which case it does and case is ignored) and every
    match is checked. A lone "*" is not refused for what it might match
    later; only what it matches now is checked.

It fails closed. A script that does not parse is refused. So is every
command the analysis reports as opaque (a non-literal path argument or
redirection target, a relative path after a cd to an unknown directory,
code handed to another interpreter such as python -c, a script read from
a pipe or a file, a computed program name), except a call of a function
the script defines, whose body is analysed where it is defined; and so is
a command with an argument or assignment the analysis cannot spell out
("tool $F", "X=$(cat f) tool"), unless the program is one that never
opens its arguments (echo, printf, test, [, sleep, kill and a few more).
Each refusal has exit code 126, an error matching [ErrDenied] and a
[ViolationUncheckable] or [ViolationDeniedPath] whose Detail, also on
stderr, says why. LocalConfig.ScriptPaths replaces the analysis with a
host's own function ([ScriptWords] is a crude word scan). The analysis
sees what the script spells out, not what programs compute at run time
(python -c 'open(".e"+"nv")' is refused only because its code is
opaque), and a file a script creates between the check and its use is
not seen.

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

# Performance

Measured with go test -bench on the 2-core development machine, under
load from other work, each figure against a baseline of the same
invocation: the shell-analysis check of a typical "sh -c" script (a cd,
a pipeline, a redirection, a glob) costs about 8 times the argument
check of a plain argument vector, or about three quarters of starting
/bin/true directly, so it adds about half to a local run of a short
command. Building the script of a remote or vendor backend costs under
1% of a direct process start. A run through ssh to a loopback sshd,
with a new connection each time, costs about 500 times a direct
/bin/true in wall time and 140 times in CPU time: the key exchange and
authentication dominate (a ControlMaster in SSHConfig.Options saves
them after the first run).

# Worktrees and the registry

[NewWorktree] runs "git worktree add -B <branch> <parent>/<prefix>-<branch>"
and wraps local (or, through WorktreeConfig.New, any backend such as
local-hardened) rooted at
the new worktree; it fails clearly when the directory is not in a git
repository, and [Worktree.Close] removes the worktree (the branch stays).

A profile names its backend; a [Registry], built and passed by the host
([NewBuiltinRegistry] for every backend above but worktree, with the
CLI backends' settings as templates in [BuiltinOptions]), maps names to
backends with an availability probe each. Nothing registers itself
globally. A third-party backend implements [Sandbox], reports exit code
127 and [ErrUnavailable] when its tool is missing, and runs the
conformance kit in package sandboxtest.

# Backends that drive a CLI

reins does not reimplement container engines, ssh or vendors' sandboxes:
these backends run the real CLI with an argument vector built from the
policy, and never fabricate success. Each first looks for its CLI in
PATH (and, for the vendors, for credentials, without ever starting an
interactive login); when something is missing the command does not run,
the [Result] has exit code 127, stderr names the CLI and what is
missing, and the error matches [ErrUnavailable]. Each has a Probe for
the registry. A failure of the tool itself (docker's exit 125, an
apptainer FATAL, an ssh connection that fails, a vendor CLI that ends
without reporting the command's status) is reported the same way, with
the tool's message, and never as the command's exit status.

docker ([NewDocker]) runs one container per command: docker run --rm
--init, the workspace bound at /workspace ([DockerWorkdir]) and used as
the working directory, --network=none unless AllowNetwork, --cpus,
--memory with --memory-swap equal to it and --pids-limit
([DefaultDockerLimits] unless set), --cap-drop=ALL, --security-opt
no-new-privileges, a read-only root file system with a tmpfs /tmp,
--user of the caller, an optional --runtime (runsc for gVisor), and the
image of the configuration (pin it by digest). Denied paths found in
the workspace are masked (an empty inaccessible tmpfs over a directory,
/dev/null over a file) and .git is bound read-only. Variables of the
allowlist whose value comes from the host are passed with -e KEY, so
the value travels through docker's own environment; values from
Command.Env are passed as -e KEY=VALUE and never enter the docker CLI's
environment (where HOME, PATH or DOCKER_HOST would reconfigure docker
itself), at the price of appearing in its argument vector on this
host. Before each run "docker version" tells a missing CLI from an
unreachable daemon. A timeout removes the container by name (docker rm
--force), then kills the CLI. docker's exit 125, and 126 when docker
printed the error, are infrastructure failures; a command that itself
exits 125 is therefore reported as a docker failure (the safe side).

singularity and apptainer ([NewSingularity], [NewApptainer]) run
"exec --containall --cleanenv --no-privs --no-home" with the workspace
bound at /workspace ([SingularityWorkdir]), --pwd inside it, denied paths
masked by binds of /dev/null or an empty inaccessible directory and .git
bound read-only, --net --network none unless AllowNetwork, and --cpus,
--memory (--memory-swap equal) and --pids-limit when set. The
allowlisted variables reach the container as APPTAINERENV_KEY (or
SINGULARITYENV_KEY) in the CLI's environment, never in its arguments;
the host's APPTAINER_* and SINGULARITY_* settings are not passed to the
CLI, so that they cannot add binds. A timeout kills the CLI's process
group; with --containall the container's processes share its PID
namespace and end with it.

ssh ([NewSSH]) runs the command on another host with ssh -o
BatchMode=yes (never a password prompt), -T, the configured port, user,
identity file (IdentitiesOnly), known-hosts file (StrictHostKeyChecking)
and extra options, in a remote working root (SSHConfig.RemoteDir).

modal ([NewModal]) runs "modal shell" with the image, --cpu, --memory,
--gpu, --cloud, --region, secrets and volumes of the configuration; the
workspace is staged without its denied paths (and without links to them
or out of it) and uploaded with --add-local to /mnt/<base name>, a copy
whose changes do not come back.

daytona ([NewDaytona]) runs "daytona exec" in an existing sandbox, with
--timeout; the sandbox's image, resources and network are what it was
created with (daytona create --cpu --memory --network-block-all).

vercel-sandbox ([NewVercelSandbox]) runs "sandbox run --rm" (the Vercel
Sandbox CLI) with the runtime, image or snapshot, --vcpus, a lifetime of
the command's timeout plus a minute, and --network-policy deny-all
unless AllowNetwork; the token travels in the CLI's environment only.

# How the remote and vendor backends run a command

ssh, modal, daytona and vercel-sandbox send one shell script. Every
argument in it is quoted with syntax.Quote (mvdan.cc/sh/v3) for bash, so
spaces, quotes, ";", "$( )", globs and newlines reach the program as
written and are never interpreted; control characters and invalid UTF-8
use $'...', which the far shell must understand (bash, zsh, ksh, mksh,
BusyBox ash; for ssh to a host whose login shell is a plain POSIX sh,
set SSHConfig.Shell to bash; the vendors run bash). The script:

  - enters the root and the working directory and checks, where the
    files are, that the directory with every link followed is inside the
    root and names no denied path (Command.Dir is also checked as
    written before anything runs, and the arguments and "sh -c" scripts
    are checked against the denied paths as written: local's check,
    without the far side's links and files);
  - applies the env allowlist with "env -i" and the allowed variables'
    values from the far side, then the allowed pairs of Command.Env;
    without an allowlist the far side's environment is kept and
    Command.Env added (modal takes [DefaultEnvAllowlist] instead, because
    modal shell puts the caller's Modal token into the container);
  - frames its output between marker lines carrying a random nonce, so
    that what the CLI prints around the command is not taken for the
    command's output, and reports the exit status in the closing line:
    a run without that line is unavailable, whatever the CLI's exit code;
  - kills what the command left in its process group when it ends,
    as local does (where the script's shell leads the group, as under
    sshd).

For ssh the script waits, before it starts the command, for a line on
its standard input that the backend sends only once it has received the
remote process id, with the time left before the deadline; a watchdog
on the remote side kills the process group when that time is up, and a
timeout or a cancelled context kills the remote process group through a
second connection. So a run that ends before the remote side said who
it is never starts the command. Stdin follows that line. daytona and
vercel-sandbox get a remote watchdog with the whole timeout; modal's
container ends with modal shell. The vendor CLIs cannot pass standard
input: a Command with Stdin is refused there (127). daytona merges the
command's stdout and stderr, so its script keeps them apart in files and
prints them base64-encoded.

# Security model and limitations

  - The container backends bind the workspace and must run on the
    host whose files they bind: docker with a remote daemon (DOCKER_HOST
    to another machine) would bind that machine's paths.
  - docker: the container's root is the caller's uid unless User is set;
    a root caller's command runs as root without capabilities. Denied
    paths created during the run are not masked. Without a runtime such
    as runsc, the container shares the host kernel.
  - singularity and apptainer: whether --net --network none and the
    cgroup limits are allowed to an unprivileged user depends on the
    release and the site's apptainer.conf; reins relies on the CLI to
    refuse what it cannot apply, so try a first run on the target host.
    The image's files are read-only, but the container runs as the
    caller's user.
  - ssh confines nothing on the remote host beyond the working
    directory, the argument check and the environment: AllowedPaths,
    AllowNetwork and the denied paths as the command uses them are not
    enforced there. The leftover and timeout kills reach the remote
    process group, which a command that calls setsid leaves. The denied
    path and argument checks see paths as written (the remote links are
    followed only for the working directory).
  - modal shell has no network switch and uploads a copy: AllowNetwork
    and AllowedPaths are not enforced, and writes stay in the container.
  - The script of the remote and vendor backends, with the values of
    Command.Env in it, is an argument of the local CLI process and of
    the far shell: users of either machine who can list processes can
    read it.
  - daytona: network, resources and isolation are the sandbox's own
    settings, not checked by this backend; the workspace must already
    be in the sandbox. Quoting of the base64 script relies on the
    command-line splitting of the daytona CLI and daemon as of this
    writing.
  - vercel-sandbox: the sandbox does not see this host's files; start it
    from a snapshot that holds the workspace.
  - The vendor CLIs change: the flags used here were read from each
    CLI's reference and source when this was written; a CLI that no
    longer accepts them fails, and the failure is reported, never taken
    for the command's success.
*/
package sandbox
