package container

import (
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
)

// Options configure [Register]: the templates of the backends'
// configurations, policy included. Each Open copies a template and sets
// its Root to the root passed to Open.
type Options struct {
	// Docker is the template of "docker".
	Docker DockerConfig
	// Singularity is the template of "singularity" and "apptainer".
	Singularity SingularityConfig
}

// Register adds this package's backends to r: "docker", "singularity"
// and "apptainer", each with an availability probe that tells a missing
// CLI (or, for docker, an unreachable daemon) and a template that lacks a
// required setting (an image) apart, both as [sandbox.ErrUnavailable].
// It fails, registering none of them, if one of the names is taken.
func Register(r *sandbox.Registry, opts Options) error {
	newDocker := func(root string) (*Docker, error) {
		c := opts.Docker
		c.Root = root
		return NewDocker(c)
	}
	entries := []backend.Entry{{Name: "docker", Backend: sandbox.Backend{
		New:   func(root string) (sandbox.Sandbox, error) { return newDocker(root) },
		Probe: backend.ProbeBuilt("docker", true, func(root string) (backend.Prober, error) { return newDocker(root) }),
	}}}
	for _, name := range []string{"singularity", "apptainer"} {
		newS := func(root string) (*Singularity, error) {
			c := opts.Singularity
			c.Root = root
			if name == "apptainer" {
				return NewApptainer(c)
			}
			return NewSingularity(c)
		}
		entries = append(entries, backend.Entry{Name: name, Backend: sandbox.Backend{
			New:   func(root string) (sandbox.Sandbox, error) { return newS(root) },
			Probe: backend.ProbeBuilt(name, true, func(root string) (backend.Prober, error) { return newS(root) }),
		}})
	}
	return backend.Register(r, entries)
}
