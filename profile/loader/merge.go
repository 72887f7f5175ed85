package loader

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// Skipped is a setting of a project file that was not applied because it loosens the profile
// and the project is not trusted (see [Loaded.Trust]).
type Skipped struct {
	// Source is where the setting is in the project file.
	Source Source
	// Setting is the setting it would have changed.
	Setting Setting
	// Reason says how it loosens the profile ("raises autonomy from 0.5 to 1").
	Reason string
}

// String returns "FILE:LINE POINTER: not applied: REASON".
func (s Skipped) String() string {
	loc := s.Source.File
	if s.Source.Line > 0 {
		loc += ":" + strconv.Itoa(s.Source.Line)
	}
	return loc + " " + s.Source.Pointer + ": not applied: " + s.Reason
}

// builder applies the layers to a built-in profile.
type builder struct {
	p            profile.Profile
	prov         Provenance
	skipped      []Skipped
	errs         []*Error
	allowProject bool // the project is trusted: its loosenings apply
	// keepBand, when not "", is why the project file may not move the dial to another band of
	// the autonomy matrix: the settings that would are skipped with this reason. keepProfile is
	// the same for the project file's active_profile.
	keepBand, keepProfile string
	// switchedTo is the built-in profile the project file switched to, if it did.
	switchedTo string
}

// build computes the effective profile: the base built-in (override if set, else the highest
// layer's active_profile, else def), then the user file, then the project file, then the
// protected paths the host adds (protect). Project loosenings apply only when allowProject.
//
// A lower dial is not always stricter: the rule layer adds the autonomy matrix cell's
// obligations to what a rule allows or confirms, and a lower band's cells can carry fewer
// (trusted mutating is ALLOW+notify+checkpoint, supervised mutating is CONFIRM). So when an
// untrusted project file moves the dial to another band, the result is compared with the profile
// without the project file (bandLoss); if some action could lose an obligation or get a looser
// matrix verdict, the profile is built again with every project setting that moves the band
// skipped.
func build(def, override string, user, project *parsedFile, allowProject bool, protect []string) (*builder, error) {
	var keep keepRules
	for {
		b, err := build1(def, override, user, project, allowProject, protect, keep)
		if err != nil || project == nil || allowProject {
			return b, err
		}
		without, err := build1(def, override, user, nil, false, protect, keepRules{})
		if err != nil {
			return nil, err
		}
		if b.switchedTo != "" && keep.profile == "" {
			// The switch replaces the base profile's rules and lists wholesale: compare the
			// two bases with the user file applied to each.
			to, err := build1(def, b.switchedTo, user, nil, false, protect, keepRules{})
			if err != nil {
				return nil, err
			}
			if why := profileLoosens(without.p, to.p); why != "" {
				keep.profile = why
				continue
			}
		}
		if why := bandLoss(without.p, b.p); why != "" && keep.band == "" {
			keep.band = why
			continue
		}
		return b, nil
	}
}

// keepRules are the reasons (when not "") why an untrusted project file may not switch the
// active profile (profile) or move the dial to another band (band).
type keepRules struct{ profile, band string }

// bandLoss compares the autonomy bands of two profiles, from (without the project file) and to
// (with it), and says how moving from one to the other can make a decision more permissive or
// drop obligations, or "". Only the risk levels that to's permission mode lets through to the
// rules and the matrix count. At each, the matrix cell must be at least as strict (a stricter
// verdict, or the same verdict with at least the obligations) and, if a rule that is not a DENY
// rule may decide actions of that level, the cell's obligations (which the gate adds to the
// rule's) must not shrink.
func bandLoss(from, to profile.Profile) string {
	fb, err1 := policy.BandOf(from.Autonomy)
	tb, err2 := policy.BandOf(to.Autonomy)
	if err1 != nil || err2 != nil || fb == tb {
		return ""
	}
	var levels []risk.Level
	switch to.Mode {
	case profile.ModeDefault:
		levels = risk.Levels()
	case profile.ModeReadOnly:
		levels = []risk.Level{risk.ReadOnly}
	}
	var lost []string
	for _, l := range levels {
		fc, tc := policy.Matrix(fb, l), policy.Matrix(tb, l)
		matrixOK := tc.Verdict == policy.Deny || tc.Verdict.StricterThan(fc.Verdict) ||
			tc.Verdict == fc.Verdict && tc.Obligations.Has(fc.Obligations)
		ruleOK := tc.Obligations.Has(fc.Obligations) || !ruleMayDecide(to.Rules, l)
		if !matrixOK || !ruleOK {
			lost = append(lost, fmt.Sprintf("%s (%s, now %s)", l, fc, tc))
		}
	}
	if len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf("moves the autonomy dial from the %s band to the %s band, where actions that a rule allows or confirms, or the matrix decides, lose obligations or get a looser verdict: %s",
		fb, tb, strings.Join(lost, "; "))
}

