package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
)

// Backend is a named way to build a [Sandbox], as a [Registry] holds it.
type Backend struct {
	// New builds a sandbox rooted at root. Required.
	New func(root string) (Sandbox, error)
	// Probe reports whether the backend can run commands on this host; a
	// nil Probe means always available. Probe errors should match
	// [ErrUnavailable].
	Probe func(ctx context.Context) error
}

// Registry maps backend names, as profiles spell them, to backends. It is
// a value the host builds and passes around; nothing registers itself
// globally. The zero value is an empty registry ready to use, and a
// Registry is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	backends map[string]Backend
}

// ErrUnknownBackend is returned for a name nobody registered.
var ErrUnknownBackend = errors.New("sandbox: unknown backend")

// Register adds b under name. It fails if the name is taken or b.New is
// nil. The returned function removes the registration.
func (r *Registry) Register(name string, b Backend) (unregister func(), err error) {
	if name == "" || b.New == nil {
		return nil, fmt.Errorf("sandbox: Register(%q): a name and Backend.New are required", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.backends[name]; dup {
		return nil, fmt.Errorf("sandbox: Register(%q): already registered", name)
	}
	if r.backends == nil {
		r.backends = map[string]Backend{}
	}
	r.backends[name] = b
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.backends, name)
	}, nil
}

// RegisterForTest registers b and removes it when tb's test ends.
func (r *Registry) RegisterForTest(tb interface {
	Helper()
	Fatalf(string, ...any)
	Cleanup(func())
}, name string, b Backend) {
	tb.Helper()
	unregister, err := r.Register(name, b)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(unregister)
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.backends))
	for n := range r.backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Probe runs the availability probe of the named backend.
func (r *Registry) Probe(ctx context.Context, name string) error {
	b, err := r.lookup(name)
	if err != nil {
		return err
	}
	if b.Probe == nil {
		return nil
	}
	return b.Probe(ctx)
}

// Open builds the named backend rooted at root. It probes the backend
// first, so an unavailable backend is reported here rather than at the
// first Run.
func (r *Registry) Open(ctx context.Context, name, root string) (Sandbox, error) {
	b, err := r.lookup(name)
	if err != nil {
		return nil, err
	}
	if b.Probe != nil {
		if err := b.Probe(ctx); err != nil {
			return nil, fmt.Errorf("sandbox: backend %q: %w", name, err)
		}
	}
	return b.New(root)
}

func (r *Registry) lookup(name string) (Backend, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	b, ok := r.backends[name]
	if !ok {
		return Backend{}, fmt.Errorf("%w %q", ErrUnknownBackend, name)
	}
	return b, nil
}

// BuiltinOptions configure [NewBuiltinRegistry].
type BuiltinOptions struct {
	// Policy is used by every built-in backend.
	Policy FsNetPolicy
	// The templates of the CLI backends. Each Open overwrites the
	// template's Policy with Policy and its root with the root passed
	// to Open: Root for docker, singularity, apptainer and modal (a
	// directory on this host), RemoteDir for ssh, daytona and
	// vercel-sandbox (a directory on the far side). A backend whose
	// template lacks a required setting (an image, a host, a sandbox)
	// reports it from its probe, as unavailable.
	Docker      DockerConfig
	SSH         SSHConfig
	Singularity SingularityConfig // for "singularity" and "apptainer"
	Modal       ModalConfig
	Daytona     DaytonaConfig
	Vercel      VercelSandboxConfig
}

// prober is a backend with an availability probe.
type prober interface {
	Probe(ctx context.Context) error
}

// probeBuilt builds a backend from its template and probes it; a
// template that cannot build a backend makes it unavailable.
func probeBuilt(backend string, needsRoot bool, build func(root string) (prober, error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		root := "/"
		if needsRoot {
			dir, err := os.MkdirTemp("", "reins-probe-")
			if err != nil {
				return &UnavailableError{Backend: backend, Reason: "probe: " + err.Error()}
			}
			defer os.RemoveAll(dir)
			root = dir
		}
		p, err := build(root)
		if err != nil {
			return &UnavailableError{Backend: backend, Reason: "not configured: " + err.Error()}
		}
		return p.Probe(ctx)
	}
}

// NewBuiltinRegistry returns a registry with every built-in backend:
// "local", "docker", "ssh", "singularity", "apptainer", "modal",
// "daytona" and "vercel-sandbox", each with an availability probe (local
// has none: it is always available). "local-hardened" lives in package
// sandbox/hardened, whose Register adds it. The
// worktree backend needs a repository, a parent directory and a branch,
// so the host registers it itself when it wants one.
func NewBuiltinRegistry(opts BuiltinOptions) *Registry {
	r := &Registry{}
	policy := opts.Policy
	_, _ = r.Register("local", Backend{
		New: func(root string) (Sandbox, error) {
			return NewLocal(LocalConfig{Root: root, Policy: policy})
		},
	})
	newDocker := func(root string) (*Docker, error) {
		c := opts.Docker
		c.Root, c.Policy = root, policy
		return NewDocker(c)
	}
	_, _ = r.Register("docker", Backend{
		New:   func(root string) (Sandbox, error) { return newDocker(root) },
		Probe: probeBuilt("docker", true, func(root string) (prober, error) { return newDocker(root) }),
	})

	newSSH := func(root string) (*SSH, error) {
		c := opts.SSH
		c.RemoteDir, c.Policy = root, policy
		return NewSSH(c)
	}
	sshProbeRoot := opts.SSH.RemoteDir
	if sshProbeRoot == "" {
		sshProbeRoot = "/"
	}
	_, _ = r.Register("ssh", Backend{
		New:   func(root string) (Sandbox, error) { return newSSH(root) },
		Probe: probeBuilt("ssh", false, func(string) (prober, error) { return newSSH(sshProbeRoot) }),
	})

	for _, name := range []string{"singularity", "apptainer"} {
		newS := func(root string) (*Singularity, error) {
			c := opts.Singularity
			c.Root, c.Policy = root, policy
			if name == "apptainer" {
				return NewApptainer(c)
			}
			return NewSingularity(c)
		}
		_, _ = r.Register(name, Backend{
			New:   func(root string) (Sandbox, error) { return newS(root) },
			Probe: probeBuilt(name, true, func(root string) (prober, error) { return newS(root) }),
		})
	}

	newModal := func(root string) (*Modal, error) {
		c := opts.Modal
		c.Root, c.Policy = root, policy
		return NewModal(c)
	}
	_, _ = r.Register("modal", Backend{
		New:   func(root string) (Sandbox, error) { return newModal(root) },
		Probe: probeBuilt("modal", true, func(root string) (prober, error) { return newModal(root) }),
	})

	newDaytona := func(root string) (*Daytona, error) {
		c := opts.Daytona
		c.RemoteDir, c.Policy = root, policy
		return NewDaytona(c)
	}
	_, _ = r.Register("daytona", Backend{
		New:   func(root string) (Sandbox, error) { return newDaytona(root) },
		Probe: probeBuilt("daytona", false, func(root string) (prober, error) { return newDaytona(root) }),
	})

	newVercel := func(root string) (*VercelSandbox, error) {
		c := opts.Vercel
		c.RemoteDir, c.Policy = root, policy
		return NewVercelSandbox(c)
	}
	_, _ = r.Register("vercel-sandbox", Backend{
		New:   func(root string) (Sandbox, error) { return newVercel(root) },
		Probe: probeBuilt("vercel-sandbox", false, func(string) (prober, error) { return newVercel(opts.Vercel.RemoteDir) }),
	})
	return r
}
