//go:build linux

package hardened

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"

	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/proc"
	"github.com/reins-go/reins/sandbox/internal/proto"
)

// A launcher is the sandbox child of one Sandbox, started once and kept:
// it sets up the namespaces, the mount tree, the identity, the
// capability drop, no_new_privs, Landlock and the seccomp filter once,
// on the thread it starts commands from, and then forks each command
// already confined (a fork inherits all of it), instead of the Go binary
// being executed again for every command. It serves one command at a
// time: as pid 1 of its pid namespace, it kills everything the command
// left when it ends, and it empties its private /tmp, HOME and /dev/shm
// before the next one. A Sandbox holds a few idle launchers (one when
// runs do not overlap) and starts another when all are busy.
//
// A launcher's mount tree masks the protected paths that existed when
// it started. Every run scans the writable directories first, as the
// one-shot child did; when what the scan finds (the paths, and their
// identity on disk) differs from the launcher's, the launcher is
// replaced by a new one.
type launcher struct {
	key    string
	cmd    *exec.Cmd
	conn   *net.UnixConn
	rd     *bufio.Reader
	conf   sandbox.Confinement
	runDir string
	exited chan struct{}
	stderr *proc.CappedBuffer
	// pending: the launcher still owes the line that says it is ready
	// for another run (it resets after it reported the end of a run).
	pending bool
}

// maxIdle bounds the idle launchers a Sandbox keeps.
const maxIdle = 4

// readyTimeout bounds how long a host waits for a launcher's set-up or
// reset.
const readyTimeout = 30 * time.Second

// launchers is the pool of a Sandbox. It refers to nothing in the
// Sandbox, so that a Sandbox that is garbage collected without Close
// still ends its launchers.
type launchers struct {
	mu     sync.Mutex
	idle   []*launcher
	closed bool
}

func (ls *launchers) close() {
	ls.mu.Lock()
	idle := ls.idle
	ls.idle, ls.closed = nil, true
	ls.mu.Unlock()
	for _, l := range idle {
		l.retire()
	}
}

// take returns an idle launcher with key, retiring idle ones whose key
// is stale.
func (ls *launchers) take(key string) *launcher {
	ls.mu.Lock()
	var stale []*launcher
	var got *launcher
	keep := ls.idle[:0]
	for _, l := range ls.idle {
		switch {
		case got == nil && l.key == key:
			got = l
		case l.key != key:
			stale = append(stale, l)
		default:
			keep = append(keep, l)
		}
	}
	ls.idle = keep
	ls.mu.Unlock()
	for _, l := range stale {
		l.retire()
	}
	return got
}

// put returns l to the pool, or retires it.
func (ls *launchers) put(l *launcher) {
	ls.mu.Lock()
	if !ls.closed && len(ls.idle) < maxIdle {
		ls.idle = append(ls.idle, l)
		l = nil
	}
	ls.mu.Unlock()
	if l != nil {
		l.retire()
	}
}

// retire ends the launcher, and with it its namespace and every process
// in it, and removes its host directory.
func (l *launcher) retire() {
	if l.cmd.Process != nil {
		_ = l.cmd.Process.Kill()
	}
	l.conn.Close()
	<-l.exited
	os.RemoveAll(l.runDir)
}

// ready reads the line a launcher owes after a run: ready, or retiring.
func (l *launcher) ready() error {
	if !l.pending {
		return nil
	}
	_ = l.conn.SetReadDeadline(time.Now().Add(readyTimeout))
	defer l.conn.SetReadDeadline(time.Time{})
	r, err := l.reply()
	if err != nil {
		return err
	}
	if r.Retire != "" {
		return errors.New(r.Retire)
	}
	l.pending = false
	return nil
}

// reply reads one reply line.
func (l *launcher) reply() (proto.RunReply, error) {
	var r proto.RunReply
	line, err := l.rd.ReadSlice('\n')
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("malformed reply from the launcher: %w", err)
	}
	return r, nil
}

