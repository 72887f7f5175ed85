package remote

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// The backends whose command runs on the far side of a CLI (ssh, modal,
// daytona, vercel-sandbox) send it as one shell script. The script
// checks the working directory where the files are, filters the
// environment, runs the argument vector (every argument quoted with
// syntax.Quote, so nothing in it is interpreted) and frames what it
// prints between marker lines that carry a random nonce, so that the
// backend can tell the command's output and exit status from what the
// CLI itself prints, and can tell a command that ran from one that did
// not.

// quoteArg quotes one argument for a bash-compatible shell. Control
// characters and invalid UTF-8 are written as $'...' escapes.
func quoteArg(s string) (string, error) {
	return syntax.Quote(s, syntax.LangBash)
}

// newNonce returns a random marker for one run.
func newNonce() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "reins" + hex.EncodeToString(b), nil
}

// remoteScript is the script a remote or vendor backend runs.
type remoteScript struct {
	nonce string
	// root is the absolute working root on the far side; dir the
	// absolute working directory (root or below it, as written).
	root, dir string
	// denied are case patterns (see deniedCasePatterns) that the
	// physical working directory must not match.
	denied []string
	// clearEnv starts the command with an empty environment, then keep
	// (identifiers) are copied from the far side's environment, then set
	// (KEY=VALUE) are applied.
	clearEnv bool
	keep     []string
	set      []string
	args     []string
	// files captures stdout and stderr in temporary files and prints
	// them base64-encoded on stdout after the command (for a CLI that
	// merges the two streams); maxOutput caps each.
	files     bool
	maxOutput int
	// handshake makes the script read a line "go SECONDS WHOLE" from
	// stdin before it runs the command, and give up quietly on anything
	// else: the backend sends it only once it holds the far side's
	// process id (so that it can kill what runs), with the time left
	// before its deadline, which a watchdog on the far side enforces too.
	handshake bool
	// watchdog, without handshake, kills the script's process group
	// that long after the command starts; zero means none.
	watchdog time.Duration
}

// The kinds of the closing marker line.
const (
	markExit    = "exit"    // exit:N, the command ran and exited with N
	markOutside = "outside" // the working directory resolves outside the root
	markDenied  = "denied"  // the working directory matches a denied path
	markNoDir   = "nodir"   // the working directory does not exist
	markNoRoot  = "noroot"  // the root does not exist or cannot be entered
	markNoTemp  = "notemp"  // no temporary directory for the output files
	markNoGo    = "nogo"    // the backend gave up before the command started
)

