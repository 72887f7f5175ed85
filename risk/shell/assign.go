package shell

import "strings"

// InertAssignment reports whether the environment assignment kv ("NAME=value") cannot change
// what a command runs, loads or reads, by the same allowlist the analysis applies to assignment
// prefixes (NAME=value cmd), `env NAME=value cmd` and exports. A host that runs a command with
// extra environment variables asks the gate about each of them through this predicate: anything
// not known to be inert makes the command opaque.
func InertAssignment(kv string) bool {
	name, value, ok := strings.Cut(kv, "=")
	return ok && name != "" && inertAssign(name, value, true)
}
