package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Sandbox runs one command under a confinement policy.
//
// Implementations must follow these rules, which [sandboxtest.Run]
// checks:
//
//   - Run runs cmd.Args as an argument vector. It never joins the
//     arguments into a shell string.
//   - Run never fabricates success. If the command did not run because
//     the backend or one of its required confinement layers is missing,
//     Run returns a Result whose ExitCode is 127 and whose Stderr names
//     what is missing, together with an error that matches
//     [ErrUnavailable].
//   - If the policy refuses the command before it runs, Run returns an
//     error that matches [ErrRefused], a Result whose ExitCode is 126 and
//     whose Violations say why.
//   - Whenever err != nil, Result.ExitCode is not 0.
//   - Run kills the command, and every process it started that the
//     backend can reach, when cmd.Timeout elapses or ctx is done, and
//     then reports TimedOut.
//   - Stdout and Stderr hold at most cmd.MaxOutput bytes each; the rest
//     is read and discarded, and the matching Truncated flag is set.
//   - Result.Confinement lists the layers that were actually enforced for
//     this run, never the ones that were merely configured.
//   - Run is safe for concurrent use by multiple goroutines.
//
// Backends that hold resources also implement io.Closer.
type Sandbox interface {
	// Run runs cmd and waits for it to finish.
	Run(ctx context.Context, cmd Command) (Result, error)
}

// Defaults applied to a [Command] whose fields are zero.
const (
	// DefaultTimeout bounds a command whose Timeout is zero.
	DefaultTimeout = 5 * time.Minute
	// DefaultMaxOutput caps each of stdout and stderr when MaxOutput is zero.
	DefaultMaxOutput = 1 << 20
)

// Exit codes with a fixed meaning in a [Result].
const (
	// ExitDenied is the exit code of a command the policy refused to run.
	ExitDenied = 126
	// ExitUnavailable is the exit code of a command that did not run
	// because the backend, a confinement layer or the program is missing.
	ExitUnavailable = 127
)

// Command is one program invocation.
type Command struct {
	// Args is the argument vector; Args[0] is looked up in the PATH of
	// the command's environment when it contains no slash. Required.
	Args []string
	// Dir is the working directory, absolute or relative to the
	// backend's root. Empty means the root. It must resolve, symlinks
	// followed, inside the root.
	Dir string
	// Env holds KEY=VALUE pairs that override the backend's base
	// environment. They pass the policy's env allowlist like any other
	// variable.
	Env []string
	// Stdin is the command's standard input; nil means empty input.
	Stdin io.Reader
	// Timeout bounds the run; zero means [DefaultTimeout].
	Timeout time.Duration
	// MaxOutput caps stdout and stderr, each; zero means
	// [DefaultMaxOutput]. Negative values are invalid.
	MaxOutput int
	// Confine, when set, narrows the backend's policy for this command
	// to what the gate's analysis of it claimed. Nil means the backend's
	// own policy. Only a backend that enforces it ([Enforcing]) runs a
	// command with Confine set; every other backend refuses it with exit
	// code [ExitUnavailable] and an error matching [ErrUnavailable],
	// never ignoring it.
	Confine *Confine
}

// Confine narrows a backend's policy for one command to what the gate's
// analysis of it claimed.
type Confine struct {
	// Writable lists absolute paths (files or directories; a file may not
	// exist yet) the command may write or create. Everything else the
	// backend would let it write (the root, AllowedPaths, caches) is
	// read-only. The command always gets a private, empty temporary
	// directory (TMPDIR, /tmp) it may write, removed after the run.
	Writable []string
	// Network lets the command use the network. False means no network,
	// whatever the policy says; true enables it even when the policy's
	// AllowNetwork is false (the gate decided it: the analysis named
	// hosts the profile allows).
	Network bool
}

// Bounds of a [Confine] that [Command.Validate] enforces.
const (
	// MaxConfineWritable bounds the entries of Confine.Writable.
	MaxConfineWritable = 1024
	// MaxConfinePath bounds the length of one Confine.Writable entry.
	MaxConfinePath = 4096
)

// Enforcing reports whether s enforces [Command.Confine]: s implements
// interface{ EnforcesConfine() bool } and it returns true. Only such a
// backend satisfies a decision's Sandbox obligation; every other one
// refuses a command with Confine set.
func Enforcing(s Sandbox) bool {
	e, ok := s.(interface{ EnforcesConfine() bool })
	return ok && e.EnforcesConfine()
}