// build returns the script's text.
func (s remoteScript) build() (string, error) {
	var b strings.Builder
	q := func(x string) (string, error) { return quoteArg(x) }
	// The nonce is split by quotes in the text, so the script itself
	// (which a CLI may echo) never contains a marker line.
	fmt.Fprintf(&b, "__reins_n='%s'%s\n", s.nonce[:5], s.nonce[5:])
	if s.files {
		b.WriteString("__reins_t() { printf '%s:%s\\n' \"$__reins_n\" \"$1\"; exit \"$2\"; }\n")
		b.WriteString("printf '%s:start\\n' \"$__reins_n\"\n")
	} else {
		b.WriteString("__reins_t() { printf '%s:end\\n' \"$__reins_n\"; printf '%s:%s\\n' \"$__reins_n\" \"$1\" >&2; exit \"$2\"; }\n")
		b.WriteString("printf '%s:start\\n' \"$__reins_n\"\n")
		b.WriteString("printf '%s:start:%s\\n' \"$__reins_n\" \"$$\" >&2\n")
	}
	root, err := q(s.root)
	if err != nil {
		return "", err
	}
	dir, err := q(s.dir)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "cd %s || __reins_t %s 127\n", root, markNoRoot)
	fmt.Fprintf(&b, "__reins_r=$(pwd -P) || __reins_t %s 127\n", markNoRoot)
	fmt.Fprintf(&b, "cd %s || __reins_t %s 126\n", dir, markNoDir)
	fmt.Fprintf(&b, "__reins_d=$(pwd -P) || __reins_t %s 126\n", markNoDir)
	fmt.Fprintf(&b, "case \"$__reins_d/\" in \"${__reins_r%%/}\"/*) ;; *) __reins_t %s 126;; esac\n", markOutside)
	if len(s.denied) > 0 {
		fmt.Fprintf(&b, "case \"$__reins_d/\" in %s) __reins_t %s 126;; esac\n", strings.Join(s.denied, "|"), markDenied)
	}

	var cmd strings.Builder
	cmd.WriteString("env")
	if s.clearEnv {
		cmd.WriteString(" -i")
	}
	cmd.WriteString(" --")
	if s.clearEnv {
		for _, k := range s.keep {
			fmt.Fprintf(&cmd, ` ${%s+"%s=$%s"}`, k, k, k)
		}
	}
	for _, kv := range s.set {
		x, err := q(kv)
		if err != nil {
			return "", err
		}
		cmd.WriteString(" " + x)
	}
	if len(s.args) > 0 && strings.Contains(s.args[0], "=") {
		// env would take the program for an assignment: let a shell run
		// it (which drops variables whose names are not identifiers).
		cmd.WriteString(` /bin/sh -c 'exec "$@"' reins`)
	}
	for _, a := range s.args {
		x, err := q(a)
		if err != nil {
			return "", err
		}
		cmd.WriteString(" " + x)
	}

	// The watchdog and the leftover kill below reach the whole process
	// group when this shell leads it, as it does under sshd; elsewhere
	// the kills find no group and do nothing. A sleep without fractions
	// sleeps whole seconds. The watchdog is stopped, its sleep too, when
	// the command ends first.
	const watchdog = "sleep 0.001 2>/dev/null || __reins_s=$__reins_w\n" +
		"(trap 'kill \"$__reins_z\" 2>/dev/null; exit 0' TERM; sleep \"$__reins_s\" & __reins_z=$!; wait \"$__reins_z\" && kill -9 -$$) </dev/null >/dev/null 2>&1 &\n" +
		"__reins_wd=$!\n"
	stopWatchdog := ""
	switch {
	case s.handshake:
		fmt.Fprintf(&b, "IFS=' ' read -r __reins_g __reins_s __reins_w || __reins_t %s 0\n", markNoGo)
		fmt.Fprintf(&b, "[ \"$__reins_g\" = go ] || __reins_t %s 0\n", markNoGo)
		fmt.Fprintf(&b, "case \"$__reins_s$__reins_w\" in ''|*[!0-9.]*) __reins_t %s 0;; esac\n", markNoGo)
		b.WriteString(watchdog)
		stopWatchdog = "kill \"$__reins_wd\" 2>/dev/null\n"
	case s.watchdog > 0:
		fmt.Fprintf(&b, "__reins_s=%s __reins_w=%s\n", strconv.FormatFloat(s.watchdog.Seconds(), 'f', 3, 64), backend.Seconds(s.watchdog))
		b.WriteString(watchdog)
		stopWatchdog = "kill \"$__reins_wd\" 2>/dev/null\n"
	}
	if s.files {
		fmt.Fprintf(&b, "__reins_o=$(mktemp -d) || __reins_t %s 127\n", markNoTemp)
		fmt.Fprintf(&b, "%s >\"$__reins_o/1\" 2>\"$__reins_o/2\" </dev/null\n", cmd.String())
		b.WriteString("__reins_c=$?\n")
		b.WriteString(stopWatchdog)
		b.WriteString("for __reins_i in 1 2; do\n")
		b.WriteString("  printf '%s:out%s:%s\\n' \"$__reins_n\" \"$__reins_i\" \"$(wc -c <\"$__reins_o/$__reins_i\")\"\n")
		fmt.Fprintf(&b, "  head -c %d \"$__reins_o/$__reins_i\" | base64\n", s.maxOutput)
		b.WriteString("done\n")
		b.WriteString("rm -rf \"$__reins_o\"\n")
		fmt.Fprintf(&b, "__reins_t \"%s:$__reins_c\" 0\n", markExit)
	} else {
		// The command's stderr is the script's (fd 3), while the shell's
		// own notices ("Terminated" for a command killed by a signal) go
		// to /dev/null.
		fmt.Fprintf(&b, "{ %s 2>&3 3>&-; } 3>&2 2>/dev/null\n", cmd.String())
		b.WriteString("__reins_c=$?\n")
		b.WriteString(stopWatchdog)
		b.WriteString("printf '%s:end\\n' \"$__reins_n\"\n")
		fmt.Fprintf(&b, "printf '%%s:%s:%%s\\n' \"$__reins_n\" \"$__reins_c\" >&2\n", markExit)
		// Whatever the command left behind in its process group dies
		// now, as with local.
		b.WriteString("kill -9 -$$ 2>/dev/null\n")
		b.WriteString("exit \"$__reins_c\"\n")
	}
	return b.String(), nil
}

