package profile

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
)

// MaxRulePriority bounds the priority of every rule of a profile under a managed tier, the
// tier's own rules included: -MaxRulePriority to MaxRulePriority (the bound the profile files'
// schema sets). The managed tier's rules are evaluated at priorities below that range (see
// [Managed.Impose]).
const MaxRulePriority = 1_000_000

// priorityBand is the width of the range of priorities a profile's rules may have; the managed
// tier's rules, and the DENY rules hoisted ahead of its CONFIRM rules, are shifted down by
// multiples of it, so that each group is evaluated after the one before it whatever the
// priorities were.
const priorityBand = 2*MaxRulePriority + 1

// The shifts of the groups of [Managed.Impose]: the managed DENY rules are evaluated first,
// then the rules of the other tiers moved ahead of the managed CONFIRM rules, then the managed
// CONFIRM rules, then the rest.
const (
	shiftManagedDeny    = 3 * priorityBand
	shiftHoisted        = 2 * priorityBand
	shiftManagedConfirm = 1 * priorityBand
)

// Managed is an organisation's managed tier as it travels with a profile ([Profile.Managed]): the
// floor that no other tier, no profile switch and no grant may go below. The loader
// (package profile/loader) builds it from the managed profile file or a signed policy bundle; a
// run (package reins) imposes it on every profile it switches to, so a switch to a built-in
// profile keeps it, and refuses one past its caps.
//
// A Managed is plain data. Its rules, paths and lists are imposed on a profile by
// [Managed.Impose]; its caps are checked when the profile compiles ([Profile.Compile] refuses a
// profile that carries a Managed it does not honour).
type Managed struct {
	// Source says where the tier comes from, for humans ("file /etc/reins/managed-profile.json",
	// "bundle v12 /etc/reins/policy-bundle.json"). It is not part of the profile's hash.
	Source string `json:"-"`
	// Bundle is the version of the signed policy bundle the tier came from; 0 for a plain file.
	// Audit records name it (audit.Record.BundleVersion). It is not part of the profile's hash
	// (the content is).
	Bundle uint64 `json:"-"`

	// MaxBand, when not nil, is the highest autonomy band a profile may be in: a profile whose
	// dial lies in a higher band does not compile, so a run refuses to switch to it.
	MaxBand *policy.Band `json:",omitempty"`
	// MaxMode is the least restrictive permission mode a profile may be in, in the order
	// emergency-stop < plan < read-only < default: ModeReadOnly allows read-only, plan and
	// emergency-stop. ModeDefault (the zero value) caps nothing.
	MaxMode Mode `json:",omitempty"`
	// RulesOnly forbids the other tiers' ALLOW rules and grants: the loader drops the user's and
	// the project's ALLOW rules and applies only those of their settings that tighten, and a run
	// makes no grant and applies none.
	RulesOnly bool `json:",omitempty"`
	// Rules are the tier's DENY and CONFIRM rules, as written (priorities within
	// ±MaxRulePriority). Impose puts them ahead of every other rule; a rule of another tier
	// with the id of one of them is dropped.
	Rules []policy.Rule `json:",omitempty"`
	// ProtectedPaths and WriteProtectedPaths are the tier's protected paths (entries as for
	// [Profile.ProtectedPaths]), added to every profile.
	ProtectedPaths      []string `json:",omitempty"`
	WriteProtectedPaths []string `json:",omitempty"`
	// ShellBlocklist and HostGroups are the entries the tier adds to those lists, carried so
	// that its rules' references (@shell_blocklist, @group) mean at least what they meant in the
	// tier under any profile.
	ShellBlocklist []string            `json:",omitempty"`
	HostGroups     map[string][]string `json:",omitempty"`
}

// Clone returns a deep copy of m (nil for nil).
func (m *Managed) Clone() *Managed {
	if m == nil {
		return nil
	}
	n := *m
	if m.MaxBand != nil {
		b := *m.MaxBand
		n.MaxBand = &b
	}
	n.Rules = cloneRules(m.Rules)
	n.ProtectedPaths = slices.Clone(m.ProtectedPaths)
	n.WriteProtectedPaths = slices.Clone(m.WriteProtectedPaths)
	n.ShellBlocklist = slices.Clone(m.ShellBlocklist)
	n.HostGroups = cloneMap(m.HostGroups)
	return &n
}

