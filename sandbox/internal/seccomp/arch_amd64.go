//go:build linux && amd64

package seccomp

import "golang.org/x/sys/unix"

// Native is the table of the architecture this binary runs on.
var Native = Arch{
	Name:          "x86_64",
	AuditArch:     unix.AUDIT_ARCH_X86_64,
	X32Bit:        0x40000000, // __X32_SYSCALL_BIT
	Denied:        commonDenied,
	Socket:        unix.SYS_SOCKET,
	Clone:         unix.SYS_CLONE,
	Clone3:        unix.SYS_CLONE3,
	CloneFlagsArg: 0,
}