// launcherKey names what a launcher's mount tree depends on: the
// protected paths found before the run, the writable directories and
// what a Confine made read-only or pinned, each with its identity on
// disk (a file replaced by another of the same name is not covered by a
// mask or a pin over the old one), the network switch, and the
// environment the launcher passes on. A given confinement reuses its
// launcher.
func (h *Sandbox) launcherKey(pol runPolicy, env []string) string {
	var b strings.Builder
	add := func(tag string, paths []string) {
		for _, p := range paths {
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				fmt.Fprintf(&b, "%s %q -\n", tag, p)
				continue
			}
			fmt.Fprintf(&b, "%s %q %d:%d\n", tag, p, st.Dev, st.Ino)
		}
	}
	add("m", pol.masks)
	add("r", pol.protectedRO)
	add("w", pol.writable)
	add("o", pol.readOnly)
	add("p", pol.pins)
	fmt.Fprintf(&b, "n %v c %v\n", pol.denyNet, pol.confine)
	for _, kv := range env {
		fmt.Fprintf(&b, "e %q\n", kv)
	}
	return b.String()
}

// acquire returns a ready launcher for key, started if need be. When
// none can be started it returns the result and error of a run that did
// not happen.
func (h *Sandbox) acquire(ctx context.Context, key string, pol runPolicy, env []string) (*launcher, sandbox.Result, error) {
	for {
		l := h.pool.take(key)
		if l == nil {
			break
		}
		if err := l.ready(); err == nil {
			return l, sandbox.Result{}, nil
		}
		l.retire()
	}
	return h.startLauncher(ctx, key, pol, env)
}

// startLauncher starts a launcher and waits for its set-up report.
func (h *Sandbox) startLauncher(ctx context.Context, key string, pol runPolicy, env []string) (*launcher, sandbox.Result, error) {
	conf := sandbox.Confinement{Backend: backendName}
	unavailable := func(reason string) (*launcher, sandbox.Result, error) {
		res, err := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Reason: reason})
		return nil, res, err
	}
	runDir, err := os.MkdirTemp("", "reins-hardened-")
	if err != nil {
		return unavailable("creating the run directory: " + err.Error())
	}
	p, err := h.childPolicy(runDir, pol)
	if err != nil {
		os.RemoveAll(runDir)
		return unavailable("preparing the launcher: " + err.Error())
	}
	p.Env = env
	p.Launcher, p.Args = true, []string{"launcher"}

	useUserNS := !h.simulated(sandbox.LayerUserNS) && !h.noUserNS.Load()
	l, rep, err := h.spawnLauncher(ctx, p, h.nsAttr(&p, useUserNS))
	if err != nil && useUserNS && isNamespaceErr(err) {
		h.noUserNS.Store(true)
		l, rep, err = h.spawnLauncher(ctx, p, h.nsAttr(&p, false))
	}
	if err != nil {
		os.RemoveAll(runDir)
		return unavailable("starting the sandbox launcher: " + err.Error())
	}
	l.key, l.runDir = key, runDir
	conf = h.confinement(rep, p)
	if rep.FailedLayer != "" || rep.Failure != "" || !rep.Ready {
		l.retire()
		conf.Enforced = nil
		reason := rep.Failure
		if reason == "" {
			reason = fmt.Sprintf("the sandbox launcher exited during its set-up: %s", strings.TrimSpace(string(l.stderr.Bytes())))
		}
		res, uerr := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Layer: sandbox.Layer(rep.FailedLayer), Reason: reason})
		res.Stderr = append(l.stderr.Bytes(), res.Stderr...)
		return nil, res, uerr
	}
	if conf.Has(sandbox.LayerMountNS) {
		// The launcher's root is mounted: the host directory is no
		// longer in use, and is removed now rather than left behind if
		// this process is killed.
		os.RemoveAll(runDir)
	}
	l.conf = conf
	h.starts.Add(1)
	return l, sandbox.Result{}, nil
}

