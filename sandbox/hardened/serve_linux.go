//go:build linux

package hardened

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/proto"
	"github.com/reins-go/reins/sandbox/internal/seccomp"
)

// serve is a launcher's life after its set-up. Each run's command is
// started from a thread of its own, made and confined (confineThread:
// capabilities, identity, no_new_privs, Landlock, seccomp) ahead of the
// run, once the run's private /tmp, HOME and /dev/shm are made: its
// Landlock rules name them as they are. When the request arrives the
// thread forks and executes the command at once, in a session of its
// own, and stays until the run is over (the command's parent-death
// signal is tied to it); then it ends with its goroutine, its
// confinement with it. The first thread's confinement is the set-up's
// report (lr); ready then reports the set-up to the host. After each run
// everything the command left is killed, the private directories are
// made again, fresh, and the next run's thread is confined before the
// launcher says it is ready. It never returns: the launcher exits when
// the host closes the socket, or dies with the host.
func serve(p *proto.ChildPolicy, mounted bool, tmpDir, home string, lr layerReport, ready func()) {
	rs, err := newResetter(p, mounted, tmpDir, home)
	if err != nil {
		lr.fail(sandbox.LayerMountNS, err)
	}
	var missingAtSetUp []sandbox.Layer
	first := lr
	first.missing = func(l sandbox.Layer, err error) {
		missingAtSetUp = append(missingAtSetUp, l)
		lr.missing(l, err)
	}
	next, err := newRunThread(p, first)
	if err != nil {
		lr.fail(sandbox.LayerSession, err)
	}
	// The later threads must be confined as the first was: a layer that
	// goes missing retires the launcher.
	later := func() (*runThread, error) {
		var lost error
		r := layerReport{
			sim:     lr.sim,
			enforce: func(sandbox.Layer) {},
			missing: func(l sandbox.Layer, err error) {
				if !slices.Contains(missingAtSetUp, l) && lost == nil {
					lost = fmt.Errorf("layer %s: %w", l, err)
				}
			},
			fail: func(l sandbox.Layer, err error) {
				if lost == nil {
					lost = fmt.Errorf("layer %s: %w", l, err)
				}
			},
			warn: func(string) {}, abi: func(int) {},
		}
		t, err := newRunThread(p, r)
		if err == nil && lost != nil {
			t.end()
			err = lost
		}
		return t, err
	}
	ready()
	for {
		// The run's thread reads the request and starts the command
		// itself: one hand-over fewer before the command runs.
		r := next.serve(p.Env)
		if r.err != nil {
			next.end()
			reply(proto.RunReply{ExecError: r.err.Error(), ExecCode: r.code})
		} else {
			// The run's thread said Started as soon as the command was
			// forked.
			ws := waitFor(r.pid)
			endAll(r.pid, p.PIDNS)
			next.end()
			// Every refusal of the command was reported before it was
			// answered, and the command has ended: the list is whole.
			end := proto.RunReply{Ended: true, CmdExit: ws.ExitStatus(), Refused: next.refusals()}
			if ws.Signaled() {
				end.CmdSignal = int(ws.Signal())
				end.CmdExit = 128 + int(ws.Signal())
			}
			reply(end)
		}
		// Reset while the host reads the output and scans, then confine
		// the next run's thread.
		if err := rs.reset(); err != nil {
			reply(proto.RunReply{Retire: err.Error()})
			os.Exit(0)
		}
		if next, err = later(); err != nil {
			reply(proto.RunReply{Retire: "confining the next run's thread: " + err.Error()})
			os.Exit(0)
		}
		reply(proto.RunReply{Ready: true})
	}
}

// ctrl is the launcher's end of the control socket; reply writes one
// reply line on it (only one goroutine writes at a time: the run's
// thread before the command starts, serve's after).
var (
	ctrl    = os.NewFile(proto.ChildControlFD, "control")
	ctrlW   = bufio.NewWriter(ctrl)
	replyMu sync.Mutex
)

func reply(r proto.RunReply) {
	replyMu.Lock()
	defer replyMu.Unlock()
	b, _ := json.Marshal(r)
	_, _ = ctrlW.Write(append(b, '\n'))
	if ctrlW.Flush() != nil {
		os.Exit(0)
	}
}

// runThread is the confined thread of one run.
type runThread struct {
	servec   chan []string // the launcher's environment, to serve one request
	startedc chan spawnResult
	endc     chan struct{}
	mu       sync.Mutex
	refused  []string
}

type spawnResult struct {
	pid  int
	code int // exit code when err is set
	err  error
}

