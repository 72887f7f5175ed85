//go:build linux

package shell_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Reading strace's output. The proofs run one strace, with -f -ff -y, over the server that runs
// every line (proof_run_test.go): one file per process, every file descriptor argument decorated
// with the path it refers to ("3</w/src>"), AT_FDCWD with the working directory
// ("AT_FDCWD</w>"). A file's lines are that process's system calls in order, so the working
// directory of a call that takes a plain path (open, mkdir, rename ...) is known from the
// process's last chdir or *at call, or else from its parent at the clone. A run is the tree of
// processes under the shell the server started for it.

// proofSyscalls are the system calls traced: whatever opens, creates, renames, links, removes or
// changes the metadata of a file, runs a program, changes directory, starts a process or
// reaches a socket.
var proofSyscalls = []string{
	"open", "openat", "openat2", "creat",
	"mkdir", "mkdirat", "mknod", "mknodat", "rmdir",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat",
	"truncate", "ftruncate", "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "utimensat", "futimesat",
	"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
	"execve", "execveat",
	"chdir", "fchdir",
	"clone", "clone3", "fork", "vfork",
	"connect", "bind", "sendto", "sendmsg", "sendmmsg",
}

// traceKind is what a traced call did.
type traceKind uint8

const (
	traceOpen  traceKind = iota // a file opened: Flags say how
	traceWrite                  // a file created, renamed, linked, removed or changed
	traceExec                   // a program run
	traceNet                    // a socket connected, bound or sent to an address
)

// traceEvent is one effect seen in the trace.
type traceEvent struct {
	Kind    traceKind
	Pid     int
	Syscall string
	// Path is the file (absolute and clean), the program run, or for traceNet the family and
	// address ("AF_INET 127.0.0.1:80", "AF_UNIX /run/nscd/socket").
	Path  string
	Flags string // the open flags, as strace prints them
	OK    bool   // the call succeeded
	Line  string // the trace line, for reports
}

// traceCall is one parsed line: the call, its arguments split at the top level, its result.
type traceCall struct {
	name   string
	args   []string
	result string
	line   string
}

// parseTraceLine splits "name(arg, arg, ...) = result". It reports false for what is not a
// call (exit and signal notes).
func parseTraceLine(line string) (traceCall, bool) {
	open := strings.IndexByte(line, '(')
	if open <= 0 || strings.ContainsAny(line[:open], " +-<") {
		return traceCall{}, false
	}
	c := traceCall{name: line[:open], line: line}
	depth, inQuote, start := 0, false, open+1
	i := open + 1
	for ; i < len(line); i++ {
		ch := line[i]
		if inQuote {
			switch ch {
			case '\\':
				i++
			case '"':
				inQuote = false
			}
			continue
		}
		switch ch {
		case '"':
			inQuote = true
		case '{', '[', '<':
			depth++
		case '}', ']', '>':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				c.args = append(c.args, strings.TrimSpace(line[start:i]))
				start = i + 1
			}
		case ')':
			if depth == 0 {
				if s := strings.TrimSpace(line[start:i]); s != "" || len(c.args) > 0 {
					c.args = append(c.args, s)
				}
				rest := line[i+1:]
				if j := strings.Index(rest, "= "); j >= 0 {
					c.result = strings.TrimSpace(rest[j+2:])
				}
				return c, true
			}
		}
	}
	return traceCall{}, false
}

// ok reports whether the call succeeded (its result is not -1).
func (c traceCall) ok() bool {
	return c.result != "" && !strings.HasPrefix(c.result, "-1") && c.result != "?"
}

// unquote decodes a strace string argument ("..." with C escapes); ok is false when the
// argument is not a string (NULL, an address).
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"':
			return b.String(), true
		case ch == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'x':
				if i+2 < len(s) {
					if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
						b.WriteByte(byte(v))
						i += 2
					}
				}
			default:
				if e >= '0' && e <= '7' {
					j := i
					for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
						j++
					}
					v, _ := strconv.ParseUint(s[i:j], 8, 8)
					b.WriteByte(byte(v))
					i = j - 1
				} else {
					b.WriteByte(e)
				}
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), true
}

// fdPath returns the path strace decorates a descriptor with ("3</w/src>", "AT_FDCWD</w>"), or
// "" when it has none.
func fdPath(arg string) string {
	i := strings.IndexByte(arg, '<')
	if i < 0 || !strings.HasSuffix(arg, ">") {
		return ""
	}
	p := arg[i+1 : len(arg)-1]
	if !strings.HasPrefix(p, "/") {
		return "" // a socket, a pipe, an anonymous inode
	}
	if strings.Contains(p, "\\") {
		// strace escapes what it cannot print ("\22") as in a quoted string.
		if u, ok := unquote(`"` + p + `"`); ok {
			return u
		}
	}
	return p
}

