package policy

import (
	"path"
	"strings"

	"github.com/reins-go/reins/risk"
)

// Evaluating a rule against a subject starts with a few bit tests on a small header per rule
// ([ruleHead]): what the subject has (a target inside or outside the workspace, a command, argv,
// a tool, a host...), its risk level and severity, and its operation, all reduced to bits once
// per evaluation ([probe]). A rule whose header does not fit the subject is rejected without its
// condition being read; the rest run the field matchers, cheapest first, with a command_pattern
// last of all.

// Subject features, as bits of probe.have and ruleHead.need.
const (
	fTarget   uint16 = 1 << iota // Target != ""
	fInside                      // Root != "" (the target is inside a workspace root)
	fOutside                     // Target != "" && Root == ""
	fCommand                     // Command != "" || Line != ""
	fArgv                        // len(Argv) > 0
	fTool                        // Tool != ""
	fHost                        // Host != "" || HostGroup != ""
	fProvider                    // Provider != ""
	fSurface                     // Surface != ""
	fNever                       // never set: a condition that references only empty lists
)

// Operation bits (probe.op, ruleHead.ops): one per operation reins knows, and opOther for any
// other name, compared as a string.
const (
	opRead uint16 = 1 << iota
	opWrite
	opDelete
	opShell
	opNetwork
	opPlan
	opSelfUpgrade
	opTool
	opOther
)

func opBit(op Operation) uint16 {
	switch op {
	case OpRead:
		return opRead
	case OpWrite:
		return opWrite
	case OpDelete:
		return opDelete
	case OpShell:
		return opShell
	case OpNetwork:
		return opNetwork
	case OpPlan:
		return opPlan
	case OpSelfUpgrade:
		return opSelfUpgrade
	case OpTool:
		return opTool
	}
	return opOther
}

// Remaining checks of a rule, as bits of ruleHead.slow: when none is set, the header decides.
const (
	slowTarget uint16 = 1 << iota
	slowCommands
	slowTools
	slowHosts
	slowProviders
	slowSurfaces
	slowPattern
)

// ruleHead is the part of a compiled rule that evaluation reads first, kept in an array of its
// own so that rejecting a rule touches a few bytes.
type ruleHead struct {
	need uint16 // subject features the condition requires
	risk uint16 // bit l per listed level, bit 8+s per listed severity; 0 when unset
	ops  uint16 // operation bits; 0 when unset
	slow uint16 // the field matchers still to run
	// pre is a byte prefilter for one text condition (preKind says which): a set of bytes, one
	// bit per byte value modulo 64 (byteBit), that the subject's text must show for the
	// condition to have a chance. It rejects most tool, program and pattern conditions without
	// running them.
	pre     uint64
	preKind uint8
}

// Kinds of ruleHead.pre.
const (
	preNone = iota
	preTool // the first byte of the tool name is one of pre
	preProg // the first byte of the program (as written, or its base name) is one of pre
	preText // every byte of pre occurs in the command or the line
)

func byteBit(c byte) uint64 { return 1 << (c & 63) }

// bytesOf returns the byte set of s.
func bytesOf(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		m |= byteBit(s[i])
	}
	return m
}

// riskBits returns the risk bits of a part: its level and its severity.
func riskBits(l risk.Level, s risk.Severity) uint16 {
	var b uint16
	if l < 8 {
		b = 1 << l
	}
	if s < 8 {
		b |= 1 << (8 + s)
	}
	return b
}

// probe is one evaluation of one subject: its features as bits, computed once, and what the
// field matchers may share (the path split into segments, the line memo).
type probe struct {
	s     *Subject
	rs    *RuleSet
	memo  *LineMemo
	pc    *pathCache // the path split into segments, for general patterns; may be nil
	have  uint16
	risk  uint16
	op    uint16 // 0 until a rule with an operation condition asks
	clean int8   // 0 until asked; 1 when the subject's paths are clean, -1 when not
	// The subject's text as byte sets (see ruleHead.pre), computed when a rule first asks.
	progBits, textBits uint64
	progDone, textDone bool
}