// ruleMayDecide reports whether a rule that is not a DENY rule may match a part of risk level l:
// its risk_level condition is unset, lists l, or lists a severity (any level may have it).
func ruleMayDecide(rules []policy.Rule, l risk.Level) bool {
	for _, r := range rules {
		if r.Action == policy.Deny {
			continue
		}
		if m := r.Condition.Risk; m.IsZero() || m.Levels.Has(l) || !m.Severities.Empty() {
			return true
		}
	}
	return false
}

func build1(def, override string, user, project *parsedFile, allowProject bool, protect []string, keep keepRules) (*builder, error) {
	b := &builder{prov: Provenance{m: map[Setting]Source{}}, allowProject: allowProject, keepBand: keep.band, keepProfile: keep.profile}
	name, src := def, Source{Origin: OriginBuiltin, Profile: def}
	if override != "" {
		name, src = override, Source{Origin: OriginHost, Profile: override}
	} else {
		if n, ptr := activeOf(user); n != "" {
			name, src = n, user.src(ptr)
		} else if m, _ := activeOf(project); m == "" && user != nil && user.cfg.Approval != nil {
			// ADR 0006: "Safe default (ModeSafe)": the user's approval block without a mode
			// selects safe where no file names a profile. A project file never selects one
			// implicitly.
			name, src = profile.ApprovalSafe, user.src("/approval")
		}
		if n, ptr := activeOf(project); n != "" {
			cur, err1 := profile.Builtin(name)
			cand, err2 := profile.Builtin(n)
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			ok, why := profile.AtLeastAsRestrictive(cand, cur)
			switch {
			case ok && b.keepProfile != "":
				ok, why = false, b.keepProfile
			case ok && b.keepBand != "" && bandOf(cand.Autonomy) != bandOf(cur.Autonomy):
				ok, why = false, b.keepBand
			}
			if b.gate(project, ptr, Setting{Field: "active_profile"}, fmt.Sprintf("switches the active profile from %s to %s: %s", cur.Name, cand.Name, why), !ok) {
				if cand.Name != cur.Name {
					b.switchedTo = cand.Name
				}
				name, src = cand.Name, project.src(ptr)
			}
		}
	}
	base, err := profile.Builtin(name)
	if err != nil {
		return nil, err
	}
	b.p = base.Clone()
	b.recordBase(base, src)
	for _, f := range []*parsedFile{user, project} {
		if f != nil {
			b.apply(f)
		}
	}
	if len(b.errs) > 0 {
		sortErrors(b.errs)
		return nil, joinLoadErrors(b.errs)
	}
	slices.SortStableFunc(b.skipped, func(x, y Skipped) int { return cmp.Compare(x.Source.Line, y.Source.Line) }) // file order
	if b.p.Hash() != base.Hash() {
		b.p.Family = profile.FamilyCustom
	}
	for _, e := range protect {
		if !slices.ContainsFunc(slices.Concat(b.p.ProtectedPaths, b.p.WriteProtectedPaths), func(x string) bool { return strings.EqualFold(x, e) }) {
			b.p.ProtectedPaths = append(b.p.ProtectedPaths, e)
			b.prov.set("denied_paths", e, Source{Origin: OriginHost})
		}
	}
	return b, nil
}

// activeOf returns the built-in profile a file selects and the pointer of the setting.
func activeOf(f *parsedFile) (string, string) {
	switch {
	case f == nil:
	case f.cfg.ActiveProfile != nil:
		return *f.cfg.ActiveProfile, "/active_profile"
	case f.cfg.Approval != nil && f.cfg.Approval.Mode != nil:
		return *f.cfg.Approval.Mode, "/approval/mode"
	}
	return "", ""
}

func (b *builder) recordBase(p profile.Profile, src Source) {
	b.prov.set("active_profile", "", src)
	bs := Source{Origin: OriginBuiltin, Profile: p.Name}
	for _, f := range []string{"autonomy", "permission_mode", "external_writes", "exec_checkpoints",
		"resource_limits.max_concurrent_ops", "resource_limits.max_files_per_plan", "resource_limits.timeout_seconds"} {
		b.prov.set(f, "", bs)
	}
	for _, r := range p.Rules {
		b.prov.set("rules", r.ID, bs)
	}
	for field, list := range b.lists(&p) {
		for _, e := range list {
			b.prov.set(field, e, bs)
		}
	}
	for prefix, m := range map[string]map[string][]string{"host_groups.": p.HostGroups, "registries.": p.Registries} {
		for k, hosts := range m {
			b.prov.set(prefix+k, "", bs)
			for _, h := range hosts {
				b.prov.set(prefix+k, h, bs)
			}
		}
	}
}

