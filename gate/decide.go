package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// access says how a part uses a target.
type access uint8

const (
	accessAny   access = iota // a declared target: every level of its piece applies to it
	accessRead                // read by a shell command
	accessWrite               // written or deleted by a shell command
)

// target is one path an action touches, after resolution.
type target struct {
	raw     string
	root    string // "" when outside every root
	path    string // relative to root when inside, absolute when outside
	err     error
	piece   int
	access  access
	glob    bool
	unknown bool // stands for paths the line does not name (shell.Path.Unknown)
}

// piece is a part of an action with one set of risk levels: the action as declared, or one
// simple command of its command line.
type piece struct {
	levels   risk.Set
	declared risk.Set      // levels whose severity is the declared one
	sev      risk.Severity // the declared severity, or a raised floor (sudo); 0 for the defaults
	command  string
	argv     []string
	host     string   // the first host (the declared one for the action's own piece)
	hosts    []string // every host, for shell commands
	opaque   bool
	redirect bool
	subst    bool
	elevated bool // runs with raised privileges (sudo, doas, pkexec, run0, su)
	shellIdx int  // index in the analysis, or -1
}

func (p *piece) severity(l risk.Level) risk.Severity {
	s := l.Severity()
	switch {
	case p.declared.Has(l) && p.sev != 0:
		return p.sev
	case p.shellIdx >= 0 && p.sev > s:
		return p.sev
	}
	return s
}

// matrixReasons holds the reason text of every matrix cell, built once so a matrix decision
// allocates nothing.
var matrixReasons = func() (r [3][8]string) {
	for _, b := range []policy.Band{policy.BandSupervised, policy.BandTrusted, policy.BandAutonomous} {
		for _, l := range risk.Levels() {
			r[b][l] = fmt.Sprintf("autonomy matrix: %s × %s = %s", b, l, policy.Matrix(b, l))
		}
	}
	return r
}()

// modeDetail describes each permission mode for explanations (static, so Check builds nothing).
var modeDetail = [...]string{
	profile.ModeDefault:       "mode default: rules, then the autonomy matrix",
	profile.ModeReadOnly:      "mode read-only: the action is read-only",
	profile.ModePlan:          "mode plan",
	profile.ModeEmergencyStop: "mode emergency-stop",
}

// discipline is the seed's checkpoint discipline: every mutating or destructive action that goes
// ahead is checkpointed first, whatever layer allowed it, and so is every exec part unless the
// profile turned exec checkpoints off (profile.ExecCheckpoints): a program the analysis cannot
// prove read-only may rewrite the workspace.
func (st *state) discipline(l risk.Level) policy.Obligations {
	if l == risk.Mutating || l == risk.Destructive || l == risk.Exec && st.execCkpt {
		return policy.Checkpoint
	}
	return 0
}

func isWrite(l risk.Level) bool { return l == risk.Mutating || l == risk.Destructive }

// writes reports whether a piece with these levels may write its declared targets: anything but
// reading and network use might (an unknown tool that executes something included).
func writes(levels risk.Set) bool {
	return levels&^risk.Of(risk.ReadOnly, risk.Network) != 0
}

// walk is one pass of the decision order over an action: what every layer needs, and the
// decision so far. It lives on decide's stack; the layers are its methods, one per layer.
//
// The action is not a field but an argument of the layers that read it, and the run state is a
// copy, not a pointer: escape analysis follows a struct's fields as one, and what the Gate's
// pointers reach is on the heap, so an action or State pointer kept beside them would move the
// caller's Action or State to the heap on every decision.
type walk struct {
	e  *env
	st *state
	s  State
	op policy.Operation
	tr *Trace // nil unless tracing
	d  Decision
	// The action as written, for standing grants (see GrantScope): its line, the directory its
	// command runs in, and its environment assignments.
	line, dir string
	env       []string
	shell     bool // the action has a command line the analysis read
}

// decide walks the decision order for a (doc.go; DESIGN.md, "The decision order"): the first
// layer that decides wins. It has no side effects: a hard stop that must latch is named in the
// decision's Latch for the run to apply. tr, when not nil, collects the trace.
func (g *Gate) decide(st *state, s *State, a *policy.Action, tr *Trace) Decision {
	w := walk{e: g.env, st: st, s: *s, op: a.Operation.Canonical(), tr: tr, d: Decision{Verdict: policy.Deny, Profile: st.name}}
	tr.begin(st)
	if w.invalidRisk(a) || w.halted() {
		return w.d
	}
	var pfix [4]piece
	var tfix [8]target
	pieces, targets, ok := w.parts(a, pfix[:0], tfix[:0])
	if !ok {
		return w.d
	}
	if w.hardStops(pieces, targets) || w.boundaries(pieces, targets) || w.permissionMode() {
		return w.d
	}
	w.rulesAndMatrix(a, pieces, targets)
	return w.d
}