// newRunThread makes a goroutine locked to a thread of its own, confines
// the thread with r reporting, and supervises its seccomp filter. The
// thread ends with the run (end).
func newRunThread(p *proto.ChildPolicy, r layerReport) (*runThread, error) {
	t := &runThread{servec: make(chan []string), startedc: make(chan spawnResult, 1), endc: make(chan struct{})}
	confined := make(chan int, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, and its
		// confinement with it.
		runtime.LockOSThread()
		confined <- confineThread(p, r)
		select {
		case base := <-t.servec:
			t.startedc <- serveOne(base)
		case <-t.endc:
			return
		}
		<-t.endc
	}()
	listener := <-confined
	if listener >= 0 {
		go func() {
			defer unix.Close(listener)
			seccomp.Supervise(seccomp.Native, listener, func(pid, nr uint32, what string) {
				t.mu.Lock()
				if len(t.refused) < maxRefusals {
					t.refused = append(t.refused, what)
				}
				t.mu.Unlock()
			})
		}()
	}
	return t, nil
}

// serve has the thread read one request and start its command; base is
// the environment the request's is laid over.
func (t *runThread) serve(base []string) spawnResult {
	t.servec <- base
	return <-t.startedc
}

// end ends the thread; the caller has ended every process it started.
func (t *runThread) end() {
	select {
	case <-t.endc:
	default:
		close(t.endc)
	}
}

// refusals returns the refused calls the thread's supervisor reported.
func (t *runThread) refusals() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.refused...)
}

// serveOne reads one request on the control socket and starts its
// command from the calling (confined) thread; a broken socket ends the
// launcher.
func serveOne(base []string) spawnResult {
	req, files, err := readRequest(ctrl)
	if err != nil {
		// The host closed the socket (or broke the protocol): the
		// launcher ends, and its namespace with it.
		os.Exit(0)
	}
	r := spawn(envlist.Build(base, req.CmdEnv, nil), req, files)
	for _, fd := range files {
		unix.Close(fd)
	}
	if r.err == nil {
		reply(proto.RunReply{Started: true})
	}
	return r
}

