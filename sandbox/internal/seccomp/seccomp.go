//go:build linux

package seccomp

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Options choose what the filter denies beyond its fixed list.
type Options struct {
	// DenyNetwork denies socket(2) for every address family but AF_UNIX,
	// which covers TCP, UDP, MPTCP, raw, packet and netlink sockets.
	DenyNetwork bool
	// Notify makes every refusal a user notification
	// (SECCOMP_RET_USER_NOTIF) instead of an immediate error, so that a
	// supervisor holding the listener (see [InstallListener] and
	// [Supervise]) records it and answers with the error the filter
	// would have returned ([Refusal]). The cost falls on refused calls
	// only. The compatibility answers (clone3 and openat2 with ENOSYS,
	// so that libc falls back to calls the filter can read) and the
	// absent calls (Arch.Absent) are never notified: they are not
	// refusals.
	Notify bool
}

// Return values of the filter (see seccomp(2)).
const (
	RetKillProcess = unix.SECCOMP_RET_KILL_PROCESS
	RetAllow       = unix.SECCOMP_RET_ALLOW
	RetErrno       = unix.SECCOMP_RET_ERRNO
	RetUserNotif   = unix.SECCOMP_RET_USER_NOTIF
)

// Offsets in struct seccomp_data.
const (
	offNr       = 0
	offArch     = 4
	offArg0Low  = 16 // little-endian: the low 32 bits of args[0]
	offArg0High = 20
)

// Arch describes the architecture a program is built for.
type Arch struct {
	Name      string
	AuditArch uint32
	// X32Bit, when non-zero, marks system calls of an ABI that shares the
	// audit architecture (x32 on x86_64); they kill the process.
	X32Bit uint32
	// Denied lists the system calls that fail with EPERM.
	Denied []Syscall
	// Absent lists the system calls that fail with ENOSYS, as on a kernel
	// built without them, and are never notified: features the sandbox
	// does not provide (POSIX message queues, which live in the IPC
	// namespace, outside any directory a run resets, and would carry data
	// from one command to the next).
	Absent []Syscall
	// Unlinkable lists the calls that make a hard link (link, linkat):
	// they fail with EPERM and are never notified. A hard link made in
	// the sandbox would give a file a second name that outlives the run:
	// a protected name later written through (a link named .env whose
	// other name the command can read), or a read-only file under a
	// writable name. Programs that try a link first fall back (git
	// renames its objects), so a refused link is not a violation.
	Unlinkable []Syscall
	// Socket is the number of socket(2).
	Socket uint32
	// Clone is the number of clone(2) and Clone3 of clone3(2).
	Clone, Clone3 uint32
	// CloneFlagsArg is the index of clone's flags argument.
	CloneFlagsArg int
	// Ioctl is the number of ioctl(2): TIOCSTI and TIOCLINUX fail with
	// EPERM on every descriptor.
	Ioctl uint32
	// Openat2 is the number of openat2(2), which fails with ENOSYS: its
	// mode sits behind a pointer the filter cannot read.
	Openat2 uint32
	// ModeCalls are the calls whose mode argument may carry S_ISUID or
	// S_ISGID; with either bit they fail with EPERM.
	ModeCalls []ModeCall
	// OTmpfile is the architecture's __O_TMPFILE flag bit.
	OTmpfile uint32
}

// Syscall is a named system-call number.
type Syscall struct {
	Name string
	Nr   uint32
}

// ModeCall is a system call with a mode argument: chmod and its
// relatives, and the calls that create a file with a mode.
type ModeCall struct {
	Name    string
	Nr      uint32
	ModeArg int
	// FlagsArg is the index of the open flags, or -1: when set, the mode
	// counts only with O_CREAT or O_TMPFILE (otherwise it is ignored by
	// the kernel and may hold anything).
	FlagsArg int
}

// ErrUnsupportedArch is returned for an architecture without a table.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture")

// nsCloneFlags are the clone flags that create namespaces; a sandboxed
// process must not make new ones (a new user namespace would hand it a
// fresh set of capabilities).
const nsCloneFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// setIDBits are S_ISUID and S_ISGID.
const setIDBits = unix.S_ISUID | unix.S_ISGID