// deny records that layer l decided: a Deny by check id with the reason.
func (w *walk) deny(l policy.Layer, id, reason string) bool {
	w.d.Layer, w.d.RuleID, w.d.Reason = l, id, reason
	w.tr.decided(l, reason)
	return true
}

// invalidRisk refuses an action that declares a risk level or severity that does not exist.
func (w *walk) invalidRisk(a *policy.Action) bool {
	if a.Risk&^risk.Of(risk.Levels()...) != 0 || (a.Severity != 0 && !a.Severity.Valid()) {
		return w.deny(policy.LayerInput, CheckInvalidRisk, "the action declares an invalid risk level or severity")
	}
	return false
}

// halted is layer 1: a latched hard stop, or the emergency-stop mode, denies everything.
func (w *walk) halted() bool {
	if h := w.s.Halt; h != nil {
		return w.deny(policy.LayerHalted, CheckHalted, "the run is halted: "+h.Reason)
	}
	if w.st.mode == profile.ModeEmergencyStop {
		return w.deny(policy.LayerHalted, CheckEmergencyStop, "emergency stop: every action is denied")
	}
	w.tr.passed(policy.LayerHalted, "not halted")
	return false
}

// parts splits the action into pieces, appended to pieces, and the paths they touch, appended
// to targets: the action as declared, and each simple command of its command line. It also sets
// the decision's risk set. ok is false when the command line does not parse (then the input
// layer decided).
func (w *walk) parts(a *policy.Action, pieces []piece, targets []target) (_ []piece, _ []target, ok bool) {
	var an *shell.Analysis
	w.line, w.env = a.Command, a.Env
	if a.Command != "" {
		var aerr error
		w.shell = true
		dir, err := w.st.ws.workDir(a.WorkDir)
		if err != nil {
			w.deny(policy.LayerBoundary, CheckAmbiguousPath, fmt.Sprintf("working directory %q is ambiguous, so it is refused: %v", a.WorkDir, err))
			return pieces, targets, false
		}
		w.dir = dir
		an, aerr = w.e.analyze(w.st, a.Command, w.dir)
		w.tr.analysis(an, w.dir)
		// A line that does not parse cannot run as written (a line too long to analyse is only
		// opaque: it may be valid).
		if aerr != nil && aerr != shell.ErrTooLong {
			w.deny(policy.LayerInput, CheckUnparsableCommand, "the command line does not parse, so it cannot run as written: "+aerr.Error())
			return pieces, targets, false
		}
	}
	own := piece{levels: a.Risk, declared: a.Risk, sev: a.Severity, host: lowerHost(a.Host), shellIdx: -1}
	if an == nil || w.op != policy.OpShell {
		own.levels = own.levels.Union(w.op.DefaultRisk())
	}
	if own.levels.Empty() && an != nil && (len(a.Targets) > 0 || own.host != "") {
		own.levels = an.Risk
	}
	if !own.levels.Empty() || len(a.Targets) > 0 || own.host != "" || an == nil {
		if own.levels.Empty() {
			own.levels = risk.Of(risk.Destructive) // nothing known: assume the worst
		}
		if an != nil {
			own.command = a.Command
			own.opaque = an.Opaque
		}
		if !inertEnv(a.Env) {
			own.levels, own.opaque = own.levels.With(risk.Exec), true
		}
		pieces = append(pieces, own)
		for _, t := range a.Targets {
			targets = append(targets, target{raw: t, piece: len(pieces) - 1, access: accessAny})
		}
	}
	if an != nil {
		for i := range an.Commands {
			c := &an.Commands[i]
			p := piece{levels: c.Risk, command: c.Text, argv: c.Argv, hosts: c.Hosts, opaque: c.Opaque,
				redirect: c.Redirects, subst: c.Substitution, elevated: c.Elevated, shellIdx: i}
			if c.Severity > c.Risk.Severity() {
				p.sev = c.Severity
			}
			if len(c.Hosts) > 0 {
				p.host = c.Hosts[0]
			}
			// An environment assignment the host adds that is not known to be inert may change
			// what any command of the line runs.
			if !inertEnv(a.Env) {
				p.levels, p.opaque = p.levels.With(risk.Exec), true
			}
			// Repository trust (repotrust.go): git in a repository whose configuration runs
			// programs is exec, and opaque: what it runs is not on the line.
			if lv, why := w.e.gitLevels(c, p.levels); why != "" {
				p.levels, p.opaque = lv, true
				w.tr.passed(policy.LayerInput, why)
			}
			pieces = append(pieces, p)
			for _, r := range c.Reads {
				targets = append(targets, target{raw: r.Path, piece: len(pieces) - 1, access: accessRead, glob: r.Glob, unknown: r.Unknown})
			}
			for _, wr := range c.Writes {
				targets = append(targets, target{raw: wr.Path, piece: len(pieces) - 1, access: accessWrite, glob: wr.Glob, unknown: wr.Unknown})
			}
		}
	}
	for i := range pieces {
		w.d.Risk = w.d.Risk.Union(pieces[i].levels)
	}
	for i := range targets {
		if targets[i].access == accessRead {
			w.d.Risk = w.d.Risk.With(risk.ReadOnly)
		}
	}
	return pieces, targets, true
}

