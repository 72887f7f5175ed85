package container

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// DockerWorkdir is where the docker backend mounts the workspace inside
// the container; Command.Dir is resolved below it.
const DockerWorkdir = "/workspace"

// DockerConfig configures [NewDocker].
type DockerConfig struct {
	// Root is the workspace on this host, bind-mounted read-write at
	// [DockerWorkdir]. Required. The docker daemon must run on this host
	// (bind mounts name the daemon's files).
	Root string
	// Image is the image to run. Required. Pin it by digest
	// ("debian@sha256:...") so that a registry cannot change what runs.
	Image string
	// Policy: AllowedPaths are bind-mounted read-write at the same path,
	// AllowNetwork keeps docker's default network (otherwise
	// --network=none), denied paths found in the workspace are masked
	// (.git is bound read-only), and EnvAllowlist names the variables
	// forwarded with -e KEY (empty: only Command.Env is forwarded).
	Policy sandbox.FsNetPolicy
	// Limits are the container's resource limits; zero fields take the
	// values of [DefaultDockerLimits], negative ones mean no limit.
	Limits DockerLimits
	// Runtime selects an OCI runtime (--runtime), such as "runsc" for
	// gVisor; empty means the daemon's default.
	Runtime string
	// User is the --user of the container; empty means the uid and gid
	// of this process.
	User string
	// CLI is the docker binary; empty means "docker" from PATH.
	CLI string
	// Host, when set, is passed as --host to every docker call (a
	// daemon address such as unix:///run/user/1000/docker.sock).
	Host string
}

// DockerLimits are a container's resource limits.
type DockerLimits struct {
	// CPUs is --cpus.
	CPUs float64
	// MemoryBytes is --memory, and --memory-swap with the same value so
	// that the container cannot swap beyond it.
	MemoryBytes int64
	// PIDs is --pids-limit.
	PIDs int64
}

// DefaultDockerLimits returns the limits used for zero fields: 2 CPUs,
// 2 GiB of memory without extra swap, 512 processes.
func DefaultDockerLimits() DockerLimits {
	return DockerLimits{CPUs: 2, MemoryBytes: 2 << 30, PIDs: 512}
}

// Docker runs each command in a new container (docker run --rm). See
// the package documentation for what it enforces.
type Docker struct {
	cfg   DockerConfig
	root  string
	extra []string // AllowedPaths, resolved
	match pathmatch.Matcher
}

var _ sandbox.Sandbox = (*Docker)(nil)

// NewDocker validates cfg and returns the docker backend. It does not
// contact docker; [Docker.Probe] does, and so does every Run.
func NewDocker(cfg DockerConfig) (*Docker, error) {
	root, err := pathmatch.ResolveRoot(cfg.Root, "DockerConfig.Root")
	if err != nil {
		return nil, err
	}
	if cfg.Image == "" || strings.HasPrefix(cfg.Image, "-") {
		return nil, fmt.Errorf("sandbox: DockerConfig.Image %q is not an image reference", cfg.Image)
	}
	if strings.HasPrefix(cfg.Runtime, "-") || strings.HasPrefix(cfg.User, "-") {
		return nil, fmt.Errorf("sandbox: DockerConfig.Runtime and User must not start with '-'")
	}
	m, err := pathmatch.New(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	d := &Docker{cfg: cfg, root: root, match: m}
	d.cfg.Policy.EnvAllowlist = append([]string(nil), cfg.Policy.EnvAllowlist...)
	for i, p := range cfg.Policy.AllowedPaths {
		r, err := pathmatch.ResolveRoot(p, fmt.Sprintf("DockerConfig.Policy.AllowedPaths[%d]", i))
		if err != nil {
			return nil, err
		}
		d.extra = append(d.extra, r)
	}
	return d, nil
}

// Root returns the resolved workspace root on this host.
func (d *Docker) Root() string { return d.root }

func (d *Docker) limits() DockerLimits {
	l, def := d.cfg.Limits, DefaultDockerLimits()
	if l.CPUs == 0 {
		l.CPUs = def.CPUs
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = def.MemoryBytes
	}
	if l.PIDs == 0 {
		l.PIDs = def.PIDs
	}
	return l
}

// dockerArgs prefixes args with the docker binary's global options.
func (d *Docker) dockerArgs(path string, args ...string) []string {
	out := []string{path}
	if d.cfg.Host != "" {
		out = append(out, "--host="+d.cfg.Host)
	}
	return append(out, args...)
}

// Probe tells a missing docker CLI from an unreachable daemon: both are
// errors matching [sandbox.ErrUnavailable] that say which.
func (d *Docker) Probe(ctx context.Context) error {
	_, uerr := d.preflight(ctx)
	if uerr != nil {
		return uerr
	}
	return nil
}

func (d *Docker) preflight(ctx context.Context) (string, *sandbox.UnavailableError) {
	path, uerr := backend.FindCLI("docker", d.cfg.CLI, "docker", "install the docker CLI, or set DockerConfig.CLI")
	if uerr != nil {
		return "", uerr
	}
	ctx, cancel := context.WithTimeout(ctx, backend.PreflightTimeout)
	defer cancel()
	argv := d.dockerArgs(path, "version", "--format", "{{.Server.Version}}")
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = envlist.Host()
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		msg := backend.LastLines(errOut.Bytes(), 3)
		if msg == "" {
			msg = err.Error()
		}
		return "", &sandbox.UnavailableError{Backend: "docker", Reason: "the docker daemon is unreachable (docker version failed): " + msg}
	}
	if strings.TrimSpace(out.String()) == "" {
		return "", &sandbox.UnavailableError{Backend: "docker", Reason: "the docker daemon is unreachable: docker version reported no server"}
	}
	return path, nil
}

