package main

import (
	"context"

	"github.com/reins-go/reins/examples/hook/internal/hookstate"
	"github.com/reins-go/reins/examples/hook/internal/profileload"
)

// The in-process tests load the profiles in the test binary, as reins-hook-load does (and keep
// them as it does); the tests of the built binary run reins-hook-load itself.
func init() {
	loadProfile = func(ctx context.Context, h *hook, project string) (hookstate.Entry, error) {
		e, err := profileload.Load(ctx, project)
		if err == nil {
			_ = hookstate.Store(h.stateDir, e)
		}
		return e, err
	}
}