// hardStops is layer 2: the budget, then (having resolved every target against the workspace)
// a write outside the workspace when the profile halts on one. A hard stop denies and is
// returned to the caller to latch. The other hard stops (a sandbox escape, repeated tool
// failure) latch where they are reported and are seen by halted.
func (w *walk) hardStops(pieces []piece, targets []target) bool {
	if w.s.Exhausted != "" {
		w.d.Latch = CauseBudget
		return w.deny(policy.LayerHardStop, CheckHardStopBudget, w.s.Exhausted)
	}
	for i := range targets {
		t := &targets[i]
		t.root, t.path, t.err = w.st.ws.resolve(t.raw)
	}
	if w.st.external == profile.ExternalWritesHalt {
		for i := range targets {
			t := &targets[i]
			written := t.access == accessWrite || t.access == accessAny && (pieces[t.piece].levels.Has(risk.Mutating) || pieces[t.piece].levels.Has(risk.Destructive))
			if written && t.err == nil && t.root == "" {
				w.d.Latch = CauseExternalWrite
				return w.deny(policy.LayerHardStop, CheckHardStopExternalWrite, "write outside the workspace: "+t.path)
			}
		}
	}
	w.tr.passed(policy.LayerHardStop, "no hard stop")
	return false
}

// boundaries is layer 3: protected paths, and targets that cannot be resolved or that the
// kernel and a lexical join read differently. Secrets are neither read nor written;
// write-protected paths are not written. A glob that could expand to a protected path makes its
// command opaque.
func (w *walk) boundaries(pieces []piece, targets []target) bool {
	for i := range targets {
		t := &targets[i]
		if t.err != nil {
			var amb *fspath.AmbiguousError
			if errors.As(t.err, &amb) {
				return w.deny(policy.LayerBoundary, CheckAmbiguousPath, fmt.Sprintf("target %q is ambiguous, so it is refused: %v", t.raw, t.err))
			}
			return w.deny(policy.LayerBoundary, CheckUnresolvablePath, fmt.Sprintf("target %q cannot be resolved: %v", t.raw, t.err))
		}
		write := t.access == accessWrite || t.access == accessAny && writes(pieces[t.piece].levels)
		if h := w.st.prot.hit(t.root, t.path); h.Class.Denies(write) {
			if h.Class == fspath.WriteProtected {
				return w.deny(policy.LayerBoundary, CheckProtectedPath, fmt.Sprintf("target %q is write-protected (%s)", t.raw, h.Entry))
			}
			return w.deny(policy.LayerBoundary, CheckProtectedPath, fmt.Sprintf("target %q is protected (%s)", t.raw, h.Entry))
		}
		if t.glob && w.st.prot.globReaches(t.path).Denies(write) {
			pieces[t.piece].opaque = true
		}
	}
	w.tr.passed(policy.LayerBoundary, "no protected path")
	return false
}

// permissionMode is layer 4: plan denies every action; read-only denies all but read-only ones.
func (w *walk) permissionMode() bool {
	switch w.st.mode {
	case profile.ModePlan:
		return w.deny(policy.LayerMode, CheckModePlan, "plan mode denies tool execution")
	case profile.ModeReadOnly:
		if w.d.Risk != risk.Of(risk.ReadOnly) {
			return w.deny(policy.LayerMode, CheckModeReadOnly, "read-only mode denies "+w.d.Risk.String())
		}
	}
	w.tr.passed(policy.LayerMode, modeDetail[w.st.mode])
	return false
}