// features computes the subject's feature and risk bits. (The probe's pointers are set by the
// caller, in a composite literal: assigned here, through p, they would make the compiler move
// the caller's path cache to the heap.)
func (p *probe) features() {
	s := p.s
	var h uint16
	if s.Target != "" {
		h |= fTarget
		if s.Root == "" {
			h |= fOutside
		}
	}
	if s.Root != "" {
		h |= fInside
	}
	if s.Command != "" || s.Line != "" {
		h |= fCommand
	}
	if len(s.Argv) > 0 {
		h |= fArgv
	}
	if s.Tool != "" {
		h |= fTool
	}
	if s.Host != "" || s.HostGroup != "" {
		h |= fHost
	}
	if s.Provider != "" {
		h |= fProvider
	}
	if s.Surface != "" {
		h |= fSurface
	}
	p.have = h
	p.risk = riskBits(s.Level, s.Severity)
}

// matchAt reports whether rule i's condition holds for the subject.
func (p *probe) matchAt(i int32) bool {
	h := &p.rs.heads[i]
	return p.fits(h) && p.matchRest(i, h)
}

// fits reports whether a rule's header admits the subject: the features and the risk.
func (p *probe) fits(h *ruleHead) bool {
	return h.need&^p.have == 0 && (h.risk == 0 || h.risk&p.risk != 0)
}

// matchRest finishes matchAt for a rule whose header fits.
func (p *probe) matchRest(i int32, h *ruleHead) bool {
	if h.preKind != preNone && !p.preOK(h) {
		return false
	}
	if h.ops != 0 {
		if p.op == 0 {
			p.op = opBit(p.s.Operation)
		}
		if h.ops&p.op == 0 {
			return false
		}
		if p.op == opOther && !containsOp(p.rs.rules[i].ops, p.s.Operation) {
			return false
		}
	}
	return h.slow == 0 || p.matchSlow(i, h.slow)
}

// preOK reports whether the subject's text passes the rule's byte prefilter.
func (p *probe) preOK(h *ruleHead) bool {
	s := p.s
	switch h.preKind {
	case preTool:
		return h.pre&byteBit(s.Tool[0]) != 0 // fTool: the tool is named
	case preProg:
		if !p.progDone {
			p.progDone = true
			if prog := s.Argv[0]; prog != "" { // fArgv: there is a program
				p.progBits = byteBit(prog[0]) | byteBit(path.Base(prog)[0])
			} else {
				p.progBits = byteBit('.') // path.Base("")
			}
		}
		return h.pre&p.progBits != 0
	}
	if !p.textDone {
		p.textDone = true
		p.textBits = bytesOf(s.Command)
		if s.Line != s.Command {
			p.textBits |= bytesOf(s.Line)
		}
	}
	return h.pre&^p.textBits == 0
}

func containsOp(ops []Operation, op Operation) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// matchSlow runs the field matchers the header left, cheapest first: the command_pattern runs
// only when everything else holds, and on the whole line at most once per memo.
func (p *probe) matchSlow(i int32, slow uint16) bool {
	r := &p.rs.rules[i]
	s := p.s
	if slow&slowTarget != 0 && !p.matchTarget(r.target) {
		return false
	}
	if slow&slowCommands != 0 && !r.commands.match(s, r.verdict == Allow) {
		return false
	}
	if slow&slowTools != 0 && !matchAny(r.tools, s.Tool) {
		return false
	}
	if slow&slowHosts != 0 && !r.matchHosts(s) {
		return false
	}
	if slow&slowProviders != 0 && !matchAny(r.provs, s.Provider) {
		return false
	}
	if slow&slowSurfaces != 0 && !matchAny(r.surfs, s.Surface) {
		return false
	}
	if slow&slowPattern != 0 {
		if r.verdict == Allow {
			return !s.Elevated && r.cmd.match(s.Command)
		}
		if r.cmd.match(s.Command) {
			return true
		}
		if s.Line == "" || s.Line == s.Command {
			return false
		}
		return p.matchLine(i, r.cmd)
	}
	return true
}

