package policy

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reins-go/reins/risk"
)

// Subject is one part of an action, resolved, as rules see it: a single risk level, a single
// target, a single simple command. The gate splits every [Action] into subjects (each declared or
// derived level times each target times each simple command) and decides the action as the
// strictest of its parts; hosts that use a [RuleSet] on its own build subjects the same way.
type Subject struct {
	Tool      string
	Operation Operation // canonical (see Operation.Canonical)
	Level     risk.Level
	Severity  risk.Severity
	Provider  string
	Surface   string
	Host      string // lower case; "" when the part reaches no host
	// HostGroup names the host group the part reaches by what it is rather than by its host
	// name: a package manager fetching from its ecosystem's configured registry reaches
	// "package-managers". A hosts condition that references the group ("@package-managers")
	// holds for it whatever Host is; any other hosts entry is matched against Host as usual.
	HostGroup string

	// Root and Target describe the part's path. For a target inside a workspace root, Root is
	// that root (absolute, clean, symlinks resolved) and Target is the clean slash-separated
	// path relative to it ("." for the root itself). For a target outside every root, Root is ""
	// and Target is the absolute resolved path. Both are "" when the part has no target.
	Root   string
	Target string

	Command string   // the text of one simple command ("" when none)
	Argv    []string // its literal arguments, argv[0] the program; nil when not known
	// Line is the whole command line the simple command belongs to. A DENY or CONFIRM rule's
	// command_pattern also matches against it (so `curl .*\| *sh` catches a pipe); an ALLOW
	// rule's only ever matches the simple command itself.
	Line string
	// Redirects and Substitution report that the simple command redirects output to a file or
	// contains a command substitution: an ALLOW rule's commands entries do not cover it unless
	// the entry says so (see Condition.Commands).
	Redirects    bool
	Substitution bool
	// Elevated reports that the simple command runs with raised privileges (sudo, doas, pkexec,
	// run0, su): an ALLOW rule's commands entries and command_pattern never cover it, so that
	// allowing a command never allows it as root.
	Elevated bool
}

// HasTarget reports whether the subject has a target path.
func (s *Subject) HasTarget() bool { return s.Target != "" }

// Inside reports whether the subject's target lies inside a workspace root.
func (s *Subject) Inside() bool { return s.Root != "" }

// Env is what rules are compiled against: the named lists "@name" references expand to, and the
// home directory "~/" expands to in target patterns. A nil *Env means no lists and the current
// user's home directory.
type Env struct {
	// Lists maps a name to its entries, e.g. "shell_blocklist" or a host group such as
	// "package-managers". Referenced as "@name" in commands, tools, hosts, providers, surfaces.
	Lists map[string][]string
	// Home replaces "~" at the start of target patterns; "" means os.UserHomeDir.
	Home string
}

// RuleSet is a compiled, immutable rule set. It is safe for concurrent use. Rules are ordered by
// priority (lower first; ties in declaration order). A small rule set is evaluated as a
// first-match loop over compact rule headers; a large one tries its first rules that way and
// then looks only at the rules an index says can match the subject.
type RuleSet struct {
	src    []Rule // in evaluation order
	rules  []crule
	heads  []ruleHead // parallel to rules
	linear int32      // rules[:linear] are tried in order before the index is consulted
	idx    *index     // nil when linear covers every rule
	// segments reports that a target pattern has an alternative of no fast shape, matched
	// segment by segment: evaluation then keeps the subject's path split once for all rules.
	segments bool
	id       uint64 // distinct for every compiled rule set (see LineMemo)
}

// Rule sets of up to linearMax rules are evaluated by the first-match loop alone: their
// headers reject most rules for a few bit tests, which costs less than the index's lookups.
// Larger ones try their first evalHead rules in order, then use the index.
const (
	linearMax = 16
	evalHead  = 1
)

// crule is a compiled rule's condition (its id, priority and reason are read from the source
// rule, RuleSet.src, at the same position).
type crule struct {
	verdict  Verdict
	obl      Obligations
	ops      []Operation
	levels   risk.Set
	sevs     uint8 // bit per risk.Severity
	outside  bool
	target   *glob
	cmd      *cmdRegex
	commands *cmdMatcher
	tools    []*glob
	hosts    []*glob
	hostRefs []string // the "@name" lists the hosts condition references
	provs    []*glob
	surfs    []*glob
}

