package profile

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// Hash returns a SHA-256 of the profile's content ("sha256:" and 64 hex digits). Two profiles
// with the same settings have the same hash whatever their history; audit records carry it so a
// decision can be tied to the exact settings that made it.
func (p Profile) Hash() string {
	b, err := json.Marshal(p)
	if err != nil {
		// Profile holds only strings, numbers, slices and maps of them: it always marshals.
		panic("profile: bug: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// StricterThan reports whether m is stricter than n in the order emergency-stop < plan <
// read-only < default (most restrictive first). An unknown mode ranks with default.
func (m Mode) StricterThan(n Mode) bool { return modeRank(m) < modeRank(n) }

// modeRank orders permission modes from most to least restrictive.
func modeRank(m Mode) int {
	switch m {
	case ModeEmergencyStop:
		return 0
	case ModePlan:
		return 1
	case ModeReadOnly:
		return 2
	}
	return 3
}

// AtLeastAsRestrictive reports whether profile to is at least as restrictive as profile from:
// whether switching from from to to makes no decision more permissive. It is the one
// restrictiveness order of reins: profile switching (a switch to a profile at least as
// restrictive needs no confirmation), the loader (a project file that is not trusted applies only
// the settings that keep the profile at least as restrictive) and replay use it. When the answer
// is no, why names the first setting that loosens, in words for the human asked to approve it.
//
// # The decision order
//
// A decision is at least as strict as another when it is a DENY, or when its verdict is at least
// as strict (ALLOW < CONFIRM < DENY) and it carries at least the other's obligations (checkpoint,
// notify, sandbox), where a CONFIRM counts as carrying notify and sandbox: the user is asked
// before the action runs, and a decision that asks is what the gate falls back to when no
// sandbox can enforce an ALLOW (DESIGN.md, "Enforcement"). A CONFIRM does not stand in for a
// checkpoint: approval does not make an action reversible. So an ALLOW that loses its sandbox,
// or a CONFIRM that loses a checkpoint, is looser; a CONFIRM where there was an ALLOW with
// notify and sandbox is not.
//
// to is at least as restrictive as from when every action, in every run state, is decided at
// least as strictly under to, and the run's limits are at least as tight. Deciding that exactly
// is not possible for arbitrary rules, so the answer is conservative: yes only when it is proven
// from the settings below, one by one; a false "no" only asks for a confirmation that was not
// needed. The order is meant to be reflexive and transitive on valid profiles; a property test
// checks both on random profiles, and that whenever it says yes no random action is decided less
// strictly (profile/order_property_test.go).
//
// # Setting by setting
//
//   - A profile whose mode denies everything is at least as restrictive as any: emergency-stop,
//     then plan. Leaving either needs confirmation.
//   - The managed tier ([Profile.Managed]): when from is under one, to must be under the same
//     one, with caps at least as tight and managed rules only kept; leaving it, or raising a
//     cap, is looser. A profile without a tier may move under one (its rules and paths are
//     judged below like any).
//   - Every setting must be valid (the dial a number in [0, 1], a known mode, external-writes
//     and exec-checkpoints value, unique rule ids); an invalid profile is never at least as
//     restrictive.
//   - The permission mode: read-only is stricter than default.
//   - The autonomy dial: a higher dial is looser. A lower dial is judged by its effect (see
//     the rules below): the autonomy matrix of a lower band can carry fewer obligations
//     (trusted mutating is ALLOW with checkpoint and notify, supervised mutating CONFIRM).
//   - External writes: halting the run is stricter than leaving them to the rules.
//   - Exec checkpoints: on is stricter than off.
//   - Resource limits: a higher max_files_per_plan, max_concurrent_ops or timeout is looser, and
//     0 (no limit) is the loosest.
//   - Protected paths: to protects every entry from protects (read-and-write protected in from:
//     read-and-write protected in to; write-protected in from: either in to).
//   - Trusted paths: to's are a subset of from's. A target under a path only from trusts is
//     inside the workspace under from and outside it under to (where writes halt the run and
//     protected names are matched on the whole path), so the rules are compared a second time
//     as such targets meet them: under to, outside_workspace holds and relative target
//     patterns never match; under from, the reverse.
//   - Registries: the same hosts per ecosystem. The registry hosts say which host an install
//     reaches, so a change either way can move an install from a denied host to an allowed one.
//   - The rules, the lists they refer to (shell_allowlist, shell_blocklist, network_allowlist,
//     allowed_tools, auto_approve_patterns, host groups) and the autonomy matrix, judged
//     together by their effect. A rule whose list references all expand to empty lists never
//     matches and counts as absent. Two proofs are tried; either suffices:
//
// The first compares the rules by id. The blocklist may only grow and the other lists only
// shrink; a rule of from that to lacks is an ALLOW rule without obligations, or a DENY rule of to
// with a lower priority covers it; a rule to adds is a DENY rule; a rule both have is replaced
// harmlessly (a DENY rule that covers the old one and is evaluated no later; an ALLOW or CONFIRM
// rule at the same priority that matches exactly the same actions, with a verdict and
// obligations at least as strict; or the old rule was an ALLOW rule without obligations); rules
// of equal priority keep their order unless the one that moves ahead is a DENY rule; a rule that
// refers to a list whose entries differ is a DENY rule in both (the list only grew) or an ALLOW
// rule without obligations in from (it only shrank); and when the dial moves to another band,
// at every risk level the permission mode lets through the matrix cell is at least as strict,
// and so are the obligations the cell adds to an ALLOW or CONFIRM rule that may decide that
// level.
//
// The second, tried when the first fails and both profiles have at most 64 rules, follows the
// first-match evaluation: for every ALLOW or CONFIRM rule of to (and its autonomy matrix, the
// fall-back) and every rule of from (and its matrix) that could decide the same part of an
// action first, the decision of to's rule is at least as strict at every risk level and severity
// both can match. Conditions are compared field by field with the lists expanded: a rule covers
// another when each of its fields is unset or lists everything the other lists; two rules are
// disjoint when their operation types or risk levels and severities are.
//
// Conditions are compared as written, not as what they match ("go" matches more than "go test";
// a glob is not compared with the names it matches).
func AtLeastAsRestrictive(to, from Profile) (ok bool, why string) {
	why = loosening(&to, &from)
	return why == "", why
}

// loosening returns the first setting of to that is looser than from's, or "".
func loosening(to, from *Profile) string {
	// Modes that deny everything: emergency-stop, then plan.
	for _, m := range []Mode{ModeEmergencyStop, ModePlan} {
		switch {
		case to.Mode == m:
			return ""
		case from.Mode == m:
			return "leaves " + m.String() + ", which denies everything"
		}
	}
	for _, p := range []*Profile{to, from} {
		if why := invalid(p); why != "" {
			if p == from {
				return "the current profile is not valid: " + why
			}
			return why
		}
	}
	if why := managedLoosens(to.Managed, from.Managed); why != "" {
		return why
	}
	switch {
	case from.Mode.StricterThan(to.Mode):
		return fmt.Sprintf("loosens the permission mode from %s to %s", from.Mode, to.Mode)
	case to.Autonomy > from.Autonomy:
		return fmt.Sprintf("raises autonomy from %v to %v (more autonomous)", from.Autonomy, to.Autonomy)
	case to.ExternalWrites > from.ExternalWrites:
		return "leaves writes outside the workspace to the rules instead of halting the run"
	case to.ExecCheckpoints > from.ExecCheckpoints:
		return "stops checkpointing commands that execute programs"
	}
	if why := limitsLoosen(to.Limits, from.Limits); why != "" {
		return why
	}
	if why := pathsLoosen(to, from); why != "" {
		return why
	}
	if why := registriesLoosen(to, from); why != "" {
		return why
	}
	return rulesLoosen(to, from)
}

// invalid says why p holds a value the gate would refuse, or "".
func invalid(p *Profile) string {
	switch {
	case math.IsNaN(p.Autonomy) || p.Autonomy < 0 || p.Autonomy > 1:
		return fmt.Sprintf("the autonomy dial %v is not a number in [0, 1]", p.Autonomy)
	case int(p.Mode) >= len(modeNames):
		return fmt.Sprintf("the permission mode %d is not valid", uint8(p.Mode))
	case p.ExternalWrites > ExternalWritesByPolicy:
		return fmt.Sprintf("the external_writes value %d is not valid", uint8(p.ExternalWrites))
	case p.ExecCheckpoints > ExecCheckpointsOff:
		return fmt.Sprintf("the exec_checkpoints value %d is not valid", uint8(p.ExecCheckpoints))
	}
	if err := p.Managed.Validate(); err != nil {
		return err.Error()
	}
	seen := make(map[string]bool, len(p.Rules))
	for _, r := range p.Rules {
		if seen[r.ID] {
			return fmt.Sprintf("the rule id %q appears twice", r.ID)
		}
		seen[r.ID] = true
	}
	return ""
}

// limitsLoosen compares resource limits: higher is looser, and 0 (or less) is no limit, the
// loosest.
func limitsLoosen(to, from Limits) string {
	show := func(v int64, d bool) string {
		switch {
		case v <= 0:
			return "no limit"
		case d:
			return time.Duration(v).String()
		}
		return fmt.Sprint(v)
	}
	for _, l := range []struct {
		name     string
		to, from int64
		duration bool
	}{
		{"max_files_per_plan", int64(to.MaxFilesPerPlan), int64(from.MaxFilesPerPlan), false},
		{"max_concurrent_ops", int64(to.MaxConcurrentOps), int64(from.MaxConcurrentOps), false},
		{"the timeout", int64(to.Timeout), int64(from.Timeout), true},
	} {
		if l.from > 0 && (l.to <= 0 || l.to > l.from) {
			return fmt.Sprintf("raises %s from %s to %s", l.name, show(l.from, l.duration), show(l.to, l.duration))
		}
	}
	return ""
}

// pathsLoosen compares the protected and trusted paths.
func pathsLoosen(to, from *Profile) string {
	if !sameSlice(to.ProtectedPaths, from.ProtectedPaths) {
		if x := firstMissing(from.ProtectedPaths, foldSet(to.ProtectedPaths), true); x != "" {
			return fmt.Sprintf("no longer protects %q", x)
		}
	}
	if !sameSlice(to.WriteProtectedPaths, from.WriteProtectedPaths) || !sameSlice(to.ProtectedPaths, from.ProtectedPaths) {
		either := foldSet(to.WriteProtectedPaths)
		for _, e := range to.ProtectedPaths {
			either[foldKey(e)] = true
		}
		if x := firstMissing(from.WriteProtectedPaths, either, true); x != "" {
			return fmt.Sprintf("no longer write-protects %q", x)
		}
	}
	if sameSlice(to.TrustedPaths, from.TrustedPaths) {
		return ""
	}
	if x := firstMissing(to.TrustedPaths, exactSet(from.TrustedPaths), false); x != "" {
		return fmt.Sprintf("adds %q to trusted_paths", x)
	}
	if x := firstMissing(from.TrustedPaths, exactSet(to.TrustedPaths), false); x != "" {
		// A target under a dropped trusted path is inside the workspace under from and outside
		// under to. Compare the rules as they see such targets: under to, outside_workspace
		// holds and relative target patterns never match; under from, the reverse.
		to2, from2, depends := *to, *from, false
		to2.Rules, from2.Rules = nil, nil
		for _, r := range to.Rules {
			c := &r.Condition
			switch {
			case c.TargetPattern != "" && !isAbsPattern(c.TargetPattern):
				depends = true
				continue
			case c.OutsideWorkspace:
				depends = true
				r = r.Clone()
				r.Condition.OutsideWorkspace = false
			}
			to2.Rules = append(to2.Rules, r)
		}
		for _, r := range from.Rules {
			if r.Condition.OutsideWorkspace {
				depends = true
				continue
			}
			from2.Rules = append(from2.Rules, r)
		}
		if depends {
			if why := rulesLoosen(&to2, &from2); why != "" {
				return fmt.Sprintf("trusted_paths drops %q, so targets there are outside the workspace, where %s", x, why)
			}
		}
	}
	return ""
}

func isAbsPattern(p string) bool {
	return strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/")
}

// registriesLoosen requires the same registry hosts per ecosystem (an empty list is no entry).
func registriesLoosen(to, from *Profile) string {
	if sameMap(to.Registries, from.Registries) {
		return ""
	}
	for _, eco := range sortedKeys(to.Registries) {
		if x := firstMissing(to.Registries[eco], exactSet(from.Registries[eco]), false); x != "" {
			return fmt.Sprintf("adds %q to the %s registry hosts", x, eco)
		}
	}
	for _, eco := range sortedKeys(from.Registries) {
		if x := firstMissing(from.Registries[eco], exactSet(to.Registries[eco]), false); x != "" {
			return fmt.Sprintf("removes %q from the %s registry hosts, which changes the hosts its installs reach", x, eco)
		}
	}
	return ""
}

// pairwiseMaxRules bounds the rule sets the second proof is tried on, and pairwiseWork the work
// it may do (list entries compared or expanded): its cost grows with the cube of the number of
// rules and with the lists they refer to. Beyond either, only the first proof counts.
const (
	pairwiseMaxRules = 64
	pairwiseWork     = 1 << 20
)

// rulesLoosen judges the rules, the lists and the autonomy band together (see
// AtLeastAsRestrictive).
func rulesLoosen(to, from *Profile) string {
	if bandOf(to.Autonomy) == bandOf(from.Autonomy) && sameRules(to.Rules, from.Rules) && sameLists(to, from) {
		return "" // the same rules over the same lists in the same band decide the same
	}
	tr, fr := prepareRules(to), prepareRules(from)
	why := structuralLoosens(to, from, tr, fr)
	if why == "" {
		return ""
	}
	if len(to.Rules) <= pairwiseMaxRules && len(from.Rules) <= pairwiseMaxRules {
		w := &work{left: pairwiseWork}
		if pairwiseLoosens(to, from, tr, fr, w) == "" && w.left >= 0 {
			return ""
		}
	}
	return why
}

// ---- conditions ----

// riskMask is a set of (risk level, severity) points, one bit per pair: the parts a risk
// condition holds for.
type riskMask uint16

const allRisk riskMask = 1<<15 - 1

func riskPoint(l risk.Level, s risk.Severity) riskMask {
	return 1 << (uint(l-risk.ReadOnly)*3 + uint(s-risk.Low))
}

func levelMask(l risk.Level) riskMask {
	return riskPoint(l, risk.Low) | riskPoint(l, risk.Medium) | riskPoint(l, risk.High)
}

func maskOf(m policy.RiskMatch) riskMask {
	if m.IsZero() {
		return allRisk
	}
	var out riskMask
	for _, l := range risk.Levels() {
		for s := risk.Low; s <= risk.High; s++ {
			if m.Holds(l, s) {
				out |= riskPoint(l, s)
			}
		}
	}
	return out
}

// The list fields of a condition, in the order xrule keeps them.
const (
	fCommands = iota
	fTools
	fHosts
	fProviders
	fSurfaces
	nFields
)

func condLists(c *policy.Condition) [nFields][]string {
	return [nFields][]string{c.Commands, c.Tools, c.Hosts, c.Providers, c.Surfaces}
}

// xrule is a rule prepared for comparison: its operation types in canonical form, its risk
// condition as a mask, and (once expand is called) its lists with their references expanded
// against its profile's lists.
type xrule struct {
	r      *policy.Rule // nil for the autonomy matrix (a catch-all at the end)
	p      *Profile
	ops    []string // canonical; nil means any
	mask   riskMask
	raw    [nFields][]string // as written; nil means any
	exp    [nFields][]string // expanded, set by expand; nil means any
	sets   [nFields]map[string]bool
	dead   bool // some list field expands to nothing: the rule never matches
	allowC bool // an ALLOW rule with commands or a command pattern (matches less; see covers)
	done   bool // expand ran
}

// namedList returns the profile list or host group a rule's "@name" refers to.
func namedList(p *Profile, name string) []string {
	switch name {
	case policy.ListShellAllowlist:
		return p.ShellAllowlist
	case policy.ListShellBlocklist:
		return p.ShellBlocklist
	case policy.ListNetworkAllowlist:
		return p.NetworkAllowlist
	case policy.ListAllowedTools:
		return p.AllowedTools
	case policy.ListAutoApprovePatterns:
		return p.AutoApprovePatterns
	}
	return p.HostGroups[name]
}

// prepareRules prepares p's rules, in p's declaration order.
func prepareRules(p *Profile) []xrule {
	out := make([]xrule, len(p.Rules))
	for i := range p.Rules {
		r := &p.Rules[i]
		c := &r.Condition
		x := xrule{r: r, p: p, mask: maskOf(c.Risk), raw: condLists(c)}
		x.allowC = r.Action == policy.Allow && (len(c.Commands) > 0 || c.CommandPattern != "")
		for _, op := range c.OperationType {
			x.ops = append(x.ops, string(op.Canonical()))
		}
		// A list field whose entries are all references to empty lists holds for nothing. (A
		// hosts reference also holds for a part whose host group it names, see
		// policy.Subject.HostGroup, so a hosts field never does.)
		for f, l := range x.raw {
			if len(l) == 0 || f == fHosts {
				continue
			}
			empty := true
			for _, e := range l {
				name, ref := strings.CutPrefix(e, "@")
				if !ref || len(namedList(p, name)) > 0 {
					empty = false
					break
				}
			}
			x.dead = x.dead || empty
		}
		out[i] = x
	}
	return out
}

// work is the pair-by-pair proof's budget; left < 0 means it ran out.
type work struct{ left int }

// expand fills x.exp, charging w for every entry.
func (x *xrule) expand(w *work) {
	if x.done || x.r == nil {
		return
	}
	x.done = true
	for f, l := range x.raw {
		if l == nil {
			continue
		}
		e := []string{}
		for _, s := range l {
			name, ref := strings.CutPrefix(s, "@")
			if !ref {
				e = append(e, s)
				continue
			}
			if f == fHosts {
				e = append(e, s) // the host group itself (policy.Subject.HostGroup)
			}
			named := namedList(x.p, name)
			w.left -= len(named)
			if w.left < 0 {
				return
			}
			e = append(e, named...)
		}
		x.exp[f] = e
	}
}

// list returns x's list field f, expanded or as written.
func (x *xrule) list(f int, expanded bool) []string {
	if expanded {
		return x.exp[f]
	}
	return x.raw[f]
}

// set returns x's expanded list field f as a set.
func (x *xrule) set(f int, w *work) map[string]bool {
	if x.sets[f] == nil {
		w.left -= len(x.exp[f])
		x.sets[f] = exactSet(x.exp[f])
	}
	return x.sets[f]
}

// evalOrder returns the rules in evaluation order (priority, then declaration), without the
// dead ones, followed by the autonomy matrix.
func evalOrder(rules []xrule) []*xrule {
	out := make([]*xrule, 0, len(rules)+1)
	for i := range rules {
		if !rules[i].dead {
			out = append(out, &rules[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *xrule) int { return cmp.Compare(a.r.Priority, b.r.Priority) })
	return append(out, &xrule{mask: allRisk})
}

// coversExceptRisk reports whether a provably matches every part b matches that a's risk
// condition holds for: each of a's other fields is unset, or set as in b, or (for lists) lists
// everything b lists. Lists are compared as written (references by name), or, with w, expanded
// (w is charged for the work).
func coversExceptRisk(a, b *xrule, w *work) bool {
	if a.r == nil {
		return true
	}
	if b.r == nil {
		return isCatchAllExceptRisk(a)
	}
	ca, cb := &a.r.Condition, &b.r.Condition
	if a.allowC && b.r.Action != policy.Allow {
		return false // an ALLOW rule's commands match less than the same entries elsewhere
	}
	if ca.OutsideWorkspace && !cb.OutsideWorkspace ||
		ca.TargetPattern != "" && ca.TargetPattern != cb.TargetPattern ||
		ca.CommandPattern != "" && ca.CommandPattern != cb.CommandPattern {
		return false
	}
	if !listCovers(a.ops, b.ops) {
		return false
	}
	expanded := w != nil
	if expanded {
		a.expand(w)
		b.expand(w)
	}
	for f := range nFields {
		la, lb := a.list(f, expanded), b.list(f, expanded)
		switch {
		case la == nil:
			continue
		case lb == nil:
			return false
		case expanded && len(la) > 8 && len(lb) > 8:
			set := a.set(f, w)
			w.left -= len(lb)
			for _, e := range lb {
				if !set[e] {
					return false
				}
			}
		default:
			if expanded {
				w.left -= len(la) * len(lb)
			}
			if !listCovers(la, lb) {
				return false
			}
		}
	}
	return true
}

func isCatchAllExceptRisk(a *xrule) bool {
	c := &a.r.Condition
	if c.OutsideWorkspace || c.TargetPattern != "" || c.CommandPattern != "" || a.ops != nil {
		return false
	}
	for _, l := range a.raw {
		if l != nil {
			return false
		}
	}
	return true
}

// covers reports whether a provably matches every part b matches (lists as written).
func covers(a, b *xrule) bool {
	return a.mask&b.mask == b.mask && coversExceptRisk(a, b, nil)
}

// listCovers reports whether a list condition a holds wherever b holds: a is unset (nil), or b
// is set and every entry of b is in a.
func listCovers(a, b []string) bool {
	if a == nil {
		return true
	}
	if b == nil {
		return false
	}
	for _, e := range b {
		if !slices.Contains(a, e) {
			return false
		}
	}
	return true
}

// mayOverlapExceptRisk reports whether some part could match both a and b, leaving the risk
// condition aside: false only when they provably cannot (disjoint operation types, or one
// matches only outside the workspace and the other only inside).
func mayOverlapExceptRisk(a, b *xrule) bool {
	if a.r == nil || b.r == nil {
		return true
	}
	if a.ops != nil && b.ops != nil && !slices.ContainsFunc(a.ops, func(op string) bool { return slices.Contains(b.ops, op) }) {
		return false
	}
	inside := func(x *xrule) bool { p := x.r.Condition.TargetPattern; return p != "" && !isAbsPattern(p) }
	return !(a.r.Condition.OutsideWorkspace && inside(b) || b.r.Condition.OutsideWorkspace && inside(a))
}

// ---- the decision order ----

// discipline is the gate's checkpoint discipline: mutating and destructive parts, and exec
// parts unless exec checkpoints are off, are checkpointed whatever decides them.
func discipline(p *Profile, l risk.Level) policy.Obligations {
	if l == risk.Mutating || l == risk.Destructive || l == risk.Exec && p.ExecCheckpoints == ExecCheckpointsOn {
		return policy.Checkpoint
	}
	return 0
}

// outcome is how rule x (nil rule: the matrix) of profile p in band b decides a part of level l.
func outcome(p *Profile, b policy.Band, x *xrule, l risk.Level) policy.Cell {
	cell := policy.Matrix(b, l)
	obl := cell.Obligations | discipline(p, l)
	if x.r == nil {
		return policy.Cell{Verdict: cell.Verdict, Obligations: obl}
	}
	return policy.Cell{Verdict: x.r.Action, Obligations: obl | x.r.Obligations}
}

// effective returns the obligations a decision carries, counting notify and sandbox for a
// CONFIRM (see AtLeastAsRestrictive).
func effective(c policy.Cell) policy.Obligations {
	if c.Verdict == policy.Confirm {
		return c.Obligations | policy.Notify | policy.Sandbox
	}
	return c.Obligations
}

// atLeastAsStrict is the decision order: a is a DENY, or its verdict is at least as strict and
// it carries at least b's obligations.
func atLeastAsStrict(a, b policy.Cell) bool {
	if a.Verdict == policy.Deny {
		return true
	}
	return !b.Verdict.StricterThan(a.Verdict) && effective(a).Has(effective(b))
}

// modeLevels returns the risk points that reach the rules under mode m: all, or read-only parts
// only.
func modeLevels(m Mode) riskMask {
	if m == ModeReadOnly {
		return levelMask(risk.ReadOnly)
	}
	return allRisk
}

func bandOf(dial float64) policy.Band {
	b, _ := policy.BandOf(dial)
	return b
}

// ---- the first proof: rule by rule, by id ----

// structuralLoosens is the first proof (see AtLeastAsRestrictive).
func structuralLoosens(to, from *Profile, tr, fr []xrule) string {
	// Lists: the blocklist may only grow, the others only shrink. grew records, for each list
	// whose entries differ, whether it grew (true) or shrank.
	grew := map[string]bool{}
	by := map[string]string{} // an entry by which each list in grew changed
	if !sameSlice(to.ShellBlocklist, from.ShellBlocklist) {
		if x := firstMissing(from.ShellBlocklist, exactSet(to.ShellBlocklist), false); x != "" {
			return fmt.Sprintf("no longer blocks %q", x)
		}
		if x := firstMissing(to.ShellBlocklist, exactSet(from.ShellBlocklist), false); x != "" {
			grew[policy.ListShellBlocklist], by[policy.ListShellBlocklist] = true, x
		}
	}
	for _, l := range []struct {
		name     string
		to, from []string
	}{
		{policy.ListShellAllowlist, to.ShellAllowlist, from.ShellAllowlist},
		{policy.ListNetworkAllowlist, to.NetworkAllowlist, from.NetworkAllowlist},
		{policy.ListAllowedTools, to.AllowedTools, from.AllowedTools},
		{policy.ListAutoApprovePatterns, to.AutoApprovePatterns, from.AutoApprovePatterns},
	} {
		if sameSlice(l.to, l.from) {
			continue
		}
		if x := firstMissing(l.to, exactSet(l.from), false); x != "" {
			return fmt.Sprintf("adds %q to %s", x, l.name)
		}
		if x := firstMissing(l.from, exactSet(l.to), false); x != "" {
			grew[l.name], by[l.name] = false, x
		}
	}
	if !sameMap(to.HostGroups, from.HostGroups) {
		for _, g := range sortedKeys(to.HostGroups) {
			if x := firstMissing(to.HostGroups[g], exactSet(from.HostGroups[g]), false); x != "" {
				return fmt.Sprintf("adds %q to host group %q", x, g)
			}
			if x := firstMissing(from.HostGroups[g], exactSet(to.HostGroups[g]), false); x != "" {
				grew[g], by[g] = false, x
			}
		}
		for _, g := range sortedKeys(from.HostGroups) {
			if _, ok := to.HostGroups[g]; !ok && len(from.HostGroups[g]) > 0 {
				grew[g], by[g] = false, from.HostGroups[g][0]
			}
		}
	}
	if why := bandLoss(to, from, tr); why != "" {
		return why
	}
	return rulesByID(to, from, tr, fr, grew, by)
}

// bandLoss compares the autonomy bands (see AtLeastAsRestrictive): at each risk level to's
// permission mode lets through, the matrix cell of to is at least as strict as from's, and if an
// ALLOW (CONFIRM) rule of to may decide parts of that level, the obligations the cell adds to it
// keep the decision at least as strict.
func bandLoss(to, from *Profile, tr []xrule) string {
	tb, fb := bandOf(to.Autonomy), bandOf(from.Autonomy)
	if tb == fb {
		return ""
	}
	levels := modeLevels(to.Mode)
	may := func(v policy.Verdict, l risk.Level) bool {
		for i := range tr {
			if !tr[i].dead && tr[i].r.Action == v && tr[i].mask&levelMask(l)&levels != 0 {
				return true
			}
		}
		return false
	}
	matrix := &xrule{mask: allRisk}
	var lost []string
	for _, l := range risk.Levels() {
		if levels&levelMask(l) == 0 {
			continue
		}
		tc, fc := outcome(to, tb, matrix, l), outcome(from, fb, matrix, l)
		ok := atLeastAsStrict(tc, fc)
		for _, v := range []policy.Verdict{policy.Allow, policy.Confirm} {
			if ok && may(v, l) {
				ok = atLeastAsStrict(policy.Cell{Verdict: v, Obligations: tc.Obligations}, policy.Cell{Verdict: v, Obligations: fc.Obligations})
			}
		}
		if !ok {
			lost = append(lost, fmt.Sprintf("%s (%s, now %s)", l, policy.Matrix(fb, l), policy.Matrix(tb, l)))
		}
	}
	if len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf("moves the autonomy dial from the %s band to the %s band, where actions that a rule allows or confirms, or the matrix decides, lose obligations or get a looser verdict: %s",
		fb, tb, strings.Join(lost, "; "))
}

// rulesByID compares the rules by id (see AtLeastAsRestrictive). grew names the lists whose
// entries differ: true if it grew, false if it shrank; by holds an entry it changed by.
func rulesByID(to, from *Profile, tr, fr []xrule, grew map[string]bool, by map[string]string) string {
	same := sameRules(to.Rules, from.Rules)
	if same && len(grew) == 0 {
		return ""
	}
	refers := func(x *xrule, grown bool) bool { // to a list that grew (grown) or shrank
		for name, g := range grew {
			if g == grown && refersTo(&x.r.Condition, name) {
				return true
			}
		}
		return false
	}
	toIdx, fromIdx := make(map[string]int, len(tr)), make(map[string]int, len(fr))
	for i := range tr {
		if !tr[i].dead {
			toIdx[tr[i].r.ID] = i
		}
	}
	for i := range fr {
		if !fr[i].dead {
			fromIdx[fr[i].r.ID] = i
		}
	}
	for i := range fr {
		old := &fr[i]
		if old.dead {
			continue
		}
		j, kept := toIdx[old.r.ID]
		if !kept {
			if minimal(old.r) {
				continue
			}
			if slices.ContainsFunc(tr, func(d xrule) bool {
				return !d.dead && d.r.Action == policy.Deny && d.r.Priority < old.r.Priority && covers(&d, old) && !refers(&d, false) && !refers(old, false)
			}) {
				continue
			}
			return fmt.Sprintf("drops the %s rule %q", old.r.Action, old.r.ID)
		}
		r := &tr[j]
		if !same {
			if why := replacementLoosens(old, r); why != "" {
				return why
			}
		}
		if !refers(old, true) && !refers(old, false) && !refers(r, true) && !refers(r, false) {
			continue
		}
		switch {
		case minimal(old.r) && (r.r.Action == policy.Deny || !refers(r, true)):
		case old.r.Action == policy.Deny && r.r.Action == policy.Deny && !refers(old, false) && !refers(r, false):
		default:
			for _, name := range slices.Sorted(maps.Keys(grew)) {
				for _, x := range []*xrule{r, old} {
					if refersTo(&x.r.Condition, name) {
						verb := "removes %q from %s"
						if grew[name] {
							verb = "adds %q to %s"
						}
						return fmt.Sprintf(verb+", which the %s rule %q refers to", by[name], listName(name), x.r.Action, x.r.ID)
					}
				}
			}
			return fmt.Sprintf("rule %q refers to a list whose entries differ", r.r.ID)
		}
	}
	if same {
		return ""
	}
	for i := range tr {
		if _, had := fromIdx[tr[i].r.ID]; !tr[i].dead && !had && tr[i].r.Action != policy.Deny {
			if tr[i].r.Action == policy.Confirm {
				return fmt.Sprintf("adds the CONFIRM rule %q, which can override a denial (a DENY rule or the autonomy matrix)", tr[i].r.ID)
			}
			return fmt.Sprintf("adds the %s rule %q", tr[i].r.Action, tr[i].r.ID)
		}
	}
	return orderLoosens(tr, fromIdx)
}

// orderLoosens checks the order among rules of equal priority: only a DENY rule may move ahead
// of a rule that was ahead of it. For each kept rule y of to that is not a DENY rule, every kept
// rule after it at its priority must come after it in from too.
func orderLoosens(tr []xrule, fromIdx map[string]int) string {
	type item struct {
		from int
		x    *xrule
	}
	groups := map[int][]item{}
	var prios []int
	for i := range tr {
		x := &tr[i]
		f, ok := fromIdx[x.r.ID]
		if x.dead || !ok {
			continue
		}
		if _, seen := groups[x.r.Priority]; !seen {
			prios = append(prios, x.r.Priority)
		}
		groups[x.r.Priority] = append(groups[x.r.Priority], item{f, x})
	}
	slices.Sort(prios)
	for _, p := range prios {
		g := groups[p]
		minAfter, minID := math.MaxInt, ""
		for k := len(g) - 1; k >= 0; k-- {
			if g[k].x.r.Action != policy.Deny && minAfter < g[k].from {
				return fmt.Sprintf("rule %q moves ahead of rule %q", g[k].x.r.ID, minID)
			}
			if g[k].from < minAfter {
				minAfter, minID = g[k].from, g[k].x.r.ID
			}
		}
	}
	return ""
}

// minimal reports whether r is an ALLOW rule without obligations: nothing is more permissive,
// since the rule layer and the matrix both add the matrix cell's obligations.
func minimal(r *policy.Rule) bool { return r.Action == policy.Allow && r.Obligations == 0 }

// replacementLoosens says how replacing rule old by r loosens the rules, or "" if it does not.
// The replacement is judged by its effect on decisions, conservatively: r must be provably at
// least as strict for every action.
//
//   - A DENY rule is harmless when it matches every action old matched (its condition is
//     provably at least as broad, see covers) and is evaluated no later than old. Anything more
//     it matches becomes a denial. If it misses some, those actions fall through to later rules
//     or the autonomy matrix, which may allow them with fewer obligations (the project file that
//     replaces PROFILE-FULL-AUTO's allow-self-upgrade by a DENY rule that never matches takes
//     away its checkpoint and notification). The one exception: old is an ALLOW rule without
//     obligations, the most permissive outcome there is.
//   - An ALLOW or CONFIRM rule must stand where old stood (same priority, so the same place in
//     the evaluation order), match no action old did not (anything else could override a later
//     denial), match every action old matched (unless old is an ALLOW rule without
//     obligations), give a verdict at least as strict and keep old's obligations.
func replacementLoosens(old, r *xrule) string {
	or, nr := old.r, r.r
	if nr.Action == policy.Deny {
		switch {
		case minimal(or) || nr.Priority <= or.Priority && covers(r, old):
			return ""
		case or.Action == policy.Allow:
			return fmt.Sprintf("replaces the ALLOW rule %q, which adds %s, with a DENY rule that does not cover every action it allowed: those fall through to later rules or the autonomy matrix, without its obligations", nr.ID, or.Obligations)
		}
		return fmt.Sprintf("changes the condition or priority of the %s rule %q", or.Action, nr.ID)
	}
	samePlace := or.Priority == nr.Priority
	noMore := samePlace && covers(old, r) // r decides no action that old did not decide
	noLess := samePlace && covers(r, old) // every action old decided, r decides
	switch {
	case or.Action == policy.Allow && nr.Action == policy.Confirm && !noMore:
		return fmt.Sprintf("replaces the ALLOW rule %q with a CONFIRM rule that matches elsewhere, which can override a denial", nr.ID)
	case or.Action == policy.Allow && noMore && !noLess && !minimal(or):
		return fmt.Sprintf("narrows the ALLOW rule %q, which adds %s: the actions it no longer matches fall through to later rules or the autonomy matrix, without its obligations", nr.ID, or.Obligations)
	case or.Action == policy.Allow && !noMore:
		return fmt.Sprintf("changes what the ALLOW rule %q allows", nr.ID)
	case !noMore || !noLess && !minimal(or):
		return fmt.Sprintf("changes the condition or priority of the %s rule %q", or.Action, nr.ID)
	case or.Action.StricterThan(nr.Action):
		return fmt.Sprintf("turns the %s rule %q into %s", or.Action, nr.ID, nr.Action)
	case !nr.Obligations.Has(or.Obligations):
		return fmt.Sprintf("drops obligations of the %s rule %q", or.Action, nr.ID)
	}
	return ""
}

// ---- the second proof: first-match evaluation, pair by pair ----

// pairwiseLoosens is the second proof (see AtLeastAsRestrictive). It gives up (w.left < 0)
// when it runs out of work.
func pairwiseLoosens(to, from *Profile, tr, fr []xrule, w *work) string {
	tb, fb := bandOf(to.Autonomy), bandOf(from.Autonomy)
	te, fe := evalOrder(tr), evalOrder(fr)
	levels := modeLevels(to.Mode)
	for i, r := range te {
		if r.r != nil && r.r.Action == policy.Deny {
			continue
		}
		// The parts r can decide first: those no earlier rule of to takes.
		reach := r.mask & levels
		for _, t := range te[:i] {
			if t.mask&reach != 0 && coversExceptRisk(t, r, w) {
				reach &^= t.mask
			}
		}
		if reach == 0 {
			continue
		}
		var taken riskMask // parts of r's that an earlier rule of from takes
		for _, u := range fe {
			if w.left < 0 {
				return "the rules are too large to compare pair by pair"
			}
			common := reach & u.mask &^ taken
			if common != 0 && mayOverlapExceptRisk(r, u) {
				for _, t := range te[:i] {
					if t.mask&common != 0 && coversExceptRisk(t, u, w) {
						common &^= t.mask // those parts of u's never reach r
					}
				}
				if why := comparePoints(to, from, tb, fb, r, u, common); why != "" {
					return why
				}
			}
			if u.mask&reach&^taken != 0 && coversExceptRisk(u, r, w) {
				taken |= u.mask
			}
			if reach&^taken == 0 {
				break
			}
		}
	}
	if w.left < 0 {
		return "the rules are too large to compare pair by pair"
	}
	return ""
}

// comparePoints checks, at each risk point of common, that r of to decides at least as strictly
// as u of from.
func comparePoints(to, from *Profile, tb, fb policy.Band, r, u *xrule, common riskMask) string {
	for _, l := range risk.Levels() {
		if common&levelMask(l) == 0 {
			continue
		}
		a, b := outcome(to, tb, r, l), outcome(from, fb, u, l)
		if atLeastAsStrict(a, b) {
			continue
		}
		name := func(x *xrule, p string) string {
			if x.r == nil {
				return p + "autonomy matrix"
			}
			return fmt.Sprintf("%srule %q", p, x.r.ID)
		}
		return fmt.Sprintf("%s gives %s for %s parts where %s gives %s", name(r, ""), a, l, name(u, "the current profile's "), b)
	}
	return ""
}

// ---- helpers ----

// listName names a list rules refer to: a profile list by its key, a host group as such.
func listName(name string) string {
	switch name {
	case policy.ListShellAllowlist, policy.ListShellBlocklist, policy.ListNetworkAllowlist, policy.ListAllowedTools, policy.ListAutoApprovePatterns:
		return name
	}
	return fmt.Sprintf("host group %q", name)
}

func refersTo(c *policy.Condition, name string) bool {
	for _, l := range [][]string{c.Commands, c.Tools, c.Hosts, c.Providers, c.Surfaces} {
		if slices.Contains(l, "@"+name) {
			return true
		}
	}
	return false
}

// sameSlice reports whether a and b hold the same elements, so nothing needs comparing: the
// same slice (cheap), or equal ones.
func sameSlice(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// sameLists reports whether the lists rules refer to are the same in a and b.
func sameLists(a, b *Profile) bool {
	return sameSlice(a.ShellAllowlist, b.ShellAllowlist) && sameSlice(a.ShellBlocklist, b.ShellBlocklist) &&
		sameSlice(a.NetworkAllowlist, b.NetworkAllowlist) && sameSlice(a.AllowedTools, b.AllowedTools) &&
		sameSlice(a.AutoApprovePatterns, b.AutoApprovePatterns) && sameMap(a.HostGroups, b.HostGroups)
}

// sameMap reports whether a and b are the same map, or both empty.
func sameMap(a, b map[string][]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !sameSlice(v, w) {
			return false
		}
	}
	return true
}

// sameRules reports whether a and b hold the same rules in the same order.
func sameRules(a, b []policy.Rule) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.EqualFunc(a, b, func(x, y policy.Rule) bool {
		return x.ID == y.ID && x.Priority == y.Priority && x.Action == y.Action && x.Obligations == y.Obligations &&
			conditionsEqual(&x.Condition, &y.Condition)
	})
}

func conditionsEqual(a, b *policy.Condition) bool {
	return slices.Equal(a.OperationType, b.OperationType) && a.Risk == b.Risk && a.TargetPattern == b.TargetPattern &&
		a.CommandPattern == b.CommandPattern && a.OutsideWorkspace == b.OutsideWorkspace &&
		slices.Equal(a.Commands, b.Commands) && slices.Equal(a.Tools, b.Tools) && slices.Equal(a.Hosts, b.Hosts) &&
		slices.Equal(a.Providers, b.Providers) && slices.Equal(a.Surfaces, b.Surfaces)
}

func exactSet(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, e := range l {
		m[e] = true
	}
	return m
}

// foldKey folds ASCII case, as protected path entries are matched.
func foldKey(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func foldSet(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, e := range l {
		m[foldKey(e)] = true
	}
	return m
}

// firstMissing returns the first entry of l that set lacks, or "". A set built by foldSet is
// looked up with folded keys (fold).
func firstMissing(l []string, set map[string]bool, fold bool) string {
	for _, e := range l {
		k := e
		if fold {
			k = foldKey(e)
		}
		if !set[k] {
			return e
		}
	}
	return ""
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
