/*
Package remote runs a command on the far side of a CLI: on another host
over ssh ("ssh", [NewSSH]) or in a vendor's sandbox ("modal",
[NewModal]; "daytona", [NewDaytona]; "vercel-sandbox",
[NewVercelSandbox]). Each implements [sandbox.Sandbox] with the policy of
[sandbox.FsNetPolicy], and [Register] adds all four to a
[sandbox.Registry].

In the decision flow these backends are the ones whose command does not
run on this host: the gate decides here, and the far side (another
machine, or a vendor's container or VM) is where the command runs and
what it can reach. What is checked here is what the command line says
(the working directory and the arguments, as written); the far side's
files, links and network are its own, so choose these backends for
isolation from this host, not for confinement on the far side. A
command that must be confined on this host runs in local-hardened
(package sandbox/hardened) or a container (package sandbox/container).

# Honest failures

reins does not reimplement ssh or vendors' sandboxes: these backends run
the real CLI, and never fabricate success. Each first looks for its CLI
in PATH (and, for the vendors, for credentials, without ever starting an
interactive login); when something is missing the command does not run,
the [sandbox.Result] has exit code 127, stderr names the CLI and what is
missing, and the error matches [sandbox.ErrUnavailable]. Each has a
Probe for the registry (ssh's connects and checks the remote root). A
failure of the tool itself (an ssh connection that fails, a vendor CLI
that ends without reporting the command's status) is reported the same
way, with the tool's message, and never as the command's exit status.

# The backends

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

# How a command travels

Every backend here sends one shell script. Every argument in it is
quoted with syntax.Quote (mvdan.cc/sh/v3) for bash, so spaces, quotes,
";", "$( )", globs and newlines reach the program as written and are
never interpreted; control characters and invalid UTF-8 use $'...',
which the far shell must understand (bash, zsh, ksh, mksh, BusyBox ash;
for ssh to a host whose login shell is a plain POSIX sh, set
SSHConfig.Shell to bash; the vendors run bash). The script:

  - enters the root and the working directory and checks, where the
    files are, that the directory with every link followed is inside the
    root and names no denied path (Command.Dir is also checked as
    written before anything runs, and the arguments and "sh -c" scripts
    are checked against the denied paths as written: local's check,
    without the far side's links and files);
  - applies the env allowlist with "env -i" and the allowed variables'
    values from the far side, then the allowed pairs of Command.Env;
    without an allowlist the far side's environment is kept and
    Command.Env added (modal takes [sandbox.DefaultEnvAllowlist] instead,
    because modal shell puts the caller's Modal token into the
    container);
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

# Performance

Measured with go test -bench on the 2-core development machine, each
figure against a baseline of the same invocation (BenchmarkExecDirect,
/bin/true started directly): building the script of a ten-argument
command costs 1 to 4% of a direct process start. A run through ssh to a
loopback sshd, with a new connection each time, costs about 140 to 170
times a direct /bin/true in CPU time, and 500 times or more in wall time
(far more on a loaded machine): the key exchange and authentication
dominate (a ControlMaster in SSHConfig.Options saves them after the
first run).

# Confine

Of these backends only vercel-sandbox enforces [sandbox.Command.Confine]
(see [sandbox.Enforcing]): its sandbox is made for one command and
removed after it (sandbox run --rm), so nothing the command writes
reaches this host or the next command, whatever Confine.Writable says
(a remote command cannot write this host's workspace at all), and its
--network-policy follows Confine.Network. ssh, modal and daytona refuse
a command with Confine set (exit code 127, [sandbox.ErrUnavailable]):
ssh confines neither the remote host's files nor its network, modal
shell has no network switch, and a daytona sandbox keeps the network
and the files it was created with for every command.

# Security model and limitations

  - ssh confines nothing on the remote host beyond the working
    directory, the argument check and the environment: AllowedPaths,
    AllowNetwork and the denied paths as the command uses them are not
    enforced there. The leftover and timeout kills reach the remote
    process group, which a command that calls setsid leaves. The denied
    path and argument checks see paths as written (the remote links are
    followed only for the working directory).
  - modal shell has no network switch and uploads a copy: AllowNetwork
    and AllowedPaths are not enforced, and writes stay in the container.
  - The script, with the values of Command.Env in it, is an argument of
    the local CLI process and of the far shell: users of either machine
    who can list processes can read it.
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
package remote
