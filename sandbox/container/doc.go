/*
Package container runs a command in a container on this host: "docker"
([NewDocker]) and "singularity" and "apptainer" ([NewSingularity],
[NewApptainer]). Each implements [sandbox.Sandbox] with the policy of
[sandbox.FsNetPolicy], and [Register] adds all three to a
[sandbox.Registry].

In the decision flow these backends sit between local-hardened (package
sandbox/hardened, the host kernel as the boundary) and the remote
backends (package sandbox/remote, another machine): the command runs on
this host, with its own root file system, namespaces and resource limits
set up by a container engine, and the workspace bound into it. Choose
them when the command needs an image's tools, or a runtime such as
gVisor, or when local-hardened is not available (not Linux, no
Landlock).

# Honest failures

reins does not reimplement container engines: these backends run the
real CLI with an argument vector built from the policy, and never
fabricate success. Each first looks for its CLI in PATH (docker also
asks the daemon for its version, to tell a missing CLI from an
unreachable daemon); when something is missing the command does not
run, the [sandbox.Result] has exit code 127, stderr names the CLI and
what is missing, and the error matches [sandbox.ErrUnavailable]. Each
has a Probe for the registry. A failure of the tool itself (docker's
exit 125, an apptainer FATAL) is reported the same way, with the tool's
message, and never as the command's exit status.

# docker

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

# singularity and apptainer

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

# Confine

All three enforce [sandbox.Command.Confine] (EnforcesConfine reports
true; see [sandbox.Enforcing]): the workspace and the AllowedPaths are
bound read-only, each Confine.Writable grant is bound writable (an
existing directory or file in place; for a path that does not exist,
its nearest existing directory, with every entry that existed there
bound read-only on top, so that only new names can be made there), a
parent before what lies in it, and the network follows Confine.Network
(--network=none, or --net --network none, when it is false, whatever
the policy says; the engine's default network when it is true). The
grants are planned as local-hardened plans them (package
sandbox/internal/confine); an entry outside the writable paths or
matching a denied path grants nothing and is named in
Confinement.Warnings. A container engine cannot pin a symbolic link
where it is (it binds over what the link leads to), so a Confine whose
create grant would leave one exposed is refused (exit code 127,
[sandbox.ErrUnavailable]). Network is all or nothing: no host-level
filtering.

# Security model and limitations

  - The working directory is checked on this host before the run, with
    every symbolic link followed, like local's (package sandbox); the
    arguments are not: the container's mounts decide what the command
    reaches.
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
  - The CLIs change: the flags used here were read from each CLI's
    reference when this was written; a CLI that no longer accepts them
    fails, and the failure is reported, never taken for the command's
    success.
*/
package container
