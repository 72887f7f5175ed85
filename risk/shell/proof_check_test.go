//go:build linux

package shell_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// Comparing what a line did with what the analysis claimed. The rules, exactly:
//
//   - Writes. A file opened for writing (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or O_APPEND),
//     created, renamed (either name), linked, removed, truncated, or whose mode, owner, times or
//     extended attributes are changed, is a finding unless a claimed write names it or a
//     directory above it, or it lies in the line's private temporary directory (TMPDIR), or it is
//     a terminal or standard-stream device (/dev/null, /dev/tty, /dev/pts/*, /dev/fd/*,
//     /dev/std*, /proc/self/fd/*). A write counts when it is tried, whether or not it
//     succeeded: outside the fixture every mount is read-only, so what a line tries there fails.
//   - Programs. A program run (execve) is a finding unless the line names it (any command of
//     the analysis, nested ones included, by name or path) or it is the shell that runs the line
//     (the first execve) or the dynamic loader. A program reached by its "#!" line is not a
//     separate execve; the interpreter is part of the program. A front end Debian installs as a
//     script (egrep, zcat: proofFrontEnds) may start the program it fronts.
//   - Network. A socket connected, bound or sent to an address is a finding, except AF_NETLINK
//     (the kernel) and the AF_UNIX sockets of the name service: nscd (/run/nscd/socket,
//     /var/run/nscd/socket) and systemd's user database (/run/systemd/userdb/*), which
//     getpwuid(3) asks through nsswitch.conf. Tried counts, as for writes.
//   - Secrets. A file opened (successfully, with any flags) that the default protection lists
//     call a secret (internal/fspath: every planted canary, and any other .env, .ssh, id_rsa,
//     credential store ... inside or outside the fixture) is a finding unless a claimed read or
//     write names it or a directory above it. A claimed directory covers what is under it: the
//     analysis reports a directory operand once (ls src, grep -r x .), and what a program opens
//     below it is the sandbox's to mask. The probes put secrets outside every directory the
//     generated lines name, so a read no claim names cannot hide under one.
//     A directory opened (O_DIRECTORY or O_PATH) on the way to a claimed path is not a finding,
//     nor one listed to expand a claimed pattern (a leading part of the pattern matches it).
//     A claim with a read of files the line does not name (Path.Unknown) admits any read.
//   - Other reads are not findings: system files (/usr, /etc, locales, /proc/self), and files
//     of the fixture the analysis did not report (git reading .git, a program's own
//     configuration in the home directory) are not secrets. The protection lists are the
//     boundary the gate enforces on reads; a read outside them is allowed by design.

// proofClaim is the analysis of a line, in the form the checks use.
type proofClaim struct {
	an    *shell.Analysis
	reads []claimPath
	// unknownReads: the analysis reports reads of files the line does not name (Path.Unknown:
	// the names xargs reads, a glob's match as an option's value), so no read is outside its
	// claim; the sandbox masks the secrets.
	unknownReads bool
	writes       []claimPath
	programs     map[string]bool // the programs the line names: base names and absolute paths
}

type claimPath struct {
	path string
	glob bool
}

// unbounded says why a claim is not one the proofs can hold a line to ("" when it is): the
// proofs run lines the analysis calls read-only, and lines whose only other effect is writing
// paths it names inside the fixture. An opaque, exec, network or destructive claim does not
// bound what the line does, so running it would prove nothing.
func unbounded(an *shell.Analysis, fx *proofFixture) string {
	switch {
	case an.Opaque:
		return "opaque"
	case an.ExecutesCode || an.Risk.Has(risk.Exec):
		return "exec"
	case an.Network || an.Risk.Has(risk.Network):
		return "network"
	case an.Risk.Has(risk.Destructive):
		return "destructive"
	case an.Risk.Has(risk.Mutating) && len(an.Writes) == 0:
		return "mutating without naming what it writes"
	}
	for _, w := range an.Writes {
		p := literalPrefix(w)
		if !fspath.Within(p, fx.root) {
			return "writes outside the fixture: " + w.Path
		}
	}
	return ""
}

// literalPrefix returns the clean absolute path a claimed path names, or for a glob the
// directory above its first pattern character.
func literalPrefix(p shell.Path) string {
	s := p.Path
	if p.Glob {
		if i := strings.IndexAny(s, "*?["); i >= 0 {
			s = filepath.Dir(s[:i+1])
		}
	}
	return filepath.Clean(s)
}

