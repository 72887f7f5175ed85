package fspath

import (
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// heldRoots holds every root open (an O_PATH descriptor, parallel to Workspace.roots; -1 when
// the open failed) so a target can be resolved beneath it with one openat2(2) call. The
// *os.File values own the descriptors: os closes each one when its File becomes unreachable, so
// a Workspace needs no Close (see [NewWorkspace]).
type heldRoots struct {
	files []*os.File
	fds   []int
}

// minFastComponents is the shallowest target worth an openat2: it costs two system calls (open
// and close; three for a missing last component), the walk one lstat per component, so one or
// two components are walked.
const minFastComponents = 3

var (
	fastOff        atomic.Bool // set by SetFastResolve(false): always walk
	openat2Missing atomic.Bool // the kernel or a seccomp filter refused openat2 once: never again
)

// SetFastResolve turns the single-call resolution of [Workspace.Resolve] (openat2 on Linux) on
// or off for the whole process and returns the previous setting. It exists so tests and
// benchmarks can compare the fast path with the component walk; results never depend on it.
func SetFastResolve(on bool) (was bool) { return !fastOff.Swap(!on) }

func (w *Workspace) holdRoots() {
	w.held.fds = make([]int, len(w.roots))
	for i, r := range w.roots {
		w.held.fds[i] = -1
		fd, err := unix.Open(r, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // this root is always walked
		}
		w.held.files = append(w.held.files, os.NewFile(uintptr(fd), r))
		w.held.fds[i] = fd
	}
}

// fast reports whether rest, below base, needs no walk: it is a clean relative path (no "",
// "." or ".." component) of at least [minFastComponents] components and the kernel, resolving it beneath the held root base with no
// symbolic link allowed anywhere, finds it, or finds its parent directory with only the last
// component missing. Then the walk would find no link and change nothing, and the target
// resolves to base + "/" + rest. On any other answer (a link on the path, a missing or
// non-directory intermediate component, openat2 missing or filtered, anything unexpected) it
// returns false and the walk, the source of truth, decides. It uses buf as scratch and does not
// allocate.
func (w *Workspace) fast(buf *[MaxPathLen + 2]byte, base, rest string) bool {
	if strings.Count(rest, "/")+1 < minFastComponents || fastOff.Load() || openat2Missing.Load() ||
		len(base)+len(rest)+2 > MaxPathLen || !cleanRel(rest) {
		return false
	}
	fd := -1
	for i, r := range w.roots {
		if r == base {
			fd = w.held.fds[i]
			break
		}
	}
	if fd < 0 {
		return false
	}
	n := copy(buf[:], rest)
	buf[n] = 0
	ok := false
	switch e := openBeneath(fd, &buf[0]); e {
	case 0:
		ok = true
	case syscall.ENOENT:
		j := n - 1
		for j >= 0 && buf[j] != '/' {
			j--
		}
		if j < 0 {
			ok = true // the parent is the root itself
			break
		}
		buf[j] = 0
		ok = openBeneath(fd, &buf[0]) == 0
	case syscall.ENOSYS, syscall.EPERM, syscall.E2BIG:
		openat2Missing.Store(true) // too old a kernel, or a seccomp filter: walk from now on
	}
	runtime.KeepAlive(w) // the held Files, and so fd, stay open until the calls return
	return ok
}

// openBeneath opens the NUL-terminated path beneath dirfd as O_PATH, refusing every symbolic
// link and any escape, and closes it again; it returns the errno. It calls the system directly
// because unix.Openat2 copies its path into a new string.
func openBeneath(dirfd int, path *byte) syscall.Errno {
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(path)),
		uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	if e != 0 {
		return e
	}
	_, _, _ = unix.Syscall(unix.SYS_CLOSE, fd, 0, 0)
	return 0
}
