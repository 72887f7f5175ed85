package container

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// SingularityWorkdir is where the singularity and apptainer backends
// bind the workspace inside the container.
const SingularityWorkdir = "/workspace"

// SingularityConfig configures [NewSingularity] and [NewApptainer].
type SingularityConfig struct {
	// Root is the workspace on this host, bound read-write at
	// [SingularityWorkdir]. Required. It must not contain ':' or ','
	// (the separators of a bind specification).
	Root string
	// Image is the container: a SIF file, a sandbox directory, or a URI
	// such as docker://debian@sha256:... (pin by digest). Required.
	Image string
	// Policy: AllowedPaths are bound read-write at the same path,
	// AllowNetwork keeps the host's network (otherwise --net --network
	// none), denied paths found in the workspace are masked (.git bound
	// read-only), and EnvAllowlist names the host variables forwarded
	// (empty: only Command.Env is forwarded).
	Policy sandbox.FsNetPolicy
	// CPUs, MemoryBytes and PIDs set --cpus, --memory (and --memory-swap
	// to the same value) and --pids-limit; zero means no limit. They need
	// cgroups v2 (and, unprivileged, systemd); the run fails where the
	// host cannot apply them.
	CPUs        float64
	MemoryBytes int64
	PIDs        int64
	// CLI is the binary; empty means "singularity" for [NewSingularity]
	// and "apptainer" for [NewApptainer], from PATH.
	CLI string
}

// Singularity runs each command with "singularity exec" or "apptainer
// exec". See the package documentation for what it enforces.
type Singularity struct {
	cfg   SingularityConfig
	name  string // "singularity" or "apptainer"
	root  string
	extra []string
	match pathmatch.Matcher
}

var _ sandbox.Sandbox = (*Singularity)(nil)

// NewSingularity returns the singularity backend (SingularityCE's
// "singularity" CLI; Apptainer installs one too).
func NewSingularity(cfg SingularityConfig) (*Singularity, error) {
	return newSingularity(cfg, "singularity")
}

// NewApptainer returns the apptainer backend: the same as
// [NewSingularity] with the "apptainer" CLI.
func NewApptainer(cfg SingularityConfig) (*Singularity, error) {
	return newSingularity(cfg, "apptainer")
}