// remoteDenied compiles the protected paths of a backend whose commands run elsewhere (the
// policy's DeniedPaths and WriteProtectedPaths): the matcher for the checks made on this host,
// and the case-insensitive patterns the far side's script uses. Both classes are refused alike
// there, as the defaults' write-protected entries are.
func remoteDenied(pol sandbox.FsNetPolicy) (pathmatch.Matcher, []string, error) {
	m, err := pathmatch.New(pol.DeniedPaths, pol.WriteProtectedPaths)
	if err != nil {
		return m, nil, err
	}
	patterns, err := deniedCasePatterns(m)
	return m, patterns, err
}

// checkShell validates the shell a remote script runs under: a program name, never an option or
// something that needs quoting.
func checkShell(field, shell string) error {
	if strings.HasPrefix(shell, "-") || strings.ContainsAny(shell, " \t\n'\"") {
		return fmt.Errorf("sandbox: %s %q is not a program name", field, shell)
	}
	return nil
}

// deniedCasePatterns turns the denied entries into shell case patterns
// that match "$dir/" when dir is or is below a denied path, ignoring
// ASCII case.
func deniedCasePatterns(m pathmatch.Matcher) ([]string, error) {
	var out []string
	comp := func(c string) (string, error) {
		var b strings.Builder
		for _, r := range c {
			switch {
			case r < unicode.MaxASCII && unicode.IsLetter(r):
				fmt.Fprintf(&b, "[%c%c]", unicode.ToLower(r), unicode.ToUpper(r))
			case r < 0x20 || r == 0x7f:
				return "", fmt.Errorf("sandbox: denied path component %q has a control character", c)
			default:
				x, err := syntax.Quote(string(r), syntax.LangPOSIX)
				if err != nil {
					return "", fmt.Errorf("sandbox: denied path component %q: %w", c, err)
				}
				b.WriteString(x)
			}
		}
		return b.String(), nil
	}
	join := func(comps []string) (string, error) {
		parts := make([]string, len(comps))
		for i, c := range comps {
			p, err := comp(c)
			if err != nil {
				return "", err
			}
			parts[i] = p
		}
		return strings.Join(parts, "/"), nil
	}
	for _, e := range m.Rel {
		p, err := join(e)
		if err != nil {
			return nil, err
		}
		out = append(out, "*/"+p+"/*")
	}
	for _, e := range m.Abs {
		p, err := join(e)
		if err != nil {
			return nil, err
		}
		out = append(out, "/"+p+"/*")
	}
	return out, nil
}

// lexicalWorkdir joins dir to the far side's root as written (the far
// side's links cannot be followed from here; the script checks the
// physical directory again there). It refuses a directory outside the
// root or naming a denied path.
func lexicalWorkdir(root string, m pathmatch.Matcher, dir string) (string, []sandbox.Violation) {
	raw := dir
	if raw == "" {
		raw = root
	} else if !path.IsAbs(raw) {
		raw = root + "/" + raw
	}
	clean := path.Clean(raw)
	if !fspath.Within(clean, root) {
		return "", []sandbox.Violation{{Kind: sandbox.ViolationOutsideRoot, Subject: dir, Detail: fmt.Sprintf("working directory %s is outside the root %s", clean, root)}}
	}
	if e, ok := m.Match(clean); ok {
		return "", []sandbox.Violation{{Kind: sandbox.ViolationDeniedPath, Subject: dir, Detail: fmt.Sprintf("working directory matches denied path %q", e)}}
	}
	if e, ok := m.Match(raw); ok {
		return "", []sandbox.Violation{{Kind: sandbox.ViolationDeniedPath, Subject: dir, Detail: fmt.Sprintf("working directory matches denied path %q", e)}}
	}
	return clean, nil
}

// remoteEnv splits the environment of a remote command: clear says
// whether the far side's environment is cleared, keep which of its
// variables survive, set the KEY=VALUE pairs from Command.Env (all of
// them: the allowlist filters the far side's environment only).
func remoteEnv(allow, cmdEnv []string) (clear bool, keep, set []string) {
	clear = len(allow) > 0
	for _, k := range allow {
		if isIdentifier(k) {
			keep = append(keep, k)
		}
	}
	return clear, keep, envlist.Build(nil, cmdEnv, allow)
}

