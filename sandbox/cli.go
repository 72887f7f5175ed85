package sandbox

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// preflightTimeout bounds the availability checks the CLI backends run
// (docker version, ssh connection checks).
const preflightTimeout = 15 * time.Second

// cleanupTimeout bounds the calls that stop a command on the far side
// after a timeout (docker rm -f, a remote kill).
const cleanupTimeout = 15 * time.Second

// findCLI looks a CLI up in the host's PATH: configured (a name or a
// path) or def. The error names the CLI and says how to get it.
func findCLI(backend, configured, def, install string) (string, *UnavailableError) {
	name := configured
	if name == "" {
		name = def
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", &UnavailableError{Backend: backend, Reason: fmt.Sprintf("the %s CLI is not installed: %q is not in PATH (%s)", def, name, install)}
	}
	return p, nil
}

// hostEnv returns the host environment without the variables whose
// names start with one of drop (settings of a CLI that a backend makes
// itself and must not inherit).
func hostEnv(drop ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, d := range drop {
			if strings.HasPrefix(kv, d) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// envKeys returns the keys of KEY=VALUE pairs, in order.
func envKeys(env []string) []string {
	keys := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	return keys
}

// containerEnv splits what a container backend forwards: hostKeys are
// allowed variables whose value comes from the host environment (the
// CLI copies them, "-e KEY"), pairs the KEY=VALUE pairs of
// Command.Env (all of them), which never enter the CLI's own environment (a
// Command.Env HOME or PATH must not reconfigure the CLI on the host).
// Without an allowlist nothing comes from the host and every pair of
// Command.Env is forwarded.
func containerEnv(allow, cmdEnv []string) (hostKeys, pairs []string) {
	pairs = buildEnv(nil, cmdEnv, allow)
	set := map[string]bool{}
	for _, k := range envKeys(pairs) {
		set[k] = true
	}
	for _, k := range allow {
		if _, ok := os.LookupEnv(k); ok && !set[k] {
			hostKeys = append(hostKeys, k)
			set[k] = true
		}
	}
	return hostKeys, pairs
}

// durationSeconds renders d as whole seconds, rounded up, at least 1.
func durationSeconds(d time.Duration) string {
	return strconv.FormatInt(int64(math.Max(1, math.Ceil(d.Seconds()))), 10)
}

// lastLines returns the last n non-empty lines of b, trimmed, for an
// error message.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// cliProc is one CLI process for runCLI.
type cliProc struct {
	path      string
	args      []string // argv[0] included
	env       []string
	stdin     io.Reader
	timeout   time.Duration
	maxOutput int
	// stdoutW and stderrW, if set, receive the output instead of the
	// capped buffers of cliOut.
	stdoutW, stderrW io.Writer
	// beforeKill runs once when the timeout or ctx ends the run, before
	// the CLI's process group is killed.
	beforeKill func()
}

// cliOut is what runCLI saw.
type cliOut struct {
	status               cliStatus
	stdout, stderr       []byte
	stdoutCut, stderrCut bool
}

// scriptRun is one run of a CLI that runs a framed remoteScript.
type scriptRun struct {
	conf      Confinement
	cli       string // what ran the script, for messages ("ssh to host")
	path      string
	argv      []string // argv[0] included
	env       []string
	stdin     io.Reader
	timeout   time.Duration
	maxOutput int
	nonce     string
	files     bool   // the script was built with files set
	handshake bool   // the script was built with handshake set
	dir       string // Command.Dir, for violations
	// beforeKill, if set, stops the command on the far side when the
	// timeout or ctx ends the run; it gets the stderr frame, whose
	// opening line carries the far side's process id.
	beforeKill func(stderr *frame)
}

// run runs the CLI and turns the framed output into a Result.
func (r scriptRun) run(ctx context.Context) (Result, error) {
	outMax := r.maxOutput
	if r.files {
		// Both streams arrive base64-encoded on stdout.
		outMax = 3*r.maxOutput + 4096
	}
	outF, errF := newFrame(r.nonce, outMax), newFrame(r.nonce, r.maxOutput)
	p := cliProc{
		path: r.path, args: r.argv, env: r.env, stdin: r.stdin, timeout: r.timeout,
		stdoutW: outF, stderrW: errF,
	}
	if r.beforeKill != nil {
		p.beforeKill = func() { r.beforeKill(errF) }
	}
	if r.handshake {
		stdin, stop, err := r.goSignal(ctx, errF)
		if err != nil {
			return unavailableResult(r.conf, &UnavailableError{Backend: r.conf.Backend, Reason: "making the stdin pipe: " + err.Error()})
		}
		defer stop()
		p.stdin = stdin
	}
	st := runCLI(ctx, p).status
	o, e := outF.result(), errF.result()
	chatter := append(o.chatter, e.chatter...)
	if !r.files {
		return scriptOutcome(r.conf, st, r.dir, e.kind, e.ended, o.out, e.out, o.truncated, e.truncated, chatter, r.cli)
	}
	if !o.ended || st.timedOut {
		return scriptOutcome(r.conf, st, r.dir, o.kind, o.ended, nil, nil, false, false, chatter, r.cli)
	}
	if _, isExit := exitMark(o.kind); !isExit {
		return scriptOutcome(r.conf, st, r.dir, o.kind, true, nil, o.out, false, false, chatter, r.cli)
	}
	fo, ok := parseFiles(o.out, r.nonce)
	if !ok {
		return scriptOutcome(r.conf, st, r.dir, "", false, nil, nil, false, false, append(chatter, o.out...), r.cli)
	}
	return scriptOutcome(r.conf, st, r.dir, o.kind, true, fo.stdout, fo.stderr, fo.stdoutCut, fo.stderrCut, chatter, r.cli)
}

// goSignal returns the CLI's stdin for a handshake script: once the
// script's opening line (with the far side's process id) has arrived it
// carries "go SECONDS WHOLE" (the time left before the deadline) and
// then Command.Stdin. If the run ends first, or no time is left, it is
// closed without the line and the script does not start the command.
// stop releases the pipe once the CLI has exited.
func (r scriptRun) goSignal(ctx context.Context, stderr *frame) (*os.File, func(), error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(r.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	done := make(chan struct{})
	go func() {
		defer pw.Close()
		select {
		case <-stderr.startCh:
		case <-done:
			return
		case <-ctx.Done():
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		if _, err := fmt.Fprintf(pw, "go %s %s\n", strconv.FormatFloat(left.Seconds(), 'f', 3, 64), durationSeconds(left)); err != nil {
			return
		}
		if r.stdin != nil {
			_, _ = io.Copy(pw, r.stdin)
		}
	}()
	return pr, func() { close(done); pr.Close() }, nil
}

// stageWorkspace makes a copy of root for a backend that uploads the
// workspace (modal): the same tree without the denied paths, without
// symbolic links that lead to one or out of the workspace, and without
// special files. Files are hard-linked where the file system allows it,
// copied otherwise. The copy is <tmp>/<base name of root>; cleanup
// removes it.
func stageWorkspace(root string, m pathMatcher) (dir string, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "reins-stage-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	dir = filepath.Join(tmp, filepath.Base(root))
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("staging %s: %w", p, err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if p != root {
			if _, denied := m.match(p); denied {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(dst, 0o755)
		case t&os.ModeSymlink != 0:
			pc, err := m.check(filepath.Dir(p), p)
			if err != nil || pc.Denied || !within(pc.Resolved, root) {
				return nil // leads to a denied path or out of the workspace
			}
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case t.IsRegular():
			if os.Link(p, dst) == nil {
				return nil
			}
			return copyFile(p, dst)
		default:
			return nil // sockets, devices, pipes
		}
	})
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// copyFile copies a regular file with its permission bits.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// toolFailed reports a container tool's own failure (not the command's) as the backend being
// unavailable, keeping what the run printed to stdout.
func toolFailed(backend, reason string, out cliOut) (Result, error) {
	r, err := unavailableResult(Confinement{Backend: backend}, &UnavailableError{Backend: backend, Reason: reason})
	r.Stdout = out.stdout
	r.Duration = out.status.duration
	return r, err
}

// linePrefixed reports whether a line of b starts with one of the prefixes.
func linePrefixed(b []byte, prefixes ...string) bool {
	for _, line := range strings.Split(string(b), "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				return true
			}
		}
	}
	return false
}