func (r *crule) matchHosts(s *Subject) bool {
	return matchAny(r.hosts, s.Host) || s.HostGroup != "" && containsString(r.hostRefs, s.HostGroup)
}

func containsString(list []string, x string) bool {
	for _, e := range list {
		if e == x {
			return true
		}
	}
	return false
}

// isClean reports whether the subject's paths are clean in the sense the fast path matchers
// need: no empty segment ("a//b"), no trailing slash, and a relative target that does not start
// with "/". Paths the gate builds always are; anything else is matched segment by segment.
func (p *probe) isClean() bool {
	if p.clean == 0 {
		p.clean = -1
		if cleanPath(p.s.Target) && cleanPath(p.s.Root) && !(p.s.Root != "" && strings.HasPrefix(p.s.Target, "/")) {
			p.clean = 1
		}
	}
	return p.clean > 0
}

func cleanPath(s string) bool {
	var prev byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '/' && prev == '/' {
			return false
		}
		prev = c
	}
	return prev != '/' || s == "/"
}

// matchTarget reports whether a target pattern matches the subject's target: an absolute
// alternative against the absolute path, a relative one against the path relative to the
// workspace root, for a target inside one.
func (p *probe) matchTarget(g *glob) bool {
	s := p.s
	for k := range g.alts {
		a := &g.alts[k]
		if !a.abs && s.Root == "" {
			continue
		}
		if a.kind >= altAll && a.kind <= altStar {
			// The shapes that look at the last segment only need no trailing slash.
			if v := p.view(a.abs); v.tailClean() {
				if a.matchView(v) {
					return true
				}
				continue
			}
		} else if a.kind != altGeneral && (p.clean > 0 || p.clean == 0 && p.isClean()) {
			if a.matchView(p.view(a.abs)) {
				return true
			}
			continue
		}
		pc := p.pc
		if pc == nil {
			// No cache: the rule set was thought to need none (see RuleSet.segments), and
			// the subject's path is not clean. Split it for this pattern alone.
			var local pathCache
			pc = &local
		}
		var hit bool
		if a.abs {
			hit = matchSegs(a.segs, pc.absolute(s))
		} else {
			hit = matchSegs(a.segs, pc.relative(s))
		}
		if hit {
			return true
		}
	}
	return false
}

// view returns the subject's path as a vpath, absolute (without its leading "/") or relative.
func (p *probe) view(abs bool) vpath {
	s := p.s
	t := s.Target
	if t == "." {
		t = ""
	}
	if !abs {
		return vpath{b: t}
	}
	if s.Root == "" {
		return vpath{b: strings.TrimPrefix(s.Target, "/")}
	}
	return vpath{a: strings.TrimPrefix(s.Root, "/"), b: t}
}

// vpath is a clean slash-separated path given in two parts, a + "/" + b, so that a workspace
// root and a path relative to it are matched as one path without being joined. Either part may
// be empty (then there is no separator); both empty is the path with no segments.
type vpath struct{ a, b string }

func (v vpath) len() int {
	switch {
	case v.a == "":
		return len(v.b)
	case v.b == "":
		return len(v.a)
	}
	return len(v.a) + 1 + len(v.b)
}

func (v vpath) at(i int) byte {
	switch {
	case v.a == "":
		return v.b[i]
	case i < len(v.a):
		return v.a[i]
	case i == len(v.a):
		return '/'
	}
	return v.b[i-len(v.a)-1]
}

func (v vpath) hasPrefix(lit string) bool {
	if v.a == "" {
		return strings.HasPrefix(v.b, lit)
	}
	if len(lit) <= len(v.a) {
		return v.a[:len(lit)] == lit
	}
	if v.b == "" || lit[:len(v.a)] != v.a || lit[len(v.a)] != '/' {
		return false
	}
	return strings.HasPrefix(v.b, lit[len(v.a)+1:])
}