// isIdentifier reports whether s is a shell variable name.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r < unicode.MaxASCII && unicode.IsLetter(r) || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// frameTail is how much of the end of a stream a frame keeps to find
// the closing marker: whatever a CLI prints after it must fit.
const frameTail = 64 << 10

// framePre caps what a CLI prints before the opening marker.
const framePre = 64 << 10

// frame receives one stream of a framed script: what the CLI printed
// before the opening marker line, the command's output (the first max
// bytes of it) and the closing marker line.
type frame struct {
	mark []byte // nonce + ":"
	max  int

	mu       sync.Mutex
	pre      []byte
	started  bool
	startArg string
	startCh  chan struct{}
	body     []byte
	total    int64
	tail     []byte
}

func newFrame(nonce string, max int) *frame {
	return &frame{mark: []byte(nonce + ":"), max: max, startCh: make(chan struct{})}
}

// Write implements io.Writer; it never fails.
func (f *frame) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started {
		f.addBody(p)
		return len(p), nil
	}
	f.pre = append(f.pre, p...)
	open := append(append([]byte(nil), f.mark...), "start"...)
	if i := bytes.Index(f.pre, open); i >= 0 {
		if nl := bytes.IndexByte(f.pre[i:], '\n'); nl >= 0 {
			line := string(f.pre[i+len(open) : i+nl])
			rest := append([]byte(nil), f.pre[i+nl+1:]...)
			f.pre = f.pre[:i]
			f.started = true
			f.startArg = strings.TrimPrefix(line, ":")
			close(f.startCh)
			f.addBody(rest)
			return len(p), nil
		}
	}
	if len(f.pre) > framePre {
		f.pre = append(f.pre[:0], f.pre[len(f.pre)-framePre:]...)
	}
	return len(p), nil
}

func (f *frame) addBody(p []byte) {
	f.total += int64(len(p))
	if room := f.max - len(f.body); room > 0 {
		f.body = append(f.body, p[:min(room, len(p))]...)
	}
	f.tail = append(f.tail, p...)
	if len(f.tail) > frameTail {
		f.tail = append(f.tail[:0], f.tail[len(f.tail)-frameTail:]...)
	}
}

// startArgNow returns what followed "start:" on the opening line, if it
// has arrived.
func (f *frame) startArgNow() (string, bool) {
	select {
	case <-f.startCh:
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.startArg, true
	default:
		return "", false
	}
}

// framed is what a frame saw once the stream ended.
type framed struct {
	started   bool   // the opening line arrived: the script ran
	ended     bool   // the closing line arrived
	kind      string // the closing line's text after the nonce
	out       []byte // the command's output, at most max bytes
	truncated bool
	chatter   []byte // what the CLI printed around the frame
}

func (f *frame) result() framed {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := framed{started: f.started, chatter: append([]byte(nil), f.pre...)}
	if !f.started {
		return r
	}
	content := f.total
	if i := lastMarkLine(f.tail, f.mark); i >= 0 {
		nl := bytes.IndexByte(f.tail[i:], '\n')
		r.ended = true
		r.kind = string(f.tail[i+len(f.mark) : i+nl])
		content = f.total - int64(len(f.tail)) + int64(i)
		r.chatter = append(r.chatter, f.tail[i+nl+1:]...)
	}
	n := min(int64(len(f.body)), content)
	r.out = append([]byte(nil), f.body[:n]...)
	r.truncated = content > int64(f.max)
	return r
}

// lastMarkLine returns the index of the last complete line in b that
// starts with mark (at the start of b or after any byte: the command's
// output need not end with a newline), or -1.
func lastMarkLine(b, mark []byte) int {
	for end := len(b); end > 0; {
		i := bytes.LastIndex(b[:end], mark)
		if i < 0 {
			return -1
		}
		if bytes.IndexByte(b[i:], '\n') >= 0 {
			return i
		}
		end = i
	}
	return -1
}

// exitMark parses "exit:N".
func exitMark(kind string) (int, bool) {
	n, ok := strings.CutPrefix(kind, markExit+":")
	if !ok {
		return 0, false
	}
	code, err := strconv.Atoi(n)
	if err != nil || code < 0 || code > 255 {
		return 0, false
	}
	return code, true
}

// filesOutput is the command's output as a files script printed it.
type filesOutput struct {
	stdout, stderr       []byte
	stdoutCut, stderrCut bool
}

