// Package hardened holds the child side of the local-hardened sandbox
// ([sandbox.NewHardened]): the code that a re-executed binary runs to
// set up the namespaces, the private mount tree, the identity change,
// the capability drop, no_new_privs, Landlock (through
// github.com/landlock-lsm/go-landlock) and the seccomp filter, and then
// to start and supervise the command.
//
// Importing this package is the opt-in to local-hardened: its init turns
// a binary started with the sandbox's sentinel argv[0] into the sandbox
// child (see [ChildMain]), and it links go-landlock (and, with cgo,
// libcap's psx, which wraps pthread_create; build with -tags
// landlocktsync to leave psx out). A program that imports only package
// sandbox gets neither; its local-hardened runs report exit code 127 and
// [sandbox.ErrUnavailable], saying that this package is missing.
//
//	import (
//		"github.com/reins-go/reins/sandbox"
//		_ "github.com/reins-go/reins/sandbox/hardened" // enables local-hardened
//	)
//
// On systems other than Linux the package does nothing.
package hardened
