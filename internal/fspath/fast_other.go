//go:build !linux

package fspath

// SetFastResolve turns the single-call resolution of [Workspace.Resolve] (openat2 on Linux) on
// or off for the whole process and returns the previous setting. On this platform there is
// none: every target is walked, and it returns false.
func SetFastResolve(on bool) (was bool) { return false }

func (w *Workspace) fast(buf *[MaxPathLen + 2]byte, base, rest string, ri int) bool { return false }
