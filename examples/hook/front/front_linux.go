package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reins-go/reins/examples/hook/internal/hookwire"
)

// maxDaemons bounds the resident cores of one state directory: a client whose environment
// changed with every call would otherwise start one per call.
const maxDaemons = 32

// viaDaemon hands the call to the resident core of its situation, starting one when none
// answers. ok is false when no resident core could be reached before anything was read from
// standard input (the core is then started for the call); once the call is handed over, its
// fate is the resident core's: an answer cut short blocks.
func viaDaemon(core string, args, env []string) (code int, ok bool) {
	state, ok := stateArg(args[1:], env)
	if !ok {
		return 0, false
	}
	getenv := func(k string) string { return hookwire.Getenv(env, k) }
	stateDir, err := hookwire.StateDir(state, getenv, func() (string, error) {
		if h := getenv("HOME"); h != "" {
			return h, nil
		}
		return "", errors.New("$HOME is not defined")
	})
	if err != nil {
		return 0, false
	}
	var st syscall.Stat_t
	if err := syscall.Stat(core, &st); err != nil {
		return 0, false
	}
	id := strconv.FormatUint(st.Dev, 16) + ":" + strconv.FormatUint(st.Ino, 16) + ":" + strconv.FormatInt(st.Size, 16) + ":" +
		strconv.FormatInt(st.Mtim.Nano(), 16) + ":" + strconv.FormatInt(st.Ctim.Nano(), 16)
	cwd, err := os.Getwd()
	if err != nil {
		return 0, false
	}
	// A resident core answers only peers in its own namespaces: a front program in others (a
	// container sharing the state directory) has a core of its own.
	for _, k := range []string{"user", "mnt", "pid"} {
		ns, err := os.Readlink("/proc/self/ns/" + k)
		if err != nil {
			return 0, false
		}
		id += ":" + ns
	}
	sock := hookwire.SocketPath(stateDir, core, []byte(id), args, env, cwd, os.Getuid())
	fd, err := dial(sock)
	if err != nil {
		pid, ok := startDaemon(core, sock, args, env, cwd)
		if !ok {
			return 0, false
		}
		deadline := time.Now().Add(3 * time.Second)
		for wait := 500 * time.Microsecond; err != nil && time.Now().Before(deadline); wait = min(2*wait, 20*time.Millisecond) {
			time.Sleep(wait)
			fd, err = dial(sock)
			// A core that ended with an error (its flags, its directory) will not answer:
			// start one for this call now rather than wait. One that ended with 0 left the
			// socket to another daemon, which may still be binding it.
			var ws syscall.WaitStatus
			if err != nil && pid > 0 {
				if p, werr := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); werr == nil && p == pid {
					if ws.ExitStatus() != 0 {
						return 0, false
					}
					pid = 0
				}
			}
		}
		if err != nil {
			return 0, false
		}
	}
	conn := os.NewFile(uintptr(fd), sock)
	defer conn.Close()
	stdin, err := io.ReadAll(io.LimitReader(os.Stdin, hookwire.MaxInput+1))
	if err != nil {
		fail(true, "reading the hook input: "+err.Error())
	}
	if err := hookwire.WriteCall(conn, stdin); err != nil {
		fail(true, "handing the call to the resident "+hookwire.CoreName+": "+err.Error())
	}
	a, err := hookwire.ReadAnswer(conn)
	if err != nil {
		fail(true, "the resident "+hookwire.CoreName+" ended before answering ("+err.Error()+")")
	}
	os.Stdout.Write(a.Stdout)
	os.Stderr.Write(a.Stderr)
	return a.Code, true
}

func dial(sock string) (int, error) {
	addr, done, err := hookwire.SocketAddr(sock)
	if err != nil {
		return -1, err
	}
	defer done()
	// Non-blocking: os.File then waits for the answer in the runtime's poller, so that this
	// program sleeps while the core works (a blocking read keeps the runtime's monitor thread
	// waking every 20 µs).
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return -1, err
	}
	// A Unix socket connects at once or not at all (EAGAIN: the core's queue is full).
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: addr}); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// startDaemon starts a resident core for sock, in its own session, with this call's
// environment and directory, and returns its pid without waiting for it.
func startDaemon(core, sock string, args, env []string, cwd string) (int, bool) {
	dir := filepath.Dir(sock)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, false
	}
	if ents, err := os.ReadDir(dir); err != nil || countSockets(ents) >= maxDaemons {
		return 0, false
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, false
	}
	defer devnull.Close()
	argv := []string{core, "daemon", "-socket", sock}
	// REINS_HOOK_DAEMON_IDLE (a Go duration) is how long a resident core waits for the next
	// call; the core checks it.
	if v := hookwire.Getenv(env, "REINS_HOOK_DAEMON_IDLE"); v != "" {
		argv = append(argv, "-idle", v)
	}
	argv = append(append(argv, "--"), args...)
	fds := []uintptr{devnull.Fd(), devnull.Fd(), devnull.Fd()}
	pid, err := syscall.ForkExec(core, argv, &syscall.ProcAttr{Dir: cwd, Env: env, Files: fds,
		Sys: &syscall.SysProcAttr{Setsid: true}})
	return pid, err == nil
}

func countSockets(ents []os.DirEntry) int {
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sock") {
			n++
		}
	}
	return n
}

// corePath is reins-hook-core beside this program (the kernel's name for this program has no
// symbolic link left in it).
func corePath() (string, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exe), hookwire.CoreName), nil
}

// startCore replaces this program with the core, for this call.
func startCore(core string, args []string, hookCall bool) {
	err := syscall.Exec(core, append([]string{core}, args...), os.Environ())
	fail(hookCall, "cannot run "+core+" (install it beside this program): "+err.Error())
}