func newClaim(an *shell.Analysis, fx *proofFixture) *proofClaim {
	c := &proofClaim{an: an, programs: map[string]bool{}}
	for _, p := range an.Reads {
		c.reads = append(c.reads, claimPath{path: filepath.Clean(p.Path), glob: p.Glob})
		c.unknownReads = c.unknownReads || p.Unknown
	}
	for _, p := range an.Writes {
		c.writes = append(c.writes, claimPath{path: filepath.Clean(p.Path), glob: p.Glob})
	}
	for _, cmd := range an.Commands {
		// The wrappers that run it ("nice > timeout", "xargs", "find -exec", "bash -c") are
		// named on the line too.
		for _, via := range strings.Split(cmd.Via, " > ") {
			if f := strings.Fields(via); len(f) > 0 && f[0] != "function" {
				c.programs[filepath.Base(f[0])] = true
			}
		}
		if cmd.Program == "" {
			continue
		}
		c.programs[filepath.Base(cmd.Program)] = true
		if strings.Contains(cmd.Program, "/") {
			p := cmd.Program
			if !filepath.IsAbs(p) {
				dir := cmd.Dir
				if dir == "" {
					dir = fx.ws
				}
				p = filepath.Join(dir, p)
			}
			c.programs[filepath.Clean(p)] = true
		}
	}
	return c
}

// covers reports whether a claimed path names p or a directory above it.
func covers(list []claimPath, p string) bool {
	for _, c := range list {
		if !c.glob {
			if fspath.Within(p, c.path) {
				return true
			}
			continue
		}
		for q := p; ; q = filepath.Dir(q) {
			if ok, _ := doublestar.Match(c.path, q); ok {
				return true
			}
			if q == "/" || q == "." {
				break
			}
		}
	}
	return false
}

// proofFinding is one effect outside the claim.
type proofFinding struct {
	Class  string // "reads an unreported file", "writes", "starts a program", "network"
	Detail string // what was seen, paths in the fixture written from $FIXTURE
	// Key is what the known-findings list matches on: the class and the file read, the
	// directory written in (a temporary file's name differs from run to run), the program's
	// name or the address family.
	Key string
}

func (f proofFinding) String() string { return f.Class + ": " + f.Detail }

// Classes of findings.
const (
	classRead    = "reads an unreported file"
	classWrite   = "writes"
	classExec    = "starts a program"
	classNetwork = "network"
)

// proofSecrets matches protected names: the default lists with the fixture's home, and with the
// real home of the user running the tests (a program may look there through getpwuid).
type proofSecrets struct {
	fixture, real *fspath.Matcher
}

func newProofSecrets(fx *proofFixture) (*proofSecrets, error) {
	// The default lists, not WithSeeds: .git is a secret only to the paths an action names (the
	// gate's check); git reads its repository without naming it, and the sandbox lets it.
	lists := fspath.Defaults()
	m, err := fspath.NewMatcher(lists, fx.home)
	if err != nil {
		return nil, err
	}
	s := &proofSecrets{fixture: m}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if s.real, err = fspath.NewMatcher(lists, home); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *proofSecrets) secret(fx *proofFixture, p string) bool {
	if fspath.Within(p, fx.root) {
		rel, _ := filepath.Rel(fx.root, p)
		return s.fixture.In(fx.root, filepath.ToSlash(rel)).Class == fspath.ReadWriteProtected
	}
	if s.fixture.Abs(p).Class == fspath.ReadWriteProtected {
		return true
	}
	return s.real != nil && s.real.Abs(p).Class == fspath.ReadWriteProtected
}

var writeFlags = []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}

func opensForWrite(flags string) bool {
	for _, f := range strings.Split(flags, "|") {
		for _, w := range writeFlags {
			if f == w {
				return true
			}
		}
	}
	return false
}

// streamDevice reports the devices a line may write without a claim: terminals and standard
// streams.
func streamDevice(p string) bool {
	switch {
	case p == "/dev/null", p == "/dev/tty", p == "/dev/stdout", p == "/dev/stderr", p == "/dev/stdin",
		strings.HasPrefix(p, "/dev/pts/"), strings.HasPrefix(p, "/dev/fd/"), strings.HasPrefix(p, "/proc/self/fd/"):
		return true
	}
	return false
}

// nameService reports the local sockets getpwuid(3) and friends may ask.
func nameService(addr string) bool {
	switch {
	case addr == "AF_NETLINK",
		addr == "AF_UNIX /run/nscd/socket", addr == "AF_UNIX /var/run/nscd/socket",
		strings.HasPrefix(addr, "AF_UNIX /run/systemd/userdb/"):
		return true
	}
	return false
}

