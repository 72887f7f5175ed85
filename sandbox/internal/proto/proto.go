//go:build linux

// Package proto is the protocol between the hardened sandbox's launcher
// and its child (both in package sandbox/hardened): the
// sentinel argv[0], the inherited descriptors, the policy the launcher
// sends and the reports the child sends back, and the few helpers both
// sides share.
package proto

// ChildArg0 is the argv[0] that makes a re-executed binary act as the
// sandbox child.
const ChildArg0 = "reins-sandbox-child"

// Inherited descriptors of the child.
const (
	ChildPolicyFD  = 3 // read end of the policy pipe
	ChildStatusFD  = 4 // write end of the status pipe
	ChildControlFD = 5 // a launcher's end of the control socket
)

// MaxRequest bounds one run request a launcher reads (its arguments,
// working directory and environment).
const MaxRequest = 8 << 20

// PipeAtomic is a size that always fits in a fresh pipe's buffer (the
// Linux default is 64 KiB; one page is guaranteed).
const PipeAtomic = 4096

// ChildPolicy is what the parent sends the child over the policy pipe.
type ChildPolicy struct {
	Args  []string
	Dir   string
	Env   []string
	Probe bool // stop before exec and report success
	// Launcher makes the child a launcher: after the set-up it reports
	// Ready and then starts one command per RunRequest on the control
	// socket, already confined, instead of Args.
	Launcher    bool
	ReadOnly    []string
	Writable    []string
	Masks       []string
	GitReadOnly []string
	// Pins are existing entries of writable directories that stay
	// read-only (a Confine's create grants): each gets a read-only mount
	// of its own, so it cannot be written, removed or replaced.
	Pins []string
	// Confine reports that the policy enforces a Command.Confine.
	Confine bool
	// RunDir is an empty host directory: the mount point of the new
	// root, or the TMPDIR when there is no mount namespace.
	RunDir         string
	MountNS        bool
	UserNS         bool
	PIDNS          bool
	IPCNS          bool
	NetNS          bool
	DenyNetwork    bool
	MinLandlockABI int
	BestEffort     bool
	Simulate       []string
	Limits         Limits
	// CmdEnv is Command.Env; it wins over Env and the sandbox's own
	// HOME, TMPDIR and XDG_CACHE_HOME.
	CmdEnv []string
	// RunAs, for a root launcher, is the identity the command runs
	// under: the workspace's owner.
	RunAs          bool
	RunUID, RunGID int
	// Home and Tmp are the command's private HOME and TMPDIR when there
	// is no mount namespace (directories in RunDir); with one, they are
	// made in the private /tmp.
	Home, Tmp string
	// CacheEnv are the variables that point tools at shared host caches
	// (Config.Caches); empty for private caches.
	CacheEnv []string
}

// ChildReport is what the child sends back over the status pipe: one
// JSON object per line, the last one wins.
type ChildReport struct {
	Enforced    []string
	Missing     []string
	Warnings    []string
	LandlockABI int
	FailedLayer string `json:",omitempty"`
	Failure     string `json:",omitempty"`
	ExecError   string `json:",omitempty"`
	ProbeOK     bool   `json:",omitempty"`
	// Ready: a launcher completed its set-up and waits for requests.
	Ready bool `json:",omitempty"`
	// Started is set once the command runs; CmdExit and CmdSignal are
	// its status once it ended (Ended).
	Started   bool `json:",omitempty"`
	Ended     bool `json:",omitempty"`
	CmdExit   int  `json:",omitempty"`
	CmdSignal int  `json:",omitempty"`
	// Refused lists the system calls the seccomp filter refused.
	Refused []string `json:",omitempty"`
}

// RunRequest asks a launcher to start one command. It travels on the
// control socket as an 8-byte little-endian length and the JSON text,
// with the command's stdin, stdout and stderr as SCM_RIGHTS descriptors
// on the first byte.
type RunRequest struct {
	Args   []string
	Dir    string
	CmdEnv []string // Command.Env, laid over the launcher's environment
}

// RunReply is a launcher's answer to a RunRequest, one JSON line each:
// Started (or ExecError with ExecCode), then Ended, then Ready or
// Retire.
type RunReply struct {
	Started   bool     `json:",omitempty"`
	ExecError string   `json:",omitempty"`
	ExecCode  int      `json:",omitempty"`
	Ended     bool     `json:",omitempty"`
	CmdExit   int      `json:",omitempty"`
	CmdSignal int      `json:",omitempty"`
	Refused   []string `json:",omitempty"`
	// After each request the launcher resets and sends one more line:
	// Ready, or Retire when it cannot serve another run (its private
	// directories could not be emptied, a bind moved), saying why.
	Ready  bool   `json:",omitempty"`
	Retire string `json:",omitempty"`
}

// Limits mirror hardened.Limits.
type Limits struct {
	CPUSeconds, FileSize, AddressSpace, OpenFiles, Processes uint64
}
