package loader

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
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
	ctx          context.Context
	p            profile.Profile
	prov         Provenance
	skipped      []Skipped
	errs         []*Error
	allowProject bool // the project is trusted: its loosenings apply
	// keepProfile, when not "", is why the project file may not switch the active profile.
	keepProfile string
}

// build computes the effective profile: the base built-in (override if set, else the highest
// layer's active_profile, else def), then the user file, then the project file, then the
// protected paths the host adds (protect). Project loosenings apply only when allowProject.
//
// Whether a project setting loosens is decided by profile.AtLeastAsRestrictive, the one
// restrictiveness order, setting by setting in file order: each setting is applied to the
// profile so far and kept when the result is at least as restrictive, so (the order being
// transitive) the effective profile is at least as restrictive as the profile without the
// project file. An active_profile switch replaces the base profile's rules and lists wholesale,
// so it is judged with the user file applied to both built-in profiles. The result is checked as
// a whole at the end: if it were not at least as restrictive as without the project file, the
// whole project file would be left out (fail closed).
//
// ctx is looked at before every comparison; when it is done, build returns its error.
func build(ctx context.Context, def, override string, user, project *parsedFile, allowProject bool, protect []string) (*builder, error) {
	if project == nil || allowProject {
		return build1(ctx, def, override, user, project, allowProject, protect, "")
	}
	without, err := build1(ctx, def, override, user, nil, false, protect, "")
	if err != nil {
		return nil, err
	}
	keep := ""
	if n, _ := activeOf(project); n != "" && override == "" {
		to, err := build1(ctx, def, n, user, nil, false, protect, "")
		if err != nil {
			return nil, err
		}
		if ok, why := profile.AtLeastAsRestrictive(to.p, without.p); !ok {
			keep = fmt.Sprintf("switches the active profile from %s to %s: %s", without.p.Name, to.p.Name, why)
		}
	}
	b, err := build1(ctx, def, override, user, project, false, protect, keep)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("profile: not loaded: %w", err)
	}
	if ok, why := profile.AtLeastAsRestrictive(b.p, without.p); !ok {
		without.skipped = []Skipped{{Source: project.src(""), Setting: Setting{Field: "project file"},
			Reason: "its settings, each at least as restrictive on its own, loosen the profile together: " + why}}
		return without, nil
	}
	return b, nil
}

