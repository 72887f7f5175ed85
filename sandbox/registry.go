package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/reins-go/reins/sandbox/script"
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
	// Policy is the policy of "local".
	Policy FsNetPolicy
	// Scripts is the script reader of "local" (LocalConfig.Scripts).
	Scripts script.Reader
}

// NewBuiltinRegistry returns a registry with the backends of this
// package: "local", which has no probe (it is always available). The
// other backends live in sub-packages, each with a Register function
// that adds them to a registry: package sandbox/hardened adds
// "local-hardened", sandbox/container "docker", "singularity" and
// "apptainer", sandbox/remote "ssh", "modal", "daytona" and
// "vercel-sandbox". Importing this package alone links none of them. The
// worktree backend needs a repository, a parent directory and a branch,
// so the host registers it itself when it wants one.
//
//	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{Policy: p})
//	err := errors.Join(
//		hardened.Register(r, hardened.Config{Policy: p}),
//		container.Register(r, container.Options{Docker: container.DockerConfig{Image: img, Policy: p}}),
//		remote.Register(r, remote.Options{SSH: remote.SSHConfig{Host: host, Policy: p}}),
//	)
func NewBuiltinRegistry(opts BuiltinOptions) *Registry {
	r := &Registry{}
	policy, scripts := opts.Policy, opts.Scripts
	_, _ = r.Register("local", Backend{
		New: func(root string) (Sandbox, error) {
			return NewLocal(LocalConfig{Root: root, Policy: policy, Scripts: scripts})
		},
	})
	return r
}