// Equal reports whether m and n impose the same floor: everything but Source and Bundle is
// equal. Two nil tiers are equal.
func (m *Managed) Equal(n *Managed) bool {
	if m == nil || n == nil {
		return m == n
	}
	a, b := *m, *n
	a.Source, a.Bundle, b.Source, b.Bundle = "", 0, "", 0
	return reflect.DeepEqual(normalManaged(a), normalManaged(b))
}

// normalManaged makes empty lists and maps nil, so that equality does not depend on them.
func normalManaged(m Managed) Managed {
	for _, l := range []*[]string{&m.ProtectedPaths, &m.WriteProtectedPaths, &m.ShellBlocklist} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(m.Rules) == 0 {
		m.Rules = nil
	}
	if len(m.HostGroups) == 0 {
		m.HostGroups = nil
	}
	return m
}

// Caps describes the caps for humans: "band trusted, mode read-only, managed rules only", or
// "none".
func (m *Managed) Caps() string {
	if m == nil {
		return "none"
	}
	var parts []string
	if m.MaxBand != nil {
		parts = append(parts, "autonomy band at most "+m.MaxBand.String())
	}
	if m.MaxMode != ModeDefault {
		parts = append(parts, "permission mode at most "+m.MaxMode.String())
	}
	if m.RulesOnly {
		parts = append(parts, "managed rules only (no ALLOW rules of the user or project, no grants)")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// Validate checks the tier: known caps, DENY or CONFIRM rules with unique, non-empty ids and
// priorities within ±MaxRulePriority, protected paths the path model accepts. Every problem is
// reported.
func (m *Managed) Validate() error {
	if m == nil {
		return nil
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("managed tier: "+format, args...)) }
	if m.MaxBand != nil && *m.MaxBand > policy.BandAutonomous {
		fail("max band %d is not a band", uint8(*m.MaxBand))
	}
	if int(m.MaxMode) >= len(modeNames) {
		fail("max mode %d is not a permission mode", uint8(m.MaxMode))
	}
	seen := map[string]bool{}
	for i, r := range m.Rules {
		switch {
		case r.ID == "":
			fail("rule #%d has no id", i+1)
		case seen[r.ID]:
			fail("rule id %q appears twice", r.ID)
		}
		seen[r.ID] = true
		if r.Action != policy.Deny && r.Action != policy.Confirm {
			fail("rule %q is %s: the tier's rules that are imposed are DENY or CONFIRM rules", r.ID, r.Action)
		}
		if r.Priority < -MaxRulePriority || r.Priority > MaxRulePriority {
			fail("rule %q has priority %d, outside ±%d", r.ID, r.Priority, MaxRulePriority)
		}
	}
	for field, list := range map[string][]string{"protected paths": m.ProtectedPaths, "write-protected paths": m.WriteProtectedPaths} {
		for _, e := range list {
			if why := fspath.CheckEntry(e); why != "" {
				fail("%s: %q: %s", field, e, why)
			}
		}
	}
	return errors.Join(errs...)
}

// hasConfirm reports whether the tier has a CONFIRM rule.
func (m *Managed) hasConfirm() bool {
	return slices.ContainsFunc(m.Rules, func(r policy.Rule) bool { return r.Action == policy.Confirm })
}

// Impose returns a copy of p under the tier m, with p.Managed set to a copy of m. It is
// idempotent: imposing the same tier on its result changes nothing. A nil m returns p as it is.
//
//   - Rules. A rule of p with the id of one of m's rules is dropped. m's DENY rules are
//     evaluated first (at their priority minus 6,000,003); then, when m has CONFIRM rules,
//     the DENY rules of p that can move ahead of them without turning anything but a question
//     into one (with the rules before them that may match what they match, each of which is a
//     DENY rule or covered by a managed CONFIRM rule and then raised to a CONFIRM carrying the
//     obligations of the managed CONFIRM rules that may match it: at their priority minus
//     4,000,002); then m's CONFIRM rules (at their priority minus 2,000,001); then every other
//     rule of p as it was. So no rule of another tier outranks a managed rule, and a managed
//     CONFIRM rule does not turn those DENY rules' denials into questions. It still does for a
//     DENY rule that an ALLOW or CONFIRM rule before it, not covered by a managed CONFIRM
//     rule, may make an exception to (PROFILE-SAFE's deny-network after allow-ai-apis, under
//     a managed CONFIRM rule for one command only), and for the autonomy matrix's one denial
//     (a destructive action in the supervised band that no rule decides): such an action is
//     asked, not denied. Every rule of p must have a priority within ±MaxRulePriority (or be one
//     an earlier Impose moved); otherwise Impose fails.
//   - Paths and lists. m's protected and write-protected paths, blocklist entries and host-group
//     hosts are added where p lacks them.
//
// Impose does not check the caps: [Profile.Compile] does, so a profile past m's caps does not
// compile (a run refuses to switch to it; the loader lowers the dial and the mode to the caps
// before it imposes the tier).
func (m *Managed) Impose(p Profile) (Profile, error) {
	if m == nil {
		return p, nil
	}
	if err := m.Validate(); err != nil {
		return Profile{}, err
	}
	q := p.Clone()
	ids := make(map[string]bool, len(m.Rules))
	for _, r := range m.Rules {
		ids[r.ID] = true
	}
	rest := make([]policy.Rule, 0, len(q.Rules))
	for _, r := range q.Rules {
		if ids[r.ID] {
			continue
		}
		if r.Priority < -MaxRulePriority || r.Priority > MaxRulePriority {
			if !(r.Action != policy.Allow && hoisted(r.Priority)) {
				return Profile{}, fmt.Errorf("profile %q: rule %q has priority %d: under a managed tier every rule's priority lies within ±%d", p.Name, r.ID, r.Priority, MaxRulePriority)
			}
		}
		rest = append(rest, r)
	}
	if m.hasConfirm() {
		var confirms []policy.Rule
		for _, r := range m.Rules {
			if r.Action == policy.Confirm {
				confirms = append(confirms, r)
			}
		}
		tmp := q
		tmp.Rules = rest
		for i, obl := range hoisting(&tmp, confirms) {
			r := &rest[i]
			r.Priority -= shiftHoisted
			if r.Action != policy.Deny {
				r.Action, r.Obligations = policy.Confirm, r.Obligations|obl
			}
		}
	}
	rules := make([]policy.Rule, 0, len(m.Rules)+len(rest))
	for _, v := range []struct {
		verdict policy.Verdict
		shift   int
	}{{policy.Deny, shiftManagedDeny}, {policy.Confirm, shiftManagedConfirm}} {
		for _, r := range m.Rules {
			if r.Action == v.verdict {
				r = r.Clone()
				r.Priority -= v.shift
				rules = append(rules, r)
			}
		}
	}
	q.Rules = append(rules, rest...)

	q.ProtectedPaths = addMissing(q.ProtectedPaths, m.ProtectedPaths, true)
	either := slices.Concat(q.ProtectedPaths, q.WriteProtectedPaths)
	for _, e := range m.WriteProtectedPaths {
		if !slices.ContainsFunc(either, func(x string) bool { return strings.EqualFold(x, e) }) {
			q.WriteProtectedPaths = append(q.WriteProtectedPaths, e)
			either = append(either, e)
		}
	}
	q.ShellBlocklist = addMissing(q.ShellBlocklist, m.ShellBlocklist, false)
	for _, g := range slices.Sorted(maps.Keys(m.HostGroups)) {
		if q.HostGroups == nil {
			q.HostGroups = map[string][]string{}
		}
		q.HostGroups[g] = addMissing(q.HostGroups[g], m.HostGroups[g], false)
	}
	q.Managed = m.Clone()
	return q, nil
}

// hoisted reports whether a priority lies in the range Impose moves rules ahead of the managed
// CONFIRM rules to.
func hoisted(prio int) bool {
	return prio >= -shiftHoisted-MaxRulePriority && prio <= -shiftHoisted+MaxRulePriority
}

// addMissing appends to list the entries of add it lacks (compared case-insensitively when
// fold), keeping list's order.
func addMissing(list, add []string, fold bool) []string {
	for _, e := range add {
		if !slices.ContainsFunc(list, func(x string) bool { return x == e || fold && strings.EqualFold(x, e) }) {
			list = append(list, e)
		}
	}
	return list
}

// hoisting returns the rules of p (indices in p.Rules, within ±MaxRulePriority) to move ahead
// of the managed CONFIRM rules confirms, each with the obligations to add when it is raised to a
// CONFIRM (non-DENY rules are; DENY rules stay DENY rules).
//
// A DENY rule moves when that changes no decision but to make it at least what a managed
// CONFIRM rule asks for: with the rules evaluated before it that may match a part it matches,
// and theirs, and so on (the set is closed: a part the set matches is first matched, before
// and after the move, by the same rule of it), when each of those that is not a DENY rule is
// covered by a managed CONFIRM rule (every part it matches, a managed CONFIRM rule matches, so
// raising it to a CONFIRM is what the managed tier asks for anyway). Rules that never match
// (their list references all expand to nothing) and rules moved by an earlier Impose are left
// out. The cost is quadratic in the number of rules.
func hoisting(p *Profile, confirms []policy.Rule) map[int]policy.Obligations {
	n := len(p.Rules)
	tmp := *p
	tmp.Rules = slices.Concat(p.Rules, confirms)
	xs := prepareRules(&tmp)
	var order []int
	for i := range n {
		if r := &p.Rules[i]; !xs[i].dead && r.Priority >= -MaxRulePriority && r.Priority <= MaxRulePriority {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p.Rules[a].Priority, p.Rules[b].Priority) })
	overlap := func(a, b *xrule) bool { return a.mask&b.mask != 0 && mayOverlapExceptRisk(a, b) }
	cs := xs[n:]
	raise := make([]policy.Obligations, n)
	// blocked: a rule that cannot move, or one after a rule it may overlap that cannot.
	blocked := make([]bool, n)
	for k, i := range order {
		x := &xs[i]
		if x.r.Action != policy.Deny {
			covered := false
			for j := range cs {
				c := &cs[j]
				if c.dead || !overlap(c, x) {
					continue
				}
				raise[i] |= c.r.Obligations
				covered = covered || covers(c, x)
			}
			// Raised, an ALLOW rule with commands or a command pattern matches more than it
			// did (see policy.Condition), but nothing the covering CONFIRM rule does not.
			blocked[i] = !covered
		}
		for _, v := range order[:k] {
			if blocked[i] {
				break
			}
			blocked[i] = blocked[v] && overlap(&xs[v], x)
		}
	}
	// needed: a DENY rule that can move, and the rules before it that may overlap one that is
	// needed (they are not blocked, or it would be).
	needed := make([]bool, n)
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		if blocked[i] {
			continue
		}
		needed[i] = xs[i].r.Action == policy.Deny
		for _, w := range order[k+1:] {
			if needed[i] {
				break
			}
			needed[i] = needed[w] && overlap(&xs[i], &xs[w])
		}
	}
	out := map[int]policy.Obligations{}
	for _, i := range order {
		if needed[i] {
			out[i] = raise[i]
		}
	}
	return out
}