// tailClean reports that the path does not end with a slash (its last segment is its end).
func (v vpath) tailClean() bool {
	last := v.b
	if last == "" {
		last = v.a
	}
	return last == "" || last[len(last)-1] != '/'
}

// single returns the path's only segment; ok is false when it has none or more than one.
func (v vpath) single() (seg string, ok bool) {
	switch {
	case v.a == "":
		seg = v.b
	case v.b == "":
		seg = v.a
	default:
		return "", false
	}
	return seg, seg != "" && strings.IndexByte(seg, '/') < 0
}

// base returns the last segment ("" for the path with no segments).
func (v vpath) base() string {
	if v.b != "" {
		return v.b[strings.LastIndexByte(v.b, '/')+1:]
	}
	return v.a[strings.LastIndexByte(v.a, '/')+1:]
}

// Shapes of a glob alternative that match without splitting the path into segments. altAll,
// altBase and altStar look at the last segment at most: they need a path without a trailing
// slash; the others need a clean path (see probe.isClean).
const (
	altGeneral = iota // segment by segment (matchSegs)
	altAll            // "**": every path
	altBase           // "**/name": any path whose last segment is name
	altStar           // "**/pre*suf": any path whose last segment is pre, anything, suf
	altExact          // "a/b": literal segments only
	altDir            // "a/b/**": the directory and everything below it
	altStar1          // "pre*suf": a one-segment path that is pre, anything, suf
	altWild           // one other wildcard segment ("edit_[fx]ile"): a one-segment path
)

// classify sets the alternative's shape from its segments (and a.lit, set before).
func (a *globAlt) classify() {
	n := len(a.segs)
	a.kind = altGeneral
	if n == 0 {
		return
	}
	literals := 0
	for literals < n && a.segs[literals].literal {
		literals++
	}
	last := a.segs[n-1]
	switch {
	case literals == n:
		a.kind, a.fastLit = altExact, a.lit // a.lit joins the leading literal segments
	case literals == n-1 && last.double && n > 1:
		a.kind, a.fastLit = altDir, a.lit
	case n == 1 && last.double:
		a.kind = altAll
	case n == 2 && a.segs[0].double && last.literal:
		a.kind, a.fastLit = altBase, last.text
	case n == 2 && a.segs[0].double && !last.double:
		if pre, suf, ok := oneStar(last.text); ok {
			a.kind, a.fastLit, a.fastSuf = altStar, pre, suf
		}
	case n == 1 && !last.double:
		a.kind = altWild
		if pre, suf, ok := oneStar(last.text); ok {
			a.kind, a.fastLit, a.fastSuf = altStar1, pre, suf
		}
	}
}

// oneStar splits a segment pattern with exactly one "*" and no other metacharacter.
func oneStar(seg string) (pre, suf string, ok bool) {
	i := strings.IndexByte(seg, '*')
	if i < 0 || strings.ContainsAny(seg[i+1:], "*?[\\") || strings.ContainsAny(seg[:i], "?[\\") {
		return "", "", false
	}
	return seg[:i], seg[i+1:], true
}

// matchView matches a fast-shape alternative against a clean path.
func (a *globAlt) matchView(v vpath) bool {
	switch a.kind {
	case altAll:
		return true
	case altExact:
		return v.len() == len(a.fastLit) && v.hasPrefix(a.fastLit)
	case altDir:
		n := v.len()
		return n >= len(a.fastLit) && v.hasPrefix(a.fastLit) && (n == len(a.fastLit) || v.at(len(a.fastLit)) == '/')
	case altBase:
		return v.base() == a.fastLit
	case altStar:
		b := v.base()
		return (v.a != "" || v.b != "") && len(b) >= len(a.fastLit)+len(a.fastSuf) &&
			strings.HasPrefix(b, a.fastLit) && strings.HasSuffix(b, a.fastSuf)
	case altStar1:
		b, ok := v.single()
		return ok && len(b) >= len(a.fastLit)+len(a.fastSuf) && strings.HasPrefix(b, a.fastLit) && strings.HasSuffix(b, a.fastSuf)
	case altWild:
		b, ok := v.single()
		return ok && matchWild(a.segs[0].text, b)
	}
	panic("policy: bug: matchView on a general glob alternative")
}

