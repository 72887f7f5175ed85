package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reins-go/reins/examples/hook/internal/hookwire"
)

// A resident core: reins-hook (the front program, examples/hook/front) starts one per
// situation (this core binary, the call's arguments, environment, working directory, user and
// namespaces) and hands it each call of that situation over a Unix socket in the state
// directory, so that a tool call costs the start-up of a small program instead of this one's. It answers exactly as
// a core started for the call would, since it was started with the same arguments, environment
// and directory:
//
//   - calls are answered one at a time, each by the same code a started core runs;
//   - only a peer of the same user in the same user, mount and pid namespaces is answered (a
//     command the hardened sandbox runs is not: it cannot hand the hook a forged call);
//   - it ends after idle minutes without a call, when its socket is removed or replaced (the
//     state directory deleted), on SIGTERM, and after a panic (once that call is answered with
//     exit 2); on ending it first removes its socket, then answers every call already queued on
//     it, so that a front program either reaches it or starts another, never a closing one.
//
//	reins-hook-core daemon -socket PATH [-idle DURATION] -- CLIENT [flags]

// daemonPeerTimeout bounds how long a peer may take to send its call (the front program
// connects, then reads the call from its client) and to read the answer.
const daemonPeerTimeout = time.Minute

func runDaemon(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("daemon", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	sock := fs.String("socket", "", "the socket to answer on")
	idle := fs.Duration("idle", 10*time.Minute, "end after this long without a call")
	if err := fs.Parse(args); err != nil || *sock == "" || *idle <= 0 || fs.NArg() == 0 || clients[fs.Arg(0)] == nil {
		fmt.Fprintln(stderr, "reins hook: usage: daemon -socket PATH [-idle DURATION>0] -- claude|gemini|codex [flags]")
		return exitBlock
	}
	callArgs := fs.Args()
	// The call's own flags are checked now: a daemon for calls that cannot succeed is not kept.
	h, err := newHook(clients[callArgs[0]], callArgs[1:])
	if err != nil {
		fmt.Fprintf(stderr, "reins hook: daemon: %v\n", err)
		return exitBlock
	}
	if filepath.Clean(*sock) != *sock || filepath.Dir(*sock) != hookwire.DaemonDir(h.stateDir) || !strings.HasSuffix(*sock, ".sock") {
		fmt.Fprintf(stderr, "reins hook: daemon: the socket %s is not a socket path in %s\n", *sock, hookwire.DaemonDir(h.stateDir))
		return exitBlock
	}
	// A resident program collects its garbage.
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(256 << 20)
	residentLog = &keptLog{}
	defer residentLog.drop()
	d := &daemon{args: callArgs, sock: *sock, idle: *idle}
	if err := d.serve(ctx); err != nil {
		fmt.Fprintf(stderr, "reins hook: daemon: %v\n", err)
		return exitBlock
	}
	return 0
}

type daemon struct {
	args []string
	sock string
	idle time.Duration

	mu      sync.Mutex // one call at a time, as separate processes would be serialized by the run state's lock
	last    atomic.Int64
	wg      sync.WaitGroup
	cancel  context.CancelFunc
	selfNS  [3]string
	sockIno uint64
}

var nsKinds = [3]string{"user", "mnt", "pid"}

func (d *daemon) serve(ctx context.Context) error {
	dir := filepath.Dir(d.sock)
	if err := privateDir(dir); err != nil {
		return err
	}
	for i, k := range nsKinds {
		ns, err := os.Readlink("/proc/self/ns/" + k)
		if err != nil {
			return fmt.Errorf("reading this process's %s namespace: %v", k, err)
		}
		d.selfNS[i] = ns
	}
	// One daemon per socket: the lock is held for the daemon's whole life, so a second one
	// started meanwhile waits briefly, then leaves the socket to the first.
	lockPath := strings.TrimSuffix(d.sock, ".sock") + ".lock"
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if !flockWithin(lock, 2*time.Second) {
		return nil
	}
	// Removed while still held, so that lock files do not pile up. A daemon that opened this
	// file just before may then run beside one that created a new file: whichever binds the
	// socket last keeps it, and the other sees that within a second and ends (see ownsSocket).
	defer os.Remove(lockPath)
	if err := os.Remove(d.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	addr, done, err := hookwire.SocketAddr(d.sock)
	if err != nil {
		return err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	done()
	if err != nil {
		return err
	}
	defer l.Close()
	l.SetUnlinkOnClose(false) // removed before the queue is drained (see end)
	if err := os.Chmod(d.sock, 0o600); err != nil {
		os.Remove(d.sock)
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(d.sock, &st); err != nil {
		return err
	}
	d.sockIno = st.Ino
	_ = os.WriteFile(strings.TrimSuffix(d.sock, ".sock")+".pid", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	defer os.Remove(strings.TrimSuffix(d.sock, ".sock") + ".pid")

	ctx, d.cancel = context.WithCancel(ctx)
	defer d.cancel()
	d.last.Store(time.Now().UnixNano())
	for ctx.Err() == nil && time.Since(time.Unix(0, d.last.Load())) <= d.idle && d.ownsSocket() {
		_ = l.SetDeadline(time.Now().Add(time.Second))
		c, err := l.AcceptUnix()
		if err == nil {
			d.start(ctx, c)
			continue
		}
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			d.end(l)
			return err
		}
	}
	d.end(l)
	return nil
}

// end removes the socket (a front program then starts another daemon), answers the calls
// already queued on it, and waits for the calls in flight.
func (d *daemon) end(l *net.UnixListener) {
	if d.ownsSocket() {
		os.Remove(d.sock)
	}
	for {
		_ = l.SetDeadline(time.Now().Add(20 * time.Millisecond))
		c, err := l.AcceptUnix()
		if err != nil {
			break
		}
		d.start(context.WithoutCancel(context.Background()), c)
	}
	d.wg.Wait()
}

func (d *daemon) ownsSocket() bool {
	var st syscall.Stat_t
	return syscall.Lstat(d.sock, &st) == nil && st.Ino == d.sockIno
}

func (d *daemon) start(ctx context.Context, c *net.UnixConn) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer c.Close()
		if !d.samePeer(c) {
			return
		}
		_ = c.SetDeadline(time.Now().Add(daemonPeerTimeout))
		stdin, err := hookwire.ReadCall(c)
		if err != nil {
			return
		}
		a := d.answer(ctx, stdin)
		d.last.Store(time.Now().UnixNano())
		_ = c.SetDeadline(time.Now().Add(daemonPeerTimeout))
		_ = hookwire.WriteAnswer(c, a)
	}()
}

// answer runs one call as a started core would; a panic answers exit 2 and ends the daemon.
func (d *daemon) answer(ctx context.Context, stdin []byte) (a hookwire.Answer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out, errb bytes.Buffer
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(&errb, "reins hook: internal error, blocking the call: %v\n", r)
			a = hookwire.Answer{Code: exitBlock, Stdout: out.Bytes(), Stderr: errb.Bytes()}
			residentLog.drop()
			d.cancel()
		}
	}()
	code := dispatch(ctx, d.args, bytes.NewReader(stdin), &out, &errb)
	if code != 0 {
		residentLog.drop() // whatever went wrong, the next call starts from the log on disk
	}
	return hookwire.Answer{Code: code, Stdout: out.Bytes(), Stderr: errb.Bytes()}
}

// samePeer reports whether the peer runs as this user in this daemon's user, mount and pid
// namespaces.
func (d *daemon) samePeer(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	if cerr := raw.Control(func(fd uintptr) {
		cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); cerr != nil || err != nil || cred == nil {
		return false
	}
	if int(cred.Uid) != os.Getuid() || cred.Pid <= 0 {
		return false
	}
	for i, k := range nsKinds {
		ns, err := os.Readlink("/proc/" + strconv.Itoa(int(cred.Pid)) + "/ns/" + k)
		if err != nil || ns != d.selfNS[i] {
			return false
		}
	}
	return true
}

// privateDir makes dir (mode 0700) unless it exists, and checks that it is a directory of this
// user that no one else can enter, not a link.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return fmt.Errorf("%s is not a directory of this user closed to others (mode 0700)", dir)
	}
	return nil
}

// flockWithin takes f's exclusive lock, trying for at most d.
func flockWithin(f *os.File, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return true
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}