func build1(ctx context.Context, def, override string, user, project *parsedFile, allowProject bool, protect []string, keepProfile string) (*builder, error) {
	b := &builder{ctx: ctx, prov: Provenance{m: map[Setting]Source{}}, allowProject: allowProject, keepProfile: keepProfile}
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
			cand, err := profile.Builtin(n)
			if err != nil {
				return nil, err
			}
			if b.gate(project, ptr, Setting{Field: "active_profile"}, keepProfile) {
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
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("profile: not loaded: %w", err)
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

// loosens says how changing the profile so far to cand would loosen it, when f is an untrusted
// project file, or "": profile.AtLeastAsRestrictive decides. A done context counts as a
// loosening (nothing more applies; build returns the context's error).
func (b *builder) loosens(f *parsedFile, cand *profile.Profile) string {
	if f.layer != OriginProject || b.allowProject {
		return ""
	}
	if err := b.ctx.Err(); err != nil {
		return "not judged: " + err.Error()
	}
	_, why := profile.AtLeastAsRestrictive(*cand, b.p)
	return why
}

// gate decides whether a setting of f applies: when reason is "" (it does not loosen, or f is
// not an untrusted project file); otherwise it is recorded as skipped, with the reason.
func (b *builder) gate(f *parsedFile, ptr string, s Setting, reason string) bool {
	if reason == "" || f.layer != OriginProject || b.allowProject {
		return true
	}
	b.skipped = append(b.skipped, Skipped{Source: f.src(ptr), Setting: s, Reason: reason})
	return false
}

func (b *builder) apply(f *parsedFile) {
	c := &f.cfg
	p := &b.p
	if b.ctx.Err() != nil {
		return
	}

	if c.PermissionMode != nil {
		cand := *p
		if band, err := policy.ParseBand(*c.PermissionMode); err == nil {
			cand.Mode = profile.ModeDefault
			if cur, _ := policy.BandOf(p.Autonomy); cur != band && c.Autonomy == nil {
				cand.Autonomy = band.Dial()
			}
		} else if m, err := profile.ParseMode(*c.PermissionMode); err == nil {
			cand.Mode = m
		}
		if b.gate(f, "/permission_mode", Setting{Field: "permission_mode"}, b.loosens(f, &cand)) {
			p.Mode = cand.Mode
			b.prov.set("permission_mode", "", f.src("/permission_mode"))
			if cand.Autonomy != p.Autonomy {
				p.Autonomy = cand.Autonomy
				b.prov.set("autonomy", "", f.src("/permission_mode"))
			}
		}
	}
	if c.Autonomy != nil {
		cand := *p
		cand.Autonomy = *c.Autonomy
		if b.gate(f, "/autonomy", Setting{Field: "autonomy"}, b.loosens(f, &cand)) {
			p.Autonomy = cand.Autonomy
			b.prov.set("autonomy", "", f.src("/autonomy"))
		}
	}
	if c.ExternalWrites != nil {
		cand := *p
		cand.ExternalWrites = profile.ExternalWritesHalt
		if *c.ExternalWrites == "policy" {
			cand.ExternalWrites = profile.ExternalWritesByPolicy
		}
		if b.gate(f, "/external_writes", Setting{Field: "external_writes"}, b.loosens(f, &cand)) {
			p.ExternalWrites = cand.ExternalWrites
			b.prov.set("external_writes", "", f.src("/external_writes"))
		}
	}
	if c.ExecCheckpoints != nil {
		cand := *p
		cand.ExecCheckpoints = profile.ExecCheckpointsOn
		if *c.ExecCheckpoints == "off" {
			cand.ExecCheckpoints = profile.ExecCheckpointsOff
		}
		if b.gate(f, "/exec_checkpoints", Setting{Field: "exec_checkpoints"}, b.loosens(f, &cand)) {
			p.ExecCheckpoints = cand.ExecCheckpoints
			b.prov.set("exec_checkpoints", "", f.src("/exec_checkpoints"))
		}
	}
	if l := c.ResourceLimits; l != nil {
		limit := func(name string, v *int, set func(*profile.Limits, int)) {
			if v == nil {
				return
			}
			ptr := "/resource_limits/" + name
			cand := *p
			set(&cand.Limits, *v)
			if b.gate(f, ptr, Setting{Field: "resource_limits." + name}, b.loosens(f, &cand)) {
				p.Limits = cand.Limits
				b.prov.set("resource_limits."+name, "", f.src(ptr))
			}
		}
		limit("max_concurrent_ops", l.MaxConcurrentOps, func(l *profile.Limits, v int) { l.MaxConcurrentOps = v })
		limit("max_files_per_plan", l.MaxFilesPerPlan, func(l *profile.Limits, v int) { l.MaxFilesPerPlan = v })
		limit("timeout_seconds", l.TimeoutSeconds, func(l *profile.Limits, v int) { l.Timeout = time.Duration(v) * time.Second })
	}

	type listField struct {
		field, ptr string
		list       []string
		dst        func(*profile.Profile) *[]string
		fold       bool
	}
	protected := func(q *profile.Profile) *[]string { return &q.ProtectedPaths }
	trusted := func(q *profile.Profile) *[]string { return &q.TrustedPaths }
	tools := func(q *profile.Profile) *[]string { return &q.AllowedTools }
	auto := func(q *profile.Profile) *[]string { return &q.AutoApprovePatterns }
	fields := []listField{
		{"denied_paths", "/denied_paths", c.DeniedPaths, protected, true},
		{"write_protected_paths", "/write_protected_paths", c.WriteProtected, func(q *profile.Profile) *[]string { return &q.WriteProtectedPaths }, true},
		{"shell_blocklist", "/shell_blocklist", c.ShellBlocklist, func(q *profile.Profile) *[]string { return &q.ShellBlocklist }, false},
		{"shell_allowlist", "/shell_allowlist", c.ShellAllowlist, func(q *profile.Profile) *[]string { return &q.ShellAllowlist }, false},
		{"network_allowlist", "/network_allowlist", c.NetworkAllow, func(q *profile.Profile) *[]string { return &q.NetworkAllowlist }, false},
		{"trusted_paths", "/trusted_paths", c.TrustedPaths, trusted, false},
		{"allowed_tools", "/allowed_tools", c.AllowedTools, tools, false},
		{"auto_approve_patterns", "/auto_approve_patterns", c.AutoApprove, auto, false},
	}
	if a := c.Approval; a != nil {
		fields = append(fields,
			listField{"denied_paths", "/approval/denied_paths", a.DeniedPaths, protected, true},
			listField{"trusted_paths", "/approval/trusted_paths", a.TrustedPaths, trusted, false},
			listField{"allowed_tools", "/approval/allowed_tools", a.AllowedTools, tools, false},
			listField{"auto_approve_patterns", "/approval/auto_approve_patterns", a.AutoApprove, auto, false})
	}
	for _, lf := range fields {
		b.add(f, lf.field, lf.ptr, lf.list, lf.dst, lf.fold)
	}
	b.unprotect(f, c.Unprotected) // after the additions: a file's removals win within the file

	// Host groups are declared first (an empty group grants nothing), so rules can refer to
	// them; their hosts are added after the rules.
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
		b.add(f, "host_groups."+g, pointerOf("host_groups", g), c.HostGroups[g], func(q *profile.Profile) *[]string {
			l := q.HostGroups[g]
			return &l
		}, false)
	}
	for _, eco := range slices.Sorted(maps.Keys(c.Registries)) {
		_, had := p.Registries[eco]
		b.add(f, "registries."+eco, pointerOf("registries", eco), c.Registries[eco], func(q *profile.Profile) *[]string {
			l := q.Registries[eco]
			return &l
		}, false)
		if _, has := p.Registries[eco]; has && !had {
			b.prov.set("registries."+eco, "", f.src(pointerOf("registries", eco)))
		}
	}
}

// maxJudged bounds how many entries of one list of one file are judged one by one when their
// additions together loosen the profile; the rest are left out with the reason of the whole.
const maxJudged = 256

// add adds a file's entries to a profile list (dst selects it in a profile; for host groups and
// registries it is a copy, written back by setList). Entries already present change nothing and
// keep their source. For an untrusted project file, the new entries apply together when together
// they keep the profile at least as restrictive; otherwise each is judged on its own.
func (b *builder) add(f *parsedFile, field, ptr string, list []string, dst func(*profile.Profile) *[]string, fold bool) {
	type entry struct {
		e   string
		ptr string
	}
	var fresh []entry
	have := map[string]bool{}
	key := func(e string) string {
		if fold {
			return strings.ToLower(e)
		}
		return e
	}
	for _, e := range *dst(&b.p) {
		have[key(e)] = true
	}
	for i, e := range list {
		if !have[key(e)] {
			have[key(e)] = true
			fresh = append(fresh, entry{e, ptr + "/" + strconv.Itoa(i)})
		}
	}
	if len(fresh) == 0 {
		return
	}
	apply := func(es []entry) {
		l := slices.Clone(*dst(&b.p))
		for _, x := range es {
			l = append(l, x.e)
			b.prov.set(field, x.e, f.src(x.ptr))
		}
		b.setList(field, l)
	}
	with := func(es []entry) profile.Profile {
		cand := b.p
		l := slices.Clone(*dst(&b.p))
		for _, x := range es {
			l = append(l, x.e)
		}
		setList(&cand, field, l)
		return cand
	}
	cand := with(fresh)
	why := b.loosens(f, &cand)
	if why == "" {
		apply(fresh)
		return
	}
	for i, x := range fresh {
		reason := why
		if i < maxJudged {
			one := with([]entry{x})
			reason = b.loosens(f, &one)
		} else {
			reason = fmt.Sprintf("one of the %d entries this file adds to %s, which together loosen the profile: %s", len(fresh), field, why)
		}
		if b.gate(f, x.ptr, Setting{field, x.e}, reason) {
			apply([]entry{x})
		}
	}
}

// setList sets a profile list by its field name in b's profile.
func (b *builder) setList(field string, l []string) { setList(&b.p, field, l) }

// setList sets the list field of p to l. Maps are copied before they are changed, so a
// candidate profile never changes the profile it was copied from.
func setList(p *profile.Profile, field string, l []string) {
	switch {
	case field == "denied_paths":
		p.ProtectedPaths = l
	case field == "write_protected_paths":
		p.WriteProtectedPaths = l
	case field == "shell_blocklist":
		p.ShellBlocklist = l
	case field == "shell_allowlist":
		p.ShellAllowlist = l
	case field == "network_allowlist":
		p.NetworkAllowlist = l
	case field == "trusted_paths":
		p.TrustedPaths = l
	case field == "allowed_tools":
		p.AllowedTools = l
	case field == "auto_approve_patterns":
		p.AutoApprovePatterns = l
	case strings.HasPrefix(field, "host_groups."):
		p.HostGroups = maps.Clone(p.HostGroups)
		if p.HostGroups == nil {
			p.HostGroups = map[string][]string{}
		}
		p.HostGroups[strings.TrimPrefix(field, "host_groups.")] = l
	case strings.HasPrefix(field, "registries."):
		p.Registries = maps.Clone(p.Registries)
		if p.Registries == nil {
			p.Registries = map[string][]string{}
		}
		p.Registries[strings.TrimPrefix(field, "registries.")] = l
	default:
		panic("profile: bug: no list " + field)
	}
}

// rules merges a file's custom rules. A rule with a new id is added ahead of the rules of
// lower layers (so at equal priority it is evaluated first), after the file's earlier new
// rules; a rule with an existing id replaces that rule in place.
func (b *builder) rules(f *parsedFile) {
	p := &b.p
	added := 0
	for i, r := range f.cfg.CustomRules {
		ptr := "/custom_rules/" + strconv.Itoa(i)
		if bad := b.unknownRefs(f, ptr, r.Condition); bad {
			continue
		}
		cand := *p
		j := slices.IndexFunc(p.Rules, func(x policy.Rule) bool { return x.ID == r.ID })
		if j < 0 {
			cand.Rules = slices.Insert(slices.Clone(p.Rules), added, r)
		} else {
			cand.Rules = slices.Clone(p.Rules)
			cand.Rules[j] = r
		}
		if b.gate(f, ptr, Setting{"rules", r.ID}, b.loosens(f, &cand)) {
			p.Rules = cand.Rules
			if j < 0 {
				added++
			}
			b.prov.set("rules", r.ID, f.src(ptr))
		}
	}
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
		cand := b.p
		cand.ProtectedPaths = slices.DeleteFunc(slices.Clone(b.p.ProtectedPaths), same)
		cand.WriteProtectedPaths = slices.DeleteFunc(slices.Clone(b.p.WriteProtectedPaths), same)
		reason := ""
		if i < maxJudged {
			reason = b.loosens(f, &cand)
		} else if f.layer == OriginProject && !b.allowProject {
			reason = fmt.Sprintf("removes %q from the protected paths", e)
		}
		if b.gate(f, ptr, Setting{"unprotected_paths", e}, reason) {
			b.p.ProtectedPaths, b.p.WriteProtectedPaths = cand.ProtectedPaths, cand.WriteProtectedPaths
			b.prov.set("unprotected_paths", e, f.src(ptr))
		}
	}
}
