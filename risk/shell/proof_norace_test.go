//go:build linux && !race

package shell_test

// proofSample: without the race detector TestProof runs every row.
const proofSample = 1