func (b *builder) lists(p *profile.Profile) map[string][]string {
	return map[string][]string{
		"denied_paths": p.ProtectedPaths, "write_protected_paths": p.WriteProtectedPaths, "trusted_paths": p.TrustedPaths,
		"shell_allowlist": p.ShellAllowlist, "shell_blocklist": p.ShellBlocklist,
		"network_allowlist": p.NetworkAllowlist, "allowed_tools": p.AllowedTools,
		"auto_approve_patterns": p.AutoApprovePatterns,
	}
}

// gate decides whether a setting of f applies: always for the user file, and for the project
// file unless it loosens (loosens is true) and the project is not trusted, in which case it is
// recorded as skipped.
func (b *builder) gate(f *parsedFile, ptr string, s Setting, reason string, loosens bool) bool {
	if !loosens || f.layer != OriginProject || b.allowProject {
		return true
	}
	b.skipped = append(b.skipped, Skipped{Source: f.src(ptr), Setting: s, Reason: reason})
	return false
}

func (b *builder) apply(f *parsedFile) {
	c := &f.cfg
	p := &b.p

	if c.PermissionMode != nil {
		mode, dial := p.Mode, p.Autonomy
		if band, err := policy.ParseBand(*c.PermissionMode); err == nil {
			mode = profile.ModeDefault
			if cur, _ := policy.BandOf(dial); cur != band && c.Autonomy == nil {
				dial = band.Dial()
			}
		} else if m, err := profile.ParseMode(*c.PermissionMode); err == nil {
			mode = m
		}
		reason, loosens := "", false
		switch {
		case p.Mode.StricterThan(mode):
			reason, loosens = fmt.Sprintf("loosens the permission mode from %s to %s", p.Mode, mode), true
		case dial > p.Autonomy:
			reason, loosens = fmt.Sprintf("raises autonomy from %v to %v", p.Autonomy, dial), true
		case b.keepBand != "" && bandOf(dial) != bandOf(p.Autonomy):
			reason, loosens = b.keepBand, true
		}
		if b.gate(f, "/permission_mode", Setting{Field: "permission_mode"}, reason, loosens) {
			p.Mode = mode
			b.prov.set("permission_mode", "", f.src("/permission_mode"))
			if dial != p.Autonomy {
				p.Autonomy = dial
				b.prov.set("autonomy", "", f.src("/permission_mode"))
			}
		}
	}
	if c.Autonomy != nil {
		v := *c.Autonomy
		reason, loosens := fmt.Sprintf("raises autonomy from %v to %v", p.Autonomy, v), v > p.Autonomy
		if !loosens && b.keepBand != "" && bandOf(v) != bandOf(p.Autonomy) {
			reason, loosens = b.keepBand, true
		}
		if b.gate(f, "/autonomy", Setting{Field: "autonomy"}, reason, loosens) {
			p.Autonomy = v
			b.prov.set("autonomy", "", f.src("/autonomy"))
		}
	}
	if c.ExternalWrites != nil {
		v := profile.ExternalWritesHalt
		if *c.ExternalWrites == "policy" {
			v = profile.ExternalWritesByPolicy
		}
		if b.gate(f, "/external_writes", Setting{Field: "external_writes"}, "leaves writes outside the workspace to the rules instead of halting the run", v > p.ExternalWrites) {
			p.ExternalWrites = v
			b.prov.set("external_writes", "", f.src("/external_writes"))
		}
	}
	if c.ExecCheckpoints != nil {
		v := profile.ExecCheckpointsOn
		if *c.ExecCheckpoints == "off" {
			v = profile.ExecCheckpointsOff
		}
		if b.gate(f, "/exec_checkpoints", Setting{Field: "exec_checkpoints"}, "stops checkpointing commands that execute programs", v > p.ExecCheckpoints) {
			p.ExecCheckpoints = v
			b.prov.set("exec_checkpoints", "", f.src("/exec_checkpoints"))
		}
	}
	if l := c.ResourceLimits; l != nil {
		limit := func(name string, v *int, cur int, set func(int)) {
			if v == nil {
				return
			}
			ptr := "/resource_limits/" + name
			if b.gate(f, ptr, Setting{Field: "resource_limits." + name}, fmt.Sprintf("raises %s from %d to %d", name, cur, *v), *v > cur) {
				set(*v)
				b.prov.set("resource_limits."+name, "", f.src(ptr))
			}
		}
		limit("max_concurrent_ops", l.MaxConcurrentOps, p.Limits.MaxConcurrentOps, func(v int) { p.Limits.MaxConcurrentOps = v })
		limit("max_files_per_plan", l.MaxFilesPerPlan, p.Limits.MaxFilesPerPlan, func(v int) { p.Limits.MaxFilesPerPlan = v })
		limit("timeout_seconds", l.TimeoutSeconds, int(p.Limits.Timeout/time.Second), func(v int) { p.Limits.Timeout = time.Duration(v) * time.Second })
	}

	// Restrictions accumulate: they never loosen. The blocklist is a restriction only as long
	// as DENY rules alone use it: an entry added to a list that a CONFIRM or ALLOW rule refers
	// to widens that rule.
	b.add(f, "denied_paths", "/denied_paths", c.DeniedPaths, &p.ProtectedPaths, false, true)
	b.add(f, "write_protected_paths", "/write_protected_paths", c.WriteProtected, &p.WriteProtectedPaths, false, true)
	b.add(f, "shell_blocklist", "/shell_blocklist", c.ShellBlocklist, &p.ShellBlocklist, b.listGrants(f, policy.ListShellBlocklist), false)
	// Allow-side lists widen what runs without asking: every new entry loosens.
	b.add(f, "shell_allowlist", "/shell_allowlist", c.ShellAllowlist, &p.ShellAllowlist, true, false)
	b.add(f, "network_allowlist", "/network_allowlist", c.NetworkAllow, &p.NetworkAllowlist, true, false)
	b.add(f, "trusted_paths", "/trusted_paths", c.TrustedPaths, &p.TrustedPaths, true, false)
	b.add(f, "allowed_tools", "/allowed_tools", c.AllowedTools, &p.AllowedTools, true, false)
	b.add(f, "auto_approve_patterns", "/auto_approve_patterns", c.AutoApprove, &p.AutoApprovePatterns, true, false)
	if a := c.Approval; a != nil {
		b.add(f, "denied_paths", "/approval/denied_paths", a.DeniedPaths, &p.ProtectedPaths, false, true)
		b.add(f, "trusted_paths", "/approval/trusted_paths", a.TrustedPaths, &p.TrustedPaths, true, false)
		b.add(f, "allowed_tools", "/approval/allowed_tools", a.AllowedTools, &p.AllowedTools, true, false)
		b.add(f, "auto_approve_patterns", "/approval/auto_approve_patterns", a.AutoApprove, &p.AutoApprovePatterns, true, false)
	}
	b.unprotect(f, c.Unprotected) // after the additions: a file's removals win within the file

	// Host groups are declared first (an empty group grants nothing), so rules can refer to
	// them; their hosts are added after the rules, when it is known which rules use them.
	groups := slices.Sorted(maps.Keys(c.HostGroups))
	for _, g := range groups {
		if p.HostGroups == nil {
			p.HostGroups = map[string][]string{}
		}
		if _, ok := p.HostGroups[g]; !ok {
			p.HostGroups[g] = []string{}
			b.prov.set("host_groups."+g, "", f.src(pointerOf("host_groups", g)))
		}
	}
	b.rules(f)
	for _, g := range groups {
		loosens := b.groupGrants(g)
		for i, h := range c.HostGroups[g] {
			if slices.Contains(p.HostGroups[g], h) {
				continue
			}
			ptr := pointerOf("host_groups", g, strconv.Itoa(i))
			if b.gate(f, ptr, Setting{"host_groups." + g, h}, fmt.Sprintf("adds %q to host group %q", h, g), loosens) {
				p.HostGroups[g] = append(p.HostGroups[g], h)
				b.prov.set("host_groups."+g, h, f.src(ptr))
			}
		}
	}
	for _, eco := range slices.Sorted(maps.Keys(c.Registries)) {
		for i, h := range c.Registries[eco] {
			if slices.Contains(p.Registries[eco], h) {
				continue
			}
			ptr := pointerOf("registries", eco, strconv.Itoa(i))
			if b.gate(f, ptr, Setting{"registries." + eco, h}, fmt.Sprintf("adds %q to the %s registry hosts", h, eco), true) {
				if p.Registries == nil {
					p.Registries = map[string][]string{}
				}
				if _, ok := p.Registries[eco]; !ok {
					b.prov.set("registries."+eco, "", f.src(pointerOf("registries", eco)))
				}
				p.Registries[eco] = append(p.Registries[eco], h)
				b.prov.set("registries."+eco, h, f.src(ptr))
			}
		}
	}
}