// rulesAndMatrix is layers 5 and 6: the profile's rules, then the autonomy matrix, decide every
// part (each risk level of each piece, times each target and host it applies to) in decidePart;
// the strictest part decides. An opaque command, or a plan over more files than the profile
// allows, is never auto-approved.
//
// A Check stops at the first denied part that settles the decision (see settled): nothing is
// stricter than DENY, so the parts after it could change neither the verdict nor which rule the
// decision names. An explanation decides every part, so its trace lists them all. The parts share
// one line memo, so each DENY or CONFIRM command pattern runs on the whole command line at most
// once per Check.
func (w *walk) rulesAndMatrix(a *policy.Action, pieces []piece, targets []target) {
	d := &w.d
	opaque := false
	acc := strictest{d: d, first: true}
	var memo policy.LineMemo
	sub := policy.Subject{Tool: a.Tool, Operation: w.op, Provider: a.Provider, Surface: a.Surface, Line: a.Command}
parts:
	for pi := range pieces {
		p := &pieces[pi]
		opaque = opaque || p.opaque
		sub.Command, sub.Argv, sub.Redirects, sub.Substitution, sub.Host = p.command, p.argv, p.redirect, p.subst, p.host
		sub.Elevated = p.elevated
		sub.HostGroup = hostGroupOf(p.host)
		for l := range partLevels(pieces, targets, pi).All() {
			sub.Level, sub.Severity = l, p.severity(l)
			nh := 1
			if l == risk.Network && len(p.hosts) > 1 {
				nh = len(p.hosts)
			}
			for h := 0; h < nh; h++ {
				if l == risk.Network && len(p.hosts) > 1 {
					sub.Host = p.hosts[h]
					sub.HostGroup = hostGroupOf(sub.Host)
				}
				matched := false
				for i := range targets {
					t := &targets[i]
					if t.piece != pi || !(t.access == accessAny || t.access == accessRead && l == risk.ReadOnly || t.access == accessWrite && isWrite(l)) {
						continue
					}
					matched = true
					sub.Root, sub.Target = t.root, t.path
					acc.add(w.decidePart(&sub, p.shellIdx, &memo))
					if w.settled(&acc, pieces, targets, pi) {
						break parts
					}
				}
				if !matched {
					sub.Root, sub.Target = "", ""
					acc.add(w.decidePart(&sub, p.shellIdx, &memo))
					if w.settled(&acc, pieces, targets, pi) {
						break parts
					}
				}
			}
			sub.Host, sub.HostGroup = p.host, hostGroupOf(p.host)
		}
	}
	if d.Verdict == policy.Allow && opaque {
		d.Verdict, d.RuleID = policy.Confirm, CheckOpaqueCommand
		d.Reason = "part of the command cannot be analysed, so it is never auto-approved (" + d.Reason + ")"
	}
	if max := w.st.limits.MaxFilesPerPlan; d.Verdict == policy.Allow && w.op == policy.OpPlan && max > 0 && len(a.Targets) > max {
		d.Verdict, d.RuleID = policy.Confirm, CheckMaxFilesPerPlan
		d.Reason = fmt.Sprintf("the plan touches %d files, more than the profile's %d", len(a.Targets), max)
	}
	if d.Verdict != policy.Deny {
		d.Obligations = acc.obl
	}
	if d.Verdict == policy.Allow && w.shell {
		// The analysis proposes, the sandbox enforces: a line that goes ahead without asking
		// runs confined to what its analysis claims (Trace.Confinement), whichever layer
		// allowed it. A wrong classification then fails in the sandbox instead of doing harm.
		d.Obligations |= policy.Sandbox
		w.tr.confine(pieces, targets)
	}
	w.tr.decided(d.Layer, d.Reason)
}

// partLevels returns the risk levels piece pi is decided at: its own, and ReadOnly when a
// shell command of it reads a target.
func partLevels(pieces []piece, targets []target, pi int) risk.Set {
	levels := pieces[pi].levels
	for i := range targets {
		if targets[i].piece == pi && targets[i].access == accessRead {
			return levels.With(risk.ReadOnly)
		}
	}
	return levels
}

