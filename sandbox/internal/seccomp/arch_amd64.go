//go:build linux && amd64

package seccomp

import "golang.org/x/sys/unix"

// Native is the table of the architecture this binary runs on.
var Native = Arch{
	Name:          "x86_64",
	AuditArch:     unix.AUDIT_ARCH_X86_64,
	X32Bit:        0x40000000, // __X32_SYSCALL_BIT
	Denied:        commonDenied,
	Absent:        commonAbsent,
	Unlinkable:    []Syscall{{"link", unix.SYS_LINK}, {"linkat", unix.SYS_LINKAT}},
	Socket:        unix.SYS_SOCKET,
	Clone:         unix.SYS_CLONE,
	Clone3:        unix.SYS_CLONE3,
	CloneFlagsArg: 0,
	Ioctl:         unix.SYS_IOCTL,
	Openat2:       sysOpenat2,
	ModeCalls: []ModeCall{
		{"chmod", unix.SYS_CHMOD, 1, -1},
		{"fchmod", unix.SYS_FCHMOD, 1, -1},
		{"fchmodat", unix.SYS_FCHMODAT, 2, -1},
		{"fchmodat2", sysFchmodat2, 2, -1},
		{"open", unix.SYS_OPEN, 2, 1},
		{"openat", unix.SYS_OPENAT, 3, 2},
		{"creat", unix.SYS_CREAT, 1, -1},
		{"mkdir", unix.SYS_MKDIR, 1, -1},
		{"mkdirat", unix.SYS_MKDIRAT, 2, -1},
		{"mknod", unix.SYS_MKNOD, 1, -1},
		{"mknodat", unix.SYS_MKNODAT, 2, -1},
	},
	OTmpfile: 0x400000, // __O_TMPFILE
}