// add appends a file's list entries to a profile list. Entries already present change nothing
// and keep their source. For allow-side lists (loosens) every new entry loosens.
func (b *builder) add(f *parsedFile, field, ptr string, list []string, dst *[]string, loosens, fold bool) {
	for i, e := range list {
		if slices.ContainsFunc(*dst, func(x string) bool { return x == e || fold && strings.EqualFold(x, e) }) {
			continue
		}
		p := ptr + "/" + strconv.Itoa(i)
		reason := fmt.Sprintf("adds %q to %s", e, field)
		if field == "shell_blocklist" {
			reason += ", which a rule that is not a DENY rule refers to"
		}
		if b.gate(f, p, Setting{field, e}, reason, loosens) {
			*dst = append(*dst, e)
			b.prov.set(field, e, f.src(p))
		}
	}
}

// bandOf is policy.BandOf without the error (the schema keeps the dial in range).
func bandOf(dial float64) policy.Band {
	b, _ := policy.BandOf(dial)
	return b
}

// listGrants reports whether a rule that is not a DENY rule, of the profile so far or of file
// f, refers to the list name, so that entries added to it can allow or confirm something.
func (b *builder) listGrants(f *parsedFile, name string) bool {
	for _, rules := range [][]policy.Rule{b.p.Rules, f.cfg.CustomRules} {
		for _, r := range rules {
			if r.Action != policy.Deny && refersTo(r.Condition, name) {
				return true
			}
		}
	}
	return false
}

