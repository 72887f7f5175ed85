//go:build linux

package hardened

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/proto"
	"github.com/reins-go/reins/sandbox/internal/seccomp"
)

// childMain is the sandbox child: it sets up every layer, in order, on
// one locked OS thread, starts the command from that thread and stays as
// its supervisor (pid 1 of the sandbox's pid namespace): it answers the
// seccomp filter's refusals and reports them, reaps every process, and
// when the command ends it exits, which takes down everything left in the
// namespace. It dies with its launcher (parent-death signal).
func childMain() {
	runtime.LockOSThread()
	// Every catchable signal is taken and dropped: as pid 1 of its pid
	// namespace the child receives from the commands only the signals it
	// handles, and a command must not end its supervisor (and with it
	// the report of its refused calls). The commands start with the
	// default dispositions (exec resets handled signals).
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	go func() {
		for range sigs {
		}
	}()
	_, _ = unix.FcntlInt(proto.ChildStatusFD, unix.F_SETFD, unix.FD_CLOEXEC)
	status := os.NewFile(proto.ChildStatusFD, "status")
	var (
		rep   proto.ChildReport
		repMu sync.Mutex
	)
	send := func() {
		repMu.Lock()
		b, _ := json.Marshal(rep)
		repMu.Unlock()
		_, _ = status.Write(append(b, '\n'))
	}
	fail := func(l sandbox.Layer, err error) {
		rep.Enforced = nil
		rep.FailedLayer, rep.Failure = string(l), err.Error()
		send()
		fmt.Fprintf(os.Stderr, "reins/sandbox: local-hardened: required layer %s unavailable: %v; the command did not run\n", l, err)
		os.Exit(sandbox.ExitUnavailable)
	}

	pf := os.NewFile(proto.ChildPolicyFD, "policy")
	data, err := io.ReadAll(pf)
	pf.Close()
	var p proto.ChildPolicy
	if err == nil {
		err = json.Unmarshal(data, &p)
	}
	if err != nil || len(p.Args) == 0 {
		fail(sandbox.Layer("policy"), fmt.Errorf("reading the policy from the parent: %v", err))
	}
	sim := func(l sandbox.Layer) bool {
		for _, s := range p.Simulate {
			if s == string(l) {
				return true
			}
		}
		return false
	}
	errSimulated := errors.New("simulated as missing (Config.SimulateMissing)")
	missing := func(l sandbox.Layer, err error) {
		if !p.BestEffort {
			fail(l, err)
		}
		rep.Missing = append(rep.Missing, string(l))
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s not enforced: %v", l, err))
	}
	enforce := func(l sandbox.Layer) { rep.Enforced = append(rep.Enforced, string(l)) }

	// 0. Lifetime: this process dies with its launcher (the parent set
	// the parent-death signal; it is armed again after the identity
	// change, which clears it); nobody may read its memory or
	// descriptors through /proc; without a pid namespace it adopts what
	// the command leaves behind, to kill it.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if !p.PIDNS {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}

	// 1. Namespaces (created by the parent's clone) and the private,
	// read-only mount tree.
	mounted := false
	if p.UserNS {
		enforce(sandbox.LayerUserNS)
	}
	switch {
	case !p.MountNS && sim(sandbox.LayerMountNS):
		missing(sandbox.LayerMountNS, errSimulated)
	case !p.MountNS:
		missing(sandbox.LayerMountNS, errors.New("no private mount namespace: user namespaces are unavailable and the caller is not root"))
	default:
		if err := setupMounts(&p); err != nil {
			missing(sandbox.LayerMountNS, err)
		} else {
			enforce(sandbox.LayerMountNS)
			mounted = true
		}
	}
	// The command's TMPDIR and HOME: on the private /tmp, or the empty
	// directories the parent made in the run directory.
	tmpDir, home := p.Tmp, p.Home
	if mounted {
		tmpDir, home = sandboxTmp, sandboxHome
		if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
			fail(sandbox.LayerMountNS, fmt.Errorf("creating the private HOME: %w", err))
		}
		if p.RunAs {
			for _, d := range []string{home, filepath.Join(home, ".cache")} {
				if err := os.Lchown(d, p.RunUID, p.RunGID); err != nil {
					fail(sandbox.LayerMountNS, fmt.Errorf("giving the private HOME to uid %d: %w", p.RunUID, err))
				}
			}
		}
	}
	p.Writable = append(p.Writable, tmpDir)
	if !fspath.Within(home, tmpDir) {
		p.Writable = append(p.Writable, home)
	}
	defaults := []string{"TMPDIR=" + tmpDir, "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	p.Env = envlist.Build(p.Env, append(append(defaults, p.CacheEnv...), p.CmdEnv...), nil)
	if p.PIDNS {
		enforce(sandbox.LayerPIDNS)
	}
	// A run without its own IPC namespace would reach the host's System
	// V segments, semaphores and queues: required, as the mount
	// namespace is.
	switch {
	case p.IPCNS:
		enforce(sandbox.LayerIPCNS)
	case sim(sandbox.LayerIPCNS):
		missing(sandbox.LayerIPCNS, errSimulated)
	default:
		missing(sandbox.LayerIPCNS, errors.New("no private IPC namespace: the command would reach the host's System V IPC objects"))
	}
	if p.NetNS {
		enforce(sandbox.LayerNetNS)
	}
	if p.Confine {
		enforce(sandbox.LayerConfine)
	}

	lr := layerReport{
		sim: sim, enforce: enforce, missing: missing, fail: fail,
		warn: func(w string) { rep.Warnings = append(rep.Warnings, w) },
		abi:  func(v int) { rep.LandlockABI = v },
	}

	// 2. Process-wide layers: resource limits, and descriptors other
	// than stdio closing at exec.
	if sim(sandbox.LayerRlimits) {
		missing(sandbox.LayerRlimits, errSimulated)
	} else if err := setLimits(p.Limits); err != nil {
		missing(sandbox.LayerRlimits, err)
	} else {
		enforce(sandbox.LayerRlimits)
	}
	if sim(sandbox.LayerFDs) {
		missing(sandbox.LayerFDs, errSimulated)
	} else if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		missing(sandbox.LayerFDs, fmt.Errorf("close_range: %w", err))
	} else {
		enforce(sandbox.LayerFDs)
	}

	if p.Launcher {
		// A launcher: this thread keeps the launcher's parent-death
		// signal and its privileges in the namespace; each run's command
		// is started from a thread of its own, confined (step 3) once
		// the run's /tmp is made, ahead of the request (see serve).
		enforce(sandbox.LayerSession)
		serve(&p, mounted, tmpDir, home, lr, func() {
			repMu.Lock()
			rep.Ready = true
			repMu.Unlock()
			send()
			status.Close()
		})
	}

	// 3. The layers of the thread that starts the command: this one.
	listener := confineThread(&p, lr)
	// The identity change cleared the parent-death signal: arm it again,
	// then make sure the launcher did not die in between (its end of the
	// status pipe would be closed).
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		fail(sandbox.LayerSession, fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", err))
	}
	if launcherGone(proto.ChildStatusFD) {
		os.Exit(sandbox.ExitUnavailable)
	}
	enforce(sandbox.LayerSession)

	if p.Probe {
		rep.ProbeOK = true
		send()
		os.Exit(0)
	}

	// 8. Start the command from this thread, in a session of its own.
	execFail := func(code int, err error) {
		rep.ExecError = err.Error()
		send()
		fmt.Fprintf(os.Stderr, "reins/sandbox: local-hardened: %v\n", err)
		os.Exit(code)
	}
	if err := unix.Chdir(p.Dir); err != nil {
		execFail(sandbox.ExitUnavailable, fmt.Errorf("chdir %s: %w", p.Dir, err))
	}
	path, err := envlist.LookPath(p.Args[0], p.Dir, p.Env)
	if err != nil {
		execFail(sandbox.ExitUnavailable, err)
	}
	if listener >= 0 {
		go seccomp.Supervise(seccomp.Native, listener, func(pid, nr uint32, what string) {
			repMu.Lock()
			if len(rep.Refused) < maxRefusals {
				rep.Refused = append(rep.Refused, what)
			}
			repMu.Unlock()
		})
	}
	pid, err := syscall.ForkExec(path, p.Args, &syscall.ProcAttr{
		Dir: p.Dir, Env: p.Env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		code := sandbox.ExitDenied
		if errors.Is(err, unix.ENOENT) {
			code = sandbox.ExitUnavailable
		}
		execFail(code, fmt.Errorf("exec %s: %w", path, err))
	}
	repMu.Lock()
	rep.Started = true
	repMu.Unlock()
	send()

	// 9. Reap until the command ends; then end everything it left.
	var ws unix.WaitStatus
	for {
		var st unix.WaitStatus
		got, err := unix.Wait4(-1, &st, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			break
		}
		if got == pid {
			ws = st
			break
		}
	}
	if !p.PIDNS {
		killLeftovers(pid)
	}
	code := ws.ExitStatus()
	repMu.Lock()
	rep.Ended = true
	if ws.Signaled() {
		rep.CmdSignal = int(ws.Signal())
		code = 128 + int(ws.Signal())
	}
	rep.CmdExit = code
	repMu.Unlock()
	send()
	os.Exit(code)
}