// Build returns the filter program for arch. Its structure:
//
//  1. a system call of another architecture kills the process;
//  2. on x86_64, an x32 system call kills the process;
//  3. each denied system call fails with EPERM, and so does each call
//     that makes a hard link (Arch.Unlinkable; never notified);
//  4. clone with a namespace flag fails with EPERM; clone3 and openat2
//     fail with ENOSYS (their flags and mode sit behind a pointer the
//     filter cannot read, and libc falls back to clone and openat), and
//     so do the absent calls (Arch.Absent);
//  5. ioctl with TIOCSTI (typing into a terminal) or TIOCLINUX fails
//     with EPERM, on any descriptor;
//  6. chmod, fchmod, fchmodat, fchmodat2, and open, openat, creat,
//     mkdir, mkdirat, mknod and mknodat creating a file, fail with EPERM
//     when the mode carries S_ISUID or S_ISGID: no set-id file can be
//     made;
//  7. with DenyNetwork, socket(2) with a family other than AF_UNIX fails
//     with EAFNOSUPPORT;
//  8. everything else is allowed.
//
// With Options.Notify the refusals of 3, 4 (namespace flags), 5, 6 and
// 7 are user notifications instead; [Refusal] gives the error to answer.
func Build(arch Arch, opts Options) ([]unix.SockFilter, error) {
	if arch.AuditArch == 0 {
		return nil, ErrUnsupportedArch
	}
	var p prog
	// 1. Architecture.
	p.ldAbs(offArch)
	p.jeqElse(arch.AuditArch, "kill")
	// 2. Syscall number; x32.
	p.ldAbs(offNr)
	if arch.X32Bit != 0 {
		p.jgeTo(arch.X32Bit, "kill")
	}
	// 3. Denied calls; hard links.
	for _, s := range arch.Denied {
		p.jeqTo(s.Nr, "eperm")
	}
	for _, s := range arch.Unlinkable {
		p.jeqTo(s.Nr, "eperm-quiet")
	}
	// 4. Namespaces, calls whose arguments cannot be read, absent calls.
	p.jeqTo(arch.Clone3, "enosys")
	for _, s := range arch.Absent {
		p.jeqTo(s.Nr, "enosys")
	}
	if arch.Openat2 != 0 {
		p.jeqTo(arch.Openat2, "enosys")
	}
	p.jeqTo(arch.Clone, "clone")
	// 5. Terminal injection.
	if arch.Ioctl != 0 {
		p.jeqTo(arch.Ioctl, "ioctl")
	}
	// 6. Set-id modes.
	for i, m := range arch.ModeCalls {
		p.jeqTo(m.Nr, fmt.Sprintf("mode%d", i))
	}
	// 7. Sockets.
	if opts.DenyNetwork {
		p.jeqTo(arch.Socket, "socket")
	}
	p.ret(RetAllow)

	p.label("clone")
	p.ldAbs(argLow(arch.CloneFlagsArg))
	p.jsetTo(nsCloneFlags, "eperm")
	p.ret(RetAllow)

	if arch.Ioctl != 0 {
		p.label("ioctl")
		// The kernel reads the request as a 32-bit int: the high bits
		// do not matter.
		p.ldAbs(argLow(1))
		p.jeqTo(unix.TIOCSTI, "eperm")
		p.jeqTo(unix.TIOCLINUX, "eperm")
		p.ret(RetAllow)
	}

	for i, m := range arch.ModeCalls {
		p.label(fmt.Sprintf("mode%d", i))
		if m.FlagsArg >= 0 {
			p.ldAbs(argLow(m.FlagsArg))
			p.jsetTo(unix.O_CREAT|arch.OTmpfile, fmt.Sprintf("modecheck%d", i))
			p.ret(RetAllow)
			p.label(fmt.Sprintf("modecheck%d", i))
		}
		p.ldAbs(argLow(m.ModeArg))
		p.jsetTo(setIDBits, "eperm")
		p.ret(RetAllow)
	}

	if opts.DenyNetwork {
		p.label("socket")
		p.ldAbs(offArg0Low)
		p.jeqTo(unix.AF_UNIX, "allow")
		p.ret(refuse(opts, unix.EAFNOSUPPORT))
	}

	p.label("allow")
	p.ret(RetAllow)
	p.label("eperm")
	p.ret(refuse(opts, unix.EPERM))
	p.label("eperm-quiet")
	p.ret(RetErrno | uint32(unix.EPERM))
	p.label("enosys")
	p.ret(RetErrno | uint32(unix.ENOSYS))
	p.label("kill")
	p.ret(RetKillProcess)
	return p.assemble()
}

