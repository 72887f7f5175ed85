//go:build linux

package shell_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/internal/testenv"
)

// Running a line under the tracer. The line runs as "bash -c LINE", traced by strace, in mount,
// network, UTS and IPC namespaces in which every mount is read-only except the proofs' own
// directory, and in a PID namespace of its own: a line the analysis misjudges cannot change the
// machine, reach a network (the new network namespace has no interface up) or outlive its run
// (the PID namespace ends with its shell). What a line tries is still seen: strace records a
// write the read-only mount refuses, and a connect the empty network refuses, as well as ones
// that succeed.
//
// The namespaces are made once per test process: this test binary runs again as a server
// (TestProofHelper, below), under one strace that follows everything the server starts, and
// takes jobs on its standard input. For each job it mounts the run's fixture (an overlay: the
// template below, the run's own directory above, so that a run copies nothing and cannot change
// the template), starts the shell in a new PID namespace, waits for it or for the deadline,
// unmounts, and answers with the shell's pid: the run is the tree of processes strace recorded
// under it. (One strace for every run, rather than one per run, saves its start-up, which costs
// more than most runs.) As root the namespaces need nothing more; otherwise a user namespace
// maps the user to root in them.

// proofHelperEnv tells the re-run test binary to be the proofs' server: its value is the
// directory the proofs write in (the one writable mount). proofServeEnv holds the command that
// runs the server under strace once the mounts are made (JSON), and is "" in that server.
const (
	proofHelperEnv = "REINS_PROOF_HELPER"
	proofServeEnv  = "REINS_PROOF_SERVE"
)

// proofJob is one run, as the server gets it.
type proofJob struct {
	ID      int
	Lower   string   // the fixture template
	Run     string   // the run's directory: upper, work and the fixture mount point in it
	Root    string   // where the fixture is mounted (Run/fx)
	Dir     string   // the line's working directory
	Command []string // the command to run: the shell and the line
	Env     []string
	Timeout time.Duration
}

// proofReply is what the server says about a job.
type proofReply struct {
	ID       int
	Pid      int    // the shell's pid, as strace names its file
	Output   string // what the line printed, bounded
	TimedOut bool
	CPU      time.Duration // user and system time of the shell and everything it waited for
	Err      string        // a failure of the server, not of the line
}

// proofTimeout bounds one run: a line that follows a file or prints forever is stopped there,
// and what it did until then is checked all the same.
const proofTimeout = 3 * time.Second

// proofEnv is the environment a line runs with: a PATH, the fixture's home and temporary
// directory, a dumb terminal, nothing else (no locale, no pager, no editor).
func proofEnv(fx *proofFixture) []string {
	return []string{"PATH=" + proofPath(), "HOME=" + fx.home, "TMPDIR=" + fx.tmp, "TERM=dumb"}
}

// proofPath is the PATH lines run with: the system's directories, then the Go toolchain's (the
// one "go test" runs with, which is what an agent working on a Go project runs).
func proofPath() string {
	proofPathOnce.Do(func() {
		proofPathVal = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		if goBin, err := exec.LookPath("go"); err == nil {
			proofPathVal += ":" + filepath.Dir(goBin)
		}
	})
	return proofPathVal
}

var (
	proofPathOnce sync.Once
	proofPathVal  string
)

// proofTools are the programs a proof needs and the servers that run it.
type proofTools struct {
	strace, bash string
	pool         *proofPool
}

var (
	proofToolsOnce sync.Once
	proofToolsVal  proofTools
	proofToolsErr  string
	proofRunsDir   string // where every run of this process goes
)

// proofPool holds the servers: each runs one job at a time under its own strace (one strace for
// every job would make it the bottleneck of the parallel runs), and is started when a run
// finds none free.
type proofPool struct {
	mu   sync.Mutex
	free []*proofServer
	all  []*proofServer
	n    int
}

// get returns a free server, starting one if there is none.
func (p *proofPool) get() (*proofServer, error) {
	p.mu.Lock()
	if len(p.free) > 0 {
		s := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		p.mu.Unlock()
		return s, nil
	}
	p.n++
	n := p.n
	p.mu.Unlock()
	prefix := filepath.Join(proofRunsDir, fmt.Sprintf("trace%d", n), "tr")
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return nil, err
	}
	s, err := startProofServer(proofRunsDir, proofToolsVal.strace, prefix)
	if err == nil {
		p.mu.Lock()
		p.all = append(p.all, s)
		p.mu.Unlock()
	}
	return s, err
}