func newSingularity(cfg SingularityConfig, name string) (*Singularity, error) {
	field := "SingularityConfig"
	root, err := pathmatch.ResolveRoot(cfg.Root, field+".Root")
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(root, ":,") {
		return nil, fmt.Errorf("sandbox: %s.Root %q contains ':' or ','", field, root)
	}
	if cfg.Image == "" || strings.HasPrefix(cfg.Image, "-") {
		return nil, fmt.Errorf("sandbox: %s.Image %q is not an image", field, cfg.Image)
	}
	if cfg.CPUs < 0 || cfg.MemoryBytes < 0 || cfg.PIDs < 0 {
		return nil, fmt.Errorf("sandbox: %s: negative resource limit", field)
	}
	m, err := pathmatch.New(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	s := &Singularity{cfg: cfg, name: name, root: root, match: m}
	s.cfg.Policy.EnvAllowlist = append([]string(nil), cfg.Policy.EnvAllowlist...)
	for i, p := range cfg.Policy.AllowedPaths {
		r, err := pathmatch.ResolveRoot(p, fmt.Sprintf("%s.Policy.AllowedPaths[%d]", field, i))
		if err != nil {
			return nil, err
		}
		if strings.ContainsAny(r, ":,") {
			return nil, fmt.Errorf("sandbox: %s.Policy.AllowedPaths[%d] %q contains ':' or ','", field, i, r)
		}
		s.extra = append(s.extra, r)
	}
	return s, nil
}

// Root returns the resolved workspace root on this host.
func (s *Singularity) Root() string { return s.root }

func (s *Singularity) findCLI() (string, *sandbox.UnavailableError) {
	return backend.FindCLI(s.name, s.cfg.CLI, s.name, "install "+s.name+", or set SingularityConfig.CLI")
}

// Probe reports whether the CLI is installed.
func (s *Singularity) Probe(ctx context.Context) error {
	if _, uerr := s.findCLI(); uerr != nil {
		return uerr
	}
	return nil
}

// envPrefix is how the CLI is told the container's variables: it reads
// <PREFIX>ENV_KEY=value from its own environment, so values never appear
// in its argument vector.
func (s *Singularity) envPrefix() string {
	return strings.ToUpper(s.name)
}

// Run runs cmd in the container. It implements [sandbox.Sandbox].
func (s *Singularity) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	conf := sandbox.Confinement{Backend: s.name}
	if err := cmd.Validate(); err != nil {
		return backend.Invalid(conf, err)
	}
	dir, vs := backend.Workdir(s.root, s.match, cmd.Dir)
	if len(vs) > 0 {
		return backend.Denied(conf, vs)
	}
	plan, uerr := planConfine(s.name, cmd, append([]string{s.root}, s.extra...), s.match)
	if uerr != nil {
		return backend.Unavailable(conf, uerr)
	}
	path, uerr := s.findCLI()
	if uerr != nil {
		return backend.Unavailable(conf, uerr)
	}
	masks, readOnly, err := pathmatch.FindProtected(s.match, append([]string{s.root}, s.extra...))
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: s.name, Layer: sandbox.LayerMasks, Reason: err.Error()})
	}
	empty, err := os.MkdirTemp("", "reins-mask-")
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: s.name, Layer: sandbox.LayerMasks, Reason: err.Error()})
	}
	defer os.RemoveAll(empty)
	if err := os.Chmod(empty, 0); err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: s.name, Layer: sandbox.LayerMasks, Reason: err.Error()})
	}
	args, err := s.execArgs(path, cmd, dir, empty, masks, readOnly, plan)
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: s.name, Reason: err.Error()})
	}
	env := envlist.Host("APPTAINER", "SINGULARITY")
	hostKeys, pairs := containerEnv(s.cfg.Policy.EnvAllowlist, cmd.Env)
	for _, k := range hostKeys {
		v, _ := os.LookupEnv(k)
		env = append(env, s.envPrefix()+"ENV_"+k+"="+v)
	}
	for _, kv := range pairs {
		env = append(env, s.envPrefix()+"ENV_"+kv)
	}
	conf.Enforced = s.layers(plan)
	if plan != nil {
		conf.Warnings = plan.Warnings
	}
	out := backend.RunCLI(ctx, backend.Proc{
		Path: path, Args: args, Env: env, Stdin: cmd.Stdin,
		Timeout: backend.Timeout(cmd), MaxOutput: backend.MaxOutput(cmd),
	})
	res := sandbox.Result{
		ExitCode: out.Status.ExitCode, Stdout: out.Stdout, Stderr: out.Stderr,
		StdoutTruncated: out.StdoutCut, StderrTruncated: out.StderrCut,
		TimedOut: out.Status.TimedOut, Duration: out.Status.Duration, Confinement: conf,
	}
	switch {
	case out.Status.TimedOut:
		return res, nil
	case out.Status.StartErr != nil:
		return backend.Unavailable(sandbox.Confinement{Backend: s.name}, &sandbox.UnavailableError{Backend: s.name, Reason: "starting " + s.name + ": " + out.Status.StartErr.Error()})
	case out.Status.ExitCode == 255 && fatalSaid(out.Stderr):
		// The CLI's own failure (FATAL: ..., exit 255): not the command's.
		return toolFailed(s.name, fmt.Sprintf("%s failed to run the container: %s", s.name, backend.LastLines(out.Stderr, 5)), out)
	}
	return res, nil
}

// fatalSaid reports whether the CLI printed its own fatal error.
func fatalSaid(stderr []byte) bool { return linePrefixed(stderr, "FATAL:", "FATAL ") }

// EnforcesConfine reports true: singularity and apptainer enforce
// [sandbox.Command.Confine] with a read-only workspace, writable binds of
// what it grants, read-only binds of the entries it pins and --net
// --network none (see [sandbox.Enforcing]).
func (s *Singularity) EnforcesConfine() bool { return true }

// network reports whether a run with plan uses the network.
func (s *Singularity) network(plan *confinePlan) bool {
	if plan != nil {
		return plan.Network
	}
	return s.cfg.Policy.AllowNetwork
}

