package hardened

import (
	"context"
	"os"

	"github.com/reins-go/reins/sandbox"
)

// Register adds "local-hardened" to r. Each Open builds a [Sandbox] from
// template with Root set to the root passed to Open; the probe runs the
// child through every layer with an empty workspace, so an Open on a host
// that lacks a required layer fails with [sandbox.ErrUnavailable].
//
// [sandbox.NewBuiltinRegistry] does not hold local-hardened (package
// sandbox does not link this one); a host that wants every built-in
// backend calls both:
//
//	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{Policy: p})
//	err := hardened.Register(r, hardened.Config{Policy: p})
func Register(r *sandbox.Registry, template Config) error {
	build := func(root string) (*Sandbox, error) {
		c := template
		c.Root = root
		return New(c)
	}
	_, err := r.Register(backendName, sandbox.Backend{
		New: func(root string) (sandbox.Sandbox, error) { return build(root) },
		Probe: func(ctx context.Context) error {
			// Probe with an empty workspace: nothing to scan, nothing runs.
			dir, err := os.MkdirTemp("", "reins-probe-")
			if err != nil {
				return &sandbox.UnavailableError{Backend: backendName, Reason: "probe: " + err.Error()}
			}
			defer os.RemoveAll(dir)
			h, err := build(dir)
			if err != nil {
				return err
			}
			defer h.Close()
			return h.Probe(ctx)
		},
	})
	return err
}
