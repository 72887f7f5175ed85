//go:build linux && (amd64 || arm64)

package seccomp

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData encodes struct seccomp_data as the filter sees it. The
// x/net/bpf VM loads 32-bit words big-endian, the kernel native-endian;
// encoding each word big-endian at its native offset makes the two agree.
func seccompData(nr, arch uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[offArg0Low+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[offArg0High+8*i:], uint32(a>>32))
	}
	return b
}

func vmFor(t *testing.T, opts Options) *bpf.VM {
	t.Helper()
	prog, err := Build(Native, opts)
	require.NoError(t, err)
	raw := make([]bpf.Instruction, len(prog))
	for i, in := range prog {
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}.Disassemble()
	}
	vm, err := bpf.NewVM(raw)
	require.NoError(t, err)
	return vm
}

func TestFilterInVM(t *testing.T) {
	t.Parallel()
	eperm := RetErrno | uint32(unix.EPERM)
	tests := []struct {
		name string
		opts Options
		data []byte
		want uint32
	}{
		{"read allowed", Options{DenyNetwork: true}, seccompData(unix.SYS_READ, Native.AuditArch), RetAllow},
		{"execve allowed", Options{DenyNetwork: true}, seccompData(unix.SYS_EXECVE, Native.AuditArch), RetAllow},
		{"i386 arch kills", Options{}, seccompData(102 /* socketcall */, unix.AUDIT_ARCH_I386), RetKillProcess},
		{"foreign arch kills", Options{}, seccompData(unix.SYS_READ, unix.AUDIT_ARCH_ARM), RetKillProcess},
		{"ptrace EPERM", Options{}, seccompData(unix.SYS_PTRACE, Native.AuditArch), eperm},
		{"mount EPERM", Options{}, seccompData(unix.SYS_MOUNT, Native.AuditArch), eperm},
		{"umount2 EPERM", Options{}, seccompData(unix.SYS_UMOUNT2, Native.AuditArch), eperm},
		{"bpf EPERM", Options{}, seccompData(unix.SYS_BPF, Native.AuditArch), eperm},
		{"keyctl EPERM", Options{}, seccompData(unix.SYS_KEYCTL, Native.AuditArch), eperm},
		{"perf_event_open EPERM", Options{}, seccompData(unix.SYS_PERF_EVENT_OPEN, Native.AuditArch), eperm},
		{"io_uring_setup EPERM", Options{}, seccompData(unix.SYS_IO_URING_SETUP, Native.AuditArch), eperm},
		{"io_uring_enter EPERM", Options{}, seccompData(unix.SYS_IO_URING_ENTER, Native.AuditArch), eperm},
		{"io_uring_register EPERM", Options{}, seccompData(unix.SYS_IO_URING_REGISTER, Native.AuditArch), eperm},
		{"unshare EPERM", Options{}, seccompData(unix.SYS_UNSHARE, Native.AuditArch), eperm},
		{"clone thread allowed", Options{}, seccompData(unix.SYS_CLONE, Native.AuditArch, unix.CLONE_VM|unix.CLONE_THREAD|unix.CLONE_SIGHAND), RetAllow},
		{"clone newuser EPERM", Options{}, seccompData(unix.SYS_CLONE, Native.AuditArch, unix.CLONE_NEWUSER), eperm},
		{"clone newnet EPERM", Options{}, seccompData(unix.SYS_CLONE, Native.AuditArch, unix.CLONE_NEWNET|uint64(unix.SIGCHLD)), eperm},
		{"clone3 ENOSYS", Options{}, seccompData(unix.SYS_CLONE3, Native.AuditArch), RetErrno | uint32(unix.ENOSYS)},
		{"unix socket allowed offline", Options{DenyNetwork: true}, seccompData(unix.SYS_SOCKET, Native.AuditArch, unix.AF_UNIX, unix.SOCK_STREAM), RetAllow},
		{"inet socket denied offline", Options{DenyNetwork: true}, seccompData(unix.SYS_SOCKET, Native.AuditArch, unix.AF_INET, unix.SOCK_STREAM), RetErrno | uint32(unix.EAFNOSUPPORT)},
		{"inet6 udp denied offline", Options{DenyNetwork: true}, seccompData(unix.SYS_SOCKET, Native.AuditArch, unix.AF_INET6, unix.SOCK_DGRAM), RetErrno | uint32(unix.EAFNOSUPPORT)},
		{"mptcp denied offline", Options{DenyNetwork: true}, seccompData(unix.SYS_SOCKET, Native.AuditArch, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), RetErrno | uint32(unix.EAFNOSUPPORT)},
		{"netlink denied offline", Options{DenyNetwork: true}, seccompData(unix.SYS_SOCKET, Native.AuditArch, unix.AF_NETLINK, unix.SOCK_RAW), RetErrno | uint32(unix.EAFNOSUPPORT)},
		{"packet denied offline", Options{DenyNetwork: true}, seccompData(unix.SYS_SOCKET, Native.AuditArch, unix.AF_PACKET, unix.SOCK_RAW), RetErrno | uint32(unix.EAFNOSUPPORT)},
		{"unix family with high bits set denied", Options{DenyNetwork: true}, seccompData(unix.SYS_SOCKET, Native.AuditArch, 1<<32|unix.AF_UNIX), RetAllow},
		{"inet socket allowed online", Options{}, seccompData(unix.SYS_SOCKET, Native.AuditArch, unix.AF_INET, unix.SOCK_STREAM), RetAllow},
	}
	if Native.X32Bit != 0 {
		tests = append(tests, struct {
			name string
			opts Options
			data []byte
			want uint32
		}{"x32 kills", Options{}, seccompData(Native.X32Bit|unix.SYS_READ, Native.AuditArch), RetKillProcess})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := vmFor(t, tt.opts).Run(tt.data)
			require.NoError(t, err)
			assert.Equalf(t, tt.want, uint32(got), "filter(%s) = %#x, want %#x", tt.name, uint32(got), tt.want)
		})
	}
}