// check compares the events with the claim and returns the findings, deduplicated and sorted.
func (c *proofClaim) check(fx *proofFixture, sec *proofSecrets, events []traceEvent) []proofFinding {
	seen := map[string]bool{}
	var out []proofFinding
	add := func(class, key, detail string) {
		if !seen[class+detail] {
			seen[class+detail] = true
			out = append(out, proofFinding{Class: class, Detail: detail, Key: class + ": " + key})
		}
	}
	rel := func(p string) string {
		if fspath.Within(p, fx.root) {
			r, _ := filepath.Rel(fx.root, p)
			return "$FIXTURE/" + r
		}
		return p
	}
	ran := map[string]bool{}   // programs run that the line does not name, by base name
	tried := map[string]bool{} // ... and tried without success
	firstExec := true
	for _, e := range events {
		switch e.Kind {
		case traceOpen:
			if opensForWrite(e.Flags) {
				if !c.mayWrite(fx, e.Path) {
					add(classWrite, rel(filepath.Dir(e.Path))+"/", fmt.Sprintf("%s (%s %s)", rel(e.Path), e.Syscall, e.Flags))
				}
				continue
			}
			if e.OK && !c.unknownReads && sec.secret(fx, e.Path) && !covers(c.reads, e.Path) && !covers(c.writes, e.Path) && !c.onTheWay(e) {
				add(classRead, rel(e.Path), fmt.Sprintf("%s (%s)", rel(e.Path), e.Syscall))
			}
		case traceWrite:
			if !c.mayWrite(fx, e.Path) {
				add(classWrite, rel(filepath.Dir(e.Path))+"/", fmt.Sprintf("%s (%s)", rel(e.Path), e.Syscall))
			}
		case traceExec:
			if firstExec {
				firstExec = false // the shell that runs the line
				continue
			}
			base := filepath.Base(e.Path)
			if c.programs[base] || c.programs[e.Path] || strings.HasPrefix(base, "ld-linux") || base == "ld.so" || c.frontEnd(base) {
				continue
			}
			if !e.OK {
				tried[base] = true
				continue
			}
			if !ran[base] {
				ran[base] = true
				add(classExec, base, rel(e.Path))
			}
		case traceNet:
			if !nameService(e.Path) {
				add(classNetwork, strings.Fields(e.Path)[0], e.Syscall+" "+e.Path)
			}
		}
	}
	for base := range tried {
		if !ran[base] {
			add(classExec, base, base+" (tried)")
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// proofFrontEnds are the programs Debian installs as shell scripts that run another program
// with the same arguments (or the few utilities of their own text): the analysis classifies
// them by that program's table, so what they start is the program itself.
var proofFrontEnds = map[string][]string{
	"egrep": {"grep"}, "fgrep": {"grep"},
	"gunzip": {"gzip"}, "zcat": {"gzip"}, "uncompress": {"gzip"},
	"zgrep": {"gzip", "grep", "sed", "expr"},
	"gem":   {"ruby"}, // #!/usr/bin/env ruby: env starts the interpreter
}

// frontEnd reports that base is what a front end the line names runs.
func (c *proofClaim) frontEnd(base string) bool {
	for fe, runs := range proofFrontEnds {
		if c.programs[fe] && slices.Contains(runs, base) {
			return true
		}
	}
	return false
}

// onTheWay reports a directory opened on the way to a claimed path (gzip opens ~/.ssh to
// reach ~/.ssh/id_ed25519 relative to it): the claim names what is in it. For a claimed
// pattern, the directories its expansion lists are on the way: those a leading part of the
// pattern matches (bash lists $HOME/.aws to expand $HOME/.*/x).
func (c *proofClaim) onTheWay(e traceEvent) bool {
	if !strings.Contains(e.Flags, "O_DIRECTORY") && !strings.Contains(e.Flags, "O_PATH") {
		return false
	}
	for _, list := range [][]claimPath{c.reads, c.writes} {
		for _, p := range list {
			if p.path != e.Path && fspath.Within(p.path, e.Path) {
				return true
			}
			if p.glob && leadsTo(p.path, e.Path) {
				return true
			}
		}
	}
	return false
}

// leadsTo reports whether dir matches a leading part (whole components, not all of them) of
// the pattern.
func leadsTo(pattern, dir string) bool {
	for i := len(pattern) - 1; i > 0; i-- {
		if pattern[i] != '/' {
			continue
		}
		if ok, _ := doublestar.Match(pattern[:i], dir); ok {
			return true
		}
	}
	return false
}

func (c *proofClaim) mayWrite(fx *proofFixture, p string) bool {
	return streamDevice(p) || fspath.Within(p, fx.tmp) || covers(c.writes, p)
}
