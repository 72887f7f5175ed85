package fspath

import (
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

var (
	fastOff        atomic.Bool // set by SetFastResolve(false): always walk
	openat2Missing atomic.Bool // the kernel or a seccomp filter refused openat2 once: never again
)

// SetFastResolve turns the single-call resolution of [Workspace.Resolve] (openat2 on Linux) on
// or off for the whole process and returns the previous setting. It exists so tests and
// benchmarks can compare the fast path with the component walk; results never depend on it.
func SetFastResolve(on bool) (was bool) { return !fastOff.Swap(!on) }

// fast reports whether rest, below base (root ri), needs no walk: it is a clean relative path
// (no "", "." or ".." component) and the target resolves to base + "/" + rest with no link on
// the way, the root's own path included. Then the walk would find no link and change nothing.
//
//   - No component (the root itself): the root still is the directory that was opened.
//   - One component: the same, and an lstat of the target finds it (not a link) or finds it
//     missing.
//   - More: the kernel resolves the whole path with one openat2 call that refuses every
//     symbolic link, and finds the target, or finds its parent directory with only the last
//     component missing.
//
// On any other answer (a link on the path, the root moved or replaced, a missing or
// non-directory intermediate component, openat2 missing or filtered, anything unexpected) it
// returns false and the walk, the source of truth, decides. It uses buf as scratch and does not
// allocate.
func (w *Workspace) fast(buf *[MaxPathLen + 2]byte, base, rest string, ri int) bool {
	if fastOff.Load() || len(base)+len(rest)+2 > MaxPathLen || rest != "" && !cleanRel(rest) {
		return false
	}
	if rest == "" {
		return w.rootOK(ri)
	}
	n := copy(buf[:], base)
	if n > w.floor(base) {
		buf[n] = '/'
		n++
	}
	n += copy(buf[n:], rest)
	buf[n] = 0
	if strings.IndexByte(rest, '/') < 0 {
		if !w.rootOK(ri) {
			return false
		}
		kind, err := lstatKind(buf[:n+1])
		return err == nil && kind != kindSymlink || err == syscall.ENOENT
	}
	if openat2Missing.Load() {
		return false
	}
	switch e := openNoLinks(&buf[0]); e {
	case 0:
		return true
	case syscall.ENOENT:
		j := n - 1
		for buf[j] != '/' {
			j--
		}
		buf[j] = 0
		return openNoLinks(&buf[0]) == 0
	case syscall.ENOSYS, syscall.EPERM, syscall.E2BIG:
		openat2Missing.Store(true) // too old a kernel, or a seccomp filter: walk from now on
	}
	return false
}

// openNoLinks opens the NUL-terminated absolute path as O_PATH, refusing every symbolic link on
// the way and at its end, and closes it again; it returns the errno. It calls the system
// directly because unix.Openat2 copies its path into a new string.
func openNoLinks(path *byte) syscall.Errno {
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	cwd := unix.AT_FDCWD
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT2, uintptr(cwd), uintptr(unsafe.Pointer(path)),
		uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	if e != 0 {
		return e
	}
	_, _, _ = unix.Syscall(unix.SYS_CLOSE, fd, 0, 0)
	return 0
}
