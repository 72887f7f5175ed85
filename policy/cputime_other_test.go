//go:build !unix

package policy_test

import "time"

// cpuTime is not measured here: the CPU-time metrics of the benchmarks read 0.
func cpuTime() time.Duration { return 0 }