func TestEveryDeniedSyscallIsDenied(t *testing.T) {
	t.Parallel()
	vm := vmFor(t, Options{DenyNetwork: true})
	for _, s := range Native.Denied {
		got, err := vm.Run(seccompData(s.Nr, Native.AuditArch))
		require.NoError(t, err)
		assert.Equalf(t, RetErrno|uint32(unix.EPERM), uint32(got), "%s", s.Name)
	}
}

// Every absent system call answers ENOSYS, as on a kernel without it, with and without Notify
// (it is not a refusal, so never a notification).
func TestEveryAbsentSyscallIsAbsent(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, Native.Absent)
	for _, opts := range []Options{{}, {DenyNetwork: true, Notify: true}} {
		vm := vmFor(t, opts)
		for _, s := range Native.Absent {
			got, err := vm.Run(seccompData(s.Nr, Native.AuditArch))
			require.NoError(t, err)
			assert.Equalf(t, RetErrno|uint32(unix.ENOSYS), uint32(got), "%s (notify %v)", s.Name, opts.Notify)
		}
	}
	got, err := vmFor(t, Options{}).Run(seccompData(unix.SYS_MQ_OPEN, Native.AuditArch))
	require.NoError(t, err)
	assert.Equal(t, RetErrno|uint32(unix.ENOSYS), uint32(got), "mq_open")
}

// Every call that makes a hard link fails with EPERM, with and without
// Notify, and is never a notification: programs that try a link first
// fall back, so it is not a refusal to report.
func TestHardLinksFailQuietly(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, Native.Unlinkable)
	for _, opts := range []Options{{}, {DenyNetwork: true, Notify: true}} {
		vm := vmFor(t, opts)
		for _, s := range Native.Unlinkable {
			got, err := vm.Run(seccompData(s.Nr, Native.AuditArch))
			require.NoError(t, err)
			assert.Equalf(t, RetErrno|uint32(unix.EPERM), uint32(got), "%s (notify %v)", s.Name, opts.Notify)
		}
	}
	got, err := vmFor(t, Options{}).Run(seccompData(unix.SYS_LINKAT, Native.AuditArch))
	require.NoError(t, err)
	assert.Equal(t, RetErrno|uint32(unix.EPERM), uint32(got), "linkat")
}

func TestBuildUnsupportedArch(t *testing.T) {
	t.Parallel()
	_, err := Build(Arch{}, Options{})
	require.ErrorIs(t, err, ErrUnsupportedArch)
}

