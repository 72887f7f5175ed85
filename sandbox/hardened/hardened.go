// Package hardened is the local-hardened sandbox: [New] returns a
// [sandbox.Sandbox] that runs each command on this host inside
// namespaces, a private read-only mount tree, Landlock and a seccomp
// filter, with every capability dropped. See doc.go for what it enforces
// and what stays invisible.
//
// Importing this package is the opt-in to local-hardened: its init turns
// a binary started with the sandbox's sentinel argv[0] into the sandbox
// child (see [ChildMain]), and it links go-landlock (and, with cgo,
// libcap's psx, which wraps pthread_create; build with -tags
// landlocktsync to leave psx out). A program that imports only package
// sandbox gets neither.
//
// local-hardened is Linux-only. On other systems the package builds, [New]
// validates the configuration, and every Run returns exit code 127 with
// an error matching [sandbox.ErrUnavailable] ("local-hardened requires
// Linux"); [ChildMain] does nothing.
package hardened