// refuse is the return value of a refusal with errno.
func refuse(opts Options, errno unix.Errno) uint32 {
	if opts.Notify {
		return RetUserNotif
	}
	return RetErrno | uint32(errno)
}

// Refusal describes a notified system call that the filter refused: the
// error to answer with (EAFNOSUPPORT for a socket, EPERM otherwise) and
// a short description for a violation report ("fchmodat mode 04755",
// "ioctl TIOCSTI", "socket family 2").
func Refusal(arch Arch, nr uint32, args [6]uint64) (errno unix.Errno, what string) {
	switch nr {
	case arch.Socket:
		return unix.EAFNOSUPPORT, fmt.Sprintf("socket family %d (network denied)", uint32(args[0]))
	case arch.Ioctl:
		name := fmt.Sprintf("%#x", uint32(args[1]))
		switch uint32(args[1]) {
		case unix.TIOCSTI:
			name = "TIOCSTI (typing into a terminal)"
		case unix.TIOCLINUX:
			name = "TIOCLINUX"
		}
		return unix.EPERM, "ioctl " + name
	case arch.Clone:
		return unix.EPERM, fmt.Sprintf("clone with namespace flags %#x", args[arch.CloneFlagsArg]&nsCloneFlags)
	}
	for _, m := range arch.ModeCalls {
		if m.Nr == nr {
			return unix.EPERM, fmt.Sprintf("%s mode %#o (set-user-ID or set-group-ID file)", m.Name, uint32(args[m.ModeArg])&0o7777)
		}
	}
	for _, s := range arch.Denied {
		if s.Nr == nr {
			return unix.EPERM, s.Name
		}
	}
	return unix.EPERM, fmt.Sprintf("system call %d", nr)
}

func argLow(i int) uint32 { return uint32(offArg0Low + 8*i) }

// prog is a tiny assembler with forward labels.
type prog struct {
	insns  []unix.SockFilter
	fixups []fixup
	labels map[string]int
}

type fixup struct {
	at         int
	trueLabel  string // "" = fall through
	falseLabel string
}

const (
	bpfLD   = 0x00
	bpfJMP  = 0x05
	bpfRET  = 0x06
	bpfW    = 0x00
	bpfABS  = 0x20
	bpfJEQ  = 0x10
	bpfJGE  = 0x30
	bpfJSET = 0x40
	bpfK    = 0x00
)

func (p *prog) ldAbs(off uint32) {
	p.insns = append(p.insns, unix.SockFilter{Code: bpfLD | bpfW | bpfABS, K: off})
}

func (p *prog) ret(v uint32) {
	p.insns = append(p.insns, unix.SockFilter{Code: bpfRET | bpfK, K: v})
}

func (p *prog) jump(op uint16, k uint32, t, f string) {
	p.fixups = append(p.fixups, fixup{at: len(p.insns), trueLabel: t, falseLabel: f})
	p.insns = append(p.insns, unix.SockFilter{Code: bpfJMP | op | bpfK, K: k})
}

// jeqTo jumps to label when A == k.
func (p *prog) jeqTo(k uint32, label string) { p.jump(bpfJEQ, k, label, "") }

// jeqElse jumps to label when A != k.
func (p *prog) jeqElse(k uint32, label string) { p.jump(bpfJEQ, k, "", label) }

// jgeTo jumps to label when A >= k.
func (p *prog) jgeTo(k uint32, label string) { p.jump(bpfJGE, k, label, "") }

// jsetTo jumps to label when A & k != 0.
func (p *prog) jsetTo(k uint32, label string) { p.jump(bpfJSET, k, label, "") }

func (p *prog) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.insns)
}

func (p *prog) assemble() ([]unix.SockFilter, error) {
	for _, f := range p.fixups {
		for _, side := range []struct {
			label string
			dst   *uint8
		}{{f.trueLabel, &p.insns[f.at].Jt}, {f.falseLabel, &p.insns[f.at].Jf}} {
			if side.label == "" {
				continue
			}
			to, ok := p.labels[side.label]
			if !ok {
				return nil, fmt.Errorf("seccomp: BUG: undefined label %q", side.label)
			}
			off := to - f.at - 1
			if off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp: BUG: jump to %q out of range (%d)", side.label, off)
			}
			*side.dst = uint8(off)
		}
	}
	if len(p.insns) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: BUG: program too long (%d instructions)", len(p.insns))
	}
	return p.insns, nil
}
