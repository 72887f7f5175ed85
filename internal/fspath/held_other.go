//go:build !linux

package fspath

// heldRoots is empty where there is no single-call resolution: every target is walked.
type heldRoots struct{}

// SetFastResolve turns the single-call resolution of [Workspace.Resolve] (openat2 on Linux) on
// or off for the whole process and returns the previous setting. On this platform there is
// none: every target is walked, and it returns false.
func SetFastResolve(on bool) (was bool) { return false }

func (w *Workspace) holdRoots() {}

func (w *Workspace) fast(buf *[MaxPathLen + 2]byte, base, rest string) bool { return false }
