package remote

import (
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
)

// Options configure [Register]: the templates of the backends'
// configurations, policy included. Each Open copies a template and sets
// its root to the root passed to Open: Root for modal (a directory on
// this host), RemoteDir for ssh, daytona and vercel-sandbox (a directory
// on the far side).
type Options struct {
	// SSH is the template of "ssh"; without a Host its probe reports
	// the backend as not configured.
	SSH SSHConfig
	// Modal is the template of "modal".
	Modal ModalConfig
	// Daytona is the template of "daytona"; without a Sandbox its probe
	// reports the backend as not configured.
	Daytona DaytonaConfig
	// Vercel is the template of "vercel-sandbox".
	Vercel VercelSandboxConfig
}

// Register adds this package's backends to r: "ssh", "modal", "daytona"
// and "vercel-sandbox", each with an availability probe. A probe reports
// a missing CLI, missing credentials, an unreachable host (ssh) or a
// template that lacks a required setting (a host, a sandbox) as
// [sandbox.ErrUnavailable]. It fails, registering none of them, if one
// of the names is taken.
func Register(r *sandbox.Registry, opts Options) error {
	newSSH := func(root string) (*SSH, error) {
		c := opts.SSH
		c.RemoteDir = root
		return NewSSH(c)
	}
	sshProbeRoot := opts.SSH.RemoteDir
	if sshProbeRoot == "" {
		sshProbeRoot = "/"
	}
	newModal := func(root string) (*Modal, error) {
		c := opts.Modal
		c.Root = root
		return NewModal(c)
	}
	newDaytona := func(root string) (*Daytona, error) {
		c := opts.Daytona
		c.RemoteDir = root
		return NewDaytona(c)
	}
	newVercel := func(root string) (*VercelSandbox, error) {
		c := opts.Vercel
		c.RemoteDir = root
		return NewVercelSandbox(c)
	}
	return backend.Register(r, []backend.Entry{
		{Name: "ssh", Backend: sandbox.Backend{
			New:   func(root string) (sandbox.Sandbox, error) { return newSSH(root) },
			Probe: backend.ProbeBuilt("ssh", false, func(string) (backend.Prober, error) { return newSSH(sshProbeRoot) }),
		}},
		{Name: "modal", Backend: sandbox.Backend{
			New:   func(root string) (sandbox.Sandbox, error) { return newModal(root) },
			Probe: backend.ProbeBuilt("modal", true, func(root string) (backend.Prober, error) { return newModal(root) }),
		}},
		{Name: "daytona", Backend: sandbox.Backend{
			New:   func(root string) (sandbox.Sandbox, error) { return newDaytona(root) },
			Probe: backend.ProbeBuilt("daytona", false, func(root string) (backend.Prober, error) { return newDaytona(root) }),
		}},
		{Name: "vercel-sandbox", Backend: sandbox.Backend{
			New:   func(root string) (sandbox.Sandbox, error) { return newVercel(root) },
			Probe: backend.ProbeBuilt("vercel-sandbox", false, func(string) (backend.Prober, error) { return newVercel(opts.Vercel.RemoteDir) }),
		}},
	})
}