// layerReport is how a confinement step says what it did: enforce(l)
// for a layer in force, missing(l, err) for one that is not (which ends
// the set-up unless the sandbox is best-effort), fail(l, err) for a
// failure that always does, warn for a warning and abi for the Landlock
// ABI in force; sim(l) reports a layer simulated as missing.
type layerReport struct {
	sim     func(sandbox.Layer) bool
	enforce func(sandbox.Layer)
	missing func(sandbox.Layer, error)
	fail    func(sandbox.Layer, error)
	warn    func(string)
	abi     func(int)
}

// confineThread applies to the calling thread, which must be locked to
// its goroutine and run nothing afterwards but the start of the command,
// the layers that belong to a thread and that a fork inherits: every
// capability dropped (and, for a root launcher, the workspace owner's
// identity), no_new_privs, Landlock at the detected ABI, and the seccomp
// filter. It returns the descriptor of the filter's listener, or -1.
func confineThread(p *proto.ChildPolicy, r layerReport) (listener int) {
	errSimulated := errors.New("simulated as missing (Config.SimulateMissing)")
	// Capabilities, and for a root launcher the workspace owner's
	// identity: the bounding set goes first (that needs CAP_SETPCAP),
	// then the uid changes, then every remaining set is cleared.
	if r.sim(sandbox.LayerCaps) {
		r.missing(sandbox.LayerCaps, errSimulated)
	} else if err := dropCaps(func() error {
		if !p.RunAs {
			return nil
		}
		if err := switchIdentity(p.RunUID, p.RunGID); err != nil {
			r.fail(sandbox.LayerIdentity, err)
			return err
		}
		r.enforce(sandbox.LayerIdentity)
		return nil
	}); err != nil {
		r.missing(sandbox.LayerCaps, err)
	} else {
		r.enforce(sandbox.LayerCaps)
	}

	// no_new_privs.
	if r.sim(sandbox.LayerNoNewPrivs) {
		r.missing(sandbox.LayerNoNewPrivs, errSimulated)
	} else if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		r.missing(sandbox.LayerNoNewPrivs, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err))
	} else {
		r.enforce(sandbox.LayerNoNewPrivs)
	}

	// Landlock at the detected ABI, with the rules of the paths as they
	// are now (a fresh /tmp is a new inode).
	abi := detectLandlockABI()
	switch {
	case r.sim(sandbox.LayerLandlock):
		r.missing(sandbox.LayerLandlock, errSimulated)
	case abi < p.MinLandlockABI:
		r.missing(sandbox.LayerLandlock, fmt.Errorf("kernel Landlock ABI is %d, at least %d is required", abi, p.MinLandlockABI))
	default:
		if err := applyLandlock(p, abi); err != nil {
			r.missing(sandbox.LayerLandlock, err)
		} else {
			r.enforce(sandbox.LayerLandlock)
			r.abi(min(abi, len(landlockPresets)))
		}
	}

	// seccomp, with a listener when the kernel offers one: the process
	// answers every refusal and reports it.
	listener = -1
	if r.sim(sandbox.LayerSeccomp) {
		r.missing(sandbox.LayerSeccomp, errSimulated)
	} else if fd, warn, err := installSeccomp(p.DenyNetwork); err != nil {
		r.missing(sandbox.LayerSeccomp, err)
	} else {
		r.enforce(sandbox.LayerSeccomp)
		listener = fd
		if warn != "" {
			r.warn(warn)
		}
	}
	return listener
}

