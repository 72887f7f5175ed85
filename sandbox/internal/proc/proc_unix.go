//go:build unix

package proc

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

// Spec is one process to start in its own process group.
type Spec struct {
	Path       string
	Args       []string // argv, argv[0] included
	Dir        string
	Env        []string
	Stdin      io.Reader
	ExtraFiles []*os.File
	Attr       *syscall.SysProcAttr // Setpgid is forced on, unless Setsid is set
	Timeout    time.Duration
	MaxOutput  int
	// Started, if set, runs right after the process started and before
	// the parent waits for it (the hardened launcher writes the policy
	// pipe here). An error kills the process.
	Started func() error
	// StdoutW and StderrW, if set, receive the output instead of the
	// capped buffers of the Result (a backend that frames its output
	// caps it itself).
	StdoutW, StderrW io.Writer
	// BeforeKill, if set, runs once when the timeout or ctx ends the
	// run, before the process group is killed: a backend whose command
	// runs elsewhere (a container, a remote host) stops it there. It
	// must return in bounded time.
	BeforeKill func()
}

// Result is what Run observed.
type Result struct {
	ExitCode       int
	Signal         syscall.Signal // non-zero when a signal killed it
	Stdout, Stderr *CappedBuffer
	TimedOut       bool
	Duration       time.Duration
	StartErr       error
	DidStart       bool // the process was started
}

// DrainGrace bounds how long output is still read once the process group
// is dead; a process that left the group may hold the pipes open.
const DrainGrace = 500 * time.Millisecond

// Run starts spec in a new process group, captures capped output,
// enforces the timeout and ctx, and kills the whole group when the
// leader exits or the run is cancelled.
func Run(ctx context.Context, spec Spec) Result {
	res := Result{Stdout: &CappedBuffer{Max: spec.MaxOutput}, Stderr: &CappedBuffer{Max: spec.MaxOutput}}
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()

	outR, outW, err := os.Pipe()
	if err != nil {
		res.StartErr = err
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		res.StartErr = err
		return res
	}
	attr := &syscall.SysProcAttr{}
	if spec.Attr != nil {
		a := *spec.Attr
		attr = &a
	}
	if !attr.Setsid {
		attr.Setpgid = true
	}

	cmd := exec.Command(spec.Path)
	cmd.Args = spec.Args
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = spec.Stdin
	cmd.Stdout = outW
	cmd.Stderr = errW
	cmd.ExtraFiles = spec.ExtraFiles
	cmd.SysProcAttr = attr
	cmd.WaitDelay = DrainGrace

	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		res.StartErr = err
		res.Duration = time.Since(start)
		return res
	}
	res.DidStart = true
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

	var outDst, errDst io.Writer = res.Stdout, res.Stderr
	if spec.StdoutW != nil {
		outDst = spec.StdoutW
	}
	if spec.StderrW != nil {
		errDst = spec.StderrW
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(outDst, outR) }()
	go func() { defer wg.Done(); _, _ = io.Copy(errDst, errR) }()

	if spec.Started != nil {
		if err := spec.Started(); err != nil {
			killGroup()
			res.StartErr = err
		}
	}

	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-waitDone:
	case <-ctx.Done():
		res.TimedOut = true
		if spec.BeforeKill != nil {
			spec.BeforeKill()
		}
		killGroup()
		waitErr = <-waitDone
	}
	// Whatever is left of the group dies with its leader.
	killGroup()
	res.Duration = time.Since(start)

	deadline := time.Now().Add(DrainGrace)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	wg.Wait()
	outR.Close()
	errR.Close()

	res.ExitCode = 0
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				res.Signal = ws.Signal()
				res.ExitCode = 128 + int(ws.Signal())
			case ws.Exited():
				res.ExitCode = ws.ExitStatus()
			}
		}
	} else if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		res.StartErr = waitErr
	}
	return res
}

// CappedBuffer keeps the first Max bytes written and counts the rest. It
// is safe for concurrent use.
type CappedBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	Max       int
	truncated bool
}

// Write keeps what fits and reports len(p): the rest is read and
// discarded, never an error to the writer.
func (c *CappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.Max - c.buf.Len()
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

// Bytes returns a copy of what was kept.
func (c *CappedBuffer) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// Truncated reports whether anything was dropped.
func (c *CappedBuffer) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.truncated
}