// cpu returns the processor time the servers have used so far: strace, the helper and the runs
// they waited for (Linux's /proc; 0 where it cannot be read).
func (p *proofPool) cpu() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var total time.Duration
	var add func(pid string)
	add = func(pid string) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
			if i < len(f) {
				if v, err := strconv.ParseInt(f[i], 10, 64); err == nil {
					total += time.Duration(v) * time.Second / 100 // USER_HZ
				}
			}
		}
		if c, err := os.ReadFile("/proc/" + pid + "/task/" + pid + "/children"); err == nil {
			for _, child := range strings.Fields(string(c)) {
				add(child)
			}
		}
	}
	for _, s := range p.all {
		add(strconv.Itoa(s.pid))
	}
	return total
}

// put gives a server back, unless it has ended.
func (p *proofPool) put(s *proofServer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.alive() {
		p.free = append(p.free, s)
	}
}

// requireProofTools stops t (skip, or fail in strict mode) when strace, bash or the namespaces
// are missing; else it returns them, with the server started.
func requireProofTools(t testing.TB) proofTools {
	t.Helper()
	proofToolsOnce.Do(func() { proofToolsErr = startProofTools() })
	if proofToolsErr != "" {
		testenv.Missing(t, "%s", proofToolsErr)
	}
	return proofToolsVal
}

func startProofTools() string {
	for _, name := range []string{"strace", "bash"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return name + " is not installed: the tracer proofs run every line with bash under strace (Debian packages strace and bash)"
		}
		if name == "strace" {
			proofToolsVal.strace = p
		} else {
			proofToolsVal.bash = p
		}
	}
	dir, err := os.MkdirTemp("", "reins-proof")
	if err != nil {
		return err.Error()
	}
	if proofRunsDir, err = filepath.EvalSymlinks(dir); err != nil {
		return err.Error()
	}
	proofToolsVal.pool = &proofPool{}
	srv, err := proofToolsVal.pool.get()
	if err != nil {
		return "the proofs' namespaces (mount, network, PID) and read-only remounts are not available: " + err.Error()
	}
	defer proofToolsVal.pool.put(srv)
	// The server must refuse a write outside the runs' directory and allow one inside.
	lower := filepath.Join(proofRunsDir, "check-lower")
	if err := os.MkdirAll(lower, 0o755); err != nil {
		return err.Error()
	}
	fx, err := reserveFixture(proofRunsDir)
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(fx.run)
	defer os.RemoveAll(lower)
	rep := srv.do(context.Background(), proofJob{Lower: lower, Run: fx.run, Root: fx.root, Dir: fx.root, Timeout: 10 * time.Second,
		Command: []string{proofToolsVal.bash, "-c", "touch ok && echo fixture-writable; if touch /reins-proof-must-fail 2>/dev/null; then echo root-writable; fi"}})
	if rep.Err != "" || !strings.Contains(rep.Output, "fixture-writable") || strings.Contains(rep.Output, "root-writable") {
		return fmt.Sprintf("the proofs' server does not confine its runs as it must: %s%s", rep.Err, rep.Output)
	}
	return ""
}

// proofServer is the client side of the helper.
type proofServer struct {
	prefix  string // its strace's output: one file per process, prefix.PID
	pid     int    // the helper's (then strace's) pid
	mu      sync.Mutex
	stdin   io.WriteCloser
	next    int
	waiting map[int]chan proofReply
	dead    error
}

func startProofServer(runs, strace, tracePrefix string) (*proofServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The helper makes the mounts, then runs itself again under strace to serve: strace's files
	// must be opened once "/" is read-only and the runs' directory a writable mount of its own.
	self := []string{exe, "-test.run=^TestProofHelper$", "-test.count=1", "-test.timeout=0"}
	traced, err := json.Marshal(append([]string{strace, "-f", "-ff", "-q", "--seccomp-bpf", "--pidns-translation", "-e", "signal=none",
		"-s", "4096", "-y", "-o", tracePrefix, "-e", "trace=" + strings.Join(proofSyscalls, ","), "--"}, self...))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self[0], self[1:]...)
	cmd.Env = []string{proofHelperEnv + "=" + runs, proofServeEnv + "=" + string(traced), "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
		Pdeathsig:  syscall.SIGKILL,
	}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
		cmd.Env = append(cmd.Env, "REINS_PROOF_USERNS=1")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &limitedBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &proofServer{prefix: tracePrefix, pid: cmd.Process.Pid, stdin: stdin, waiting: map[int]chan proofReply{}}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "PROOF ")
			if !ok {
				continue
			}
			var rep proofReply
			if json.Unmarshal([]byte(line), &rep) != nil {
				continue
			}
			s.mu.Lock()
			ch := s.waiting[rep.ID]
			delete(s.waiting, rep.ID)
			s.mu.Unlock()
			if ch != nil {
				ch <- rep
			}
		}
		err := cmd.Wait()
		s.mu.Lock()
		s.dead = fmt.Errorf("the proofs' server ended (%v): %s", err, stderr.Bytes())
		for id, ch := range s.waiting {
			ch <- proofReply{ID: id, Err: s.dead.Error()}
		}
		s.waiting = map[int]chan proofReply{}
		s.mu.Unlock()
	}()
	return s, nil
}

