// Package shelltables is test data: the command-line tables of the shell analysis, shared by the
// tests of package risk/shell and package gate so that each row is written once.
//
// A row names a command line, what [github.com/reins-go/reins/risk/shell.Analyze] must report
// for it, and the verdict the gate gives it under some built-in profiles. The risk/shell tests
// check the analysis columns, the gate tests the verdict columns. No library code imports this
// package.
//
// The analysis columns are strings, as the risk/shell tests print an analysis:
//
//   - Risk: the risk set's String ("read_only,mutating").
//   - Reads, Writes: the paths, cleaned, deduplicated, sorted and joined by spaces, relative to
//     the workspace ("." for the workspace itself), "~/" for the home directory and "../" for the
//     workspace's parent; other paths are absolute.
//   - Hosts: the hosts, deduplicated, sorted and joined by spaces, when the line uses the network;
//     "?" when it does with no host named; empty when it does not.
//   - Opaque: whether the analysis cannot tell what the line does.
//
// Each table's workspace is a fresh temporary directory (symbolic links resolved) holding the
// directories [TableDirs] or [OptionDirs] name; the rows' paths and verdicts assume them. The
// shell analysis runs with the user's home directory and "/tmp" as the temporary directory.
package shelltables

import "github.com/reins-go/reins/policy"

// A, C and D abbreviate the verdicts in the rows.
const (
	A = policy.Allow
	C = policy.Confirm
	D = policy.Deny
)

// Row is one line of [Table]: the analysis, and the gate's verdict under PROFILE-DEV and under
// the autonomous permission mode, both with [Registries] as their package registries and
// PROFILE-DEV with the host groups ai-apis ("api.model.example") and package-managers (every
// host of [Registries]).
type Row struct {
	Line                       string
	Risk, Reads, Writes, Hosts string
	Opaque                     bool
	Dev, Auto                  policy.Verdict
}

// ModeRow is one line of [Options] or [Expansions]: the analysis, and the verdict of the
// built-in profiles out of the box (no host groups, no registries): PROFILE-DEV, supervised and
// autonomous.
type ModeRow struct {
	Line                        string
	Risk, Reads, Writes, Hosts  string
	Opaque                      bool
	Dev, Supervised, Autonomous policy.Verdict
}

// Directories of each table's workspace: [Table] and [Expansions] were written against
// TableDirs, [Options] against OptionDirs.
var (
	TableDirs  = []string{"src", ".git", "config", "bin"}
	OptionDirs = []string{"src", ".git"}
)

// Registries returns the package registry hosts per ecosystem that [Table] was written against:
// the analysis gets them as its registries, the gate's profiles as theirs. Each call returns a
// fresh map.
func Registries() map[string][]string {
	return map[string][]string{"npm": {"registry.npm.example"}, "pypi": {"pypi.example"}, "go": {"proxy.go.example"}, "cargo": {"crates.example"}}
}