// parseFiles decodes the two base64 sections that a script built with
// files set prints before its closing line (body is the framed stdout
// up to that line). ok is false when they are malformed.
func parseFiles(body []byte, nonce string) (filesOutput, bool) {
	var r filesOutput
	mark := nonce + ":"
	section := 0
	var b64 [3]strings.Builder
	var sizes [3]int64
	var seen [3]bool
	for _, line := range strings.Split(string(body), "\n") {
		rest, isMark := strings.CutPrefix(line, mark)
		switch {
		case isMark && (strings.HasPrefix(rest, "out1:") || strings.HasPrefix(rest, "out2:")):
			section = int(rest[3] - '0')
			n, err := strconv.ParseInt(strings.TrimSpace(rest[5:]), 10, 64)
			if err != nil || seen[section] {
				return filesOutput{}, false
			}
			sizes[section], seen[section] = n, true
		case section > 0:
			b64[section].WriteString(strings.TrimSpace(line))
		}
	}
	if !seen[1] || !seen[2] {
		return filesOutput{}, false
	}
	for s := 1; s <= 2; s++ {
		data, err := base64.StdEncoding.DecodeString(b64[s].String())
		if err != nil {
			return filesOutput{}, false
		}
		if s == 1 {
			r.stdout, r.stdoutCut = data, sizes[1] > int64(len(data))
		} else {
			r.stderr, r.stderrCut = data, sizes[2] > int64(len(data))
		}
	}
	return r, true
}

// scriptOutcome turns the closing marker of a script into a result. cli
// describes what ran the script, for messages; pr says how it ended;
// dir is Command.Dir, for violations.
func scriptOutcome(conf sandbox.Confinement, pr backend.Status, dir string, kind string, ended bool, stdout, stderr []byte, stdoutCut, stderrCut bool, chatter []byte, cli string) (sandbox.Result, error) {
	res := sandbox.Result{
		Stdout: stdout, Stderr: stderr, StdoutTruncated: stdoutCut, StderrTruncated: stderrCut,
		TimedOut: pr.TimedOut, Duration: pr.Duration, Confinement: conf,
	}
	if pr.TimedOut {
		res.ExitCode = pr.ExitCode
		if res.ExitCode == 0 {
			res.ExitCode = 128 + 9
		}
		return res, nil
	}
	if !ended {
		msg := fmt.Sprintf("%s ended (exit code %d) without reporting the command's exit status; the command may not have run, or may have been cut off", cli, pr.ExitCode)
		if pr.StartErr != nil {
			msg = fmt.Sprintf("%s could not be started: %v", cli, pr.StartErr)
		}
		if s := strings.TrimSpace(string(chatter)); s != "" {
			msg += ": " + s
		}
		r, err := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: conf.Backend, Reason: msg})
		r.Stdout, r.Stderr = stdout, append(append([]byte(nil), stderr...), r.Stderr...)
		r.Duration = pr.Duration
		return r, err
	}
	if code, ok := exitMark(kind); ok {
		res.ExitCode = code
		return res, nil
	}
	var v sandbox.Violation
	switch kind {
	case markOutside:
		v = sandbox.Violation{Kind: sandbox.ViolationOutsideRoot, Subject: dir, Detail: "working directory resolves outside the root on the far side (symbolic links followed there)"}
	case markDenied:
		v = sandbox.Violation{Kind: sandbox.ViolationDeniedPath, Subject: dir, Detail: "working directory matches a denied path on the far side (symbolic links followed there)"}
	case markNoDir:
		v = sandbox.Violation{Kind: sandbox.ViolationUncheckable, Subject: dir, Detail: "working directory does not exist or cannot be entered on the far side: " + strings.TrimSpace(string(stderr))}
	case markNoGo:
		r, err := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: conf.Backend, Reason: "the run ended before the command was started on the far side"})
		r.Duration = pr.Duration
		return r, err
	case markNoRoot, markNoTemp:
		what := "the root directory does not exist or cannot be entered on the far side"
		if kind == markNoTemp {
			what = "no temporary directory could be made on the far side for the output"
		}
		r, err := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: conf.Backend, Reason: what + ": " + strings.TrimSpace(string(stderr))})
		r.Duration = pr.Duration
		return r, err
	default:
		r, err := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: conf.Backend, Reason: fmt.Sprintf("%s reported an unknown status %q", cli, kind)})
		r.Duration = pr.Duration
		return r, err
	}
	r, err := backend.Denied(conf, []sandbox.Violation{v})
	r.Duration = pr.Duration
	return r, err
}