// Validate checks the fields every backend relies on: a non-empty
// argument vector, no NUL byte in Args, Dir or Env, KEY=VALUE pairs in
// Env, no negative Timeout or MaxOutput, and a Confine whose Writable
// entries are absolute paths without NUL bytes, within
// [MaxConfineWritable] and [MaxConfinePath]. The error matches
// [ErrInvalidCommand]. Backends outside this package call it first in
// Run, and return it with exit code [ExitDenied].
func (c Command) Validate() error {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return fmt.Errorf("%w: Command.Args is empty", ErrInvalidCommand)
	}
	for i, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("%w: Command.Args[%d] contains a NUL byte", ErrInvalidCommand, i)
		}
	}
	if strings.IndexByte(c.Dir, 0) >= 0 {
		return fmt.Errorf("%w: Command.Dir contains a NUL byte", ErrInvalidCommand)
	}
	for i, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
			return fmt.Errorf("%w: Command.Env[%d] is not KEY=VALUE", ErrInvalidCommand, i)
		}
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: Command.Timeout is negative", ErrInvalidCommand)
	}
	if c.MaxOutput < 0 {
		return fmt.Errorf("%w: Command.MaxOutput is negative", ErrInvalidCommand)
	}
	if c.Confine != nil {
		if len(c.Confine.Writable) > MaxConfineWritable {
			return fmt.Errorf("%w: Command.Confine.Writable has %d entries, more than %d", ErrInvalidCommand, len(c.Confine.Writable), MaxConfineWritable)
		}
		for i, w := range c.Confine.Writable {
			switch {
			case len(w) > MaxConfinePath:
				return fmt.Errorf("%w: Command.Confine.Writable[%d] is longer than %d bytes", ErrInvalidCommand, i, MaxConfinePath)
			case strings.IndexByte(w, 0) >= 0:
				return fmt.Errorf("%w: Command.Confine.Writable[%d] contains a NUL byte", ErrInvalidCommand, i)
			case !filepath.IsAbs(w):
				return fmt.Errorf("%w: Command.Confine.Writable[%d] %q is not absolute", ErrInvalidCommand, i, w)
			}
		}
	}
	return nil
}

func (c Command) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c Command) maxOutput() int {
	if c.MaxOutput == 0 {
		return DefaultMaxOutput
	}
	return c.MaxOutput
}

// Result is the outcome of [Sandbox.Run].
type Result struct {
	// ExitCode is the command's exit status; 128+n when signal n killed
	// it, [ExitDenied] when the policy refused it and [ExitUnavailable]
	// when it could not run.
	ExitCode int
	// Stdout and Stderr hold the first MaxOutput bytes of each stream.
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated report that output was dropped.
	StdoutTruncated, StderrTruncated bool
	// TimedOut reports that the command was killed because its timeout
	// elapsed or its context was done.
	TimedOut bool
	// Duration is the wall time from start to the end of the run.
	Duration time.Duration
	// Confinement says what was enforced for this run.
	Confinement Confinement
	// Violations lists the escape attempts the backend observed: refused
	// arguments, a working directory outside the root, a process killed
	// for a forbidden system call. A host treats any violation as a
	// sandbox escape signal.
	Violations []Violation
}

// Escaped reports whether the backend observed at least one violation.
func (r Result) Escaped() bool { return len(r.Violations) > 0 }

// Layer names one confinement mechanism.
type Layer string

// The layers the built-in backends know.
const (
	LayerWorkdir      Layer = "workdir-check"     // the working directory resolves inside the root
	LayerArgs         Layer = "argument-check"    // path arguments are checked against the denied paths
	LayerEnv          Layer = "env-allowlist"     // the environment is cleared and filtered
	LayerProcessGroup Layer = "process-group"     // the command's process group is killed at the end
	LayerUserNS       Layer = "user-namespace"    // a user namespace with a uid mapping
	LayerMountNS      Layer = "mount-namespace"   // a private, read-only root with masked denied paths
	LayerPIDNS        Layer = "pid-namespace"     // host processes are invisible; all die with the command
	LayerNetNS        Layer = "network-namespace" // no network interface but an isolated loopback
	LayerCaps         Layer = "capabilities"      // every capability dropped, bounding set included
	LayerNoNewPrivs   Layer = "no-new-privs"      // setuid and file capabilities do not apply
	LayerLandlock     Layer = "landlock"          // kernel file-system access control
	LayerSeccomp      Layer = "seccomp"           // system-call filter
	LayerRlimits      Layer = "rlimits"           // resource limits
	LayerFDs          Layer = "close-fds"         // inherited descriptors above stderr are closed
	LayerContainer    Layer = "container"         // its own root file system and namespaces, set up by a container engine or a vendor's VM
	LayerReadOnlyRoot Layer = "read-only-root"    // the file system outside the workspace and /tmp is read-only
	LayerNetworkOff   Layer = "network-off"       // the engine or vendor cut the command off from the network
	LayerResources    Layer = "resource-limits"   // CPU, memory and process limits enforced by the engine (cgroups)
	LayerMasks        Layer = "denied-path-masks" // denied paths in the workspace are hidden, .git is read-only
	LayerRemoteHost   Layer = "remote-host"       // the command runs on another machine
	LayerSession      Layer = "session"           // its own session (no controlling terminal); dies with its launcher
	LayerIdentity     Layer = "workspace-owner"   // a root launcher's command runs as the workspace's owner
	LayerIPCNS        Layer = "ipc-namespace"     // its own System V IPC objects, none of the host's
	LayerConfine      Layer = "confine"           // Command.Confine was enforced: only its Writable paths writable, its Network switch honoured
)