// index maps what rules condition on to rule positions (ascending). Every rule sits in exactly
// one dimension, the most selective one it has; rules with nothing indexable are in rest.
type index struct {
	rest      []int32
	byOp      map[Operation][]int32
	byLevel   [8][]int32
	bySev     [4][]int32
	byTool    nameIndex
	byHost    nameIndex
	relPrefix strIndex
	absPrefix strIndex
	base      strIndex
	ext       strIndex
	word      strIndex // command_pattern rules by required word, matched on Command (and on Line)
	prog      strIndex

	// The lowest rule position each dimension holds (noRule when empty): once a match at or
	// before it is known, the dimension is not looked at. minLineWord is the lowest DENY or
	// CONFIRM rule in word, the only ones whose pattern is matched against the whole line.
	minRest, minOp, minLevel, minSev, minTool, minHost, minTarget, minWord, minLineWord, minProg int32
}

const noRule = int32(1<<31 - 1)

// strIndex maps strings to rule positions, and remembers the lengths (lengths of 63 and more
// share one bit), first bytes and last bytes of its keys, so that most lookups of a key that
// cannot be there (a path prefix, a word of a command) cost a few bit tests instead of a hash.
type strIndex struct {
	m           map[string][]int32
	lens        uint64
	first, last byteSet
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

func lenBit(n int) uint64 { return 1 << min(n, 63) }

// postings hands out the posting lists of an index being built: a list's first position is
// carved from a shared block, so that the many lists of one rule each cost no allocation of
// their own (a list that grows is copied out by append, as usual).
type postings struct{ block []int32 }

func (ps *postings) add(list []int32, i int32) []int32 {
	if list != nil {
		return append(list, i)
	}
	if len(ps.block) == cap(ps.block) {
		ps.block = make([]int32, 0, 1024)
	}
	ps.block = append(ps.block, i)
	n := len(ps.block)
	return ps.block[n-1 : n : n]
}

func (x *strIndex) add(key string, i int32, hint int, ps *postings) {
	if x.m == nil {
		x.m = make(map[string][]int32, hint)
	}
	x.m[key] = ps.add(x.m[key], i)
	x.lens |= lenBit(len(key))
	if key != "" {
		x.first.add(key[0])
		x.last.add(key[len(key)-1])
	}
}

// mayLen reports whether the index may hold a key of length n.
func (x *strIndex) mayLen(n int) bool { return x.lens&lenBit(n) != 0 }

// may reports whether the index may hold key.
func (x *strIndex) may(key string) bool {
	return x.lens&lenBit(len(key)) != 0 && (key == "" || x.first.has(key[0]) && x.last.has(key[len(key)-1]))
}

func (x *strIndex) get(key string) []int32 {
	if !x.may(key) {
		return nil
	}
	return x.m[key]
}

// Compile checks and compiles rules. Every problem is reported, each naming its rule: an empty
// or duplicate id, an invalid verdict, an unknown operation spelling is not an error (operations
// are an open set) but a risk condition with bits that are no level or severity is, as are
// invalid globs and regular expressions and references to unknown lists.
func Compile(rules []Rule, env *Env) (*RuleSet, error) {
	if env == nil {
		env = &Env{}
	}
	home := env.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	order := make([]int, len(rules))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rules[a].Priority, rules[b].Priority) })

	rs := &RuleSet{src: make([]Rule, len(rules)), rules: make([]crule, len(rules)), heads: make([]ruleHead, len(rules)), id: ruleSetIDs.Add(1)}
	// The conditions compile independently: a large rule set is split between the available
	// processors. Each rule's problems are kept in its own slot and reported in order.
	condErrs := make([][]error, len(rules))
	compileRange := func(lo, hi int) {
		for k := lo; k < hi; k++ {
			r := &rules[order[k]]
			condErrs[k] = compileCondition(&rs.rules[k], &rs.heads[k], r, env, home)
			rs.src[k] = *r
		}
	}
	if workers := min(runtime.GOMAXPROCS(0), maxCompileWorkers, len(rules)/parallelCompileMin); workers > 1 {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := w*len(rules)/workers, (w+1)*len(rules)/workers
			wg.Go(func() { compileRange(lo, hi) })
		}
		wg.Wait()
	} else {
		compileRange(0, len(rules))
	}
	var errs []error
	seen := make(map[string]int, len(rules))
	for k, i := range order {
		r := &rules[i]
		if r.ID == "" {
			errs = append(errs, ruleError(r, i, "id is empty"))
		} else if prev, dup := seen[r.ID]; dup {
			errs = append(errs, ruleError(r, i, fmt.Sprintf("duplicate id (also rule #%d)", prev+1)))
		} else {
			seen[r.ID] = i
		}
		if r.Action > Confirm {
			errs = append(errs, ruleError(r, i, fmt.Sprintf("action: invalid verdict %d", uint8(r.Action))))
		}
		for _, e := range condErrs[k] {
			errs = append(errs, ruleError(r, i, e.Error()))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i := range rs.rules {
		if g := rs.rules[i].target; g != nil {
			for _, a := range g.alts {
				rs.segments = rs.segments || a.kind == altGeneral
			}
		}
	}
	rs.linear = int32(len(rs.rules))
	if len(rs.rules) > linearMax {
		rs.linear = evalHead
		rs.buildIndex()
	}
	return rs, nil
}

// Compile splits the conditions of rule sets of at least 2×parallelCompileMin rules between
// up to maxCompileWorkers goroutines.
const (
	parallelCompileMin = 1024
	maxCompileWorkers  = 8
)

func ruleError(r *Rule, i int, msg string) error {
	return fmt.Errorf("policy: rule %q (#%d): %s", r.ID, i+1, msg)
}

// MustCompile is like [Compile] but panics on error. Use it only for static rule sets.
func MustCompile(rules []Rule, env *Env) *RuleSet {
	rs, err := Compile(rules, env)
	if err != nil {
		panic(err)
	}
	return rs
}

func compileCondition(cr *crule, h *ruleHead, r *Rule, env *Env, home string) []error {
	c := &r.Condition
	*cr = crule{verdict: r.Action, obl: r.Obligations, outside: c.OutsideWorkspace}
	var errs condErrors
	for _, op := range c.OperationType {
		if op == "" {
			errs.fail("operation_type", errors.New("empty operation type"))
			continue
		}
		cr.ops = append(cr.ops, op.Canonical())
	}
	if !c.Risk.Valid() {
		errs.fail("risk_level", fmt.Errorf("invalid risk levels or severities (bits %#x, %#x)",
			uint8(c.Risk.Levels&^validLevels), uint8(c.Risk.Severities&^validSeverities)))
	}
	cr.levels, cr.sevs = c.Risk.Levels&validLevels, uint8(c.Risk.Severities&validSeverities)
	if p := c.TargetPattern; p != "" {
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home == "" {
				errs.fail("target_pattern", fmt.Errorf("%q needs a home directory and none is known", p))
			}
			p = path.Join(home, p[1:])
		}
		g, err := compileGlob(p)
		if err != nil {
			errs.fail("target_pattern", err)
		}
		cr.target = g
	}
	if c.CommandPattern != "" {
		re, err := compileCmdRegex(c.CommandPattern)
		if err != nil {
			errs.fail("command_pattern", err)
		}
		cr.cmd = re
	}
	if len(c.Commands) > 0 {
		entries, err := expandRefs(c.Commands, env)
		if err != nil {
			errs.fail("commands", err)
		}
		// References that all expand to empty lists leave no entry: the condition can never
		// hold. That is well defined (an empty blocklist blocks nothing).
		ces := make([]cmdEntry, 0, len(entries))
		for _, e := range entries {
			ce, err := parseCmdEntry(e)
			if err != nil {
				errs.fail("commands", err)
				continue
			}
			ces = append(ces, ce)
		}
		cr.commands = newCmdMatcher(ces)
	}
	cr.tools = globList(&errs, "tools", c.Tools, false, env)
	cr.hosts = globList(&errs, "hosts", c.Hosts, true, env)
	for _, h := range c.Hosts {
		if name, ok := strings.CutPrefix(h, "@"); ok {
			cr.hostRefs = append(cr.hostRefs, name)
		}
	}
	cr.provs = globList(&errs, "providers", c.Providers, false, env)
	cr.surfs = globList(&errs, "surfaces", c.Surfaces, false, env)
	cr.head(h)
	return errs
}