// maxRefusals bounds the refused system calls one run reports.
const maxRefusals = 64

// sandboxHome is the command's private HOME inside the mount namespace.
const sandboxHome = "/tmp/home"

// launcherGone reports whether the read end of the status pipe, held by
// the launcher, is closed.
func launcherGone(statusFD int) bool {
	fds := []unix.PollFd{{Fd: int32(statusFD), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}

// switchIdentity makes the calling thread (and what it starts) run as
// uid and gid with no supplementary group but gid. It changes this
// thread only, on purpose: the command is started from it.
func switchIdentity(uid, gid int) error {
	groups := []uint32{uint32(gid)}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 1, uintptr(unsafe.Pointer(&groups[0])), 0); e != 0 {
		return fmt.Errorf("setgroups(%d): %w", gid, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setresgid(%d): %w", gid, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setresuid(%d): %w", uid, e)
	}
	return nil
}

// killLeftovers, without a pid namespace, kills the command's session
// and every process this subreaper adopted, and reaps them, for a
// bounded number of rounds.
func killLeftovers(pid int) {
	_ = unix.Kill(-pid, unix.SIGKILL)
	for round := 0; round < 50; round++ {
		kids := childPIDs()
		if len(kids) == 0 {
			return
		}
		for _, k := range kids {
			_ = unix.Kill(k, unix.SIGKILL)
		}
		for {
			var st unix.WaitStatus
			if got, err := unix.Wait4(-1, &st, unix.WNOHANG, nil); err != nil || got <= 0 {
				break
			}
		}
	}
}

// childPIDs lists the children of every thread of this process.
func childPIDs() []int {
	tasks, _ := os.ReadDir("/proc/self/task")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// setupMounts builds the sandbox's file-system view in the private mount
// namespace: a fresh tmpfs root holding read-only binds of the system
// paths, writable binds of the workspace and temp dirs, a minimal /dev, a
// /proc, masks over denied paths and read-only .git directories; then it
// pivots into it and makes every mount read-only except the writable
// ones.
func setupMounts(p *proto.ChildPolicy) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	nr := p.RunDir
	if err := unix.Mount("tmpfs", nr, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mounting the new root: %w", err)
	}
	// The mask source of files lives on the new root's tmpfs: an empty,
	// read-only file, in a directory nobody may list. A masked file reads
	// as empty, so that tools walking the workspace (grep -r, find, tar)
	// go on; a masked directory gets an empty tmpfs of its own.
	maskDir := filepath.Join(nr, ".reins-masks")
	maskFile := filepath.Join(maskDir, "file")
	if err := os.Mkdir(maskDir, 0o755); err != nil {
		return fmt.Errorf("creating the mask sources: %w", err)
	}
	if err := os.WriteFile(maskFile, nil, 0o444); err != nil {
		return fmt.Errorf("creating the mask sources: %w", err)
	}
	if err := os.Chmod(maskFile, 0o444); err != nil {
		return fmt.Errorf("creating the mask sources: %w", err)
	}
	if err := os.Chmod(maskDir, 0o111); err != nil {
		return fmt.Errorf("creating the mask sources: %w", err)
	}
	// The place where a launcher assembles a fresh /tmp or /dev/shm
	// between runs; nothing grants a command access to it.
	if err := os.Mkdir(filepath.Join(nr, holdDir), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", holdDir, err)
	}
	// A private /tmp, writable, discarded with the namespace; binds below
	// /tmp land on it.
	if err := os.MkdirAll(filepath.Join(nr, sandboxTmp), 0o755); err != nil {
		return fmt.Errorf("creating /tmp: %w", err)
	}
	if err := unix.Mount("tmpfs", filepath.Join(nr, sandboxTmp), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=512m"); err != nil {
		return fmt.Errorf("mounting /tmp: %w", err)
	}
	var links []string
	p.ReadOnly = coveredReadOnly(p.ReadOnly, p.Writable)
	binds := append(append([]string(nil), p.Writable...), p.ReadOnly...)
	sort.Strings(binds)
	for _, src := range binds {
		fi, err := os.Lstat(src)
		if err != nil {
			continue // a listed path that does not exist is skipped
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			links = append(links, src)
			continue
		}
		if err := bindInto(nr, src, fi.IsDir()); err != nil {
			return err
		}
	}
	for _, l := range links {
		target, err := os.Readlink(l)
		if err != nil {
			return fmt.Errorf("reading symlink %s: %w", l, err)
		}
		dst := filepath.Join(nr, l)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dst, err)
		}
		if err := os.Symlink(target, dst); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating symlink %s: %w", dst, err)
		}
	}

	// /dev: a few harmless device nodes, the usual symlinks, a private shm.
	dev := filepath.Join(nr, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return fmt.Errorf("creating /dev: %w", err)
	}
	for _, n := range devNodes {
		if _, err := os.Stat("/dev/" + n); err != nil {
			continue
		}
		if err := bindInto(nr, "/dev/"+n, false); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("creating /dev/%s: %w", name, err)
		}
	}
	// A private /dev/shm, unless the host's is a writable path (then it
	// is already bound).
	shm := filepath.Join(dev, "shm")
	if !slices.Contains(p.Writable, "/dev/shm") {
		if err := os.Mkdir(shm, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating /dev/shm: %w", err)
		}
		if err := unix.Mount("tmpfs", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=64m"); err != nil {
			return fmt.Errorf("mounting /dev/shm: %w", err)
		}
	}

	// /proc: a fresh one in a new pid namespace, else the host's.
	proc := filepath.Join(nr, "proc")
	if err := os.Mkdir(proc, 0o555); err != nil {
		return fmt.Errorf("creating /proc: %w", err)
	}
	procErr := errors.New("no pid namespace")
	if p.PIDNS {
		procErr = unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	if procErr != nil {
		if err := unix.Mount("/proc", proc, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding /proc: %w", err)
		}
	}

	// Pins: the existing entries of a directory where a Confine lets the
	// command create files, each cloned onto itself (a symbolic link
	// included: the clone of a link is a link) to be made read-only, so
	// that it cannot be written, removed or replaced.
	var pinned []string
	for _, pin := range p.Pins {
		dst := filepath.Join(nr, pin)
		if _, err := os.Lstat(dst); err != nil {
			continue // not visible in the sandbox
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, dst, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return fmt.Errorf("pinning %s: %w", pin, err)
		}
		err = unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("pinning %s: %w", pin, err)
		}
		pinned = append(pinned, pin)
	}

	// Masks over denied paths; .git bound onto itself to be made
	// read-only. A writable path below a masked directory is bound again
	// inside the mask (an explicit grant is narrower than the denial).
	var masked, reopened []string
	for _, m := range p.Masks {
		dst := filepath.Join(nr, m)
		fi, err := os.Lstat(dst)
		if err != nil {
			continue // not visible in the sandbox
		}
		if fi.IsDir() {
			if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k"); err != nil {
				return fmt.Errorf("masking %s: %w", m, err)
			}
			for _, w := range p.Writable {
				if w == m || !fspath.Within(w, m) {
					continue
				}
				wfi, err := os.Stat(w)
				if err != nil {
					continue
				}
				if err := bindInto(nr, w, wfi.IsDir()); err != nil {
					return err
				}
				reopened = append(reopened, w)
			}
		} else if err := unix.Mount(maskFile, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("masking %s: %w", m, err)
		}
		masked = append(masked, m)
	}
	for _, g := range p.GitReadOnly {
		dst := filepath.Join(nr, g)
		if _, err := os.Lstat(dst); err != nil {
			continue
		}
		if err := unix.Mount(dst, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding %s read-only: %w", g, err)
		}
		masked = append(masked, g)
	}

	// Pivot into the new root and drop the old one.
	if err := unix.Chdir(nr); err != nil {
		return fmt.Errorf("chdir to the new root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}

	// Everything read-only; then, outermost first so that the innermost
	// wins, each writable bind writable and each read-only bind, pin,
	// mask and .git read-only again (recursively: a path's setting covers
	// what is mounted below it, until a deeper one overrides it). A mask
	// inside a writable bind, a pin inside a create grant and a grant
	// inside a pin each come after what holds them.
	if err := setReadOnly("/", true, true); err != nil {
		return err
	}
	type attr struct {
		path string
		ro   bool
	}
	attrs := []attr{{sandboxTmp, false}, {"/dev/shm", false}}
	for _, w := range p.Writable {
		attrs = append(attrs, attr{w, false})
	}
	for _, r := range p.ReadOnly {
		if fi, err := os.Lstat(r); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			attrs = append(attrs, attr{r, true})
		}
	}
	for _, l := range [][]string{pinned, masked} {
		for _, m := range l {
			attrs = append(attrs, attr{m, true})
		}
	}
	for _, w := range reopened {
		attrs = append(attrs, attr{w, false})
	}
	sort.SliceStable(attrs, func(i, j int) bool {
		return strings.Count(attrs[i].path, "/") < strings.Count(attrs[j].path, "/")
	})
	for _, a := range attrs {
		if err := setReadOnly(a.path, a.ro, true); err != nil {
			if err2 := setReadOnly(a.path, a.ro, false); err2 != nil {
				return err
			}
		}
	}
	return nil
}

