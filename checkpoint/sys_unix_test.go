//go:build unix

package checkpoint_test

import (
	"syscall"
	"time"
)

func setUmask() { syscall.Umask(0o022) }

// cpuNow is the CPU time of this process and of the children it waited for.
func cpuNow() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
