//go:build linux && arm64

package seccomp

import "golang.org/x/sys/unix"

// Native is the table of the architecture this binary runs on.
var Native = Arch{
	Name:          "aarch64",
	AuditArch:     unix.AUDIT_ARCH_AARCH64,
	Denied:        commonDenied,
	Absent:        commonAbsent,
	Unlinkable:    []Syscall{{"linkat", unix.SYS_LINKAT}},
	Socket:        unix.SYS_SOCKET,
	Clone:         unix.SYS_CLONE,
	Clone3:        unix.SYS_CLONE3,
	CloneFlagsArg: 0,
	Ioctl:         unix.SYS_IOCTL,
	Openat2:       sysOpenat2,
	ModeCalls: []ModeCall{
		{"fchmod", unix.SYS_FCHMOD, 1, -1},
		{"fchmodat", unix.SYS_FCHMODAT, 2, -1},
		{"fchmodat2", sysFchmodat2, 2, -1},
		{"openat", unix.SYS_OPENAT, 3, 2},
		{"mkdirat", unix.SYS_MKDIRAT, 2, -1},
		{"mknodat", unix.SYS_MKNODAT, 2, -1},
	},
	OTmpfile: 0x400000, // __O_TMPFILE
}