// coveredReadOnly drops the read-only paths that a recursive bind of
// another read-only path already shows read-only (/usr/bin under /usr),
// unless a writable path lies between them. Symlinks are kept: they are
// recreated, not bound.
func coveredReadOnly(ro, writable []string) []string {
	var out []string
	for _, r := range ro {
		covered := false
		for _, a := range ro {
			if a == r || !fspath.Within(r, a) {
				continue
			}
			if fi, err := os.Lstat(a); err != nil || fi.Mode()&os.ModeSymlink != 0 {
				continue
			}
			between := false
			for _, w := range writable {
				if fspath.Within(w, a) && fspath.Within(r, w) {
					between = true
				}
			}
			if !between {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, r)
		}
	}
	return out
}

// sandboxTmp is the private temporary directory inside the mount
// namespace.
const sandboxTmp = "/tmp"

// devNodes are the device files visible in the sandbox.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// bindInto bind-mounts src onto the same path below newRoot, creating the
// mount point in the new root's tmpfs when it is not already there.
func bindInto(newRoot, src string, dir bool) error {
	dst := filepath.Join(newRoot, src)
	if dir {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("creating mount point %s: %w", dst, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("creating mount point %s: %w", dst, err)
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return fmt.Errorf("creating mount point %s: %w", dst, err)
		}
		f.Close()
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", src, err)
	}
	return nil
}

