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
}

// Return values of the filter (see seccomp(2)).
const (
	RetKillProcess = unix.SECCOMP_RET_KILL_PROCESS
	RetAllow       = unix.SECCOMP_RET_ALLOW
	RetErrno       = unix.SECCOMP_RET_ERRNO
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
	// Socket is the number of socket(2).
	Socket uint32
	// Clone is the number of clone(2) and Clone3 of clone3(2).
	Clone, Clone3 uint32
	// CloneFlagsArg is the index of clone's flags argument.
	CloneFlagsArg int
}

// Syscall is a named system-call number.
type Syscall struct {
	Name string
	Nr   uint32
}

// ErrUnsupportedArch is returned for an architecture without a table.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture")

// nsCloneFlags are the clone flags that create namespaces; a sandboxed
// process must not make new ones (a new user namespace would hand it a
// fresh set of capabilities).
const nsCloneFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// Build returns the filter program for arch. Its structure:
//
//  1. a system call of another architecture kills the process;
//  2. on x86_64, an x32 system call kills the process;
//  3. each denied system call fails with EPERM;
//  4. clone with a namespace flag fails with EPERM, clone3 with ENOSYS
//     (its flags sit behind a pointer the filter cannot read, and libc
//     falls back to clone);
//  5. with DenyNetwork, socket(2) with a family other than AF_UNIX fails
//     with EAFNOSUPPORT;
//  6. everything else is allowed.
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
	// 3. Denied calls.
	for _, s := range arch.Denied {
		p.jeqTo(s.Nr, "eperm")
	}
	// 4. Namespaces.
	p.jeqTo(arch.Clone3, "enosys")
	p.jeqTo(arch.Clone, "clone")
	// 5. Sockets.
	if opts.DenyNetwork {
		p.jeqTo(arch.Socket, "socket")
	}
	p.ret(RetAllow)

	p.label("clone")
	p.ldAbs(argLow(arch.CloneFlagsArg))
	p.jsetTo(nsCloneFlags, "eperm")
	p.ret(RetAllow)

	if opts.DenyNetwork {
		p.label("socket")
		p.ldAbs(offArg0Low)
		p.jeqTo(unix.AF_UNIX, "allow")
		p.ret(RetErrno | uint32(unix.EAFNOSUPPORT))
	}

	p.label("allow")
	p.ret(RetAllow)
	p.label("eperm")
	p.ret(RetErrno | uint32(unix.EPERM))
	p.label("enosys")
	p.ret(RetErrno | uint32(unix.ENOSYS))
	p.label("kill")
	p.ret(RetKillProcess)
	return p.assemble()
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