// groupGrants reports whether hosts added to group g can allow something: it is a group the
// built-in profiles use, or a rule that is not a DENY rule refers to it.
func (b *builder) groupGrants(g string) bool {
	switch g {
	case profile.GroupAIAPIs, profile.GroupPackageManagers, profile.GroupConfiguredHosts:
		return true
	}
	for _, r := range b.p.Rules {
		if r.Action != policy.Deny && refersTo(r.Condition, g) {
			return true
		}
	}
	return false
}

func refersTo(c policy.Condition, name string) bool {
	for _, l := range [][]string{c.Commands, c.Tools, c.Hosts, c.Providers, c.Surfaces} {
		if slices.Contains(l, "@"+name) {
			return true
		}
	}
	return false
}

// rules merges a file's custom rules. A rule with a new id is added ahead of the rules of
// lower layers (so at equal priority it is evaluated first); a rule with an existing id
// replaces that rule in place.
func (b *builder) rules(f *parsedFile) {
	p := &b.p
	var added []policy.Rule
	for i, r := range f.cfg.CustomRules {
		ptr := "/custom_rules/" + strconv.Itoa(i)
		if bad := b.unknownRefs(f, ptr, r.Condition); bad {
			continue
		}
		s := Setting{"rules", r.ID}
		j := slices.IndexFunc(p.Rules, func(x policy.Rule) bool { return x.ID == r.ID })
		if j < 0 {
			reason := ""
			switch r.Action {
			case policy.Allow:
				reason = fmt.Sprintf("adds the ALLOW rule %q", r.ID)
			case policy.Confirm:
				reason = fmt.Sprintf("adds the CONFIRM rule %q, which can override a denial (a DENY rule or the autonomy matrix)", r.ID)
			}
			if b.gate(f, ptr, s, reason, reason != "") {
				added = append(added, r)
				b.prov.set("rules", r.ID, f.src(ptr))
			}
			continue
		}
		old := p.Rules[j]
		reason := replacementLoosens(old, r)
		if b.gate(f, ptr, s, reason, reason != "") {
			p.Rules[j] = r
			b.prov.set("rules", r.ID, f.src(ptr))
		}
	}
	p.Rules = append(added, p.Rules...)
}

// unknownRefs records a load error for every @reference in c that names neither a profile list
// nor a host group known at this layer, and reports whether there was one.
func (b *builder) unknownRefs(f *parsedFile, ptr string, c policy.Condition) bool {
	bad := false
	for _, l := range []struct {
		field string
		list  []string
	}{{"commands", c.Commands}, {"tools", c.Tools}, {"hosts", c.Hosts}, {"providers", c.Providers}, {"surfaces", c.Surfaces}} {
		for i, e := range l.list {
			name, ok := strings.CutPrefix(e, "@")
			if !ok || isListName(name) {
				continue
			}
			if _, ok := b.p.HostGroups[name]; ok {
				continue
			}
			bad = true
			ep := ptr + "/condition/" + l.field + "/" + strconv.Itoa(i)
			known := append([]string{policy.ListShellAllowlist, policy.ListShellBlocklist, policy.ListNetworkAllowlist,
				policy.ListAllowedTools, policy.ListAutoApprovePatterns}, slices.Sorted(maps.Keys(b.p.HostGroups))...)
			b.errs = append(b.errs, f.doc.errorf(ep, "unknown list %q: a rule may refer to %s, or to a host group this file or a lower layer defines",
				e, "@"+strings.Join(known, ", @")))
		}
	}
	return bad
}