func (s *Singularity) layers(plan *confinePlan) []sandbox.Layer {
	ls := []sandbox.Layer{sandbox.LayerWorkdir, sandbox.LayerContainer, sandbox.LayerReadOnlyRoot, sandbox.LayerMasks, sandbox.LayerPIDNS, sandbox.LayerEnv}
	if s.cfg.CPUs > 0 || s.cfg.MemoryBytes > 0 || s.cfg.PIDs > 0 {
		ls = append(ls, sandbox.LayerResources)
	}
	if !s.network(plan) {
		ls = append(ls, sandbox.LayerNetworkOff)
	}
	if plan != nil {
		ls = append(ls, sandbox.LayerConfine)
	}
	return ls
}

// execArgs builds the argument vector (argv[0] included). empty is an
// empty, inaccessible directory bound over denied directories; plan,
// when set, what the command's Confine grants (the workspace and
// AllowedPaths are then bound read-only).
func (s *Singularity) execArgs(path string, cmd sandbox.Command, dir, empty string, masks, readOnly []string, plan *confinePlan) ([]string, error) {
	toContainer := func(hostPath string) string {
		if fspath.Within(hostPath, s.root) {
			rel, _ := filepath.Rel(s.root, hostPath)
			if rel == "." {
				return SingularityWorkdir
			}
			return SingularityWorkdir + "/" + filepath.ToSlash(rel)
		}
		return hostPath
	}
	inside := func(p string) bool {
		if fspath.Within(p, s.root) {
			return true
		}
		for _, e := range s.extra {
			if fspath.Within(p, e) {
				return true
			}
		}
		return false
	}
	bind := func(spec ...string) (string, error) {
		for _, part := range spec[:2] {
			if strings.ContainsAny(part, ":,") {
				return "", fmt.Errorf("path %q contains ':' or ',' and cannot be bound", part)
			}
		}
		return strings.Join(spec, ":"), nil
	}
	// --containall: own PID and IPC namespaces, an empty /tmp and HOME,
	// and a clean environment (--cleanenv says so again); --no-privs:
	// a root caller keeps no capabilities; --pwd: the working directory
	// (older releases know only --pwd; newer ones call it --cwd too).
	args := []string{path, "exec", "--containall", "--cleanenv", "--no-privs", "--no-home"}
	if !s.network(plan) {
		// A network namespace with no interface but loopback. Whether an
		// unprivileged user may ask for it depends on the release and on
		// apptainer.conf; where it may not, the run fails rather than
		// running with the network.
		args = append(args, "--net", "--network", "none")
	}
	if s.cfg.CPUs > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(s.cfg.CPUs, 'f', -1, 64))
	}
	if s.cfg.MemoryBytes > 0 {
		m := strconv.FormatInt(s.cfg.MemoryBytes, 10)
		args = append(args, "--memory", m, "--memory-swap", m)
	}
	if s.cfg.PIDs > 0 {
		args = append(args, "--pids-limit", strconv.FormatInt(s.cfg.PIDs, 10))
	}
	ro := func(spec ...string) []string {
		if plan != nil {
			return append(spec, "ro")
		}
		return spec
	}
	specs := [][]string{ro(s.root, SingularityWorkdir)}
	for _, p := range s.extra {
		specs = append(specs, ro(p, p))
	}
	if plan != nil {
		for _, g := range plan.binds() {
			mode := "rw"
			if g.readOnly {
				mode = "ro"
			}
			specs = append(specs, []string{g.path, toContainer(g.path), mode})
		}
	}
	for _, p := range readOnly {
		if inside(p) {
			specs = append(specs, []string{p, toContainer(p), "ro"})
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
		src := "/dev/null"
		if fi.IsDir() {
			src = empty
		}
		specs = append(specs, []string{src, toContainer(p), "ro"})
	}
	for _, spec := range specs {
		b, err := bind(spec...)
		if err != nil {
			return nil, err
		}
		args = append(args, "--bind", b)
	}
	args = append(args, "--pwd", toContainer(dir), s.cfg.Image)
	return append(args, cmd.Args...), nil
}
