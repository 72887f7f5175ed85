//go:build linux && arm64

package seccomp

import "golang.org/x/sys/unix"

// Native is the table of the architecture this binary runs on.
var Native = Arch{
	Name:          "aarch64",
	AuditArch:     unix.AUDIT_ARCH_AARCH64,
	Denied:        commonDenied,
	Socket:        unix.SYS_SOCKET,
	Clone:         unix.SYS_CLONE,
	Clone3:        unix.SYS_CLONE3,
	CloneFlagsArg: 0,
}