// replacementLoosens says how replacing rule old by r loosens the rules, or "" if it does not.
// The replacement is judged by its effect on decisions, conservatively: it is harmless only when,
// for every action, the decision with r is at least as strict as with old, in the order
//
//	DENY  >  CONFIRM with obligations O  >=  ALLOW with obligations O' when O ⊇ O'
//
// (a DENY is stricter than anything; otherwise the verdict must be at least as strict AND the
// obligations a superset: a CONFIRM without the checkpoint, notification or sandbox the rule it
// replaces required is a loosening, because the human who approves it sees the command, not
// what it does when it runs). Deciding that for arbitrary conditions is not possible in general,
// so r must be provably at least as strict:
//
//   - A DENY rule is harmless when it matches every action old matched (its condition is
//     provably at least as broad, see covers) and is evaluated no later than old. Anything more
//     it matches becomes a denial. If it misses some, those actions fall through to later rules
//     or the autonomy matrix, which may allow them with fewer obligations (the project file that
//     replaces PROFILE-FULL-AUTO's allow-self-upgrade by a DENY rule that never matches takes
//     away its checkpoint and notification). The one exception: old is an ALLOW rule without
//     obligations, the most permissive outcome there is, so whatever the actions fall through to
//     is at least as strict.
//   - An ALLOW or CONFIRM rule must stand where old stood (same priority, so the same place in
//     the evaluation order), match no action old did not (anything else could override a later
//     denial), match every action old matched (unless old is an ALLOW rule without
//     obligations), give a verdict at least as strict and keep old's obligations.
func replacementLoosens(old, r policy.Rule) string {
	// An ALLOW rule that adds no obligation: nothing an action can fall through to is more
	// permissive, since the rule layer and the matrix both add the matrix cell's obligations.
	minimal := old.Action == policy.Allow && old.Obligations == 0
	if r.Action == policy.Deny {
		switch {
		case minimal || r.Priority <= old.Priority && covers(r, old):
			return ""
		case old.Action == policy.Allow:
			return fmt.Sprintf("replaces the ALLOW rule %q, which adds %s, with a DENY rule that does not cover every action it allowed: those fall through to later rules or the autonomy matrix, without its obligations", r.ID, old.Obligations)
		}
		return fmt.Sprintf("changes the condition or priority of the %s rule %q", old.Action, r.ID)
	}
	samePlace := old.Priority == r.Priority
	noMore := samePlace && covers(old, r) // r decides no action that old did not decide
	noLess := samePlace && covers(r, old) // every action old decided, r decides
	switch {
	case old.Action == policy.Allow && r.Action == policy.Confirm && !noMore:
		return fmt.Sprintf("replaces the ALLOW rule %q with a CONFIRM rule that matches elsewhere, which can override a denial", r.ID)
	case old.Action == policy.Allow && noMore && !noLess && !minimal:
		return fmt.Sprintf("narrows the ALLOW rule %q, which adds %s: the actions it no longer matches fall through to later rules or the autonomy matrix, without its obligations", r.ID, old.Obligations)
	case old.Action == policy.Allow && !noMore:
		return fmt.Sprintf("changes what the ALLOW rule %q allows", r.ID)
	case !noMore || !noLess && !minimal:
		return fmt.Sprintf("changes the condition or priority of the %s rule %q", old.Action, r.ID)
	case old.Action.StricterThan(r.Action):
		return fmt.Sprintf("turns the %s rule %q into %s", old.Action, r.ID, r.Action)
	case !r.Obligations.Has(old.Obligations):
		return fmt.Sprintf("drops obligations of the %s rule %q", old.Action, r.ID)
	}
	return ""
}