// TestFilterTerminalAndSetID covers the terminal-injection and set-id
// rules, row by row, for every mode call of this architecture.
func TestFilterTerminalAndSetID(t *testing.T) {
	t.Parallel()
	eperm := RetErrno | uint32(unix.EPERM)
	vm := vmFor(t, Options{})
	run := func(nr uint32, args ...uint64) uint32 {
		got, err := vm.Run(seccompData(nr, Native.AuditArch, args...))
		require.NoError(t, err)
		return uint32(got)
	}
	assert.Equal(t, eperm, run(unix.SYS_IOCTL, 0, unix.TIOCSTI), "TIOCSTI")
	assert.Equal(t, eperm, run(unix.SYS_IOCTL, 7, 1<<32|unix.TIOCSTI), "TIOCSTI with high bits (the kernel ignores them)")
	assert.Equal(t, eperm, run(unix.SYS_IOCTL, 0, unix.TIOCLINUX), "TIOCLINUX")
	assert.Equal(t, uint32(RetAllow), run(unix.SYS_IOCTL, 0, unix.TCGETS), "TCGETS")
	assert.Equal(t, uint32(RetAllow), run(unix.SYS_IOCTL, 0, unix.TIOCGWINSZ), "TIOCGWINSZ")
	assert.Equal(t, RetErrno|uint32(unix.ENOSYS), run(sysOpenat2), "openat2")
	for _, m := range Native.ModeCalls {
		args := make([]uint64, 6)
		if m.FlagsArg >= 0 {
			args[m.FlagsArg] = unix.O_CREAT | unix.O_WRONLY
		}
		for _, tt := range []struct {
			mode uint64
			want uint32
		}{{0o4755, eperm}, {0o2755, eperm}, {0o6777, eperm}, {0o755, RetAllow}, {0o1777, RetAllow}, {0o644, RetAllow}, {1<<32 | 0o755, RetAllow}} {
			args[m.ModeArg] = tt.mode
			assert.Equalf(t, tt.want, run(m.Nr, args...), "%s mode %#o", m.Name, tt.mode)
		}
		if m.FlagsArg >= 0 {
			args[m.ModeArg] = 0o4755
			args[m.FlagsArg] = unix.O_RDONLY
			assert.Equalf(t, uint32(RetAllow), run(m.Nr, args...), "%s without O_CREAT ignores the mode", m.Name)
			args[m.FlagsArg] = unix.O_TMPFILE | unix.O_RDWR
			assert.Equalf(t, eperm, run(m.Nr, args...), "%s with O_TMPFILE", m.Name)
		}
	}
}

// TestFilterNotify checks that with Notify every refusal but the
// compatibility ENOSYS answers becomes a user notification, and that
// Refusal names the call and the error.
func TestFilterNotify(t *testing.T) {
	t.Parallel()
	vm := vmFor(t, Options{DenyNetwork: true, Notify: true})
	run := func(nr uint32, args ...uint64) uint32 {
		got, err := vm.Run(seccompData(nr, Native.AuditArch, args...))
		require.NoError(t, err)
		return uint32(got)
	}
	assert.Equal(t, uint32(RetUserNotif), run(unix.SYS_PTRACE))
	assert.Equal(t, uint32(RetUserNotif), run(unix.SYS_IOCTL, 0, unix.TIOCSTI))
	assert.Equal(t, uint32(RetUserNotif), run(unix.SYS_SOCKET, unix.AF_INET))
	assert.Equal(t, uint32(RetUserNotif), run(unix.SYS_FCHMODAT, 0, 0, 0o4755))
	assert.Equal(t, RetErrno|uint32(unix.ENOSYS), run(unix.SYS_CLONE3))
	assert.Equal(t, uint32(RetAllow), run(unix.SYS_READ))

	e, what := Refusal(Native, unix.SYS_SOCKET, [6]uint64{unix.AF_INET})
	assert.Equal(t, unix.EAFNOSUPPORT, e)
	assert.Contains(t, what, "socket family 2")
	e, what = Refusal(Native, unix.SYS_FCHMODAT, [6]uint64{0, 0, 0o104755})
	assert.Equal(t, unix.EPERM, e)
	assert.Equal(t, "fchmodat mode 04755 (set-user-ID or set-group-ID file)", what)
	_, what = Refusal(Native, unix.SYS_IOCTL, [6]uint64{0, unix.TIOCSTI})
	assert.Contains(t, what, "TIOCSTI")
	_, what = Refusal(Native, unix.SYS_PTRACE, [6]uint64{})
	assert.Equal(t, "ptrace", what)
}
