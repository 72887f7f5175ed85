//go:build linux

package hardened

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/proto"
)

// A stub is a launcher's child made ahead of a run: forked from the
// launcher's confined thread (so it holds the identity, the capability
// drop, no_new_privs, the seccomp filter and the launcher's Landlock
// layer), it executes this binary again, applies the run's own Landlock
// layer, with the rules of the paths as they are after the reset (a
// fresh /tmp is a new inode, which a rule made before it cannot name),
// and waits. When the run's request arrives it executes the command at
// once: the command costs an exec, as a plain run does.
type stub struct {
	pid int
	fd  int // the launcher's end of the socket (SOCK_SEQPACKET)
}

// maxStubMessage bounds one message between a launcher and its stub.
const maxStubMessage = proto.MaxRequest + 4096

// startStub forks and executes a stub from the calling thread, which
// must be the launcher's confined thread, sends it its rules and waits
// until they are in force. devNull is the stub's stdin and stdout until
// it executes the command; its stderr is the launcher's.
func startStub(rules proto.StubRules, devNull int) (*stub, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("stub socket: %w", err)
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{proto.StubArg0}, &syscall.ProcAttr{
		Dir: "/", Env: []string{},
		Files: []uintptr{uintptr(devNull), uintptr(devNull), 2, uintptr(fds[1])},
		Sys:   &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	unix.Close(fds[1])
	if err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("starting the stub: %w", err)
	}
	s := &stub{pid: pid, fd: fds[0]}
	b, _ := json.Marshal(rules)
	if err := unix.Sendmsg(s.fd, b, nil, nil, 0); err != nil {
		s.kill()
		return nil, fmt.Errorf("sending the stub its rules: %w", err)
	}
	r, err := s.reply()
	switch {
	case err != nil:
		s.kill()
		return nil, fmt.Errorf("the stub did not apply its rules: %w", err)
	case r.Failure != "":
		s.kill()
		return nil, errors.New(r.Failure)
	case !r.Ready:
		s.kill()
		return nil, errors.New("the stub did not say it was ready")
	}
	return s, nil
}

// reply reads one message from the stub; io.EOF when it closed its end
// (it executed the command, or died).
func (s *stub) reply() (proto.StubReply, error) {
	var r proto.StubReply
	buf := make([]byte, 64<<10)
	for {
		n, _, _, _, err := unix.Recvmsg(s.fd, buf, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return r, err
		}
		if n == 0 {
			return r, errEOF
		}
		if err := json.Unmarshal(buf[:n], &r); err != nil {
			return r, fmt.Errorf("malformed message from the stub: %w", err)
		}
		return r, nil
	}
}

var errEOF = errors.New("the stub closed its socket")

// exec hands the stub the command and its descriptors, and reports
// whether it executed it: pid is the command's pid (the stub's), or the
// error and exit code of a command that did not start. The stub is used
// up either way.
func (s *stub) exec(e proto.StubExec, files [3]int) (pid, code int, err error) {
	defer unix.Close(s.fd)
	b, err := json.Marshal(e)
	if err != nil {
		s.kill()
		return 0, sandbox.ExitUnavailable, err
	}
	if len(b) > maxStubMessage {
		s.kill()
		return 0, sandbox.ExitUnavailable, fmt.Errorf("the command's arguments and environment take %d bytes, more than %d", len(b), maxStubMessage)
	}
	if err := unix.Sendmsg(s.fd, b, unix.UnixRights(files[0], files[1], files[2]), nil, 0); err != nil {
		s.kill()
		return 0, sandbox.ExitUnavailable, fmt.Errorf("handing the command to the stub: %w", err)
	}
	execing := false
	for {
		r, err := s.reply()
		switch {
		case errors.Is(err, errEOF) && execing:
			return s.pid, 0, nil // executed: the socket closed on exec
		case err != nil:
			s.kill()
			return 0, sandbox.ExitUnavailable, fmt.Errorf("the stub ended before it executed the command: %w", err)
		case r.ExecError != "":
			s.kill()
			code := r.ExecCode
			if code == 0 {
				code = sandbox.ExitUnavailable
			}
			return 0, code, errors.New(r.ExecError)
		case r.Exec:
			execing = true
		}
	}
}