// covers reports whether rule a provably matches every action rule b matches. A condition is a
// conjunction of its fields and a list field holds when any entry does, so a's condition is at
// least as broad as b's when each field of a is unset, or set the same way as in b, or (for
// lists) lists everything b lists. Operations are compared in canonical form and risk levels and
// severities by value. Entries are compared as written, not as what they match ("go" matches
// more than "go test", but covers does not know that): a false "no" only makes a harmless
// replacement need trust.
//
// The commands and command_pattern fields of an ALLOW rule match less than the same fields of a
// DENY or CONFIRM rule (an ALLOW entry "rm" does not cover "/bin/rm"; an ALLOW pattern is not
// tried against the whole line), so an ALLOW rule with either field never covers a DENY or
// CONFIRM rule.
func covers(a, b policy.Rule) bool {
	ca, cb := &a.Condition, &b.Condition
	if a.Action == policy.Allow && b.Action != policy.Allow && (len(ca.Commands) > 0 || ca.CommandPattern != "") {
		return false
	}
	if ca.OutsideWorkspace && !cb.OutsideWorkspace {
		return false
	}
	for _, f := range [][2]string{{ca.TargetPattern, cb.TargetPattern}, {ca.CommandPattern, cb.CommandPattern}} {
		if f[0] != "" && f[0] != f[1] {
			return false
		}
	}
	canon := func(ops []policy.Operation) []string {
		out := make([]string, len(ops))
		for i, op := range ops {
			out[i] = string(op.Canonical())
		}
		return out
	}
	if !listCovers(canon(ca.OperationType), canon(cb.OperationType)) {
		return false
	}
	if !ca.Risk.IsZero() && (cb.Risk.IsZero() || !ca.Risk.Contains(cb.Risk)) {
		return false
	}
	for _, l := range [][2][]string{{ca.Commands, cb.Commands}, {ca.Tools, cb.Tools}, {ca.Hosts, cb.Hosts},
		{ca.Providers, cb.Providers}, {ca.Surfaces, cb.Surfaces}} {
		if !listCovers(l[0], l[1]) {
			return false
		}
	}
	return true
}

// listCovers reports whether a list condition a holds wherever b holds: a is unset, or b is set
// and every entry of b is in a.
func listCovers(a, b []string) bool {
	if len(a) == 0 {
		return true
	}
	if len(b) == 0 {
		return false
	}
	for _, e := range b {
		if !slices.Contains(a, e) {
			return false
		}
	}
	return true
}

// profileLoosens compares two profiles, from and to, by their effect on decisions, for an
// untrusted project file that switches the active profile from one to the other: it says how
// some action could be decided less strictly under to, or "" when none can. Deciding that in
// general is not possible, so the comparison is conservative, in the order replacementLoosens
// documents:
//
//   - a profile whose mode denies everything (emergency-stop, plan) loosens nothing;
//   - otherwise the mode, external writes and limits must be at least as strict, the protected
//     paths and the blocklist a superset, the allow-side lists, host groups and registries
//     subsets;
//   - and the rules must follow from from's by harmless edits: a rule of from that to lacks is
//     an ALLOW rule without obligations, or a DENY rule of to with a lower priority covers it; a
//     rule to adds is a DENY rule; a rule both have passes replacementLoosens; rules of equal
//     priority keep their order, unless the one that moves ahead is a DENY rule; and a rule that
//     refers to a list whose entries differ is a DENY rule in both (the list only grew) or an
//     ALLOW rule without obligations in from (the list only shrank).
//
// The band of the autonomy matrix is judged separately (bandLoss).
func profileLoosens(from, to profile.Profile) string {
	if to.Mode == profile.ModeEmergencyStop || to.Mode == profile.ModePlan {
		return ""
	}
	switch {
	case from.Mode.StricterThan(to.Mode):
		return fmt.Sprintf("permission mode %s is looser than %s", to.Mode, from.Mode)
	case to.ExternalWrites > from.ExternalWrites:
		return "external writes are left to the rules instead of halting the run"
	case to.Limits.MaxFilesPerPlan > from.Limits.MaxFilesPerPlan || to.Limits.MaxConcurrentOps > from.Limits.MaxConcurrentOps || to.Limits.Timeout > from.Limits.Timeout:
		return "raises a resource limit"
	}
	if x := notIn(from.ProtectedPaths, to.ProtectedPaths, true); x != "" {
		return "no longer protects " + x
	}
	if x := notIn(from.WriteProtectedPaths, to.WriteProtectedPaths, true); x != "" {
		return "no longer write-protects " + x
	}
	if x := notIn(from.ShellBlocklist, to.ShellBlocklist, false); x != "" {
		return "no longer blocks " + x
	}
	// changed lists: name -> true if the list only grew (false: it only shrank).
	grew := map[string]bool{}
	if !slices.Equal(from.ShellBlocklist, to.ShellBlocklist) {
		grew[policy.ListShellBlocklist] = true
	}
	for _, l := range []struct {
		name     string
		from, to []string
	}{
		{policy.ListShellAllowlist, from.ShellAllowlist, to.ShellAllowlist},
		{policy.ListNetworkAllowlist, from.NetworkAllowlist, to.NetworkAllowlist},
		{policy.ListAllowedTools, from.AllowedTools, to.AllowedTools},
		{policy.ListAutoApprovePatterns, from.AutoApprovePatterns, to.AutoApprovePatterns},
		{"trusted_paths", from.TrustedPaths, to.TrustedPaths},
	} {
		if x := notIn(l.to, l.from, false); x != "" {
			return fmt.Sprintf("%s adds %s", l.name, x)
		}
		if len(l.to) != len(l.from) {
			grew[l.name] = false
		}
	}
	for _, g := range slices.Sorted(maps.Keys(to.HostGroups)) {
		if x := notIn(to.HostGroups[g], from.HostGroups[g], false); x != "" {
			return fmt.Sprintf("host group %q adds %s", g, x)
		}
		if len(to.HostGroups[g]) != len(from.HostGroups[g]) {
			grew[g] = false
		}
	}
	for _, g := range slices.Sorted(maps.Keys(from.HostGroups)) {
		if _, ok := to.HostGroups[g]; !ok {
			grew[g] = false
		}
	}
	for _, k := range slices.Sorted(maps.Keys(to.Registries)) {
		if x := notIn(to.Registries[k], from.Registries[k], false); x != "" {
			return fmt.Sprintf("registry %q adds %s", k, x)
		}
	}

	index := func(rules []policy.Rule) map[string]int {
		m := make(map[string]int, len(rules))
		for i, r := range rules {
			m[r.ID] = i
		}
		return m
	}
	fromIdx, toIdx := index(from.Rules), index(to.Rules)
	refers := func(r policy.Rule, grown bool) bool { // to a list that grew (grown) or shrank
		for name, g := range grew {
			if g == grown && refersTo(r.Condition, name) {
				return true
			}
		}
		return false
	}
	for _, old := range from.Rules {
		j, kept := toIdx[old.ID]
		if !kept {
			if old.Action == policy.Allow && old.Obligations == 0 {
				continue
			}
			if slices.ContainsFunc(to.Rules, func(d policy.Rule) bool {
				return d.Action == policy.Deny && d.Priority < old.Priority && covers(d, old) && !refers(d, false) && !refers(old, false)
			}) {
				continue
			}
			return fmt.Sprintf("drops the %s rule %q", old.Action, old.ID)
		}
		r := to.Rules[j]
		if why := replacementLoosens(old, r); why != "" {
			return why
		}
		if !refers(old, true) && !refers(old, false) && !refers(r, true) && !refers(r, false) {
			continue
		}
		minimal := old.Action == policy.Allow && old.Obligations == 0
		switch {
		case minimal && (r.Action == policy.Deny || !refers(r, true)):
		case old.Action == policy.Deny && r.Action == policy.Deny && !refers(old, false) && !refers(r, false):
		default:
			return fmt.Sprintf("rule %q refers to a list whose entries differ", r.ID)
		}
	}
	for _, r := range to.Rules {
		if _, had := fromIdx[r.ID]; !had && r.Action != policy.Deny {
			return fmt.Sprintf("adds the %s rule %q", r.Action, r.ID)
		}
	}
	// Order among rules of equal priority: only a DENY rule may move ahead of another rule.
	for _, x := range to.Rules {
		for _, y := range to.Rules {
			fx, okx := fromIdx[x.ID]
			fy, oky := fromIdx[y.ID]
			if okx && oky && x.Priority == y.Priority && fx < fy && toIdx[y.ID] < toIdx[x.ID] && y.Action != policy.Deny {
				return fmt.Sprintf("rule %q moves ahead of rule %q", y.ID, x.ID)
			}
		}
	}
	return ""
}

