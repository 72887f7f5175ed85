//go:build !linux

package hardened

// launchers is empty where local-hardened does not run.
type launchers struct{}

func (*launchers) close() {}

func (*launchers) pids() []int { return nil }