// setReadOnly sets or clears the read-only attribute of the mount at
// path, recursively if asked.
func setReadOnly(path string, ro, recursive bool) error {
	attr := unix.MountAttr{}
	if ro {
		attr.Attr_set = unix.MOUNT_ATTR_RDONLY
	} else {
		attr.Attr_clr = unix.MOUNT_ATTR_RDONLY
	}
	// A pin may be a symbolic link: its own mount, never its target's.
	flags := uint(unix.AT_SYMLINK_NOFOLLOW)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, path, flags, &attr); err != nil {
		verb := "read-only"
		if !ro {
			verb = "writable"
		}
		return fmt.Errorf("making %s %s: %w", path, verb, err)
	}
	return nil
}

// dropCaps empties the bounding, ambient, inheritable, permitted and
// effective capability sets of the calling thread. between runs after the
// bounding set is dropped and before the other sets are cleared (the
// identity change goes there: it needs CAP_SETUID, and clears the
// permitted set itself).
func dropCaps(between func() error) error {
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == nil || errors.Is(err, unix.EINVAL) {
			continue
		}
		if errors.Is(err, unix.EPERM) && !haveCaps() {
			break // no CAP_SETPCAP, and nothing to drop: exec grants nothing under no_new_privs
		}
		return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
	}
	if between != nil {
		if err := between(); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if haveCaps() {
		return errors.New("capabilities still present after capset")
	}
	return nil
}