// kill ends a stub that will not run a command, and reaps it.
func (s *stub) kill() {
	_ = unix.Kill(s.pid, unix.SIGKILL)
	var st unix.WaitStatus
	for {
		if _, err := unix.Wait4(s.pid, &st, 0, nil); !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// close ends an unused stub and releases its socket.
func (s *stub) close() {
	s.kill()
	unix.Close(s.fd)
}

// stubMain is a stub's life: apply the rules, wait for the command,
// execute it. It never returns.
func stubMain() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if _, err := unix.FcntlInt(proto.StubFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		os.Exit(sandbox.ExitUnavailable)
	}
	send := func(r proto.StubReply) {
		b, _ := json.Marshal(r)
		_ = unix.Sendmsg(proto.StubFD, b, nil, nil, 0)
	}
	buf := make([]byte, maxStubMessage)
	oob := make([]byte, unix.CmsgSpace(3*4))
	recv := func() (int, int, error) {
		for {
			n, oobn, _, _, err := unix.Recvmsg(proto.StubFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
			if !errors.Is(err, unix.EINTR) {
				return n, oobn, err
			}
		}
	}
	n, _, err := recv()
	if err != nil || n == 0 {
		os.Exit(sandbox.ExitUnavailable)
	}
	var rules proto.StubRules
	if err := json.Unmarshal(buf[:n], &rules); err != nil {
		send(proto.StubReply{Failure: "malformed rules: " + err.Error()})
		os.Exit(sandbox.ExitUnavailable)
	}
	// ABI 0: Landlock is not in force (a best-effort sandbox without it).
	if err := stubLandlock(rules); err != nil {
		send(proto.StubReply{Failure: "applying the run's Landlock rules: " + err.Error()})
		os.Exit(sandbox.ExitUnavailable)
	}
	send(proto.StubReply{Ready: true})

	n, oobn, err := recv()
	if err != nil || n == 0 {
		os.Exit(0) // the launcher let it go
	}
	fail := func(code int, err error) {
		send(proto.StubReply{ExecError: err.Error(), ExecCode: code})
		os.Exit(code)
	}
	var e proto.StubExec
	if err := json.Unmarshal(buf[:n], &e); err != nil || len(e.Args) == 0 {
		fail(sandbox.ExitUnavailable, fmt.Errorf("malformed command: %v", err))
	}
	files, err := parseRights(oob[:oobn])
	if err != nil {
		fail(sandbox.ExitUnavailable, err)
	}
	path, err := envlist.LookPath(e.Args[0], e.Dir, e.Env)
	if err != nil {
		fail(sandbox.ExitUnavailable, err)
	}
	if err := unix.Chdir(e.Dir); err != nil {
		fail(sandbox.ExitUnavailable, fmt.Errorf("chdir %s: %w", e.Dir, err))
	}
	for i, fd := range files {
		if err := unix.Dup3(fd, i, 0); err != nil && fd != i {
			fail(sandbox.ExitUnavailable, fmt.Errorf("dup3: %w", err))
		}
	}
	for _, fd := range files {
		if fd > 2 {
			unix.Close(fd)
		}
	}
	send(proto.StubReply{Exec: true})
	err = syscall.Exec(path, e.Args, e.Env)
	code := sandbox.ExitDenied
	if errors.Is(err, unix.ENOENT) {
		code = sandbox.ExitUnavailable
	}
	fail(code, fmt.Errorf("exec %s: %w", path, err))
}

// stubLandlock applies the run's Landlock layer, unless rules say that
// Landlock is not in force (ABI 0).
func stubLandlock(rules proto.StubRules) error {
	if rules.ABI == 0 {
		return nil
	}
	return restrictLandlock(rules.ABI, true, rules.ReadOnly, rules.Writable, rules.MountNS, rules.DenyNetwork)
}

// parseRights returns the three descriptors of a control message.
func parseRights(oob []byte) ([3]int, error) {
	files := [3]int{-1, -1, -1}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return files, err
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
		return files, fmt.Errorf("the command came with %d descriptors, want 3", got)
	}
	return files, nil
}
