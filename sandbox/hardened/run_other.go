//go:build !linux

package hardened

import (
	"context"
	"github.com/reins-go/reins/sandbox/internal/backend"

	"github.com/reins-go/reins/sandbox"
)

func (h *Sandbox) run(ctx context.Context, cmd sandbox.Command, probe bool) (sandbox.Result, error) {
	return backend.Unavailable(sandbox.Confinement{Backend: backendName}, &sandbox.UnavailableError{
		Backend: backendName, Reason: "local-hardened requires Linux",
	})
}

func fileOwner(string) (uid, gid int, ok bool) { return 0, 0, false }