// matchAny reports whether one of the globs matches a plain name (tool, host, provider,
// surface). A name without "/" is one relative segment and is matched by shape; any other is
// split into segments.
func matchAny(gs []*glob, name string) bool {
	if name == "" {
		return false
	}
	if strings.IndexByte(name, '/') >= 0 {
		for _, g := range gs {
			if g.matchName(name) {
				return true
			}
		}
		return false
	}
	v := vpath{b: name}
	for _, g := range gs {
		for k := range g.alts {
			a := &g.alts[k]
			if a.abs {
				continue
			}
			if a.kind != altGeneral {
				if a.matchView(v) {
					return true
				}
				continue
			}
			var s segs
			s.addPath(name)
			if matchSegs(a.segs, &s) {
				return true
			}
		}
	}
	return false
}

// cmdMatcher is a compiled commands condition: its entries, and for long lists (a blocklist,
// an allowlist) the entries by program, so a command is compared with the entries for its own
// program only.
type cmdMatcher struct {
	entries []cmdEntry
	byProg  map[string][]int32 // entry positions by their first token; nil for short lists
}

// progIndexMin is the length from which a commands list is indexed by program.
const progIndexMin = 8

func newCmdMatcher(entries []cmdEntry) *cmdMatcher {
	m := &cmdMatcher{entries: entries}
	if len(entries) >= progIndexMin {
		m.byProg = make(map[string][]int32, len(entries))
		for i, ce := range entries {
			m.byProg[ce.toks[0]] = append(m.byProg[ce.toks[0]], int32(i))
		}
	}
	return m
}

// match reports whether an entry is a token prefix of the subject's arguments (see
// matchEntry).
func (m *cmdMatcher) match(s *Subject, allow bool) bool {
	argv := s.Argv
	if len(argv) == 0 || len(m.entries) == 0 {
		return false
	}
	prog := argv[0]
	if m.byProg == nil {
		base := prog
		if !allow {
			base = path.Base(prog)
		}
		for i := range m.entries {
			if matchEntry(&m.entries[i], s, prog, base, allow) {
				return true
			}
		}
		return false
	}
	// A deny entry without "/" is compared with the program's base name, one with "/" (and
	// every allow entry) with the program as written.
	for _, i := range m.byProg[prog] {
		if matchEntry(&m.entries[i], s, prog, prog, allow) {
			return true
		}
	}
	if allow {
		return false
	}
	if base := path.Base(prog); base != prog {
		for _, i := range m.byProg[base] {
			if matchEntry(&m.entries[i], s, prog, base, allow) {
				return true
			}
		}
	}
	return false
}

// matchEntry reports whether one entry is a token prefix of the subject's arguments. For an
// ALLOW rule an entry never covers a command that runs with raised privileges, nor one that
// redirects to a file or contains a substitution unless the entry ends with ">" or "$()", and
// its program must be spelled as the
// entry spells it (the shell analysis reports system programs by name: "/bin/cat" is "cat"); a
// DENY or CONFIRM entry without "/" also stops the program written with a directory (base is
// the program's base name then).
func matchEntry(ce *cmdEntry, s *Subject, prog, base string, allow bool) bool {
	argv := s.Argv
	if len(ce.toks) > len(argv) {
		return false
	}
	if allow && (s.Elevated || s.Redirects && !ce.redirects || s.Substitution && !ce.subst) {
		return false
	}
	first := ce.toks[0]
	if allow || strings.IndexByte(first, '/') >= 0 {
		if first != prog {
			return false
		}
	} else if first != base {
		return false
	}
	for k := 1; k < len(ce.toks); k++ {
		if argv[k] != ce.toks[k] {
			return false
		}
	}
	return true
}