// unprotect removes a file's unprotected_paths entries (exact entries, any case) from both
// protection lists. Narrowing loosens, so an untrusted project file's removals are skipped. The
// seeds' six names were refused when the file was validated, and the gate protects them anyway.
func (b *builder) unprotect(f *parsedFile, list []string) {
	for i, e := range list {
		ptr := "/unprotected_paths/" + strconv.Itoa(i)
		same := func(x string) bool { return strings.EqualFold(strings.TrimRight(x, "/"), strings.TrimRight(e, "/")) }
		if !slices.ContainsFunc(b.p.ProtectedPaths, same) && !slices.ContainsFunc(b.p.WriteProtectedPaths, same) {
			continue // protects nothing now: nothing to remove
		}
		if b.gate(f, ptr, Setting{"unprotected_paths", e}, fmt.Sprintf("removes %q from the protected paths", e), true) {
			b.p.ProtectedPaths = slices.DeleteFunc(b.p.ProtectedPaths, same)
			b.p.WriteProtectedPaths = slices.DeleteFunc(b.p.WriteProtectedPaths, same)
			b.prov.set("unprotected_paths", e, f.src(ptr))
		}
	}
}

// notIn returns the first entry of a that is not in b, or "".
func notIn(a, b []string, fold bool) string {
	for _, x := range a {
		found := slices.ContainsFunc(b, func(y string) bool {
			if fold {
				return strings.EqualFold(x, y)
			}
			return x == y
		})
		if !found {
			return x
		}
	}
	return ""
}
