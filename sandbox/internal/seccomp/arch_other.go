//go:build linux && !amd64 && !arm64

package seccomp

// Native is empty on architectures without a table; Build returns
// ErrUnsupportedArch for it.
var Native = Arch{}
