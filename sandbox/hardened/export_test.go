package hardened

// Test-only hooks for the black-box tests of package hardened_test.

// SetPerRun makes h start a child of its own for every run, the path
// that Limits take, instead of going through a launcher.
func SetPerRun(h *Sandbox) { h.perRun = true }

// LauncherStarts is the number of launchers h has started.
func LauncherStarts(h *Sandbox) int64 { return h.starts.Load() }

// LauncherPIDs are the host pids of h's idle launchers.
func LauncherPIDs(h *Sandbox) []int { return h.pool.pids() }
