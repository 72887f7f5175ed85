//go:build !linux

package sandbox

import "context"

func (h *Hardened) run(ctx context.Context, cmd Command, probe bool) (Result, error) {
	return unavailableResult(Confinement{Backend: "local-hardened"}, &UnavailableError{
		Backend: "local-hardened", Reason: "local-hardened requires Linux",
	})
}

func fileOwner(string) (uid, gid int, ok bool) { return 0, 0, false }
