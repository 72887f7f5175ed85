// Command reins is a command-line front end to the library, with the verbs of the
// specifications it grew from: decide or explain an action, list, show and switch profiles,
// trust a project's profile file, list the active permissions, read and verify an audit log,
// list, diff or rewind checkpoints, and halt, reset or inspect the runs that share a run-state
// file (reins fleet). It is package examples/reins/cli's Main; command etcdstore/cmd/reins is
// the same program with the fleet verbs on an etcd cluster.
//
//	reins [-C dir] [--json] <command> [arguments]
//
// Run `reins help` for the commands and `reins help <command>` (or `<command> --help`) for one.
package main

import (
	"context"
	"os"

	"github.com/reins-go/reins/examples/reins/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, nil))
}