// traceProc is one process's file: its calls in order, the children it cloned, and whether
// strace has finished it (its last line is strace's "+++ exited" or "+++ killed").
type traceProc struct {
	pid      int
	calls    []traceCall
	children map[int]int  // index of the clone call -> child pid
	threads  map[int]bool // the children that are threads (CLONE_THREAD)
	done     bool
}

// errUnfinished reports a tree some of whose files strace had not finished by the deadline:
// processes killed with their PID namespace (a run stopped at its deadline, or what a line left
// running in the background) are not always reported to strace, which then keeps their last
// lines buffered. The rest of the tree is read all the same.
var errUnfinished = errors.New("strace did not finish the trace of every process")

// collectTrace reads the files of the process tree rooted at root ("prefix.PID" each, written
// by the strace that traces the run's server), waiting until strace has finished every one of
// them, at most until deadline (then with errUnfinished). It returns the processes by pid.
func collectTrace(prefix string, root int, deadline time.Time) (map[int]*traceProc, error) {
	procs := map[int]*traceProc{} // the finished ones are read once
	wait := time.Millisecond
	for {
		complete := true
		seen := map[int]bool{}
		type item struct {
			pid    int
			thread bool
		}
		queue := []item{{pid: root}}
		for len(queue) > 0 {
			it := queue[0]
			queue = queue[1:]
			if seen[it.pid] {
				continue
			}
			seen[it.pid] = true
			p := procs[it.pid]
			if p == nil || !p.done {
				var err error
				if p, err = readProc(fmt.Sprintf("%s.%d", prefix, it.pid), it.pid); err != nil {
					if !errors.Is(err, os.ErrNotExist) {
						return procs, err
					}
					// A thread that made no traced call has no file.
					complete = complete && it.thread
					continue
				}
				procs[it.pid] = p
			}
			// A thread ended by its process's exit_group is not always reported: its
			// process's end is what counts.
			complete = complete && (p.done || it.thread)
			for _, child := range p.children {
				queue = append(queue, item{pid: child, thread: p.threads[child]})
			}
		}
		if complete {
			return procs, nil
		}
		if time.Now().After(deadline) {
			return procs, errUnfinished
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// traceEvents walks the process tree from root, each child starting in its parent's working
// directory at the clone; dir is the root's working directory before its first call.
func traceEvents(procs map[int]*traceProc, root int, dir string) []traceEvent {
	var events []traceEvent
	seen := map[int]bool{}
	var walk func(pid int, cwd string)
	walk = func(pid int, cwd string) {
		p := procs[pid]
		if p == nil || seen[pid] {
			return
		}
		seen[pid] = true
		for i, c := range p.calls {
			cwd = procEvents(&events, pid, c, cwd)
			if child, ok := p.children[i]; ok {
				walk(child, cwd)
			}
		}
	}
	walk(root, dir)
	return events
}

// removeTrace deletes the files of a finished tree.
func removeTrace(prefix string, procs map[int]*traceProc) {
	for pid := range procs {
		_ = os.Remove(fmt.Sprintf("%s.%d", prefix, pid))
	}
}

func readProc(file string, pid int) (*traceProc, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &traceProc{pid: pid, children: map[int]int{}, threads: map[int]bool{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	pending := ""
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "+++ ") {
			p.done = true
			continue
		}
		// A call interrupted by another's output is printed in two parts.
		if strings.HasSuffix(line, " <unfinished ...>") {
			pending = strings.TrimSuffix(line, " <unfinished ...>")
			continue
		}
		if strings.HasPrefix(line, "<... ") {
			if j := strings.Index(line, " resumed>"); j >= 0 && pending != "" {
				line = pending + line[j+len(" resumed>"):]
			}
			pending = ""
		}
		c, ok := parseTraceLine(line)
		if !ok {
			continue
		}
		switch c.name {
		case "clone", "clone3", "fork", "vfork":
			if child := clonedPid(c.result); child > 0 {
				p.children[len(p.calls)] = child
				if strings.Contains(c.line, "CLONE_THREAD") {
					p.threads[child] = true
				}
			}
		}
		p.calls = append(p.calls, c)
	}
	return p, sc.Err()
}

// clonedPid reads a clone's result: "1234", or with --pidns-translation "2 /* 1234 in strace's
// PID NS */" for a child in another PID namespace (the files are named by strace's pids).
func clonedPid(result string) int {
	if i := strings.Index(result, "/* "); i >= 0 {
		if f := strings.Fields(result[i+3:]); len(f) > 0 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				return n
			}
		}
	}
	f := strings.Fields(result)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// procEvents turns one call into effects and returns the process's working directory after it.
func procEvents(out *[]traceEvent, pid int, c traceCall, cwd string) string {
	at := func(dirArg, pathArg string) string {
		p, ok := unquote(pathArg)
		if !ok {
			return ""
		}
		if strings.HasPrefix(p, "/") {
			return filepath.Clean(p)
		}
		base := fdPath(dirArg)
		if strings.HasPrefix(dirArg, "AT_FDCWD") {
			if base != "" {
				cwd = base
			}
			base = cwd
		}
		if base == "" {
			return ""
		}
		return filepath.Clean(filepath.Join(base, p))
	}
	plain := func(pathArg string) string {
		p, ok := unquote(pathArg)
		if !ok {
			return ""
		}
		if strings.HasPrefix(p, "/") || cwd == "" {
			return filepath.Clean(p)
		}
		return filepath.Clean(filepath.Join(cwd, p))
	}
	arg := func(i int) string {
		if i < len(c.args) {
			return c.args[i]
		}
		return ""
	}
	emit := func(kind traceKind, path, flags string) {
		if path == "" {
			return
		}
		*out = append(*out, traceEvent{Kind: kind, Pid: pid, Syscall: c.name, Path: path, Flags: flags, OK: c.ok(), Line: c.line})
	}
	switch c.name {
	case "open":
		emit(traceOpen, plain(arg(0)), arg(1))
	case "openat":
		emit(traceOpen, at(arg(0), arg(1)), arg(2))
	case "openat2":
		flags := arg(2)
		if i := strings.Index(flags, "flags="); i >= 0 {
			flags = strings.TrimRight(strings.Fields(flags[i+len("flags="):])[0], ",}")
		}
		emit(traceOpen, at(arg(0), arg(1)), flags)
	case "creat":
		emit(traceOpen, plain(arg(0)), "O_CREAT|O_WRONLY|O_TRUNC")
	case "mkdir", "rmdir", "unlink", "truncate", "chmod", "chown", "lchown", "utime", "utimes", "setxattr", "lsetxattr", "removexattr", "lremovexattr", "mknod":
		emit(traceWrite, plain(arg(0)), "")
	case "mkdirat", "unlinkat", "fchmodat", "fchownat", "mknodat", "futimesat":
		emit(traceWrite, at(arg(0), arg(1)), "")
	case "utimensat":
		if arg(1) == "NULL" {
			emit(traceWrite, fdPath(arg(0)), "")
		} else {
			emit(traceWrite, at(arg(0), arg(1)), "")
		}
	case "ftruncate", "fchmod", "fchown", "fsetxattr", "fremovexattr":
		emit(traceWrite, fdPath(arg(0)), "")
	case "rename":
		emit(traceWrite, plain(arg(0)), "")
		emit(traceWrite, plain(arg(1)), "")
	case "renameat", "renameat2":
		emit(traceWrite, at(arg(0), arg(1)), "")
		emit(traceWrite, at(arg(2), arg(3)), "")
	case "link":
		emit(traceWrite, plain(arg(1)), "")
	case "linkat":
		emit(traceWrite, at(arg(2), arg(3)), "")
	case "symlink":
		emit(traceWrite, plain(arg(1)), "")
	case "symlinkat":
		emit(traceWrite, at(arg(1), arg(2)), "")
	case "execve":
		emit(traceExec, plain(arg(0)), "")
	case "execveat":
		emit(traceExec, at(arg(0), arg(1)), "")
	case "chdir":
		if c.ok() {
			if p := plain(arg(0)); p != "" {
				cwd = p
			}
		}
	case "fchdir":
		if p := fdPath(arg(0)); c.ok() && p != "" {
			cwd = p
		}
	case "connect", "bind", "sendto", "sendmsg", "sendmmsg":
		if addr := sockAddr(c.line); addr != "" {
			*out = append(*out, traceEvent{Kind: traceNet, Pid: pid, Syscall: c.name, Path: addr, OK: c.ok(), Line: c.line})
		}
	}
	return cwd
}

// sockAddr finds the first socket address a call names: "AF_UNIX /path", "AF_INET 1.2.3.4:80",
// or the bare family for others. "" when the call names none (a connected socket's send).
func sockAddr(line string) string {
	i := strings.Index(line, "sa_family=")
	if i < 0 {
		return ""
	}
	rest := line[i+len("sa_family="):]
	fam := rest
	if j := strings.IndexAny(rest, ",}"); j >= 0 {
		fam = rest[:j]
	}
	switch fam {
	case "AF_UNIX":
		if k := strings.Index(rest, "sun_path="); k >= 0 {
			v := rest[k+len("sun_path="):]
			if p, ok := unquote(v); ok {
				return "AF_UNIX " + p
			}
			if strings.HasPrefix(v, "@") {
				return "AF_UNIX " + strings.TrimRight(strings.Fields(v)[0], ",}")
			}
		}
		return "AF_UNIX"
	case "AF_INET", "AF_INET6":
		addr, port := "", ""
		for _, marker := range []string{"inet_addr(", "inet_pton(AF_INET6, "} {
			if k := strings.Index(rest, marker); k >= 0 {
				addr, _ = unquote(rest[k+len(marker):])
				break
			}
		}
		if k := strings.Index(rest, "port=htons("); k >= 0 {
			port = strings.SplitN(rest[k+len("port=htons("):], ")", 2)[0]
		}
		return fam + " " + addr + ":" + port
	}
	return fam
}
