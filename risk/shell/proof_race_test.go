//go:build linux && race

package shell_test

// proofSample: under the race detector TestProof runs every proofSample-th row (the runs are
// other processes, which the race detector does not see; the sample keeps the harness checked).
const proofSample = 10
