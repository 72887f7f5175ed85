// Package gitx runs the git binary for package checkpoint: argv only (never
// a shell), a clean environment that user and system configuration cannot
// change, and strict parsers for the machine-readable output it reads back.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// MinVersion is the oldest git release the runner accepts: it needs
// GIT_CONFIG_GLOBAL (2.32) and GIT_CONFIG_COUNT (2.31).
var MinVersion = Version{2, 32, 0}

// Identity used for every internal commit.
const (
	IdentityName  = "reins"
	IdentityEmail = "reins@localhost"
)

// Overrides are the configuration values forced on every git invocation
// (passed as GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n, which rank like -c and so
// above any repository, global or system setting). They switch off every
// configuration-driven way for git to run programs (hooks, fsmonitor,
// signing) or to change bytes (line endings, case folding, file modes).
var Overrides = [][2]string{
	{"core.hooksPath", os.DevNull},
	{"core.fsmonitor", "false"},
	{"core.untrackedCache", "false"},
	{"core.autocrlf", "false"},
	{"core.safecrlf", "false"},
	{"core.fileMode", "true"},
	{"core.symlinks", "true"},
	{"core.ignoreCase", "false"},
	{"core.precomposeUnicode", "false"},
	{"core.trustctime", "true"},
	{"core.splitIndex", "false"},
	{"core.sparseCheckout", "false"},
	{"core.attributesFile", os.DevNull},
	{"core.logAllRefUpdates", "false"},
	{"core.quotePath", "false"},
	{"index.sparse", "false"},
	{"index.version", "4"},
	{"commit.gpgSign", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"submodule.recurse", "false"},
	{"i18n.commitEncoding", "UTF-8"},
}

// Runner executes one git binary with a fixed base environment.
type Runner struct {
	path string
	base []string
}

// NotFoundError reports that no usable git binary exists.
type NotFoundError struct {
	Path string // the name or path looked up
	Err  error
}

// Error names the binary looked up.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("git binary %q not found: %v", e.Path, e.Err)
}

// Unwrap returns the lookup error.
func (e *NotFoundError) Unwrap() error { return e.Err }

// New resolves the git binary (name looked up in PATH when it has no slash)
// and builds the clean base environment. extraConfig is appended to
// Overrides.
func New(gitPath string, extraConfig [][2]string) (*Runner, error) {
	if gitPath == "" {
		gitPath = "git"
	}
	p, err := exec.LookPath(gitPath)
	if err != nil {
		return nil, &NotFoundError{Path: gitPath, Err: err}
	}
	return &Runner{path: p, base: BaseEnv(extraConfig)}, nil
}

// Path is the resolved git binary.
func (r *Runner) Path() string { return r.path }

// BaseEnv is the environment every invocation starts from: nothing is
// inherited from the host process except PATH and TMPDIR.
func BaseEnv(extraConfig [][2]string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{
		"PATH=" + path,
		"LC_ALL=C",
		"LANG=C",
		"LANGUAGE=",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_EDITOR=:",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_ADVICE=0",
		"GIT_AUTHOR_NAME=" + IdentityName,
		"GIT_AUTHOR_EMAIL=" + IdentityEmail,
		"GIT_COMMITTER_NAME=" + IdentityName,
		"GIT_COMMITTER_EMAIL=" + IdentityEmail,
		// git frees and reallocates a buffer per object it reads or
		// writes; under glibc's default trim threshold each one shrinks
		// and regrows the heap (two brk calls per object: most of the
		// time of a first checkpoint's fast-import on a loaded machine).
		// Padding keeps the heap for the life of the short process; other
		// C libraries ignore these variables.
		"MALLOC_TOP_PAD_=67108864",
		"MALLOC_TRIM_THRESHOLD_=268435456",
	}
	if t := os.Getenv("TMPDIR"); t != "" {
		env = append(env, "TMPDIR="+t)
	}
	cfg := append(append([][2]string(nil), Overrides...), extraConfig...)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(cfg)))
	for i, kv := range cfg {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return env
}

// Error is a git invocation that failed.
type Error struct {
	Args     []string
	ExitCode int // -1 when the process did not exit normally
	Stderr   string
	Err      error
}