// haveCaps reports whether the calling thread has any permitted,
// effective or inheritable capability.
func haveCaps() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return true
	}
	for _, d := range data {
		if d.Effective != 0 || d.Permitted != 0 || d.Inheritable != 0 {
			return true
		}
	}
	return false
}

// landlockPresets are go-landlock's configurations by ABI version; the
// sandbox takes the handled access rights of the detected ABI from them.
var landlockPresets = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// detectLandlockABI returns the kernel's Landlock ABI version, 0 if none.
func detectLandlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// Landlock access-right groups, intersected with what the ABI handles.
const (
	llRead      = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	llFileOnly  = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	llReadWrite = llRead | ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
		ll.AccessFSMakeSym | ll.AccessFSTruncate | ll.AccessFSRefer
)

// applyLandlock restricts the calling thread (and what it executes) to
// the read-only and writable paths of p, at the detected ABI, with
// go-landlock's presets and on this thread only: the command is executed
// from it, and no other thread of the process ever runs anything else.
// Read and execute are allowed beneath the read-only paths (and /proc),
// everything beneath the writable ones, read and write of the device
// nodes and, with a mount namespace, everything in /dev/shm. With the
// network denied, TCP (and, from ABI 10, UDP) bind and connect are
// denied too; from ABI 6 signals and abstract UNIX sockets are scoped to
// the sandbox.
func applyLandlock(p *proto.ChildPolicy, abi int) error {
	preset := landlockPresets[min(abi, len(landlockPresets))-1]
	attr := ll.RulesetAttr{
		HandledAccessFS: uint64(preset.HandledAccessFS),
		Scoped:          uint64(preset.Scoped),
	}
	if p.DenyNetwork {
		attr.HandledAccessNet = uint64(preset.HandledAccessNet)
	}
	rulesetFD, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset at ABI %d: %w", abi, err)
	}
	defer unix.Close(rulesetFD)
	handled := attr.HandledAccessFS
	add := func(path string, access uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			return nil // not visible in the sandbox: nothing to allow
		}
		if err != nil {
			return fmt.Errorf("landlock: opening %s: %w", path, err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("landlock: stat %s: %w", path, err)
		}
		access &= handled
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= llFileOnly
		}
		if err := ll.LandlockAddPathBeneathRule(rulesetFD, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0); err != nil {
			return fmt.Errorf("landlock: rule for %s: %w", path, err)
		}
		return nil
	}
	for _, r := range append(append([]string(nil), p.ReadOnly...), "/proc") {
		if err := add(r, llRead); err != nil {
			return err
		}
	}
	for _, w := range p.Writable {
		if err := add(w, llReadWrite); err != nil {
			return err
		}
	}
	for _, n := range devNodes {
		if err := add("/dev/"+n, ll.AccessFSReadFile|ll.AccessFSWriteFile); err != nil {
			return err
		}
	}
	if p.MountNS {
		if err := add("/dev/shm", llReadWrite); err != nil {
			return err
		}
	}
	if err := ll.LandlockRestrictSelf(rulesetFD, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// installSeccomp installs the filter on the calling thread. It returns
// the listener descriptor of the refusals (-1 when the kernel cannot
// notify, with a warning saying that refusals go unreported).
func installSeccomp(denyNetwork bool) (listener int, warning string, err error) {
	prog, err := seccomp.Build(seccomp.Native, seccomp.Options{DenyNetwork: denyNetwork, Notify: true})
	if err != nil {
		return -1, "", err
	}
	fd, lerr := seccomp.InstallListener(prog)
	if lerr == nil {
		return fd, "", nil
	}
	prog, err = seccomp.Build(seccomp.Native, seccomp.Options{DenyNetwork: denyNetwork})
	if err != nil {
		return -1, "", err
	}
	if err := seccomp.Install(prog); err != nil {
		return -1, "", err
	}
	return -1, "seccomp refusals are not reported (no user-notification listener: " + lerr.Error() + ")", nil
}

// setLimits applies the configured limits and disables core dumps.
func setLimits(l proto.Limits) error {
	set := func(res int, v uint64, name string) error {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setrlimit(%s, %d): %w", name, v, err)
		}
		return nil
	}
	if err := set(unix.RLIMIT_CORE, 0, "RLIMIT_CORE"); err != nil {
		return err
	}
	for _, x := range []struct {
		res  int
		v    uint64
		name string
	}{
		{unix.RLIMIT_CPU, l.CPUSeconds, "RLIMIT_CPU"},
		{unix.RLIMIT_FSIZE, l.FileSize, "RLIMIT_FSIZE"},
		{unix.RLIMIT_AS, l.AddressSpace, "RLIMIT_AS"},
		{unix.RLIMIT_NOFILE, l.OpenFiles, "RLIMIT_NOFILE"},
		{unix.RLIMIT_NPROC, l.Processes, "RLIMIT_NPROC"},
	} {
		if x.v == 0 {
			continue
		}
		if err := set(x.res, x.v, x.name); err != nil {
			return err
		}
	}
	return nil
}