// Run runs cmd in a new container. It implements [sandbox.Sandbox].
func (d *Docker) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	conf := sandbox.Confinement{Backend: "docker"}
	if err := cmd.Validate(); err != nil {
		return backend.Invalid(conf, err)
	}
	dir, vs := backend.Workdir(d.root, d.match, cmd.Dir)
	if len(vs) > 0 {
		return backend.Denied(conf, vs)
	}
	plan, uerr := planConfine("docker", cmd, append([]string{d.root}, d.extra...), d.match)
	if uerr != nil {
		return backend.Unavailable(conf, uerr)
	}
	path, uerr := d.preflight(ctx)
	if uerr != nil {
		return backend.Unavailable(conf, uerr)
	}
	masks, readOnly, err := pathmatch.FindProtected(d.match, append([]string{d.root}, d.extra...))
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: "docker", Layer: sandbox.LayerMasks, Reason: err.Error()})
	}
	hostKeys, pairs := containerEnv(d.cfg.Policy.EnvAllowlist, cmd.Env)
	name, err := containerName()
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: "docker", Reason: err.Error()})
	}
	args, err := d.runArgs(cmd, dir, name, hostKeys, pairs, masks, readOnly, plan)
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: "docker", Reason: err.Error()})
	}
	conf.Enforced = d.layers(plan)
	if plan != nil {
		conf.Warnings = plan.Warnings
	}

	removeContainer := func() {
		ctx, cancel := context.WithTimeout(context.Background(), backend.CleanupTimeout)
		defer cancel()
		argv := d.dockerArgs(path, "rm", "--force", name)
		c := exec.CommandContext(ctx, argv[0], argv[1:]...)
		c.Env = envlist.Host()
		_ = c.Run()
	}
	out := backend.RunCLI(ctx, backend.Proc{
		Path:       path,
		Args:       d.dockerArgs(path, args...),
		Env:        envlist.Host(),
		Stdin:      cmd.Stdin,
		Timeout:    backend.Timeout(cmd),
		MaxOutput:  backend.MaxOutput(cmd),
		BeforeKill: removeContainer,
	})
	res := sandbox.Result{
		ExitCode: out.Status.ExitCode, Stdout: out.Stdout, Stderr: out.Stderr,
		StdoutTruncated: out.StdoutCut, StderrTruncated: out.StderrCut,
		TimedOut: out.Status.TimedOut, Duration: out.Status.Duration, Confinement: conf,
	}
	switch {
	case out.Status.TimedOut:
		// The container may have been created after the first removal.
		removeContainer()
		return res, nil
	case out.Status.StartErr != nil:
		return backend.Unavailable(sandbox.Confinement{Backend: "docker"}, &sandbox.UnavailableError{Backend: "docker", Reason: "starting docker: " + out.Status.StartErr.Error()})
	case out.Status.ExitCode == 125 || out.Status.ExitCode == 126 && dockerSaid(out.Stderr):
		// docker's own failure (125: the container could not be run; 126:
		// the command could not be invoked): never the command's status.
		return toolFailed("docker", fmt.Sprintf("docker failed to run the container (docker exit code %d): %s", out.Status.ExitCode, backend.LastLines(out.Stderr, 5)), out)
	}
	return res, nil
}

// dockerSaid reports whether docker itself printed an error (its lines
// start with "docker: ").
func dockerSaid(stderr []byte) bool { return linePrefixed(stderr, "docker: ") }

// EnforcesConfine reports true: docker enforces [sandbox.Command.Confine]
// with a read-only workspace, writable binds of what it grants, read-only
// binds of the entries it pins and --network=none (see
// [sandbox.Enforcing] and the package documentation).
func (d *Docker) EnforcesConfine() bool { return true }

// network reports whether a run with plan uses the network.
func (d *Docker) network(plan *confinePlan) bool {
	if plan != nil {
		return plan.Network
	}
	return d.cfg.Policy.AllowNetwork
}