func (s *proofServer) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead == nil
}

// do sends a job and waits for its reply.
func (s *proofServer) do(ctx context.Context, job proofJob) proofReply {
	s.mu.Lock()
	if s.dead != nil {
		s.mu.Unlock()
		return proofReply{Err: s.dead.Error()}
	}
	s.next++
	job.ID = s.next
	ch := make(chan proofReply, 1)
	s.waiting[job.ID] = ch
	b, err := json.Marshal(job)
	if err == nil {
		_, err = s.stdin.Write(append(b, '\n'))
	}
	s.mu.Unlock()
	if err != nil {
		return proofReply{Err: err.Error()}
	}
	select {
	case rep := <-ch:
		return rep
	case <-ctx.Done():
		return proofReply{Err: ctx.Err().Error()}
	}
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
	// stop, when not 0, is how much output to take in all: past it Write fails, os/exec closes
	// the pipe, and a line that prints forever (yes, shuf -r) ends on SIGPIPE instead of
	// running to the deadline. No fixture file comes near it, so a line that prints what it
	// reads is never cut short.
	stop, seen int
}

// errProofOutput ends a run's output (see limitedBuffer.stop).
var errProofOutput = errors.New("the line printed more than the proofs read")

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	l.seen += len(p)
	if l.stop > 0 && l.seen > l.stop {
		return 0, errProofOutput
	}
	return len(p), nil
}

func (l *limitedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.buf.Bytes()...)
}

// TestProofHelper is not a test: it is the server the proofs run their lines in (see
// startProofServer). Run normally, it returns at once.
func TestProofHelper(t *testing.T) {
	runs := os.Getenv(proofHelperEnv)
	if runs == "" {
		return
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "proof helper: "+format+"\n", args...)
		os.Exit(125)
	}
	if traced := os.Getenv(proofServeEnv); traced != "" {
		proofSetup(runs, fail)
		var argv []string
		if err := json.Unmarshal([]byte(traced), &argv); err != nil {
			fail("bad command: %v", err)
		}
		env := []string{proofHelperEnv + "=" + runs, proofServeEnv + "="}
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, proofHelperEnv+"=") && !strings.HasPrefix(e, proofServeEnv+"=") {
				env = append(env, e)
			}
		}
		err := syscall.Exec(argv[0], argv, env)
		fail("running %s: %v", argv[0], err)
	}
	proofServe(runs, fail)
}

// proofSetup makes every mount read-only but the runs' directory.
func proofSetup(runs string, fail func(string, ...any)) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("making mounts private: %v", err)
	}
	mounts, err := readMounts()
	if err != nil {
		fail("%v", err)
	}
	for _, m := range mounts {
		if err := unix.Mount("", m.point, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|m.flags, ""); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
				continue // hidden under another mount
			}
			fail("remounting %s read-only: %v", m.point, err)
		}
	}
	if err := unix.Mount(runs, runs, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		fail("binding %s: %v", runs, err)
	}
	flags := uintptr(0)
	for _, m := range mounts {
		if strings.HasPrefix(runs+"/", strings.TrimSuffix(m.point, "/")+"/") {
			flags = m.flags // the flags of the mount the runs' directory is on, read-only dropped
		}
	}
	if err := unix.Mount("", runs, "", unix.MS_REMOUNT|unix.MS_BIND|flags, ""); err != nil {
		fail("making %s writable: %v", runs, err)
	}
}

// proofServe runs the jobs it reads on its standard input, each in a goroutine, until the
// input ends.
func proofServe(runs string, fail func(string, ...any)) {
	userns := os.Getenv("REINS_PROOF_USERNS") == "1"
	out := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	var wg sync.WaitGroup
	for in.Scan() {
		var job proofJob
		if err := json.Unmarshal(in.Bytes(), &job); err != nil {
			fail("bad job: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := serveProofJob(job, userns)
			mu.Lock()
			defer mu.Unlock()
			os.Stdout.WriteString("PROOF ")
			_ = out.Encode(rep)
		}()
	}
	wg.Wait()
	// The test process is gone: leave its runs' directory empty.
	if entries, err := os.ReadDir(runs); err == nil {
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(runs, e.Name()))
		}
	}
	os.Exit(0)
}

