package remote

// Test-only exports for the black-box tests of package sandbox_test.

// HostileArgs are arguments that must reach a remote side byte for byte.
var HostileArgs = hostileArgs

// SplitNUL splits NUL-terminated strings.
func SplitNUL(b []byte) []string { return splitNUL(b) }