// Error names the git subcommand, the exit status and git's message.
func (e *Error) Error() string {
	name := "git"
	if len(e.Args) > 0 {
		name += " " + e.Args[0]
	}
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 2000 {
		msg = msg[:2000] + "..."
	}
	if msg == "" {
		return fmt.Sprintf("%s: %v", name, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", name, e.Err, msg)
}

// Unwrap returns the underlying exec or context error.
func (e *Error) Unwrap() error { return e.Err }

// Cmd describes one invocation.
type Cmd struct {
	Dir   string   // working directory; must be set
	Env   []string // appended to the base environment
	Args  []string // arguments after "git"
	Stdin io.Reader
}

func (r *Runner) command(ctx context.Context, c Cmd) *exec.Cmd {
	cmd := exec.CommandContext(ctx, r.path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(append(make([]string, 0, len(r.base)+len(c.Env)), r.base...), c.Env...)
	cmd.Stdin = c.Stdin
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs git and returns its standard output.
func (r *Runner) Run(ctx context.Context, c Cmd) ([]byte, error) {
	cmd := r.command(ctx, c)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), wrapErr(ctx, c.Args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func wrapErr(ctx context.Context, args []string, err error, stderr string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	return &Error{Args: args, ExitCode: code, Stderr: stderr, Err: err}
}

// Stream is a running git process whose standard input and output the
// caller drives (cat-file --batch).
type Stream struct {
	cmd    *exec.Cmd
	args   []string
	ctx    context.Context
	Stdin  io.WriteCloser
	Stdout io.Reader
	stderr bytes.Buffer
}

// Start starts a streaming invocation. Without c.Stdin, Stream.Stdin is
// a pipe to the process; with it, the process reads c.Stdin (an *os.File,
// such as the read end of a pipe the caller writes to, is handed over as
// it is) and Stream.Stdin is nil.
func (r *Runner) Start(ctx context.Context, c Cmd) (*Stream, error) {
	cmd := r.command(ctx, c)
	s := &Stream{cmd: cmd, args: c.Args, ctx: ctx}
	cmd.Stderr = &s.stderr
	var in io.WriteCloser
	if c.Stdin == nil {
		var err error
		if in, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, wrapErr(ctx, c.Args, err, "")
	}
	s.Stdin, s.Stdout = in, out
	return s, nil
}

// Kill stops the process; Wait must still be called.
func (s *Stream) Kill() error { return s.cmd.Process.Kill() }

// Wait closes standard input and waits for the process to exit.
func (s *Stream) Wait() error {
	if s.Stdin != nil {
		_ = s.Stdin.Close()
	}
	_, _ = io.Copy(io.Discard, s.Stdout)
	if err := s.cmd.Wait(); err != nil {
		return wrapErr(s.ctx, s.args, err, s.stderr.String())
	}
	return nil
}

// Version is a git release number.
type Version [3]int

// String renders the version as "major.minor.patch".
func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// ParseVersion parses the output of "git version", e.g. "git version 2.39.5",
// "git version 2.45.1.windows.1" or "git version 2.39.3 (Apple Git-146)".
func ParseVersion(out string) (Version, error) {
	var v Version
	s := strings.TrimSpace(out)
	rest, ok := strings.CutPrefix(s, "git version ")
	if !ok {
		return v, fmt.Errorf("unrecognised git version output %q", truncate(s))
	}
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		rest = rest[:i]
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 {
		return v, fmt.Errorf("unrecognised git version %q", truncate(rest))
	}
	for i := 0; i < 3 && i < len(parts); i++ {
		p := parts[i]
		if i == 2 {
			// "2.45.0-rc1" or "2.45.rc0": keep the leading digits only.
			j := 0
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			p = p[:j]
			if p == "" {
				p = "0"
			}
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 6 {
			return v, fmt.Errorf("unrecognised git version %q", truncate(rest))
		}
		v[i] = n
	}
	return v, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Version runs "git version".
func (r *Runner) Version(ctx context.Context, dir string) (Version, error) {
	out, err := r.Run(ctx, Cmd{Dir: dir, Args: []string{"version"}})
	if err != nil {
		return Version{}, err
	}
	return ParseVersion(string(out))
}