// spawnLauncher starts the launcher process: the policy on a pipe, the
// set-up report on another, and the control socket.
func (h *Sandbox) spawnLauncher(ctx context.Context, p proto.ChildPolicy, attr *syscall.SysProcAttr) (*launcher, proto.ChildReport, error) {
	var rep proto.ChildReport
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, rep, err
	}
	policyR, policyW, err := os.Pipe()
	if err != nil {
		return nil, rep, err
	}
	defer policyR.Close()
	defer policyW.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, rep, err
	}
	defer statusR.Close()
	defer statusW.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, rep, err
	}
	hostEnd, childEnd := os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control")
	defer childEnd.Close()
	fc, err := net.FileConn(hostEnd)
	hostEnd.Close()
	if err != nil {
		return nil, rep, err
	}
	conn := fc.(*net.UnixConn)

	l := &launcher{conn: conn, rd: bufio.NewReaderSize(conn, 64<<10), exited: make(chan struct{}), stderr: &proc.CappedBuffer{Max: 64 << 10}}
	l.cmd = &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{proto.ChildArg0},
		Dir:         "/",
		Env:         []string{},
		Stderr:      l.stderr,
		ExtraFiles:  []*os.File{policyR, statusW, childEnd},
		SysProcAttr: attr,
	}
	if err := l.cmd.Start(); err != nil {
		conn.Close()
		return nil, rep, err
	}
	go func() { _ = l.cmd.Wait(); close(l.exited) }()
	policyR.Close()
	statusW.Close()
	childEnd.Close()

	reports := make(chan proto.ChildReport, 1)
	go func() {
		var last proto.ChildReport
		sc := bufio.NewScanner(statusR)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var r proto.ChildReport
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				last = r
				if r.Ready || r.FailedLayer != "" || r.Failure != "" {
					break
				}
			}
		}
		reports <- last
	}()
	if _, err := policyW.Write(payload); err != nil {
		// The launcher died before it read its policy; its report (or
		// its absence) says why.
		_ = err
	}
	policyW.Close()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case rep = <-reports:
	case <-ctx.Done():
		_ = l.cmd.Process.Kill()
		rep.Failure = "cancelled during the sandbox set-up: " + ctx.Err().Error()
	case <-timer.C:
		_ = l.cmd.Process.Kill()
		rep.Failure = "the sandbox launcher did not complete its set-up in " + readyTimeout.String()
	}
	if !rep.Ready {
		<-l.exited // its stderr is complete
	}
	return l, rep, nil
}

// probeFast makes sure a launcher can be started (and keeps it).
func (h *Sandbox) probeFast(ctx context.Context, pol runPolicy) (sandbox.Result, error) {
	env := envlist.Build(os.Environ(), nil, h.envAllow)
	l, res, err := h.acquire(ctx, h.launcherKey(pol, env), pol, env)
	if l == nil {
		return res, err
	}
	conf := l.conf
	h.pool.put(l)
	return sandbox.Result{Confinement: conf}, nil
}

