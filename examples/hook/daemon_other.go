//go:build !linux

package main

import (
	"context"
	"fmt"
	"io"
)

// runDaemon: a resident core answers only on Linux (it checks its peers' namespaces there);
// elsewhere reins-hook starts the core for every call.
func runDaemon(_ context.Context, _ []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "reins hook: daemon: a resident core runs only on Linux")
	return exitBlock
}