// Confinement reports the confinement of one run.
type Confinement struct {
	// Backend is the backend's registry name, such as "local-hardened".
	Backend string
	// Enforced lists the layers that were in force when the command
	// started.
	Enforced []Layer
	// Missing lists layers that were wanted but not enforced; it is only
	// ever non-empty for a backend that was configured as best-effort.
	Missing []Layer
	// LandlockABI is the Landlock ABI version that was enforced, or 0.
	LandlockABI int
	// Warnings explains each missing layer in words.
	Warnings []string
}

// Has reports whether layer l was enforced.
func (c Confinement) Has(l Layer) bool {
	for _, e := range c.Enforced {
		if e == l {
			return true
		}
	}
	return false
}

// ViolationKind classifies a [Violation].
type ViolationKind string

// The kinds of violation the built-in backends observe.
const (
	// ViolationDeniedPath: an argument, a path in a shell script or the
	// working directory names a denied path.
	ViolationDeniedPath ViolationKind = "denied-path"
	// ViolationOutsideRoot: the working directory resolves outside the root.
	ViolationOutsideRoot ViolationKind = "outside-root"
	// ViolationUncheckable: a path in the command could not be checked
	// (for example a shell script that the analyser rejects).
	ViolationUncheckable ViolationKind = "uncheckable"
	// ViolationForbiddenSyscall: the seccomp filter killed the command
	// (SIGSYS), for example for a system call of another architecture.
	ViolationForbiddenSyscall ViolationKind = "forbidden-syscall"
	// ViolationRefusedSyscall: the seccomp filter refused a system call
	// with an error (the command went on): a namespace, mount, ptrace,
	// terminal injection (TIOCSTI), a set-user-ID mode, a socket with
	// the network denied.
	ViolationRefusedSyscall ViolationKind = "refused-syscall"
	// ViolationProtectedCreated: the run created a protected path (a new
	// .git, .envrc, editor or agent configuration) in a writable
	// directory; it was found when the run ended.
	ViolationProtectedCreated ViolationKind = "protected-path-created"
)

// Violation is one escape attempt a backend observed.
type Violation struct {
	Kind ViolationKind
	// Subject is what was refused: an argument, a path, a syscall.
	Subject string
	// Detail explains the refusal for a human.
	Detail string
}

// String formats the violation for logs and error messages.
func (v Violation) String() string {
	return fmt.Sprintf("%s: %q: %s", v.Kind, v.Subject, v.Detail)
}

// Errors callers branch on with errors.Is.
var (
	// ErrUnavailable: the backend or a required confinement layer is
	// missing; the command did not run.
	ErrUnavailable = errors.New("sandbox: unavailable")
	// ErrRefused: the policy refused the command before it ran.
	ErrRefused = errors.New("sandbox: refused")
	// ErrInvalidCommand: the Command is malformed.
	ErrInvalidCommand = errors.New("sandbox: invalid command")
)

// RefusedError carries the violations that made a backend refuse a
// command. It matches [ErrRefused].
type RefusedError struct {
	Backend    string
	Violations []Violation
}

// Error lists the violations.
func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return fmt.Sprintf("sandbox: %s: refused: %s", e.Backend, strings.Join(parts, "; "))
}

// Is reports whether target is [ErrRefused].
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// UnavailableError says which backend or layer is missing. It matches
// [ErrUnavailable].
type UnavailableError struct {
	Backend string
	// Layer is the missing confinement layer, if one is to blame.
	Layer Layer
	// Reason explains what is missing.
	Reason string
}

// Error names the backend, the layer and the reason.
func (e *UnavailableError) Error() string {
	if e.Layer != "" {
		return fmt.Sprintf("sandbox: %s: required layer %s unavailable: %s", e.Backend, e.Layer, e.Reason)
	}
	return fmt.Sprintf("sandbox: %s: unavailable: %s", e.Backend, e.Reason)
}

// Is reports whether target is [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// notConfining is the error of a backend that does not enforce
// [Command.Confine] and was given one.
func notConfining(backend, why string) *UnavailableError {
	return &UnavailableError{Backend: backend, Layer: LayerConfine,
		Reason: backend + " cannot confine a command (Command.Confine is set): " + why + "; run it in a backend that enforces it (see Enforcing)"}
}

// deniedResult is the result of a command the policy refused.
func deniedResult(conf Confinement, vs []Violation) (Result, error) {
	err := &RefusedError{Backend: conf.Backend, Violations: vs}
	return Result{
		ExitCode:    ExitDenied,
		Stderr:      []byte(err.Error() + "\n"),
		Confinement: conf,
		Violations:  vs,
	}, err
}
