//go:build !unix

package checkpoint_test

import "time"

func setUmask() {}

// cpuNow is not measured on this platform: the benchmarks report zero CPU.
func cpuNow() time.Duration { return 0 }
