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
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/proto"
	"github.com/reins-go/reins/sandbox/internal/seccomp"
)

// spawnReq hands one command to the confined thread.
type spawnReq struct {
	req   proto.RunRequest
	files [3]int
	done  chan spawnResult
}

type spawnResult struct {
	pid  int
	code int // exit code when err is set
	err  error
}

// serve is a launcher's life after its set-up: ready reports the set-up
// to the host; then one command per request on the control socket is
// started from the calling thread (locked, and confined like the
// commands: identity, capabilities, no_new_privs, Landlock and seccomp
// are this thread's, and a fork inherits them), waited for, and
// everything it left is killed; the private /tmp, HOME and /dev/shm are
// emptied before the next one. It never returns: the launcher exits
// when the host closes the socket, or dies with the host.
func serve(p *proto.ChildPolicy, listener int, mounted bool, tmpDir, home string, ready func()) {
	rs, err := newResetter(p, mounted, tmpDir, home)
	if err != nil {
		fmt.Fprintf(os.Stderr, "reins/sandbox: local-hardened launcher: %v\n", err)
		os.Exit(sandbox.ExitUnavailable)
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
	spawns := make(chan spawnReq)
	ctrl := os.NewFile(proto.ChildControlFD, "control")
	go func() {
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
				os.Exit(0)
			}
			mu.Lock()
			refused = nil
			mu.Unlock()
			done := make(chan spawnResult, 1)
			spawns <- spawnReq{req: req, files: files, done: done}
			r := <-done
			for _, fd := range files {
				unix.Close(fd)
			}
			if r.err != nil {
				reply(proto.RunReply{ExecError: r.err.Error(), ExecCode: r.code})
			} else {
				reply(proto.RunReply{Started: true})
				ws := waitFor(r.pid)
				endAll(r.pid, p.PIDNS)
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
			// Reset while the host reads the output and scans.
			if err := rs.reset(); err != nil {
				reply(proto.RunReply{Retire: err.Error()})
				os.Exit(0)
			}
			reply(proto.RunReply{Ready: true})
		}
	}()
	ready()
	for s := range spawns {
		s.done <- spawn(p.Env, s.req, s.files)
	}
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

// spawn starts one command from the calling (confined) thread, in a
// session of its own, dying with this launcher.
func spawn(base []string, req proto.RunRequest, files [3]int) spawnResult {
	env := envlist.Build(base, req.CmdEnv, nil)
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

// resetter empties what one run may leave in a launcher: the private
// /tmp (HOME is below it), /dev/shm and System V IPC objects, and checks
// that every bind is still where it was.
type resetter struct {
	p      *proto.ChildPolicy
	tmp    string // emptied, but for the binds below it
	home   string
	shm    string // "" when /dev/shm is the host's (a writable path)
	leaves map[string]bool
	// dirs are the directories between tmp and the binds below it.
	dirs map[string]bool
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
	rs := &resetter{p: p, tmp: tmpDir, home: home, leaves: map[string]bool{}, dirs: map[string]bool{}, ids: map[string]fileID{}}
	// HOME and its cache directory are emptied, not removed.
	rs.dirs[home], rs.dirs[filepath.Join(home, ".cache")] = true, true
	if mounted {
		if !contains(p.Writable, "/dev/shm") {
			rs.shm = "/dev/shm"
		}
		var all []string
		for _, l := range [][]string{p.Writable, p.ReadOnly, p.Masks, p.GitReadOnly} {
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
			if b != tmpDir && fspath.Within(b, tmpDir) {
				rs.leaves[b] = true
				for d := filepath.Dir(b); d != tmpDir && fspath.Within(d, tmpDir); d = filepath.Dir(d) {
					rs.dirs[d] = true
				}
			}
		}
	}
	return rs, nil
}

// reset empties the private directories for the next run. An error
// means the launcher must not serve another one.
func (rs *resetter) reset() error {
	tmpID, err := idOf(rs.tmp)
	if err != nil {
		return fmt.Errorf("the private /tmp is gone: %w", err)
	}
	if err := rs.empty(rs.tmp, tmpID.mnt); err != nil {
		return err
	}
	if !fspath.Within(rs.home, rs.tmp) {
		// Without a mount namespace HOME is a directory of its own.
		if id, err := idOf(rs.home); err == nil {
			if err := rs.empty(rs.home, id.mnt); err != nil {
				return err
			}
		}
	}
	if rs.shm != "" {
		id, err := idOf(rs.shm)
		if err != nil {
			return fmt.Errorf("the private /dev/shm is gone: %w", err)
		}
		if err := rs.empty(rs.shm, id.mnt); err != nil {
			return err
		}
	}
	for b, want := range rs.ids {
		if got, err := idOf(b); err != nil || got != want {
			return fmt.Errorf("%s is no longer the path the sandbox bound there", b)
		}
	}
	for _, d := range []string{rs.home, filepath.Join(rs.home, ".cache")} {
		fi, err := os.Lstat(d)
		if errors.Is(err, os.ErrNotExist) {
			err = os.Mkdir(d, 0o700)
			if err == nil {
				fi, err = os.Lstat(d)
			}
		}
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("recreating the private HOME: %s: %v", d, err)
		}
		if fi.Mode().Perm() != 0o700 {
			if err := os.Chmod(d, 0o700); err != nil {
				return fmt.Errorf("resetting the private HOME: %w", err)
			}
		}
		if rs.p.RunAs {
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != rs.p.RunUID || int(st.Gid) != rs.p.RunGID {
				if err := os.Lchown(d, rs.p.RunUID, rs.p.RunGID); err != nil {
					return fmt.Errorf("giving the private HOME to uid %d: %w", rs.p.RunUID, err)
				}
			}
		}
	}
	if rs.p.PIDNS {
		removeSysVIPC()
	}
	return nil
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

// empty removes everything in dir but the binds below it and the
// directories that lead to them, never leaving the mount mnt.
func (rs *resetter) empty(dir string, mnt uint64) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		switch {
		case rs.leaves[p]:
		case rs.dirs[p]:
			fi, err := os.Lstat(p)
			if err != nil || !fi.IsDir() {
				return fmt.Errorf("%s is no longer a directory", p)
			}
			if err := rs.empty(p, mnt); err != nil {
				return err
			}
		default:
			if err := removeOnMount(p, mnt, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxResetDepth bounds the directory depth reset walks.
const maxResetDepth = 256

// removeOnMount removes p and what it holds, refusing to touch anything
// on a mount other than mnt (a bind moved there by a rename).
func removeOnMount(p string, mnt uint64, depth int) error {
	id, err := idOf(p)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("resetting %s: %w", p, err)
	}
	if id.mnt != mnt {
		return fmt.Errorf("%s is a mount the command moved", p)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("resetting %s: %w", p, err)
	}
	if fi.IsDir() {
		if depth >= maxResetDepth {
			return fmt.Errorf("resetting %s: deeper than %d directories", p, maxResetDepth)
		}
		names, err := readNames(p)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := removeOnMount(filepath.Join(p, n), mnt, depth+1); err != nil {
				return err
			}
		}
		if err := unix.Rmdir(p); err != nil {
			return fmt.Errorf("resetting %s: %w", p, err)
		}
		return nil
	}
	if err := unix.Unlink(p); err != nil {
		return fmt.Errorf("resetting %s: %w", p, err)
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("resetting %s: %w", dir, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("resetting %s: %w", dir, err)
	}
	return names, nil
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