// condErrors collects a condition's problems, each naming its field.
type condErrors []error

func (e *condErrors) fail(field string, err error) {
	*e = append(*e, fmt.Errorf("condition.%s: %w", field, err))
}

// globList compiles a list of name globs after expanding its references. An empty list is nil
// (no condition); a list whose references all expand to empty lists is empty and non-nil
// (matches nothing).
func globList(errs *condErrors, field string, list []string, lower bool, env *Env) []*glob {
	if len(list) == 0 {
		return nil
	}
	names, err := expandRefs(list, env)
	if err != nil {
		errs.fail(field, err)
		return nil
	}
	before := len(*errs)
	out := make([]*glob, 0, len(names))
	for _, n := range names {
		if lower {
			n = strings.ToLower(n)
		}
		g, err := compileGlob(n)
		if err != nil {
			errs.fail(field, err)
			continue
		}
		out = append(out, g)
	}
	if len(*errs) > before {
		return nil
	}
	return out
}

// head fills in the rule's header: the subject features its condition needs, its risk and
// operation bits, and the field matchers left to run.
func (r *crule) head(h *ruleHead) {
	*h = ruleHead{risk: uint16(r.levels) | uint16(r.sevs)<<8}
	for _, op := range r.ops {
		h.ops |= opBit(op)
	}
	if r.outside {
		h.need |= fOutside
	}
	if r.target != nil {
		h.need |= fTarget
		h.slow |= slowTarget
		relative := true
		for _, a := range r.target.alts {
			relative = relative && !a.abs
		}
		if relative {
			h.need |= fInside // a relative pattern never matches a target outside the workspace
		}
	}
	if r.cmd != nil {
		h.need |= fCommand
		h.slow |= slowPattern
	}
	if r.commands != nil {
		h.need |= fArgv
		h.slow |= slowCommands
		if len(r.commands.entries) == 0 {
			h.need |= fNever
		}
	}
	r.prefilter(h)
	for _, f := range []struct {
		gs   []*glob
		need uint16
		slow uint16
	}{{r.tools, fTool, slowTools}, {r.hosts, fHost, slowHosts}, {r.provs, fProvider, slowProviders}, {r.surfs, fSurface, slowSurfaces}} {
		if f.gs == nil {
			continue
		}
		h.need |= f.need
		h.slow |= f.slow
		if len(f.gs) == 0 && (f.need != fHost || len(r.hostRefs) == 0) {
			h.need |= fNever // references to empty lists: matches nothing (a host group still
			// matches the parts that reach it by what they are, see Subject.HostGroup)
		}
	}
}