// runFast runs cmd through a launcher.
func (h *Sandbox) runFast(ctx context.Context, cmd sandbox.Command, dir string, pol runPolicy) (sandbox.Result, error) {
	env := envlist.Build(os.Environ(), nil, h.envAllow)
	key := h.launcherKey(pol, env)
	l, res, err := h.acquire(ctx, key, pol, env)
	if l == nil {
		// A run whose context ended while its launcher was set up timed
		// out before it started.
		res.TimedOut = ctx.Err() != nil
		return res, err
	}
	conf := l.conf
	conf.Enforced = append([]sandbox.Layer(nil), conf.Enforced...)
	conf.Missing = append([]sandbox.Layer(nil), conf.Missing...)
	conf.Warnings = append(append([]string(nil), conf.Warnings...), pol.warnings...)
	before := protectedSet(pol.masks, pol.protectedRO)
	failed := func(reason string) (sandbox.Result, error) {
		l.retire()
		conf.Enforced = nil
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Reason: reason})
	}

	// The command's descriptors.
	var stdin *os.File
	var stdinW *os.File
	switch in := cmd.Stdin.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return failed("opening " + os.DevNull + ": " + err.Error())
		}
		defer f.Close()
		stdin = f
	case *os.File:
		stdin = in
	default:
		r, w, err := os.Pipe()
		if err != nil {
			return failed("creating the stdin pipe: " + err.Error())
		}
		defer r.Close()
		stdin, stdinW = r, w
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return failed("creating the output pipes: " + err.Error())
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return failed("creating the output pipes: " + err.Error())
	}
	body, err := json.Marshal(proto.RunRequest{Args: cmd.Args, Dir: dir, CmdEnv: cmd.Env})
	if err == nil && len(body) > proto.MaxRequest {
		err = fmt.Errorf("the command's arguments and environment take %d bytes, more than %d", len(body), proto.MaxRequest)
	}
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		if stdinW != nil {
			stdinW.Close()
		}
		h.pool.put(l)
		res, uerr := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Reason: err.Error()})
		return res, uerr
	}
	msg := make([]byte, 8, 8+len(body))
	binary.LittleEndian.PutUint64(msg, uint64(len(body)))
	msg = append(msg, body...)
	rights := unix.UnixRights(int(stdin.Fd()), int(outW.Fd()), int(errW.Fd()))

	start := time.Now()
	_, _, err = l.conn.WriteMsgUnix(msg, rights, nil)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if stdinW != nil {
			stdinW.Close()
		}
		return failed("sending the command to the sandbox launcher: " + err.Error())
	}
	if stdinW != nil {
		go func() {
			_, _ = io.Copy(stdinW, cmd.Stdin)
			stdinW.Close()
		}()
	}
	stdout, stderr := &proc.CappedBuffer{Max: maxOutput(cmd)}, &proc.CappedBuffer{Max: maxOutput(cmd)}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer wg.Done(); _, _ = io.Copy(stderr, errR) }()

	// The replies are read here, under the run's deadline; a context
	// that ends first moves the deadline to now.
	_ = l.conn.SetReadDeadline(start.Add(timeout(cmd)))
	cancelled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = l.conn.SetReadDeadline(time.Now())
		close(cancelled)
	})
	var (
		end      proto.RunReply
		timedOut bool
		lost     error
		started  bool
	)
	for {
		r, err := l.reply()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			timedOut = true
			break
		}
		if err != nil {
			lost = err
			break
		}
		if r.Started {
			started = true
			continue
		}
		end = r
		break
	}
	if !stop() {
		<-cancelled // the deadline it set is cleared below
	}
	_ = l.conn.SetReadDeadline(time.Time{})
	duration := time.Since(start)
	reuse := !timedOut && lost == nil
	if !reuse {
		// Killing the launcher ends its pid namespace: the command and
		// everything it started die with it.
		l.retire()
	}
	if stdinW != nil && !reuse {
		stdinW.Close()
	}
	deadline := time.Now().Add(proc.DrainGrace)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	wg.Wait()
	outR.Close()
	errR.Close()

	res = sandbox.Result{
		Stdout:          stdout.Bytes(),
		Stderr:          stderr.Bytes(),
		StdoutTruncated: stdout.Truncated(),
		StderrTruncated: stderr.Truncated(),
		TimedOut:        timedOut,
		Duration:        duration,
		Confinement:     conf,
	}
	created := h.createdProtected(before)
	switch {
	case timedOut:
		res.ExitCode = 128 + int(syscall.SIGKILL)
	case lost != nil:
		// The launcher died (killed from outside, or by the command):
		// whatever the command did, its status is unknown.
		res.Confinement.Enforced = nil
		what := "before it reported the command's start"
		if started {
			what = "before the command ended"
		}
		reason := fmt.Sprintf("the sandbox launcher ended %s (%v)", what, lost)
		if msg := strings.TrimSpace(string(l.stderr.Bytes())); msg != "" {
			reason += ": " + msg
		}
		uerr := &sandbox.UnavailableError{Backend: backendName, Reason: reason}
		res.ExitCode = sandbox.ExitUnavailable
		res.Stderr = append(res.Stderr, []byte(uerr.Error()+"; the command's status is unknown\n")...)
		res.Violations = created
		return res, uerr
	case end.ExecError != "":
		res.ExitCode = end.ExecCode
		res.Stderr = append(res.Stderr, []byte("reins/sandbox: local-hardened: "+end.ExecError+"\n")...)
	default:
		res.ExitCode = end.CmdExit
	}
	violations(&res, end.Refused, end.CmdSignal == int(syscall.SIGSYS), created)
	if reuse {
		l.pending = true
		if len(created) > 0 {
			// The command created a protected path (reported above): a
			// new launcher masks it for the next run.
			l.retire()
		} else {
			h.pool.put(l)
		}
	}
	return res, nil
}

// pids lists the idle launchers' host pids.
func (ls *launchers) pids() []int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []int
	for _, l := range ls.idle {
		out = append(out, l.cmd.Process.Pid)
	}
	return out
}
