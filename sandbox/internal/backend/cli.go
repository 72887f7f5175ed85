package backend

import (
	"io"
	"time"
)

// Proc is one CLI process for [RunCLI].
type Proc struct {
	Path      string
	Args      []string // argv[0] included
	Env       []string
	Stdin     io.Reader
	Timeout   time.Duration
	MaxOutput int
	// StdoutW and StderrW, if set, receive the output instead of the
	// capped buffers of [Out].
	StdoutW, StderrW io.Writer
	// BeforeKill runs once when the timeout or ctx ends the run, before
	// the CLI's process group is killed.
	BeforeKill func()
}

// Status is how a CLI process ended.
type Status struct {
	ExitCode int
	TimedOut bool
	Duration time.Duration
	StartErr error
}

// Out is what [RunCLI] saw.
type Out struct {
	Status               Status
	Stdout, Stderr       []byte
	StdoutCut, StderrCut bool
}
