// Package evalmodel decides actions the way the gate's layers that a profile contributes do,
// with nothing but the profile's own pieces: a compiled profile's rule set ([policy.RuleSet]),
// the autonomy matrix ([policy.Matrix]), the protection lists (internal/fspath) and the
// profile's mode, external-writes, exec-checkpoint, trusted-path, registry and limit settings.
// It is the oracle of the restrictiveness order's property tests (package profile and package
// loader): if profile.AtLeastAsRestrictive(a, b) says yes, no action may be decided more
// permissively under a than under b.
//
// It follows gate/decide.go layer by layer: limits (a run that cannot start, or is cut off by
// the timeout, is a denial), the hard stop for writes outside the workspace, protected paths,
// the permission mode, then for every part (each risk level of each piece, times each target
// and host) the rules by priority and otherwise the matrix, adding the matrix cell's obligations
// and the checkpoint discipline; the strictest part decides, the obligations of the parts that
// go ahead add up, an opaque command is never allowed without asking, and a plan over more files
// than max_files_per_plan asks. It leaves out what no profile setting changes (halts, budgets,
// grants) and the shell analysis itself: an action lists its shell commands already analysed
// ([Command]). Paths are resolved lexically against the workspace root /ws and the trusted
// paths, with home /home/u.
package evalmodel

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// Workspace and Home are the model's workspace root and home directory.
const (
	Workspace = "/ws"
	Home      = "/home/u"
)

// Command is one simple command of a shell line, as the shell analysis would report it.
type Command struct {
	Argv     []string
	Risk     risk.Set
	Severity risk.Severity // a raised floor, or 0
	Reads    []string
	Writes   []string
	Hosts    []string
	// Install names the package ecosystem the command installs from ("npm", "pypi", "docker"):
	// it reaches the profile's registry hosts for it, else (npm, pypi) the ecosystem's symbolic
	// registry host or (others) no known host.
	Install      string
	Opaque       bool
	Redirects    bool
	Substitution bool
	Elevated     bool
}

// Text returns the command's text.
func (c *Command) Text() string { return strings.Join(c.Argv, " ") }

// Action is an action with its shell commands analysed and the run state it meets.
type Action struct {
	policy.Action
	Commands []Command
	// InFlight is how many operations are in flight when it begins; Duration how long it runs.
	InFlight int
	Duration time.Duration
}

// String describes the action for a failure message.
func (a Action) String() string {
	var cmds []string
	for i := range a.Commands {
		cmds = append(cmds, a.Commands[i].Text())
	}
	return fmt.Sprintf("{tool %q op %q risk %v sev %v targets %q host %q provider %q surface %q commands %q inflight %d duration %v}",
		a.Tool, a.Operation, a.Risk, a.Severity, a.Targets, a.Host, a.Provider, a.Surface, cmds, a.InFlight, a.Duration)
}

// Outcome is a decision as far as a profile decides it.
type Outcome struct {
	Verdict     policy.Verdict
	Obligations policy.Obligations
	Why         string
}

func (o Outcome) String() string {
	return policy.Cell{Verdict: o.Verdict, Obligations: o.Obligations}.String() + " (" + o.Why + ")"
}

// AtLeastAsStrict is the decision order, written independently of package profile's: a is at
// least as strict as b when a is a DENY, or when a's verdict is at least as strict (ALLOW <
// CONFIRM < DENY) and a carries at least b's obligations, a CONFIRM counting as carrying notify
// and sandbox (the user is asked first; asking is what the gate does when no sandbox can
// enforce an ALLOW), never a checkpoint.
func AtLeastAsStrict(a, b Outcome) bool {
	if a.Verdict == policy.Deny {
		return true
	}
	if b.Verdict == policy.Deny || a.Verdict == policy.Allow && b.Verdict == policy.Confirm {
		return false
	}
	eff := func(o Outcome) policy.Obligations {
		if o.Verdict == policy.Confirm {
			return o.Obligations | policy.Notify | policy.Sandbox
		}
		return o.Obligations
	}
	return eff(a)&eff(b) == eff(b)
}

type access uint8

const (
	accessAny access = iota
	accessRead
	accessWrite
)

type piece struct {
	levels, declared risk.Set
	sev              risk.Severity
	cmd              *Command
	hosts            []string
	line             string
	opaque           bool
}

type target struct {
	piece      int
	access     access
	root, path string // root "" when outside every root (path absolute)
}

// Model decides actions under one compiled profile.
type Model struct {
	c     *profile.Compiled
	p     profile.Profile
	roots []string
	prot  *fspath.Matcher
	err   error
}

