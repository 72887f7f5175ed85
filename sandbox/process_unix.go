//go:build unix

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// procSpec is one process to start in its own process group.
type procSpec struct {
	path       string
	args       []string // argv, argv[0] included
	dir        string
	env        []string
	stdin      io.Reader
	extraFiles []*os.File
	attr       *syscall.SysProcAttr // Setpgid is forced on, unless Setsid is set
	timeout    time.Duration
	maxOutput  int
	// started, if set, runs right after the process started and before
	// the parent waits for it (the hardened parent writes the policy
	// pipe here). An error kills the process.
	started func() error
	// stdoutW and stderrW, if set, receive the output instead of the
	// capped buffers of the procResult (a backend that frames its
	// output caps it itself).
	stdoutW, stderrW io.Writer
	// beforeKill, if set, runs once when the timeout or ctx ends the
	// run, before the process group is killed: a backend whose command
	// runs elsewhere (a container, a remote host) stops it there. It
	// must return in bounded time.
	beforeKill func()
}

// procResult is what runProcess observed.
type procResult struct {
	exitCode       int
	signal         syscall.Signal // non-zero when a signal killed it
	stdout, stderr *cappedBuffer
	timedOut       bool
	duration       time.Duration
	startErr       error
	didStart       bool // the process was started
}

// drainGrace bounds how long output is still read once the process group
// is dead; a process that left the group may hold the pipes open.
const drainGrace = 500 * time.Millisecond

// runProcess starts spec in a new process group, captures capped output,
// enforces the timeout and ctx, and kills the whole group when the
// leader exits or the run is cancelled.
func runProcess(ctx context.Context, spec procSpec) procResult {
	res := procResult{stdout: &cappedBuffer{max: spec.maxOutput}, stderr: &cappedBuffer{max: spec.maxOutput}}
	ctx, cancel := context.WithTimeout(ctx, spec.timeout)
	defer cancel()

	outR, outW, err := os.Pipe()
	if err != nil {
		res.startErr = err
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		res.startErr = err
		return res
	}
	attr := &syscall.SysProcAttr{}
	if spec.attr != nil {
		a := *spec.attr
		attr = &a
	}
	if !attr.Setsid {
		attr.Setpgid = true
	}

	cmd := exec.Command(spec.path)
	cmd.Args = spec.args
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = spec.stdin
	cmd.Stdout = outW
	cmd.Stderr = errW
	cmd.ExtraFiles = spec.extraFiles
	cmd.SysProcAttr = attr
	cmd.WaitDelay = drainGrace

	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		res.startErr = err
		res.duration = time.Since(start)
		return res
	}
	res.didStart = true
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

	var outDst, errDst io.Writer = res.stdout, res.stderr
	if spec.stdoutW != nil {
		outDst = spec.stdoutW
	}
	if spec.stderrW != nil {
		errDst = spec.stderrW
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(outDst, outR) }()
	go func() { defer wg.Done(); _, _ = io.Copy(errDst, errR) }()

	if spec.started != nil {
		if err := spec.started(); err != nil {
			killGroup()
			res.startErr = err
		}
	}

	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-waitDone:
	case <-ctx.Done():
		res.timedOut = true
		if spec.beforeKill != nil {
			spec.beforeKill()
		}
		killGroup()
		waitErr = <-waitDone
	}
	// Whatever is left of the group dies with its leader.
	killGroup()
	res.duration = time.Since(start)

	deadline := time.Now().Add(drainGrace)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	wg.Wait()
	outR.Close()
	errR.Close()

	res.exitCode = 0
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				res.signal = ws.Signal()
				res.exitCode = 128 + int(ws.Signal())
			case ws.Exited():
				res.exitCode = ws.ExitStatus()
			}
		}
	} else if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		res.startErr = waitErr
	}
	return res
}

// cappedBuffer keeps the first max bytes written and counts the rest.
type cappedBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *cappedBuffer) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}