// prefilter chooses the header's byte prefilter (see ruleHead.pre): the possible first bytes
// of the tool name, else of the program, else the bytes the command pattern's required
// literals share. A condition none of these can describe gets none.
func (r *crule) prefilter(h *ruleHead) {
	if len(r.tools) > 0 {
		var m uint64
		for _, g := range r.tools {
			if c := g.src[0]; strings.IndexByte("*?[{\\", c) >= 0 {
				m = 0
				break
			} else {
				m |= byteBit(c)
			}
		}
		if m != 0 {
			h.pre, h.preKind = m, preTool
			return
		}
	}
	if r.commands != nil && len(r.commands.entries) > 0 {
		var m uint64
		for _, ce := range r.commands.entries {
			m |= byteBit(ce.toks[0][0])
		}
		h.pre, h.preKind = m, preProg
		return
	}
	if r.cmd != nil {
		// Every set holds literals one of which occurs in every match: the bytes they all
		// share occur too. Folded sets (case-insensitive) are left out.
		var m uint64
		for _, set := range r.cmd.sets {
			if set.fold {
				continue
			}
			common := ^uint64(0)
			for _, l := range set.lits {
				common &= bytesOf(l)
			}
			m |= common
		}
		if m != 0 {
			h.pre, h.preKind = m, preText
		}
	}
}