// New returns the model of c.
func New(c *profile.Compiled) *Model {
	m := &Model{c: c, p: c.Profile(), roots: []string{Workspace}}
	for _, t := range m.p.TrustedPaths {
		if e, err := fspath.Expand(t, Home); err == nil && strings.HasPrefix(e, "/") {
			m.roots = append(m.roots, path.Clean(e))
		}
	}
	m.prot, m.err = fspath.NewMatcher(fspath.Lists{ReadWrite: m.p.ProtectedPaths, Write: m.p.WriteProtectedPaths}.WithSeeds(), Home)
	return m
}

// Decide decides a under c (see the package documentation).
func Decide(c *profile.Compiled, a Action) Outcome { return New(c).Decide(a) }

// Decide decides a (see the package documentation).
func (md *Model) Decide(a Action) Outcome {
	c, p := md.c, md.p
	deny := func(why string) Outcome { return Outcome{Verdict: policy.Deny, Why: why} }
	l := c.Limits()
	switch {
	case c.Mode() == profile.ModeEmergencyStop:
		return deny("emergency stop")
	case l.MaxConcurrentOps > 0 && a.InFlight >= l.MaxConcurrentOps:
		return deny("no free operation slot")
	case l.Timeout > 0 && a.Duration > l.Timeout:
		return deny("cut off by the timeout")
	}
	op := a.Operation.Canonical()

	// Pieces: the action as declared, then each shell command.
	var pieces []piece
	var targets []target
	own := piece{levels: a.Risk, declared: a.Risk, sev: a.Severity}
	if len(a.Commands) == 0 || op != policy.OpShell {
		own.levels = own.levels.Union(op.DefaultRisk())
	}
	if own.levels.Empty() && len(a.Commands) > 0 && (len(a.Targets) > 0 || a.Host != "") {
		for i := range a.Commands {
			own.levels = own.levels.Union(a.Commands[i].Risk)
		}
	}
	if !own.levels.Empty() || len(a.Targets) > 0 || a.Host != "" || len(a.Commands) == 0 {
		if own.levels.Empty() {
			own.levels = risk.Of(risk.Destructive)
		}
		if a.Host != "" {
			own.hosts = []string{strings.ToLower(a.Host)}
		}
		if len(a.Commands) > 0 {
			own.line = a.Command
			for i := range a.Commands {
				own.opaque = own.opaque || a.Commands[i].Opaque
			}
		}
		pieces = append(pieces, own)
		for _, t := range a.Targets {
			targets = append(targets, target{piece: 0, access: accessAny, path: t})
		}
	}
	for i := range a.Commands {
		cmd := &a.Commands[i]
		pc := piece{levels: cmd.Risk, sev: cmd.Severity, cmd: cmd, hosts: cmd.Hosts, opaque: cmd.Opaque}
		if cmd.Install != "" {
			switch hs := p.Registries[cmd.Install]; {
			case len(hs) > 0:
				pc.hosts = append(append([]string(nil), pc.hosts...), hs...)
			case cmd.Install == "npm" || cmd.Install == "pypi":
				pc.hosts = append(append([]string(nil), pc.hosts...), shell.RegistryHost(cmd.Install))
			}
		}
		pieces = append(pieces, pc)
		for _, r := range cmd.Reads {
			targets = append(targets, target{piece: len(pieces) - 1, access: accessRead, path: r})
		}
		for _, w := range cmd.Writes {
			targets = append(targets, target{piece: len(pieces) - 1, access: accessWrite, path: w})
		}
	}
	var all risk.Set
	for _, pc := range pieces {
		all = all.Union(pc.levels)
	}
	for _, t := range targets {
		if t.access == accessRead {
			all = all.With(risk.ReadOnly)
		}
	}

	// Resolution, the hard stop for external writes, then protected paths.
	roots := md.roots
	for i := range targets {
		t := &targets[i]
		abs := t.path
		if e, err := fspath.Expand(abs, Home); err == nil {
			abs = e
		}
		if !strings.HasPrefix(abs, "/") {
			abs = Workspace + "/" + abs
		}
		abs = path.Clean(abs)
		t.root, t.path = "", abs
		for _, r := range roots {
			if (abs == r || strings.HasPrefix(abs, r+"/")) && len(r) > len(t.root) {
				rel := strings.TrimPrefix(strings.TrimPrefix(abs, r), "/")
				if rel == "" {
					rel = "."
				}
				t.root, t.path = r, rel
			}
		}
	}
	writes := func(t *target) bool {
		lv := pieces[t.piece].levels
		return t.access == accessWrite || t.access == accessAny && lv&^risk.Of(risk.ReadOnly, risk.Network) != 0
	}
	if p.ExternalWrites == profile.ExternalWritesHalt {
		for i := range targets {
			t := &targets[i]
			lv := pieces[t.piece].levels
			written := t.access == accessWrite || t.access == accessAny && (lv.Has(risk.Mutating) || lv.Has(risk.Destructive))
			if written && t.root == "" {
				return deny("write outside the workspace: " + t.path)
			}
		}
	}
	m := md.prot
	if md.err != nil {
		return deny("protected paths do not compile: " + md.err.Error())
	}
	for i := range targets {
		t := &targets[i]
		var h fspath.Hit
		if t.root == "" {
			h = m.Abs(t.path)
		} else {
			h = m.In(t.root, t.path)
		}
		if h.Class.Denies(writes(t)) {
			return deny("protected: " + t.path)
		}
	}

	switch c.Mode() {
	case profile.ModePlan:
		return deny("plan mode")
	case profile.ModeReadOnly:
		if all != risk.Of(risk.ReadOnly) {
			return deny("read-only mode")
		}
	}

	// Rules, then the matrix, part by part; the strictest part decides.
	var acc Outcome
	first := true
	opaque := false
	add := func(o Outcome) {
		if o.Verdict != policy.Deny {
			acc.Obligations |= o.Obligations
		}
		if first || o.Verdict.StricterThan(acc.Verdict) {
			acc.Verdict, acc.Why, first = o.Verdict, o.Why, false
		}
	}
	for pi := range pieces {
		pc := &pieces[pi]
		opaque = opaque || pc.opaque
		sub := policy.Subject{Tool: a.Tool, Operation: op, Provider: a.Provider, Surface: a.Surface, Line: a.Command}
		if pc.cmd != nil {
			sub.Command, sub.Argv = pc.cmd.Text(), pc.cmd.Argv
			sub.Redirects, sub.Substitution, sub.Elevated = pc.cmd.Redirects, pc.cmd.Substitution, pc.cmd.Elevated
		} else {
			sub.Command = pc.line
		}
		levels := pc.levels
		for _, t := range targets {
			if t.piece == pi && t.access == accessRead {
				levels = levels.With(risk.ReadOnly)
			}
		}
		hosts := pc.hosts
		if len(hosts) == 0 {
			hosts = []string{""}
		}
		for l := range levels.All() {
			sub.Level, sub.Severity = l, l.Severity()
			switch {
			case pc.declared.Has(l) && pc.sev != 0:
				sub.Severity = pc.sev
			case pc.cmd != nil && pc.sev > sub.Severity:
				sub.Severity = pc.sev
			}
			hs := hosts[:1]
			if l == risk.Network {
				hs = hosts
			}
			for _, h := range hs {
				sub.Host, sub.HostGroup = strings.ToLower(h), ""
				if _, ok := shell.RegistryOf(h); ok {
					sub.HostGroup = profile.GroupPackageManagers
				}
				matched := false
				for ti := range targets {
					t := &targets[ti]
					if t.piece != pi || !(t.access == accessAny || t.access == accessRead && l == risk.ReadOnly ||
						t.access == accessWrite && (l == risk.Mutating || l == risk.Destructive)) {
						continue
					}
					matched = true
					sub.Root, sub.Target = t.root, t.path
					add(decidePart(c, &p, &sub))
				}
				if !matched {
					sub.Root, sub.Target = "", ""
					add(decidePart(c, &p, &sub))
				}
			}
		}
	}
	if acc.Verdict == policy.Allow && opaque {
		acc.Verdict, acc.Why = policy.Confirm, "opaque: "+acc.Why
	}
	if max := c.Limits().MaxFilesPerPlan; acc.Verdict == policy.Allow && op == policy.OpPlan && max > 0 && len(a.Targets) > max {
		acc.Verdict, acc.Why = policy.Confirm, "plan over max_files_per_plan"
	}
	if acc.Verdict == policy.Deny {
		acc.Obligations = 0
	}
	return acc
}

// decidePart runs the rules, then the matrix, for one part.
func decidePart(c *profile.Compiled, p *profile.Profile, sub *policy.Subject) Outcome {
	cell := policy.Matrix(c.Band(), sub.Level)
	obl := cell.Obligations
	if l := sub.Level; l == risk.Mutating || l == risk.Destructive || l == risk.Exec && p.ExecCheckpoints == profile.ExecCheckpointsOn {
		obl |= policy.Checkpoint
	}
	if m, ok := c.Rules().Evaluate(sub); ok {
		return Outcome{Verdict: m.Verdict, Obligations: obl | m.Obligations, Why: "rule " + m.Rule.ID}
	}
	return Outcome{Verdict: cell.Verdict, Obligations: obl, Why: "matrix " + sub.Level.String()}
}
