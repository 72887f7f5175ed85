//go:build race

package shell_test

// raceEnabled says the race detector is on: the tracer proofs, whose work is in the programs they
// trace, skip then (the main test pass runs them).
const raceEnabled = true
