// Command load (installed as reins-hook-load, next to reins-hook) loads the reins profiles for a
// project, validating them, keeps the result in reins-hook's state directory and prints it as
// JSON. reins-hook runs it only when its cached profile is missing or one of the profile files
// changed, so that the loader and its JSON Schema validation (whose start-up alone costs more
// than the rest of a hook call) are paid once per change, not once per tool call.
//
//	reins-hook-load -state DIR -project DIR
//
// A profile that does not load ends in exit status 2 with the reason on standard error.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reins-go/reins/examples/hook/internal/hookstate"
	"github.com/reins-go/reins/examples/hook/internal/profileload"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reins-hook-load", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	state := fs.String("state", "", "reins-hook's state directory")
	project := fs.String("project", "", "the project directory")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 || !filepath.IsAbs(*state) || !filepath.IsAbs(*project) {
		fmt.Fprintln(stderr, "reins-hook-load: usage: reins-hook-load -state DIR -project DIR (absolute paths)")
		return 2
	}
	e, err := profileload.Load(ctx, *project)
	if err != nil {
		fmt.Fprintf(stderr, "reins-hook-load: %v\n", err)
		return 2
	}
	if err := hookstate.Store(*state, e); err != nil {
		fmt.Fprintf(stderr, "reins-hook-load: keeping the profile: %v\n", err)
	}
	if err := json.NewEncoder(stdout).Encode(e); err != nil {
		fmt.Fprintf(stderr, "reins-hook-load: %v\n", err)
		return 2
	}
	return 0
}