// expandRefs replaces "@name" entries with the named list's entries.
func expandRefs(list []string, env *Env) ([]string, error) {
	refs := false
	for _, e := range list {
		refs = refs || strings.HasPrefix(e, "@")
	}
	if !refs {
		return list, nil // nothing to expand: the caller only reads the entries
	}
	var out []string
	for _, e := range list {
		if name, ok := strings.CutPrefix(e, "@"); ok {
			ref, found := env.Lists[name]
			if !found {
				return nil, fmt.Errorf("unknown list %q", e)
			}
			out = append(out, ref...)
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

func (rs *RuleSet) buildIndex() {
	rs.idx = &index{}
	ix := rs.idx
	hint := max(8, len(rs.rules)/4) // large rule sets: fewer rehashes while the maps grow
	var ps postings
	add := func(x *strIndex, key string, i int32) { x.add(key, i, hint, &ps) }
	ix.minRest, ix.minOp, ix.minLevel, ix.minSev, ix.minTool = noRule, noRule, noRule, noRule, noRule
	ix.minHost, ix.minTarget, ix.minWord, ix.minLineWord, ix.minProg = noRule, noRule, noRule, noRule, noRule
	lowest := func(m *int32, i int32) { *m = min(*m, i) }
	for n := range rs.rules {
		i := int32(n)
		r := &rs.rules[n]
		switch {
		case rs.heads[n].need&fNever != 0:
			// Matches nothing; keep it out of every list.
		case r.cmd != nil && r.cmd.word != "":
			add(&ix.word, r.cmd.word, i)
			lowest(&ix.minWord, i)
			if r.verdict != Allow {
				// Only DENY and CONFIRM patterns are matched against the whole line.
				lowest(&ix.minLineWord, i)
			}
		case r.commands != nil:
			for _, ce := range r.commands.entries {
				add(&ix.prog, path.Base(ce.toks[0]), i)
			}
			lowest(&ix.minProg, i)
		case r.target != nil && indexableGlob(r.target):
			for _, a := range r.target.alts {
				switch {
				case a.lit != "" && a.abs:
					add(&ix.absPrefix, "/"+a.lit, i)
				case a.lit != "":
					add(&ix.relPrefix, a.lit, i)
				case a.last != "":
					add(&ix.base, a.last, i)
				default:
					add(&ix.ext, a.ext, i)
				}
			}
			lowest(&ix.minTarget, i)
		case ix.byTool.canIndex(r.tools):
			ix.byTool.add(r.tools, i, &ps, hint)
			lowest(&ix.minTool, i)
		case ix.byHost.canIndex(r.hosts) && len(r.hostRefs) == 0:
			ix.byHost.add(r.hosts, i, &ps, hint)
			lowest(&ix.minHost, i)
		case len(r.ops) > 0:
			if ix.byOp == nil {
				ix.byOp = make(map[Operation][]int32)
			}
			for _, op := range slices.Compact(slices.Sorted(slices.Values(r.ops))) {
				ix.byOp[op] = append(ix.byOp[op], i)
			}
			lowest(&ix.minOp, i)
		case r.levels != 0 || r.sevs != 0:
			for l := range r.levels.All() {
				ix.byLevel[l] = append(ix.byLevel[l], i)
				lowest(&ix.minLevel, i)
			}
			for s := risk.Low; s <= risk.High; s++ {
				if r.sevs&(1<<s) != 0 {
					ix.bySev[s] = append(ix.bySev[s], i)
					lowest(&ix.minSev, i)
				}
			}
		default:
			ix.rest = append(ix.rest, i)
			lowest(&ix.minRest, i)
		}
	}
}

func indexableGlob(g *glob) bool {
	for _, a := range g.alts {
		if a.lit == "" && a.last == "" && a.ext == "" {
			return false
		}
	}
	return len(g.alts) > 0
}

// nameIndex indexes name globs (tools, hosts) by what every matching name must contain: the
// whole name for a literal pattern, else the literal text before the first wildcard, else the
// literal text after the last one. Looking a name up probes each distinct prefix and suffix
// length once, so the cost grows with the number of distinct lengths, not of rules; a name
// whose first (last) byte begins (ends) no prefix (suffix) probes none.
type nameIndex struct {
	exact                  strIndex
	prefix, suffix         map[string][]int32
	prefixLens, suffixLens []int
	prefixFirst, suffixEnd byteSet
}

// nameKey returns the index key of one glob: kind 'e' (exact), 'p' (prefix), 's' (suffix), or
// 0 when the glob has no literal part.
func nameKey(g *glob) (kind byte, key string) {
	src := g.src
	if len(g.alts) != 1 {
		return 0, ""
	}
	i, j := -1, -1 // the first and last wildcard
	for k := 0; k < len(src); k++ {
		switch src[k] {
		case '\\', '[', '{':
			return 0, "" // braces, classes and escapes: keep it simple, do not index
		case '*', '?':
			if i < 0 {
				i = k
			}
			j = k
		}
	}
	if i < 0 {
		return 'e', src
	}
	if i > 0 {
		return 'p', src[:i]
	}
	if j < len(src)-1 {
		return 's', src[j+1:]
	}
	return 0, ""
}

func (n *nameIndex) canIndex(gs []*glob) bool {
	if len(gs) == 0 {
		return false
	}
	for _, g := range gs {
		if k, _ := nameKey(g); k == 0 {
			return false
		}
	}
	return true
}

func (n *nameIndex) add(gs []*glob, i int32, ps *postings, hint int) {
	put := func(m *map[string][]int32, lens *[]int, key string) {
		if *m == nil {
			*m = make(map[string][]int32, hint)
		}
		if !slices.Contains(*lens, len(key)) {
			*lens = append(*lens, len(key))
			slices.Sort(*lens)
		}
		(*m)[key] = ps.add((*m)[key], i)
	}
	for _, g := range gs {
		switch k, key := nameKey(g); k {
		case 'e':
			n.exact.add(key, i, hint, ps)
		case 'p':
			put(&n.prefix, &n.prefixLens, key)
			n.prefixFirst.add(key[0])
		case 's':
			put(&n.suffix, &n.suffixLens, key)
			n.suffixEnd.add(key[len(key)-1])
		}
	}
}

func (n *nameIndex) scan(e *evaluation, name string) {
	if name == "" {
		return
	}
	if n.exact.m != nil {
		e.scan(n.exact.get(name))
	}
	if n.prefix != nil && n.prefixFirst.has(name[0]) {
		for _, l := range n.prefixLens {
			if l > len(name) {
				break
			}
			e.scan(n.prefix[name[:l]])
		}
	}
	if n.suffix != nil && n.suffixEnd.has(name[len(name)-1]) {
		for _, l := range n.suffixLens {
			if l > len(name) {
				break
			}
			e.scan(n.suffix[name[len(name)-l:]])
		}
	}
}

// Len returns the number of rules.
func (rs *RuleSet) Len() int { return len(rs.rules) }

// Rules returns a copy of the rules in evaluation order.
func (rs *RuleSet) Rules() []Rule { return slices.Clone(rs.src) }

// Match is the result of evaluating a subject: the first matching rule, if any.
type Match struct {
	Rule        *Rule // nil when no rule matched
	Verdict     Verdict
	Obligations Obligations
}

// Evaluate returns the first rule, in priority order, whose condition holds for s. It does not
// allocate.
func (rs *RuleSet) Evaluate(s *Subject) (Match, bool) { return rs.EvaluateMemo(s, nil) }

// EvaluateMemo is [RuleSet.Evaluate] for one part of an action whose other parts share its
// command line (Subject.Line): memo remembers which DENY and CONFIRM command patterns matched
// that line, so each runs on the line at most once per action, however many parts the action
// has. A nil memo remembers nothing.
func (rs *RuleSet) EvaluateMemo(s *Subject, memo *LineMemo) (Match, bool) {
	if rs == nil || len(rs.rules) == 0 {
		return Match{}, false
	}
	if rs.segments {
		var pc pathCache
		p := probe{s: s, rs: rs, pc: &pc, memo: memo}
		return rs.evaluate(&p)
	}
	// No pattern needs the path split into segments: the cache (a few hundred bytes to clear)
	// is left out.
	p := probe{s: s, rs: rs, memo: memo}
	return rs.evaluate(&p)
}

func (rs *RuleSet) evaluate(p *probe) (Match, bool) {
	s := p.s
	p.features()
	// The first rules first, as a first-match loop would: when one of them holds, nothing else
	// is looked at, so a policy that puts its protected files and blocklist first decides
	// those at the cost of a loop, without the index's lookups. A small rule set is only that.
	for i := range rs.linear {
		if h := &rs.heads[i]; p.fits(h) && p.matchRest(i, h) {
			return rs.match(i), true
		}
	}
	if rs.idx == nil {
		return Match{}, false
	}
	e := evaluation{p: p, best: int32(len(rs.rules)), lo: rs.linear}
	ix := rs.idx
	// Each dimension is looked at only while it may hold a rule before the best match so far.
	if ix.minRest < e.best {
		e.scan(ix.rest)
	}
	if ix.minTarget < e.best && s.Target != "" {
		e.scanTarget()
	}
	if ix.minOp < e.best {
		e.scan(ix.byOp[s.Operation])
	}
	if ix.minLevel < e.best && s.Level < risk.Level(len(ix.byLevel)) {
		e.scan(ix.byLevel[s.Level])
	}
	if ix.minSev < e.best && s.Severity < risk.Severity(len(ix.bySev)) {
		e.scan(ix.bySev[s.Severity])
	}
	if ix.minTool < e.best {
		ix.byTool.scan(&e, s.Tool)
	}
	if ix.minHost < e.best {
		ix.byHost.scan(&e, s.Host)
	}
	if ix.minProg < e.best && len(s.Argv) > 0 {
		e.scan(ix.prog.get(path.Base(s.Argv[0])))
	}
	if ix.minWord < e.best {
		e.scanWords(&ix.word, s.Command)
	}
	if ix.minLineWord < e.best && s.Line != s.Command {
		// The whole line is searched only while a DENY or CONFIRM pattern may match it (an
		// ALLOW pattern matches the simple command alone: an ALLOW rule found through a word
		// of the line is checked against its command, which the scan of the command's words
		// already did).
		e.scanWords(&ix.word, s.Line)
	}
	if e.best == int32(len(rs.rules)) {
		return Match{}, false
	}
	return rs.match(e.best), true
}

func (rs *RuleSet) match(i int32) Match {
	r := &rs.rules[i]
	return Match{Rule: &rs.src[i], Verdict: r.verdict, Obligations: r.obl}
}

// evaluation is one indexed lookup's cursor over the rules the index names.
type evaluation struct {
	p    *probe
	best int32
	lo   int32 // the rules before lo are known not to match
}

func (e *evaluation) scan(list []int32) {
	for _, i := range list {
		if i >= e.best {
			return
		}
		if i < e.lo {
			continue
		}
		if e.p.matchAt(i) {
			e.best = i
			return
		}
	}
}

// scanWords looks up the rules indexed in words under each ASCII word of text.
func (e *evaluation) scanWords(words *strIndex, text string) {
	for i := 0; i < len(text); {
		if !isWordByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		e.scan(words.get(text[i:j]))
		i = j
	}
}

func (e *evaluation) scanTarget() {
	ix := e.p.rs.idx
	s := e.p.s
	t := s.Target
	base := t
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		base = t[i+1:]
	}
	e.scan(ix.base.get(base))
	if ix.ext.m != nil {
		if dot := strings.LastIndexByte(base, '.'); dot >= 0 {
			e.scan(ix.ext.get(base[dot:]))
		}
	}
	if ix.relPrefix.m != nil && s.Inside() {
		for i := 0; i <= len(t); i++ {
			if i == len(t) || t[i] == '/' {
				e.scan(ix.relPrefix.get(t[:i]))
			}
		}
	}
	if ix.absPrefix.m == nil {
		return
	}
	if !s.Inside() {
		for i := 1; i <= len(t); i++ {
			if i == len(t) || t[i] == '/' {
				e.scan(ix.absPrefix.get(t[:i]))
			}
		}
		return
	}
	// The absolute path is Root + "/" + Target: the prefixes within Root are substrings of
	// it, the longer ones are built (without allocating when they fit the buffer) only when
	// the index holds a key of their length.
	root := s.Root
	for i := 1; i <= len(root); i++ {
		if i == len(root) || root[i] == '/' {
			e.scan(ix.absPrefix.get(root[:i]))
		}
	}
	if t == "." {
		return
	}
	sep := "/"
	if root == "/" {
		sep = ""
	}
	for j := 1; j <= len(t); j++ {
		if (j == len(t) || t[j] == '/') && ix.absPrefix.mayLen(len(root)+len(sep)+j) && ix.absPrefix.last.has(t[j-1]) {
			var buf [512]byte
			b := append(append(append(buf[:0], root...), sep...), t[:j]...)
			e.scan(ix.absPrefix.m[string(b)])
		}
	}
}

// pathCache holds a subject's path split into segments, computed at most once per evaluation.
type pathCache struct {
	rel, abs         segs
	relDone, absDone bool
}

func (pc *pathCache) relative(s *Subject) *segs {
	if !pc.relDone {
		pc.relDone = true
		if s.Target != "." {
			pc.rel.addPath(s.Target)
		}
	}
	return &pc.rel
}

func (pc *pathCache) absolute(s *Subject) *segs {
	if !pc.absDone {
		pc.absDone = true
		if s.Inside() {
			pc.abs.addPath(s.Root)
			if s.Target != "." {
				pc.abs.addPath(s.Target)
			}
		} else {
			pc.abs.addPath(s.Target)
		}
	}
	return &pc.abs
}

// Condition fields, as check reports the first one that fails.
const (
	condHolds = iota
	condOperation
	condRisk
	condOutside
	condNoTarget
	condTarget
	condNoCommand
	condCommandPattern
	condCommands
	condTools
	condHosts
	condProviders
	condSurfaces
)

// check returns condHolds when the rule's condition holds for p's subject, else the first
// field that fails, in the order of Condition's fields. It is Explain's reference: Evaluate
// agrees with it (the fast path runs the same field matchers, cheapest first).
func (r *crule) check(p *probe) int {
	s := p.s
	if len(r.ops) > 0 && !slices.Contains(r.ops, s.Operation) {
		return condOperation
	}
	if (r.levels != 0 || r.sevs != 0) && !r.levels.Has(s.Level) && (s.Severity >= 8 || r.sevs&(1<<s.Severity) == 0) {
		return condRisk
	}
	if r.outside && (s.Target == "" || s.Inside()) {
		return condOutside
	}
	if r.target != nil {
		if s.Target == "" {
			return condNoTarget
		}
		if !p.matchTarget(r.target) {
			return condTarget
		}
	}
	if r.cmd != nil {
		if s.Command == "" && s.Line == "" {
			return condNoCommand
		}
		if r.verdict == Allow && s.Elevated ||
			!r.cmd.match(s.Command) && (r.verdict == Allow || s.Line == "" || s.Line == s.Command || !r.cmd.match(s.Line)) {
			return condCommandPattern
		}
	}
	if r.commands != nil && !r.commands.match(s, r.verdict == Allow) {
		return condCommands
	}
	if r.tools != nil && !matchAny(r.tools, s.Tool) {
		return condTools
	}
	if r.hosts != nil && !r.matchHosts(s) {
		return condHosts
	}
	if r.provs != nil && !matchAny(r.provs, s.Provider) {
		return condProviders
	}
	if r.surfs != nil && !matchAny(r.surfs, s.Surface) {
		return condSurfaces
	}
	return condHolds
}

// why phrases check's answer for a human.
func (r *crule) why(p *probe) string {
	s := p.s
	switch r.check(p) {
	case condHolds:
		return ""
	case condOperation:
		return "operation_type does not list " + quoteOr(string(s.Operation), "(none)")
	case condRisk:
		return "risk_level lists neither " + s.Level.String() + " nor " + s.Severity.String()
	case condOutside:
		return "target is not outside the workspace"
	case condNoTarget:
		return "action has no target"
	case condTarget:
		return "target_pattern does not match " + s.Target
	case condNoCommand:
		return "action has no command"
	case condCommandPattern:
		return "command_pattern does not match"
	case condCommands:
		return "commands: no entry is a prefix of the command's arguments"
	case condTools:
		return "tools does not match " + quoteOr(s.Tool, "(no tool)")
	case condHosts:
		return "hosts does not match " + quoteOr(s.Host, "(no host)")
	case condProviders:
		return "providers does not match " + quoteOr(s.Provider, "(no provider)")
	}
	return "surfaces does not match " + quoteOr(s.Surface, "(no surface)")
}

func quoteOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return strconv.Quote(s)
}

// cmdEntry is one commands entry: argument tokens, plus what an ALLOW rule may cover.
type cmdEntry struct {
	toks      []string
	redirects bool // trailing ">": the entry also covers output redirected to a file
	subst     bool // trailing "$()": the entry also covers command substitutions
}

func parseCmdEntry(e string) (cmdEntry, error) {
	toks := strings.Fields(e)
	var ce cmdEntry
	for len(toks) > 0 {
		switch toks[len(toks)-1] {
		case ">":
			ce.redirects = true
		case "$()":
			ce.subst = true
		default:
			ce.toks = toks
			return ce, nil
		}
		toks = toks[:len(toks)-1]
	}
	return ce, fmt.Errorf("command entry %q names no command", e)
}

// Trace is one rule's line in an explanation.
type Trace struct {
	RuleID   string
	Priority int
	Action   Verdict
	// Matched reports whether the rule's condition held.
	Matched bool
	// Decisive marks the first matching rule: the one whose verdict the rule layer returns.
	Decisive bool
	// Why says which condition failed, or that all held.
	Why string
}

// Explain evaluates every rule against s, in evaluation order, and says for each whether it
// matched and why not. It is the slow, complete companion of [RuleSet.Evaluate] and agrees with
// it: the Decisive trace is the rule Evaluate returns.
func (rs *RuleSet) Explain(s *Subject) []Trace {
	out := make([]Trace, 0, len(rs.rules))
	var pc pathCache
	p := probe{s: s, rs: rs, pc: &pc}
	p.features()
	decided := false
	for i := range rs.rules {
		r := &rs.rules[i]
		why := r.why(&p)
		t := Trace{RuleID: rs.src[i].ID, Priority: rs.src[i].Priority, Action: r.verdict, Matched: why == "", Why: why}
		if t.Matched {
			t.Why = "all conditions hold"
			if !decided {
				t.Decisive, decided = true, true
			}
		}
		out = append(out, t)
	}
	return out
}