// spawn starts one command from the calling (confined) thread, in a
// session of its own, dying with this thread.
func spawn(env []string, req proto.RunRequest, files [3]int) spawnResult {
	path, err := envlist.LookPath(req.Args[0], req.Dir, env)
	if err != nil {
		return spawnResult{code: sandbox.ExitUnavailable, err: err}
	}
	pid, err := syscall.ForkExec(path, req.Args, &syscall.ProcAttr{
		Dir: req.Dir, Env: env, Files: []uintptr{uintptr(files[0]), uintptr(files[1]), uintptr(files[2])},
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		code := sandbox.ExitDenied
		if errors.Is(err, unix.ENOENT) {
			code = sandbox.ExitUnavailable
		}
		return spawnResult{code: code, err: fmt.Errorf("exec %s: %w", path, err)}
	}
	return spawnResult{pid: pid}
}

// readRequest reads one request: the length, the descriptors and the
// JSON text.
func readRequest(ctrl *os.File) (proto.RunRequest, [3]int, error) {
	var req proto.RunRequest
	files := [3]int{-1, -1, -1}
	hdr := make([]byte, 8)
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := unix.Recvmsg(int(ctrl.Fd()), hdr, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return req, files, err
	}
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return req, files, err
		}
		got := 0
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, fd := range fds {
				if got < 3 {
					files[got] = fd
				} else {
					unix.Close(fd)
				}
				got++
			}
		}
		if got != 3 {
			return req, files, fmt.Errorf("a request carries %d descriptors, want 3", got)
		}
	}
	if n == 0 {
		return req, files, io.EOF
	}
	if _, err := io.ReadFull(ctrl, hdr[n:]); err != nil {
		return req, files, err
	}
	size := binary.LittleEndian.Uint64(hdr)
	if size > proto.MaxRequest || files[0] < 0 {
		return req, files, fmt.Errorf("malformed request (%d bytes)", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(ctrl, body); err != nil {
		return req, files, err
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Args) == 0 {
		return req, files, fmt.Errorf("malformed request: %v", err)
	}
	return req, files, nil
}

// waitFor reaps children (the command's orphans come here too) until
// pid ends, and returns its status.
func waitFor(pid int) unix.WaitStatus {
	for {
		var st unix.WaitStatus
		got, err := unix.Wait4(-1, &st, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || got == pid {
			return st
		}
	}
}

// endAll kills and reaps everything the command left. As pid 1 of the
// launcher's pid namespace, which holds nothing but this run, that is
// every other process in it; without a pid namespace, the command's
// session and what this subreaper adopted.
func endAll(pid int, pidNS bool) {
	if !pidNS || os.Getpid() != 1 {
		killLeftovers(pid)
		return
	}
	for {
		_ = unix.Kill(-1, unix.SIGKILL)
		var st unix.WaitStatus
		_, err := unix.Wait4(-1, &st, 0, nil)
		if errors.Is(err, unix.ECHILD) {
			return
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// resetter makes again, fresh, what one run may have changed in a
// launcher: the private /tmp (HOME is in it) and /dev/shm, each a new
// tmpfs (new inodes: no mode, owner, time or extended attribute of the
// last run survives), with the binds below /tmp moved over; without a
// mount namespace, the host directories of TMPDIR and HOME, removed and
// created again. It removes the System V IPC objects of the launcher's
// IPC namespace, and checks that every bind inside a writable path is
// still where it was.
type resetter struct {
	p       *proto.ChildPolicy
	mounted bool
	tmp     string
	home    string
	shm     string // "" when /dev/shm is the host's (a writable path)
	// ids are the binds' identities, checked after each run.
	ids map[string]fileID
}

type fileID struct {
	dev, ino uint64
	mnt      uint64
}

func idOf(p string) (fileID, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return fileID{}, err
	}
	return fileID{dev: uint64(st.Dev_major)<<32 | uint64(st.Dev_minor), ino: st.Ino, mnt: st.Mnt_id}, nil
}

func newResetter(p *proto.ChildPolicy, mounted bool, tmpDir, home string) (*resetter, error) {
	rs := &resetter{p: p, mounted: mounted, tmp: tmpDir, home: home, ids: map[string]fileID{}}
	if mounted {
		if !contains(p.Writable, "/dev/shm") {
			rs.shm = "/dev/shm"
		}
		var all []string
		for _, l := range [][]string{p.Writable, p.ReadOnly, p.Masks, p.GitReadOnly, p.Pins} {
			all = append(all, l...)
		}
		for _, b := range all {
			if b == tmpDir || b == home || !insideWritable(b, p.Writable) {
				// A bind whose parent is the read-only root cannot be
				// moved by a command; only those inside writable paths
				// are checked.
				continue
			}
			id, err := idOf(b)
			if err != nil {
				continue // not visible in the sandbox
			}
			rs.ids[b] = id
		}
	}
	return rs, nil
}

// reset makes the private directories again for the next run. An error
// means the launcher must not serve another one.
func (rs *resetter) reset() error {
	if rs.mounted {
		if err := freshTmpfs(rs.tmp, "mode=1777,size=512m", unix.MS_NOSUID|unix.MS_NODEV); err != nil {
			return fmt.Errorf("making a fresh /tmp: %w", err)
		}
		if rs.shm != "" {
			if err := freshTmpfs(rs.shm, "mode=1777,size=64m", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC); err != nil {
				return fmt.Errorf("making a fresh /dev/shm: %w", err)
			}
		}
	} else {
		// The host directories of TMPDIR and HOME: removed and created
		// again (Landlock's rules of the next run name the new ones).
		for _, d := range []string{rs.tmp, rs.home} {
			if err := os.RemoveAll(d); err != nil {
				return fmt.Errorf("removing %s: %w", d, err)
			}
			if err := os.Mkdir(d, 0o700); err != nil {
				return fmt.Errorf("creating %s: %w", d, err)
			}
			if rs.p.RunAs {
				if err := os.Lchown(d, rs.p.RunUID, rs.p.RunGID); err != nil {
					return fmt.Errorf("giving %s to uid %d: %w", d, rs.p.RunUID, err)
				}
			}
		}
	}
	for b, want := range rs.ids {
		if got, err := idOf(b); err != nil || got != want {
			return fmt.Errorf("%s is no longer the path the sandbox bound there", b)
		}
	}
	for _, d := range []string{rs.home, filepath.Join(rs.home, ".cache")} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating the private HOME: %w", err)
		}
		if rs.p.RunAs {
			if err := os.Lchown(d, rs.p.RunUID, rs.p.RunGID); err != nil {
				return fmt.Errorf("giving the private HOME to uid %d: %w", rs.p.RunUID, err)
			}
		}
	}
	if rs.p.IPCNS {
		removeSysVIPC()
	}
	return nil
}

// holdDir is an empty directory on the sandbox's root file system where
// a fresh tmpfs is assembled before it replaces the old one.
const holdDir = "/.reins-next"

// maxTmpMounts bounds the mounts below a private tmpfs that a reset
// moves to the fresh one.
const maxTmpMounts = 4096

// freshTmpfs replaces the tmpfs mounted at dir with a fresh one (data and
// flags as given), moving every mount below the old one (the binds of
// paths under /tmp) to the same place in the new one. The new one is
// assembled at holdDir and then moved to dir, so that dir is never
// without its binds while a run could see it (none runs during a reset).
func freshTmpfs(dir, data string, flags uintptr) error {
	id, err := idOf(dir)
	if err != nil {
		return err
	}
	children, err := childMounts(id.mnt)
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", holdDir, "tmpfs", flags, data); err != nil {
		return fmt.Errorf("mounting a tmpfs at %s: %w", holdDir, err)
	}
	undo := func() { _ = unix.Unmount(holdDir, unix.MNT_DETACH) }
	for _, c := range children {
		rel, ok := strings.CutPrefix(c, dir+"/")
		if !ok {
			undo()
			return fmt.Errorf("mount %s is not below %s", c, dir)
		}
		dst := filepath.Join(holdDir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			undo()
			return err
		}
		fi, err := os.Lstat(c)
		if err != nil {
			undo()
			return err
		}
		if fi.IsDir() {
			err = os.Mkdir(dst, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil {
			undo()
			return fmt.Errorf("making the mount point %s: %w", dst, err)
		}
		if err := unix.Mount(c, dst, "", unix.MS_MOVE, ""); err != nil {
			undo()
			return fmt.Errorf("moving %s: %w", c, err)
		}
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the old %s: %w", dir, err)
	}
	if err := unix.Mount(holdDir, dir, "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("moving the fresh %s into place: %w", dir, err)
	}
	return nil
}

// childMounts returns the mount points of the mounts whose parent is the
// mount with id parent, from /proc/self/mountinfo.
func childMounts(parent uint64) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if pid, err := strconv.ParseUint(f[1], 10, 64); err != nil || pid != parent {
			continue
		}
		if id, err := strconv.ParseUint(f[0], 10, 64); err == nil && id == parent {
			continue
		}
		out = append(out, unescapeMountinfo(f[4]))
		if len(out) > maxTmpMounts {
			return nil, fmt.Errorf("more than %d mounts below the private directory", maxTmpMounts)
		}
	}
	return out, nil
}

// unescapeMountinfo undoes the octal escapes of a mountinfo path (\040
// for a space, \011, \012, \134).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// insideWritable reports whether p lies strictly inside one of the
// writable paths.
func insideWritable(p string, writable []string) bool {
	for _, w := range writable {
		if p != w && fspath.Within(p, w) {
			return true
		}
	}
	return false
}

// removeSysVIPC removes the System V shared memory segments, semaphore
// sets and message queues of this (private) IPC namespace.
func removeSysVIPC() {
	if sysVIPCCount() == 0 {
		return
	}
	for _, k := range []struct {
		file string
		rm   func(id int)
	}{
		{"/proc/sysvipc/shm", func(id int) { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) }},
		{"/proc/sysvipc/sem", func(id int) { _, _, _ = unix.Syscall(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID) }},
		{"/proc/sysvipc/msg", func(id int) { _, _, _ = unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0) }},
	} {
		b, err := os.ReadFile(k.file)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for _, l := range lines[min(1, len(lines)):] {
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			if id, err := strconv.Atoi(f[1]); err == nil {
				k.rm(id)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sysVIPCCount is the number of System V IPC objects in this IPC
// namespace (shm_info.used_ids, seminfo.semusz, msginfo.msgpool), or -1
// when it cannot be told.
func sysVIPCCount() int {
	// The *_INFO commands of shmctl(2), semctl(2) and msgctl(2).
	const shmInfo, semInfo, msgInfo = 14, 19, 12
	var shm, sem, msg [16]int32
	if _, _, e := unix.Syscall(unix.SYS_SHMCTL, 0, shmInfo, uintptr(unsafe.Pointer(&shm[0]))); e != 0 {
		return -1
	}
	if _, _, e := unix.Syscall6(unix.SYS_SEMCTL, 0, 0, semInfo, uintptr(unsafe.Pointer(&sem[0])), 0, 0); e != 0 {
		return -1
	}
	if _, _, e := unix.Syscall(unix.SYS_MSGCTL, 0, msgInfo, uintptr(unsafe.Pointer(&msg[0]))); e != 0 {
		return -1
	}
	return int(shm[0]) + int(sem[7]) + int(msg[0])
}
