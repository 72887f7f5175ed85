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
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/proto"
	"github.com/reins-go/reins/sandbox/internal/seccomp"
)

// serve is a launcher's life after its set-up. Every command is started
// from a stub (see stub_linux.go) that the calling thread (locked, and
// confined like the commands: identity, capabilities, no_new_privs, the
// launcher's Landlock layer and seccomp are this thread's, and a fork
// inherits them) makes ahead of the run; the stub adds the run's
// Landlock layer (rules, nil when Landlock is not in force) and waits.
// ready reports the set-up to the host once the first stub is ready;
// fail reports a set-up that could not make one. Then one command per
// request on the control socket is executed by the stub, waited for,
// and everything it left is killed; the private /tmp, HOME and /dev/shm
// are made again, fresh, and a new stub is made before the next one. It
// never returns: the launcher exits when the host closes the socket, or
// dies with the host.
func serve(p *proto.ChildPolicy, listener int, mounted bool, tmpDir, home string, rules *proto.StubRules, ready func(), fail func(error)) {
	rs, err := newResetter(p, mounted, tmpDir, home)
	if err != nil {
		fail(err)
	}
	devNull, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		fail(fmt.Errorf("opening %s: %w", os.DevNull, err))
	}
	stubRules := proto.StubRules{}
	if rules != nil {
		stubRules = *rules
	}
	// Stubs are forked on this thread only; the control goroutine asks
	// for them.
	stubs := make(chan chan stubResult)
	newStub := func() (*stub, error) {
		done := make(chan stubResult, 1)
		stubs <- done
		r := <-done
		return r.s, r.err
	}
	var (
		mu      sync.Mutex
		refused []string
	)
	if listener >= 0 {
		go seccomp.Supervise(seccomp.Native, listener, func(pid, nr uint32, what string) {
			mu.Lock()
			if len(refused) < maxRefusals {
				refused = append(refused, what)
			}
			mu.Unlock()
		})
	}
	first := make(chan error, 1)
	ctrl := os.NewFile(proto.ChildControlFD, "control")
	go func() {
		next, err := newStub()
		first <- err
		if err != nil {
			select {} // fail exits the process
		}
		w := bufio.NewWriter(ctrl)
		reply := func(r proto.RunReply) {
			b, _ := json.Marshal(r)
			_, _ = w.Write(append(b, '\n'))
			if w.Flush() != nil {
				os.Exit(0)
			}
		}
		for {
			req, files, err := readRequest(ctrl)
			if err != nil {
				// The host closed the socket (or broke the protocol):
				// the launcher ends, and its namespace with it.
				next.close()
				os.Exit(0)
			}
			mu.Lock()
			refused = nil
			mu.Unlock()
			env := envlist.Build(p.Env, req.CmdEnv, nil)
			pid, code, err := next.exec(proto.StubExec{Args: req.Args, Dir: req.Dir, Env: env}, files)
			for _, fd := range files {
				unix.Close(fd)
			}
			if err != nil {
				reply(proto.RunReply{ExecError: err.Error(), ExecCode: code})
			} else {
				reply(proto.RunReply{Started: true})
				ws := waitFor(pid)
				endAll(pid, p.PIDNS)
				end := proto.RunReply{Ended: true, CmdExit: ws.ExitStatus()}
				if ws.Signaled() {
					end.CmdSignal = int(ws.Signal())
					end.CmdExit = 128 + int(ws.Signal())
				}
				mu.Lock()
				end.Refused, refused = refused, nil
				mu.Unlock()
				reply(end)
			}
			// Reset while the host reads the output and scans, then make
			// the next run's stub.
			if err := rs.reset(); err != nil {
				reply(proto.RunReply{Retire: err.Error()})
				os.Exit(0)
			}
			if next, err = newStub(); err != nil {
				reply(proto.RunReply{Retire: "making the next run's stub: " + err.Error()})
				os.Exit(0)
			}
			reply(proto.RunReply{Ready: true})
		}
	}()
	go func() {
		if err := <-first; err != nil {
			fail(fmt.Errorf("making the first run's stub: %w", err))
		}
		ready()
	}()
	for done := range stubs {
		s, err := startStub(stubRules, devNull)
		done <- stubResult{s, err}
	}
}

// stubResult is a stub made on the confined thread, or why it failed.
type stubResult struct {
	s   *stub
	err error
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