// serveProofJob mounts the job's fixture, runs its command in a new PID namespace and unmounts.
func serveProofJob(job proofJob, userns bool) proofReply {
	rep := proofReply{ID: job.ID}
	upper, work := filepath.Join(job.Run, "upper"), filepath.Join(job.Run, "work")
	opts := "lowerdir=" + job.Lower + ",upperdir=" + upper + ",workdir=" + work
	if userns {
		opts += ",userxattr"
	}
	if err := unix.Mount("overlay", job.Root, "overlay", 0, opts); err != nil {
		rep.Err = fmt.Sprintf("mounting the fixture: %v", err)
		return rep
	}
	defer func() { _ = unix.Unmount(job.Root, unix.MNT_DETACH) }()
	ctx, cancel := context.WithTimeout(context.Background(), job.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, job.Command[0], job.Command[1:]...)
	cmd.Dir, cmd.Env = job.Dir, job.Env
	buf := &limitedBuffer{max: 8 << 10, stop: 1 << 20}
	cmd.Stdout, cmd.Stderr = buf, buf
	// The shell is the first process of a PID namespace: what it leaves running ends with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	err := cmd.Start()
	if err != nil {
		rep.Err = err.Error()
		return rep
	}
	rep.Pid = cmd.Process.Pid
	err = cmd.Wait()
	rep.Output, rep.TimedOut = string(buf.Bytes()), ctx.Err() != nil
	if cmd.ProcessState != nil {
		rep.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && !rep.TimedOut && !errors.Is(err, errProofOutput) {
		rep.Err = err.Error()
	}
	return rep
}

type mountEntry struct {
	point string
	flags uintptr // the per-mount flags to keep (nosuid, nodev, noexec, atime)
}

// readMounts lists the mount points of this namespace with the flags a remount must keep.
func readMounts() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		m := mountEntry{point: unescapeMount(fields[4])}
		for _, o := range strings.Split(fields[5], ",") {
			switch o {
			case "nosuid":
				m.flags |= unix.MS_NOSUID
			case "nodev":
				m.flags |= unix.MS_NODEV
			case "noexec":
				m.flags |= unix.MS_NOEXEC
			case "noatime":
				m.flags |= unix.MS_NOATIME
			case "nodiratime":
				m.flags |= unix.MS_NODIRATIME
			case "relatime":
				m.flags |= unix.MS_RELATIME
			case "strictatime":
				m.flags |= unix.MS_STRICTATIME
			}
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// unescapeMount decodes mountinfo's octal escapes ("\040" for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// proofRun is what one run of a line did.
type proofRun struct {
	Events   []traceEvent
	Output   string // what the line printed (bounded)
	TimedOut bool
	// Unfinished: strace had not finished some process's trace (see errUnfinished).
	Unfinished bool
	CPU        time.Duration
	Err        error // a failure of the harness (not of the line)
}

// traceLine runs line in fx (mounted over the template tpl) and returns what strace saw.
func traceLine(ctx context.Context, tools proofTools, tpl *proofTemplate, fx *proofFixture, line string) proofRun {
	srv, err := tools.pool.get()
	if err != nil {
		return proofRun{Err: err}
	}
	defer tools.pool.put(srv)
	rep := srv.do(ctx, proofJob{Lower: tpl.dir, Run: fx.run, Root: fx.root, Dir: fx.ws,
		Command: []string{tools.bash, "-c", line}, Env: proofEnv(fx), Timeout: proofTimeout})
	run := proofRun{Output: rep.Output, TimedOut: rep.TimedOut, CPU: rep.CPU}
	if rep.Err != "" {
		run.Err = errors.New(rep.Err)
		return run
	}
	grace := time.Second
	if rep.TimedOut {
		grace = 200 * time.Millisecond
	}
	procs, err := collectTrace(srv.prefix, rep.Pid, time.Now().Add(grace))
	defer removeTrace(srv.prefix, procs)
	switch {
	case errors.Is(err, errUnfinished):
		run.Unfinished = true
	case err != nil:
		run.Err = err
		return run
	}
	run.Events = traceEvents(procs, rep.Pid, fx.ws)
	if len(run.Events) == 0 {
		run.Err = fmt.Errorf("strace recorded nothing: %s", rep.Output)
	}
	return run
}