// layers lists what a docker run enforces.
func (d *Docker) layers(plan *confinePlan) []sandbox.Layer {
	ls := []sandbox.Layer{sandbox.LayerWorkdir, sandbox.LayerContainer, sandbox.LayerReadOnlyRoot, sandbox.LayerMasks, sandbox.LayerCaps, sandbox.LayerNoNewPrivs, sandbox.LayerPIDNS, sandbox.LayerEnv}
	l := d.limits()
	if l.CPUs > 0 || l.MemoryBytes > 0 || l.PIDs > 0 {
		ls = append(ls, sandbox.LayerResources)
	}
	if !d.network(plan) {
		ls = append(ls, sandbox.LayerNetworkOff)
	}
	if plan != nil {
		ls = append(ls, sandbox.LayerConfine)
	}
	return ls
}

// runArgs builds the arguments of "docker run" (after the global
// options). dir is the resolved working directory on this host;
// hostKeys the variables forwarded from the host environment (-e KEY)
// and pairs those from Command.Env (-e KEY=VALUE); masks and readOnly
// the protected paths; plan, when set, what the command's Confine grants
// (the workspace and AllowedPaths are then bound read-only).
func (d *Docker) runArgs(cmd sandbox.Command, dir, name string, hostKeys, pairs, masks, readOnly []string, plan *confinePlan) ([]string, error) {
	toContainer := func(hostPath string) string {
		if rel, err := filepath.Rel(d.root, hostPath); err == nil && fspath.Within(hostPath, d.root) {
			if rel == "." {
				return DockerWorkdir
			}
			return DockerWorkdir + "/" + filepath.ToSlash(rel)
		}
		return hostPath // an AllowedPath, mounted at the same path
	}
	user := d.cfg.User
	if user == "" {
		user = strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	}
	args := []string{"run", "--rm", "--name=" + name, "--init"}
	if cmd.Stdin != nil {
		args = append(args, "--interactive")
	}
	if !d.network(plan) {
		args = append(args, "--network=none")
	}
	l := d.limits()
	if l.CPUs > 0 {
		args = append(args, "--cpus="+strconv.FormatFloat(l.CPUs, 'f', -1, 64))
	}
	if l.MemoryBytes > 0 {
		m := strconv.FormatInt(l.MemoryBytes, 10)
		args = append(args, "--memory="+m, "--memory-swap="+m)
	}
	if l.PIDs > 0 {
		args = append(args, "--pids-limit="+strconv.FormatInt(l.PIDs, 10))
	}
	args = append(args,
		"--cap-drop=ALL",
		"--security-opt=no-new-privileges",
		"--read-only",
		"--tmpfs=/tmp:rw,exec,nosuid,nodev",
		"--user="+user,
	)
	if d.cfg.Runtime != "" {
		args = append(args, "--runtime="+d.cfg.Runtime)
	}
	mount := func(fields ...string) error {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.Write(fields); err != nil {
			return err
		}
		w.Flush()
		args = append(args, "--mount="+strings.TrimSuffix(b.String(), "\n"))
		return w.Error()
	}
	ro := func(fields ...string) []string {
		if plan != nil {
			return append(fields, "readonly")
		}
		return fields
	}
	if err := mount(ro("type=bind", "source="+d.root, "target="+DockerWorkdir)...); err != nil {
		return nil, err
	}
	for _, p := range d.extra {
		if err := mount(ro("type=bind", "source="+p, "target="+p)...); err != nil {
			return nil, err
		}
	}
	if plan != nil {
		for _, g := range plan.binds() {
			fields := []string{"type=bind", "source=" + g.path, "target=" + toContainer(g.path)}
			if g.readOnly {
				fields = append(fields, "readonly")
			}
			if err := mount(fields...); err != nil {
				return nil, err
			}
		}
	}
	inside := func(p string) bool {
		if fspath.Within(p, d.root) {
			return true
		}
		for _, e := range d.extra {
			if fspath.Within(p, e) {
				return true
			}
		}
		return false
	}
	for _, p := range readOnly {
		if !inside(p) {
			continue
		}
		if err := mount("type=bind", "source="+p, "target="+toContainer(p), "readonly"); err != nil {
			return nil, err
		}
	}
	for _, p := range masks {
		if !inside(p) {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		var merr error
		if fi.IsDir() {
			merr = mount("type=tmpfs", "target="+toContainer(p), "tmpfs-mode=0")
		} else {
			merr = mount("type=bind", "source=/dev/null", "target="+toContainer(p), "readonly")
		}
		if merr != nil {
			return nil, merr
		}
	}
	args = append(args, "--workdir="+toContainer(dir))
	for _, k := range hostKeys {
		args = append(args, "-e", k)
	}
	for _, kv := range pairs {
		args = append(args, "-e", kv)
	}
	args = append(args, d.cfg.Image)
	return append(args, cmd.Args...), nil
}