// settled reports, when Check (not Explain) has just decided a part of piece pi, that the
// parts decided so far settle the decision: one of them is denied, and no part of pieces[pi:]
// has a higher severity than the denied part that decides. The strictest fold keeps the first
// of equally strict parts unless a later one is more severe, and the obligations of a DENY are
// dropped, so the remaining parts could change nothing.
func (w *walk) settled(acc *strictest, pieces []piece, targets []target, pi int) bool {
	if w.tr.full() || acc.first || w.d.Verdict != policy.Deny {
		return false
	}
	if acc.sev >= risk.High {
		return true
	}
	for k := pi; k < len(pieces); k++ {
		for l := range partLevels(pieces, targets, k).All() {
			if pieces[k].severity(l) > acc.sev {
				return false
			}
		}
	}
	return true
}

// strictest folds the parts' outcomes: the strictest verdict decides (among equally strict
// parts, the most severe gives the reason), and the obligations of every part that goes ahead
// add up.
type strictest struct {
	d     *Decision
	obl   policy.Obligations
	sev   risk.Severity
	first bool
}

func (s *strictest) add(p partOutcome) {
	if p.verdict != policy.Deny {
		s.obl |= p.obl
	}
	if s.first || p.verdict.StricterThan(s.d.Verdict) || p.verdict == s.d.Verdict && p.sev > s.sev {
		s.d.Verdict, s.d.Layer, s.d.RuleID, s.d.Reason = p.verdict, p.layer, p.ruleID, p.reason
		s.sev, s.first = p.sev, false
	}
}

// partOutcome is how one part was decided.
type partOutcome struct {
	verdict policy.Verdict
	layer   policy.Layer
	ruleID  string
	reason  string
	obl     policy.Obligations
	sev     risk.Severity
}

// decidePart runs the rule layer, then the matrix, for one part. A standing grant of the run
// state answers a part the two would CONFIRM, keeping the part's obligations.
func (w *walk) decidePart(sub *policy.Subject, cmd int, memo *policy.LineMemo) partOutcome {
	st := w.st
	cell := policy.Matrix(st.band, sub.Level)
	obl := cell.Obligations | st.discipline(sub.Level)
	out := partOutcome{cell.Verdict, policy.LayerMatrix, CheckMatrix, matrixReasons[st.band][sub.Level], obl, sub.Severity}
	if m, ok := st.rules.EvaluateMemo(sub, memo); ok {
		out = partOutcome{m.Verdict, policy.LayerRule, m.Rule.ID, m.Rule.Reason, obl | m.Obligations, sub.Severity}
	}
	if out.verdict == policy.Confirm && w.s.Grants != nil && (st.mode == profile.ModeDefault || st.mode == profile.ModeReadOnly) {
		if id, reason, ok := w.s.Grants.MatchGrant(w.grantScope(), *sub); ok {
			out.verdict, out.layer, out.ruleID, out.reason = policy.Allow, policy.LayerRule, id, reason
		}
	}
	w.tr.part(sub, cmd, out.verdict, out.layer, out.ruleID, cell)
	return out
}

// analyze returns the shell analysis of a command line, from the profile's cache when it was
// seen before in the same working directory. The analysis reads no files, so it only depends on
// the line, the directory and the profile.
func (e *env) analyze(st *state, line, dir string) (*shell.Analysis, error) {
	if v, ok := st.shellCache.load(line); ok && v.dir == dir {
		return v.an, v.err
	}
	an, err := shell.Analyze(line, &shell.Options{Dir: dir, Home: e.home, TempDir: e.tmp, Registries: st.registries})
	st.shellCache.store(line, cachedAnalysis{dir: dir, an: an, err: err})
	return an, err
}

// inertEnv reports whether every assignment of env is inert (shell.InertAssignment).
func inertEnv(env []string) bool {
	for _, kv := range env {
		if !shell.InertAssignment(kv) {
			return false
		}
	}
	return true
}

// grantScope is the scope a standing grant is matched in.
func (w *walk) grantScope() GrantScope {
	return GrantScope{Profile: w.st.prof, Hash: w.st.hash, Line: w.line, Dir: w.dir, Env: w.env}
}

// hostGroupOf names the host group a host reported by the shell analysis belongs to by what it
// stands for rather than by its name: the symbolic host of a package manager talking to its
// ecosystem's configured registry (shell.RegistryHost) is in the package-managers group, so
// PROFILE-DEV's "@package-managers" rule covers "npm install" out of the box. "" otherwise.
func hostGroupOf(host string) string {
	if _, ok := shell.RegistryOf(host); ok {
		return profile.GroupPackageManagers
	}
	return ""
}

func lowerHost(h string) string {
	for i := 0; i < len(h); i++ {
		if 'A' <= h[i] && h[i] <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}
