//go:build unix

package policy_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used so far: on a loaded
// machine, a measure of work that waiting for a processor does not inflate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