// violation says why p does not honour its managed tier, or "": it must lie within the caps and
// be what Impose makes of it (the tier's rules ahead of the others, its paths and lists in).
func (m *Managed) violation(p *Profile) string {
	if err := m.Validate(); err != nil {
		return err.Error()
	}
	if m.MaxBand != nil {
		if b, err := policy.BandOf(p.Autonomy); err == nil && b > *m.MaxBand {
			return fmt.Sprintf("the managed tier caps the autonomy band at %s: the dial %v lies in the %s band", *m.MaxBand, p.Autonomy, b)
		}
	}
	if m.MaxMode.StricterThan(p.Mode) {
		return fmt.Sprintf("the managed tier caps the permission mode at %s: %s is less restrictive", m.MaxMode, p.Mode)
	}
	q := *p
	q.Managed = nil
	r, err := m.Impose(q)
	if err != nil {
		return err.Error()
	}
	r.Managed = p.Managed
	if r.Hash() != p.Hash() {
		return "the managed tier is not imposed on the profile (its rules, protected paths or lists are missing or outranked): impose it with Managed.Impose"
	}
	return ""
}

// managedLoosens says how to's managed tier is looser than from's, or "": from has none, or to
// has one that equals it but for caps at least as tight and managed rules only kept.
func managedLoosens(to, from *Managed) string {
	switch {
	case from == nil:
		return ""
	case to == nil:
		return "leaves the managed tier"
	}
	if from.MaxBand != nil && (to.MaxBand == nil || *to.MaxBand > *from.MaxBand) {
		return "raises the managed tier's cap on the autonomy band"
	}
	if to.MaxMode != from.MaxMode && !to.MaxMode.StricterThan(from.MaxMode) {
		return "raises the managed tier's cap on the permission mode"
	}
	if from.RulesOnly && !to.RulesOnly {
		return "lets the user's and the project's ALLOW rules and grants apply again (the managed tier had managed rules only)"
	}
	a := *to
	a.MaxBand, a.MaxMode, a.RulesOnly = from.MaxBand, from.MaxMode, from.RulesOnly
	if !a.Equal(from) {
		return "changes the managed tier's rules, paths or lists"
	}
	return ""
}
