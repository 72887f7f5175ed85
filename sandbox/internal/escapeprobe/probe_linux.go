//go:build linux

package escapeprobe

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Arg is the first argument that makes a test binary run Main.
const Arg = "reins-escape-probe"

// Main runs the attack named by args[0] with the remaining arguments. It
// prints "ESCAPED" and returns 0 when the attack succeeded, prints
// "blocked: <error>" and returns 1 when it was stopped, 2 on misuse.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Println("usage: probe ATTACK [ARGS]")
		return 2
	}
	err := attack(args[0], args[1:])
	if err != nil {
		fmt.Printf("blocked: %v\n", err)
		return 1
	}
	fmt.Println("ESCAPED")
	return 0
}

func arg(a []string, i int) string {
	if i < len(a) {
		return a[i]
	}
	return ""
}

func attack(name string, a []string) error {
	switch name {
	case "tcp4", "tcp6":
		c, err := net.DialTimeout(name, arg(a, 0), 2*time.Second)
		if err != nil {
			return err
		}
		_, err = c.Write([]byte("escaped"))
		c.Close()
		return err
	case "udp":
		c, err := net.Dial("udp", arg(a, 0))
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("escaped"))
		return err
	case "mptcp":
		addr, err := net.ResolveTCPAddr("tcp4", arg(a, 0))
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP)
		if err != nil {
			return fmt.Errorf("socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP): %w", err)
		}
		defer unix.Close(fd)
		sa := &unix.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To4())
		return unix.Connect(fd, sa)
	case "netlink":
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("socket(AF_NETLINK): %w", err)
		}
		unix.Close(fd)
		return nil
	case "packet":
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return fmt.Errorf("socket(AF_PACKET): %w", err)
		}
		unix.Close(fd)
		return nil
	case "netlink-under-signals":
		// Refused calls interrupted by signals: one thread makes them
		// while another signals it without pause, so that the kernel
		// withdraws some notifications before the supervisor receives
		// them (and notifies again when the call restarts). Every call
		// must still get its answer.
		n, err := strconv.Atoi(arg(a, 0))
		if err != nil || n <= 0 {
			return fmt.Errorf("netlink-under-signals: want a positive count, got %q", arg(a, 0))
		}
		return underSignals(n)
	case "unix":
		c, err := net.DialTimeout("unix", arg(a, 0), 2*time.Second)
		if err != nil {
			return err
		}
		_, err = c.Write([]byte("escaped"))
		c.Close()
		return err
	case "int80":
		if !int80Supported {
			return fmt.Errorf("int 0x80 is not available on this architecture")
		}
		fmt.Println("before int80")
		r := Int80Socket()
		return fmt.Errorf("int 0x80 returned %d instead of killing the process", r)
	case "x32":
		if !int80Supported {
			return fmt.Errorf("x32 exists on x86_64 only")
		}
		fmt.Println("before x32")
		r, _, errno := unix.RawSyscall(x32Bit|unix.SYS_GETPID, 0, 0, 0)
		return fmt.Errorf("x32 getpid returned %d, %v instead of killing the process", r, errno)
	case "io_uring":
		var params [120]byte
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			return fmt.Errorf("io_uring_setup: %w", errno)
		}
		unix.Close(int(fd))
		return nil
	case "ptrace":
		pid, err := strconv.Atoi(arg(a, 0))
		if err != nil {
			return err
		}
		if err := unix.PtraceAttach(pid); err != nil {
			return fmt.Errorf("ptrace(PTRACE_ATTACH, %d): %w", pid, err)
		}
		return nil
	case "kill":
		pid, err := strconv.Atoi(arg(a, 0))
		if err != nil {
			return err
		}
		if err := unix.Kill(pid, unix.SIGKILL); err != nil {
			return fmt.Errorf("kill(%d): %w", pid, err)
		}
		return nil
	case "mount":
		if err := unix.Mount("tmpfs", arg(a, 0), "tmpfs", 0, ""); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
		return nil
	case "umount":
		if err := unix.Unmount(arg(a, 0), unix.MNT_DETACH); err != nil {
			return fmt.Errorf("umount2: %w", err)
		}
		return nil
	case "readfd":
		fd, err := strconv.Atoi(arg(a, 0))
		if err != nil {
			return err
		}
		buf := make([]byte, 256)
		n, err := unix.Read(fd, buf)
		if err != nil {
			return fmt.Errorf("read(%d): %w", fd, err)
		}
		fmt.Printf("read: %s\n", buf[:n])
		return nil
	case "unshare-user":
		if err := unix.Unshare(unix.CLONE_NEWUSER); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWUSER): %w", err)
		}
		return nil
	case "write":
		if err := os.WriteFile(arg(a, 0), []byte("escaped"), 0o644); err != nil {
			return err
		}
		return nil
	case "tiocsti":
		// Type a command into the terminal on stdin.
		for _, c := range []byte(arg(a, 0) + "\n") {
			if err := unix.IoctlSetPointerInt(0, unix.TIOCSTI, int(c)); err != nil {
				return fmt.Errorf("ioctl(0, TIOCSTI): %w", err)
			}
		}
		return nil
	case "tiocsti-raw":
		// The same with the request's high bits set (the kernel ignores
		// them).
		c := byte('x')
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, 0, uintptr(1<<32|unix.TIOCSTI), uintptr(unsafe.Pointer(&c))); e != 0 {
			return fmt.Errorf("ioctl(0, 1<<32|TIOCSTI): %w", e)
		}
		return nil
	case "setuid-open":
		// Create a set-user-ID file in one call.
		fd, err := unix.Open(arg(a, 0), unix.O_CREAT|unix.O_WRONLY, 0o4755)
		if err != nil {
			return fmt.Errorf("open(O_CREAT, 04755): %w", err)
		}
		unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Stat(arg(a, 0), &st); err == nil && st.Mode&(unix.S_ISUID|unix.S_ISGID) == 0 {
			return fmt.Errorf("created without the set-id bit (umask or mount)")
		}
		return nil
	case "link":
		// Give a file a second name (a hard link).
		if err := unix.Link(arg(a, 0), arg(a, 1)); err != nil {
			return fmt.Errorf("link: %w", err)
		}
		return nil
	case "setxattr":
		// Leave an extended attribute on a path for the next run.
		if err := unix.Setxattr(arg(a, 0), "user.reins", []byte("escaped"), 0); err != nil {
			return fmt.Errorf("setxattr: %w", err)
		}
		return nil
	case "xattr-seen":
		// See an extended attribute an earlier run left.
		buf := make([]byte, 64)
		if _, err := unix.Getxattr(arg(a, 0), "user.reins", buf); err != nil {
			return fmt.Errorf("getxattr: %w", err)
		}
		return nil
	case "shm-create":
		// Leave a System V shared memory segment (key in hex) behind.
		key, err := strconv.ParseUint(arg(a, 0), 16, 32)
		if err != nil {
			return err
		}
		if _, err := unix.SysvShmGet(int(key), 4096, unix.IPC_CREAT|0o600); err != nil {
			return fmt.Errorf("shmget(IPC_CREAT): %w", err)
		}
		return nil
	case "shm-seen":
		// Find a System V shared memory segment by its key (in hex).
		key, err := strconv.ParseUint(arg(a, 0), 16, 32)
		if err != nil {
			return err
		}
		if _, err := unix.SysvShmGet(int(key), 0, 0); err != nil {
			return fmt.Errorf("shmget: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unknown attack %q", name)
}

// underSignals makes n refused socket(AF_NETLINK) calls on one thread
// while another sends it SIGURG (the Go runtime's own preemption signal,
// which it takes and ignores) in a loop.
func underSignals(n int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, tid := unix.Getpid(), unix.Gettid()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Tgkill(pid, tid, unix.SIGURG)
			runtime.Gosched()
		}
	}()
	defer func() { close(stop); <-stopped }()
	var last error
	for range n {
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		if e == 0 {
			unix.Close(int(fd))
			return nil
		}
		last = e
	}
	return fmt.Errorf("%d refused calls answered under signals: socket(AF_NETLINK): %w", n, last)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
