//go:build !linux

package hardened

// ChildMain returns at once on systems other than Linux.
func ChildMain() {}
