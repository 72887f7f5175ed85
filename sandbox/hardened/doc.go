/*
Package hardened is the local-hardened sandbox: [New] returns a
[sandbox.Sandbox] that runs each command on this host inside user,
mount, pid, IPC and network namespaces, a private read-only mount tree
with the protected paths masked or read-only, Landlock and a seccomp
filter, with every capability dropped, in a process tree that dies with
its launcher. It is a security boundary, and it refuses to run (exit
code 127, [sandbox.ErrUnavailable]) when a required layer is missing.

# Quick start

	h, err := hardened.New(hardened.Config{Root: "/work/project"})
	if err != nil {
		return err
	}
	defer h.Close()
	res, err := h.Run(ctx, sandbox.Command{Args: []string{"go", "test", "./..."}, Timeout: 10 * time.Minute})
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		// exit code 127: a required layer is missing; nothing ran
	case errors.Is(err, sandbox.ErrRefused):
		// exit code 126: the working directory is refused; see res.Violations
	case res.Escaped():
		// the command tried something forbidden: stop the agent
	}

[Register] adds "local-hardened" to a [sandbox.Registry], for profiles
that name the backend.

# Importing is the opt-in

Package sandbox alone links none of this package: no init hook, no
go-landlock, no cgo wrapper. This package's init turns a binary started
with the sandbox's sentinel argv[0] into the sandbox child (see
[ChildMain]); a program that calls [New] therefore holds the child
already. It links go-landlock and, with cgo, libcap's psx (see Build
notes).

# Platforms

local-hardened is Linux-only. On other systems the package builds, [New]
validates the configuration, and every Run and Probe returns exit code
127 with an error matching [sandbox.ErrUnavailable] that says
"local-hardened requires Linux"; [ChildMain] does nothing.

# What a run goes through

A [Sandbox] starts its commands through a launcher: the running binary,
executed again with a sentinel argv[0] and a parent-death signal, in a
session of its own. The launcher is started at the first Run (or
Probe) and kept for the next ones; it reads the policy from an
inherited pipe (never from the environment or argv) and sets up, once,
in this order:

  - new user, mount, pid, IPC and (network denied) network namespaces
    created by clone(2) in the parent; a root caller without user
    namespaces still gets the mount, pid, IPC and network namespaces.
    The IPC namespace is required, with or without a pid namespace: a
    run that cannot have one is refused, since it would reach the
    host's System V segments, semaphores and queues;
  - a new root on a tmpfs: the read-only paths
    ([DefaultReadOnlyPaths] plus ReadOnlyPaths), the workspace and the
    AllowedPaths bound writable (or, with a Confine, read-only, with
    what it grants bound writable and the entries it pins bound
    read-only: see "Confine"), a private /tmp (TMPDIR), HOME
    (/tmp/home, with XDG_CACHE_HOME under it, so go, npm, pip and cargo
    find writable caches) and /dev/shm on tmpfs, a minimal /dev, a fresh
    /proc; the host's /tmp, /run, /var and home directories are not
    there, so writes to them never reach the host and host UNIX sockets
    are out of reach; every read-protected path of the shared lists
    (internal/fspath: .env, .env.*, keys, credential stores; plus
    DeniedPaths and [CredentialStores] such as /etc/shadow) found in the
    writable directories or in the read-only paths (see "Secrets in
    read-only paths"), or given as an absolute path, is masked: a file
    by an empty read-only file (it reads as empty, so grep -r, rg, find
    and tar go on), a directory by an empty read-only tmpfs (an
    AllowedPaths entry below it is bound again inside); every
    write-protected path (.git, .gitmodules, shell rc files, .envrc,
    .vscode, .idea, .claude, .codex, .mcp.json, .ripgreprc...) stays
    readable but read-only; then pivot_root, and every mount is made
    read-only except the writable binds;
  - core dumps off, and every inherited descriptor above stderr marked
    close-on-exec.

Each command is started from a thread of its own, made and confined
ahead of its run (the first one during the set-up, whose report says
what is in force; each next one once the previous run is over and its
private directories are made again), in this order:

  - for a root launcher, the bounding set dropped, then the identity of
    the workspace's owner (files the commands create belong to that
    owner), then every other capability dropped (ambient, inheritable,
    permitted, effective);
  - no_new_privs;
  - Landlock (github.com/landlock-lsm/go-landlock) at the ABI the
    kernel offers, at least MinLandlockABI ([DefaultMinLandlockABI]):
    read and execute on the read-only paths, read-write on the writable
    ones (the run's own /tmp, HOME and /dev/shm among them, named as
    they are for this run), TCP bind and connect denied when the network
    is off, and from ABI 6 signals and abstract UNIX sockets scoped to
    the sandbox;
  - a seccomp filter: system calls of another architecture and x32 kill
    the process (reported as a [sandbox.ViolationForbiddenSyscall]);
    io_uring, ptrace, process_vm_*, mount and the new mount API, bpf,
    keyctl, perf_event_open, unshare, setns, namespace flags to clone,
    module and kexec loading, open_by_handle_at and userfaultfd fail
    with EPERM; ioctl TIOCSTI and TIOCLINUX fail on every descriptor (no
    typing into the host's terminal); chmod, fchmod, fchmodat,
    fchmodat2 and the creates that carry a mode (open and openat with
    O_CREAT or O_TMPFILE, creat, mkdir, mkdirat, mknod, mknodat) fail
    when the mode has S_ISUID or S_ISGID, and openat2 and clone3, whose
    arguments sit behind pointers the filter cannot read, fail with
    ENOSYS so that libc falls back (as do the POSIX message queue calls,
    mq_*: the sandbox has none; neither is a refusal); link and linkat
    fail with EPERM, quietly (see "Hard links"); with the network off,
    socket(2) with any family but AF_UNIX fails (TCP, UDP, MPTCP, raw,
    packet, netlink alike). Each refusal is a user notification
    answered by the launcher with the error, and reported as a
    [sandbox.ViolationRefusedSyscall] of the run it happened in: the
    cost falls on refused calls only (a kernel without the listener
    falls back to plain errors, with a warning).

Identity, capabilities, no_new_privs, Landlock and the seccomp filter
belong to that thread, and a fork inherits them: when the request
arrives the thread reads it and starts the command with fork and exec,
already confined, in a session of its own (no controlling terminal),
with stdin, stdout and stderr passed over a socket (a terminal the host
passes as stdin included: TIOCSTI on it fails); it ends when the run is
over, and its confinement with it. Confining a thread costs a few
hundred microseconds, spent while the host reads the previous run's
output; the command itself costs one fork and exec, as a plain run
does. The launcher's other threads keep the privileges of its
namespace, to reset it between runs; the commands cannot reach them:
ptrace is filtered, and the launcher is not dumpable, so its /proc
entries are closed to them (but for its pid, its command line and the
numbers of its descriptors).

A launcher serves one command at a time. It is pid 1 of its pid
namespace: it reaps every process, and when the command ends it kills
everything left in the namespace (setsid or not). Then it makes the
private directories again rather than emptying them, so that runs share
nothing: /tmp and /dev/shm are each a new tmpfs (new inodes: no file,
mode, owner, time or extended attribute of the last run is left; the
binds below /tmp are moved over to the new one), HOME is a new
directory in the new /tmp (without a mount namespace, TMPDIR and HOME
are host directories, removed and created again); it removes the System
V IPC objects of its IPC namespace, and checks that every bind inside a
writable path is still where it was; if it cannot, it retires and the
next run gets a new launcher. Runs that overlap get a launcher each (a
Sandbox keeps at most four idle). A timeout or a cancelled context kills
the launcher, and with it its namespace and everything in it. The
launcher dies with its host process (SIGKILL as parent-death signal), so
nothing outlives a killed host, and [Sandbox.Close] ends the idle ones.

Every run scans the writable directories for protected paths first: a
launcher masks what existed when it started, so when the scan finds
something else (a new .env, or a masked file replaced by another of the
same name, told apart by its inode) or a writable directory was
replaced, the run gets a new launcher whose mount tree masks it. The
host environment a launcher passes on, and the command's Confine, are
part of the same key: a launcher per policy, reused by the runs that
share it.

With Limits set, every run gets a child of its own instead of a
launcher, set up as above and exiting with its command: resource limits
are per process, and a launcher would share them among its commands.

After the run the writable directories are walked again: a protected
path the command created (a new sub/.git, .envrc, .vscode) is reported
as a [sandbox.ViolationProtectedCreated].

# Confine

The sandbox enforces [sandbox.Command.Confine], the policy the gate
derives from its analysis of a line ([Sandbox.EnforcesConfine] is true
unless BestEffort is set; a best-effort sandbox refuses a Confine,
exit code 127). With a Confine:

  - the workspace, the AllowedPaths and the writable caches are bound
    read-only; the command's private /tmp, HOME and /dev/shm stay
    writable; the secrets in them stay masked;
  - each Confine.Writable entry (symbolic links followed) grants, when
    it is an existing directory, that directory, written in place with
    everything in it (it is a mount point: it cannot itself be removed
    or renamed); when it is an existing file, that file, written in
    place (not removed, renamed or replaced); when it does not exist,
    create rights in its nearest existing directory: the directory is
    bound writable, Landlock grants it read-write, and every entry that
    existed there when the launcher started is pinned, each by a
    read-only mount of its own (a clone of itself; a symbolic link is
    pinned as a link), so that it cannot be written, removed, renamed or
    replaced. The command may create any new name in that directory and
    write, rename or remove what it created; the directory's own mode
    and times may change. More than 4,096 entries to pin refuses the run
    (127). An entry outside the writable roots, or matching a denied
    path, grants nothing and is named in Confinement.Warnings;
  - Confine.Network true shares the host's network, even when the
    policy's AllowNetwork is false; false gives a network namespace with
    no interface, and the seccomp filter and Landlock deny sockets, even
    when the policy allows the network. Network is all or nothing: no
    host-level filtering, so a line whose analysis names one allowed host
    reaches every host;
  - Confinement.Enforced lists [sandbox.LayerConfine].

A Confine does not narrow reads beyond the policy (what the mount tree
shows stays readable) and does not change the environment.

# The argument check

Before the run, the working directory must resolve inside the root and
name no denied path, and, as the sandbox seed asks of every backend
("both the command's workdir and every positional argument are
checked"), every argument that may name a path, and the literal words
and paths of an "sh -c" script, are checked against the denied paths
(.git, the secrets, DeniedPaths, [CredentialStores]) with every symbolic
link followed: "cat .git/config" and "bash -c 'cat .env'" are refused
(exit code 126, [sandbox.ErrRefused], a [sandbox.ViolationDeniedPath]).
.git stays readable to the kernel, so that git itself works; only an
argument that names it is refused. Scripts are read with the built-in
reader of package sandbox/script, leniently: a command it cannot read
(a program it does not know, a computed word) is not refused, since the
kernel confines what it does; the check sees what the line spells out,
not what a program computes at run time (a path built from variables
reaches .git/config, read-only). Like local's, the check
over-approximates: "find . -path ./.git -prune" names .git and is
refused.

# Secrets in read-only paths

When a launcher (or a one-shot child) starts, the read-only paths are
scanned for secrets too (names in the read-and-write protected list,
such as .ssh, id_ed25519 and .env): one inside a read-only directory is
masked like one in the workspace. The system trees /usr, /bin, /sbin,
/lib, /lib32, /lib64 and /libx32 are not scanned (they hold what the
package manager installed, some 150,000 entries on a typical host, 0.3
to 5 seconds to walk), nor are the shared caches (Config.Caches); a
directory this user cannot read is skipped (the command cannot read it
either). More than 200,000 entries refuses the run (127): narrow
ReadOnlyPaths. A secret that appears in a read-only path after a
launcher started is not masked by that launcher.

# Hard links

The seccomp filter makes link(2) and linkat(2) fail with EPERM, without
a notification (so not as a violation): inside the sandbox no file gets
a second name. That closes the class of a link made in one run to expose
a file later: a name such as .env or .git/config given to a file the
command can read (written through by the host afterwards), or a
writable name given to a file it may only read; mounts already keep
links from crossing into masked, read-only or pinned paths (EXDEV).
Programs that try a hard link first fall back (git renames its objects
into place); cp -l and ln without -s fail. Links that exist before the
run are not affected: a hard link in the workspace to an outside file,
made on the host, makes that file writable.

# What is prevented, what is detected, what stays invisible

Prevented outright by the kernel: reading a masked secret, writing a
write-protected path that exists when the run starts, writing outside
the writable paths, making a set-id file, typing into a terminal,
leaving processes behind and reaching the network.

Detected: creating a new protected path inside a writable directory
cannot be prevented (the name does not exist to be mounted over); it is
found when the run ends and reported as a
[sandbox.ViolationProtectedCreated], and the next run masks it. Every
system call the seccomp filter refuses is a
[sandbox.ViolationRefusedSyscall], and a kill by its architecture check
a [sandbox.ViolationForbiddenSyscall].

Invisible: file-system refusals. A write refused by a read-only mount
(EROFS) leaves no trace anywhere: the mount layer reports nothing. A
refusal by Landlock (EACCES) is reported by the kernel only through the
audit subsystem: from Landlock ABI 7 (Linux 6.15; this package was
measured on 6.18, ABI 7) a denial produces AUDIT_LANDLOCK_ACCESS and
AUDIT_LANDLOCK_DOMAIN records, also for a process in a user namespace,
and for commands executed after landlock_restrict_self only with the
LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON flag. Three things keep them
from this package: the kernel emits no Landlock record at all while
auditing is off, which it is unless auditd runs or the system was
booted with audit=1 (turning it on is a system-wide switch that needs
CAP_AUDIT_CONTROL in the initial user namespace, and without auditd the
kernel then prints every record to its log); reading the records
(netlink group AUDIT_NLGRP_READLOG) needs CAP_AUDIT_READ in the initial
user namespace, which neither an unprivileged host nor anything inside
the sandbox's user namespace has; and kauditd delivers them
asynchronously, so that tying one to the run that caused it would need
a barrier on the kernel's audit queue after every run. So a command
whose write outside the workspace Landlock refused just sees the error,
and unless it fails because of it, its Result shows nothing; a host
that runs auditd can find the refusals in the audit log
(type=LANDLOCK_ACCESS, with the launcher's pid in the matching
LANDLOCK_DOMAIN record).

Only the variables of the env allowlist
([sandbox.DefaultEnvAllowlist] when it is empty) of the host environment reach
the command, then TMPDIR, HOME and XDG_CACHE_HOME pointing at its
private directories (without a mount namespace, directories on the
host, made again after each run and removed with the launcher), then
Command.Env, which wins.
Config.Caches shares the launcher's user cache and Go module
cache read-only or read-write instead. An AllowedPaths entry that does
not exist grants nothing and is named in Confinement.Warnings.
Confinement.Missing names every layer that was not in force, the
namespaces included.

# Performance

Measured with go test -bench on the 2-core development machine while
other work loaded it heavily (load average 12 to 19), as ratios within
one invocation. BenchmarkConfinedLine runs each line plainly (os/exec of
the same argument vector in the workspace, no sandbox) and confined (a
Confine through a launcher), alternating, 100 times each, and reports
the confined time over the plain time (-count 6): "bash -c 'grep -n
TODO *.go'" over 20 files, read-only, 1.00 to 1.33 times (median about
1.25); a line that writes one new file (a create grant), 1.09 to 1.29
times; /bin/true, the fixed cost alone, 1.9 to 2.7 times (about +10 ms
at that load, +1.5 to 2 ms on a quiet machine). BenchmarkRunHardened
against BenchmarkExecDirect (/bin/true, no Confine) gives 1.5 to 2.3
times in wall time and about 2.2 times in CPU time (the host, the
launcher and the command together). The first run of a policy pays its
launcher's set-up once. On the path of a run: the working-directory and
argument checks and the scan of the workspace (together about 0.6 ms at
that load, the argument check reading each path once through a memo),
the request, the command's fork and exec from its thread, already
confined, and the scan after the run; the reset (fresh /tmp and
/dev/shm) and the confinement of the next run's thread (a few hundred
microseconds) are done while the host reads the output.

# Build notes

The hardened backend is pure Go and starts no external binary. Its child
(package sandbox/hardened) uses go-landlock's system-call layer and presets and applies Landlock to the
one thread that executes the command, so it never needs go-landlock's
all-threads mechanism. That package still imports libcap's psx, which
compiles C code and wraps pthread_create when cgo is enabled; building
with -tags landlocktsync leaves psx out, and the sandbox works the same
at every Landlock ABI.

# Fail closed, and graceful degradation

local-hardened refuses to run a command when Landlock is missing or
below the minimum, when seccomp, no_new_privs or the capability drop
cannot be set up, or when no private mount or IPC namespace can be made
(for a root caller that means neither the read-only mount namespace nor
a user namespace with a uid mapping is available). The command does not start:
the [sandbox.Result] has exit code 127, its stderr names the missing layer, and
the error matches [sandbox.ErrUnavailable]. The pid and network namespaces are
used when they can be created; without them the result carries a
warning (seccomp and Landlock still deny the network, Landlock scopes
signals). On other systems it always returns 127 with "local-hardened
requires Linux". [Sandbox.Probe] starts a launcher through every layer
without running a command (and keeps it for the first run), so a host
can check availability up front.

Degradation is opt-in: with Config.BestEffort the command runs
without the missing layers and [sandbox.Confinement].Missing and Warnings say
which. Warning: with BestEffort a command may run with no confinement at
all; check Confinement.Missing.

# Security model and limitations

  - The hardened sandbox keeps an unprivileged caller's uid; a root
    caller's command runs as the workspace's owner, or, when root owns
    the workspace, as root without capabilities, which can read what
    root can read in the read-only paths beyond the masked credential
    stores; give the workspace to an unprivileged user.
  - Protected paths are found by walking the writable directories before
    and after each run, which costs time on very large trees; a
    protected path created by the command during the run is its own and
    not masked (it is reported). Hard links that exist before the run are not
    detected: a hard link inside the workspace to an outside file makes
    that file writable (none can be made inside the sandbox).
  - /proc/self/mountinfo (and mounts, mountstats) lists every mount of
    the sandbox's mount namespace, and this cannot be hidden: /proc is
    the procfs of the sandbox's pid namespace, the kernel lists the
    whole namespace in every process's mount table, and neither Landlock
    nor seccomp can refuse one /proc file by its path (seccomp sees no
    paths; a Landlock rule cannot name the per-process files, which
    come and go). What leaks is names and places, never contents: the
    path of every masked secret and every read-only protected path that
    exists (so a command learns that .env exists, not what it holds),
    of every bind (the workspace, the read-only paths, a Confine's
    grants and pins) and the sizes of the private tmpfs mounts.
  - Without a mount namespace (BestEffort), chmod, chown and utimes on
    files outside the workspace are not stopped (Landlock does not cover
    them), .git is writable, denied paths inside the workspace are
    readable, and host UNIX sockets are reachable below Landlock ABI 9.
  - Network namespaces without an interface mean no network at all;
    AllowNetwork shares the host's network.
  - Without a pid namespace, processes that leave the command's session
    and are not adopted by the child (a double fork whose middle process
    the child did not see) may survive the run.
  - local-hardened needs the re-executed binary to reach package
    sandbox/hardened's init: a binary that cannot be executed again
    (deleted, or a restricted /proc/self/exe) cannot use it.
  - The commands of one Sandbox that do not overlap run one after the
    other in the same launcher: what a command leaves in the workspace
    and the AllowedPaths stays (as always), while /tmp, HOME and
    /dev/shm are made again and System V IPC objects removed. The
    sandbox has no POSIX message queues (they would outlive a run in the
    shared IPC namespace): the mq_* calls fail with ENOSYS, as on a
    kernel without them. What runs share is what the kernel keeps per
    namespace and does not reset: counters such as the next pid and
    inode numbers, and the namespaces' own settings (which a command,
    without capabilities, cannot change). A launcher sees the host
    environment of when it started.
  - When HOME is unset or not an absolute path, New takes the home
    directory of the account the process runs as (os/user) for the ~
    entries of the denied paths; without either, such an entry is an
    error.
  - The launcher takes and drops every catchable signal, and as pid 1
    of its pid namespace it cannot be killed or stopped from inside, so
    a command cannot end it (and with it the report of its refused
    calls). Without a pid namespace (BestEffort) a command can kill it:
    the run then ends with exit code 127, [sandbox.ErrUnavailable] and
    an unknown status, and the next run gets a new launcher.
*/
package hardened
