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

// Skipped is a setting of the user or project file that was not applied: a project file's
// setting that loosens the profile when the project is not trusted, or a setting the managed
// tier drops (Managed is then true: a rule with the id of one of its rules, and, when it allows
// managed rules only, every ALLOW rule and every loosening setting of the user and project
// files).
type Skipped struct {
	// Source is where the setting is in its file.
	Source Source
	// Setting is the setting it would have changed.
	Setting Setting
	// Reason says how it loosens the profile ("raises autonomy from 0.5 to 1"), or why the
	// managed tier dropped it.
	Reason string
	// Managed reports that the managed tier dropped the setting: trusting the project does not
	// bring it back.
	Managed bool
}

// String returns "FILE:LINE POINTER: not applied: REASON".
func (s Skipped) String() string {
	loc := s.Source.File
	if s.Source.Line > 0 {
		loc += ":" + strconv.Itoa(s.Source.Line)
	}
	return loc + " " + s.Source.Pointer + ": not applied: " + s.Reason
}

// layers are the parsed files of one load, lowest first; any may be nil.
type layers struct {
	defaults, user, project, managed *parsedFile
	// source describes the managed tier for profile.Managed.Source.
	source string
}

// managedCaps returns the managed file's caps block, or nil.
func (ls *layers) managedCaps() *managedBlock {
	if ls.managed == nil {
		return nil
	}
	return ls.managed.cfg.Managed
}

// rulesOnly reports whether the managed tier allows managed rules only.
func (ls *layers) rulesOnly() bool {
	c := ls.managedCaps()
	return c != nil && c.RulesOnly != nil && *c.RulesOnly
}

// floorIDs returns the ids of the managed tier's DENY and CONFIRM rules, which no other layer
// may replace.
func (ls *layers) floorIDs() map[string]bool {
	if ls.managed == nil {
		return nil
	}
	ids := map[string]bool{}
	for _, r := range ls.managed.cfg.CustomRules {
		if r.Action != policy.Allow {
			ids[r.ID] = true
		}
	}
	return ids
}

// spec is what one build applies.
type spec struct {
	def, override string // override, when not "", is the base profile the host chose (Rebase)
	ls            layers
	allowProject  bool     // the project is trusted: its loosenings apply
	protect       []string // the configuration directories the loader protects
	// keep says, for a layer whose settings are judged, why its active_profile may not switch
	// the base profile ("" when it may).
	keep map[Origin]string
}

// builder applies the layers to a built-in profile.
type builder struct {
	ctx          context.Context
	p            profile.Profile
	base         string // the base built-in profile's hash
	prov         Provenance
	skipped      []Skipped
	errs         []*Error
	allowProject bool            // the project is trusted: its loosenings apply
	rulesOnly    bool            // the managed tier allows managed rules only
	floor        map[string]bool // the managed tier's DENY and CONFIRM rule ids
}

// build computes the effective profile: the base built-in (the host's override if set, else the
// managed file's active_profile, else the highest other layer's, else def), then the
// organisation's defaults, the user file and the project file, then the protected paths the
// host adds, then the managed tier (buildLower, then manage).
//
// When the managed tier allows managed rules only, the result is checked as a whole against the
// managed tier on its own (without the user and project files): if it were not at least as
// restrictive, both files would be left out (fail closed).
func build(ctx context.Context, s spec) (*builder, error) {
	b, err := buildLower(ctx, s)
	if err != nil {
		return nil, err
	}
	if s.ls.managed == nil {
		return b, nil
	}
	if err := b.manage(&s.ls); err != nil {
		return nil, err
	}
	if !s.ls.rulesOnly() || s.ls.user == nil && s.ls.project == nil {
		return b, nil
	}
	alone := s
	alone.ls.user, alone.ls.project = nil, nil
	a, err := build(ctx, alone)
	if err != nil {
		return nil, err
	}
	if ok, why := profile.AtLeastAsRestrictive(b.p, a.p); !ok {
		for _, f := range []*parsedFile{s.ls.user, s.ls.project} {
			if f != nil {
				a.skipped = append(a.skipped, Skipped{Source: f.src(""), Setting: Setting{Field: f.layer.String()}, Managed: true,
					Reason: "managed rules only: its settings, each at least as restrictive on its own, loosen the managed tier's profile together: " + why})
			}
		}
		return a, nil
	}
	return b, nil
}

// judgedLayers returns the layers whose settings apply only where they tighten: the project
// file unless it is trusted, and, when the managed tier allows managed rules only, the user
// file and the project file.
func judgedLayers(s *spec) (user, project bool) {
	ro := s.ls.rulesOnly()
	return ro && s.ls.user != nil, s.ls.project != nil && (ro || !s.allowProject)
}

// buildLower applies every layer but the managed tier.
//
// Whether a setting of a judged layer (see judgedLayers) loosens is decided by
// profile.AtLeastAsRestrictive, the one restrictiveness order, setting by setting in file
// order: each setting is applied to the profile so far and kept when the result is at least as
// restrictive, so (the order being transitive) the effective profile is at least as restrictive
// as the profile without the judged files. An active_profile switch replaces the base profile's
// rules and lists wholesale, so it is judged with the layers below applied to both built-in
// profiles. The result is checked as a whole at the end: if it were not at least as
// restrictive as without the judged files, they would be left out whole (fail closed).
//
// ctx is looked at before every comparison; when it is done, buildLower returns its error.
func buildLower(ctx context.Context, s spec) (*builder, error) {
	judgeUser, judgeProject := judgedLayers(&s)
	if !judgeUser && !judgeProject {
		return build1(ctx, s)
	}
	ref := s
	ref.keep = nil
	if judgeUser {
		ref.ls.user = nil
	}
	if judgeProject {
		ref.ls.project = nil
	}
	without, err := build1(ctx, ref)
	if err != nil {
		return nil, err
	}
	keep := map[Origin]string{}
	if s.override == "" && activeName(s.ls.managed) == "" {
		for _, f := range []*parsedFile{s.ls.user, s.ls.project} {
			if f == nil || f.layer == OriginUser && !judgeUser || f.layer == OriginProject && !judgeProject {
				continue
			}
			n, _ := selects(f, &s.ls)
			if n == "" {
				continue
			}
			below := s
			below.keep = maps.Clone(keep)
			below.ls.project = nil
			if f.layer == OriginUser {
				below.ls.user = nil
			}
			from, err := build1(ctx, below)
			if err != nil {
				return nil, err
			}
			below.override = n
			to, err := build1(ctx, below)
			if err != nil {
				return nil, err
			}
			if ok, why := profile.AtLeastAsRestrictive(to.p, from.p); !ok {
				keep[f.layer] = fmt.Sprintf("switches the active profile from %s to %s: %s", from.p.Name, to.p.Name, why)
			}
		}
	}
	s.keep = keep
	b, err := build1(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("profile: not loaded: %w", err)
	}
	if ok, why := profile.AtLeastAsRestrictive(b.p, without.p); !ok {
		for _, f := range []*parsedFile{s.ls.user, s.ls.project} {
			if f == nil || f.layer == OriginUser && !judgeUser || f.layer == OriginProject && !judgeProject {
				continue
			}
			without.skipped = append(without.skipped, Skipped{Source: f.src(""), Setting: Setting{Field: f.layer.String()},
				Reason: "its settings, each at least as restrictive on its own, loosen the profile together: " + why, Managed: b.rulesOnly})
		}
		return without, nil
	}
	return b, nil
}

// selects returns the built-in profile a file selects as the base, and the pointer of the
// setting: its active_profile (or approval.mode), or for the user file an approval block
// without a mode, which selects safe where no file names a profile (ADR 0006: "Safe default
// (ModeSafe)"; a project file never selects one implicitly).
func selects(f *parsedFile, ls *layers) (string, string) {
	if n, ptr := activeOf(f); n != "" {
		return n, ptr
	}
	if f != nil && f.layer == OriginUser && f.cfg.Approval != nil && activeName(ls.project) == "" {
		return profile.ApprovalSafe, "/approval"
	}
	return "", ""
}

func activeName(f *parsedFile) string {
	n, _ := activeOf(f)
	return n
}

func build1(ctx context.Context, s spec) (*builder, error) {
	ls := &s.ls
	b := &builder{ctx: ctx, prov: Provenance{m: map[Setting]Source{}}, allowProject: s.allowProject,
		rulesOnly: ls.rulesOnly(), floor: ls.floorIDs()}
	name, src := s.def, Source{Origin: OriginBuiltin, Profile: s.def}
	switch n, ptr := activeOf(ls.managed); {
	case s.override != "":
		name, src = s.override, Source{Origin: OriginHost, Profile: s.override}
	case n != "":
		name, src = n, ls.managed.src(ptr) // the managed tier's choice outranks the others'
	default:
		for _, f := range []*parsedFile{ls.defaults, ls.user, ls.project} {
			n, ptr := selects(f, ls)
			if n == "" {
				continue
			}
			cand, err := profile.Builtin(n)
			if err != nil {
				return nil, err
			}
			if b.gate(f, ptr, Setting{Field: "active_profile"}, s.keep[f.layer]) {
				name, src = cand.Name, f.src(ptr)
			}
		}
	}
	base, err := profile.Builtin(name)
	if err != nil {
		return nil, err
	}
	b.p, b.base = base.Clone(), base.Hash()
	b.recordBase(base, src)
	for _, f := range []*parsedFile{ls.defaults, ls.user, ls.project} {
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
	b.sortSkipped()
	if b.p.Hash() != b.base {
		b.p.Family = profile.FamilyCustom
	}
	for _, e := range s.protect {
		if !slices.ContainsFunc(slices.Concat(b.p.ProtectedPaths, b.p.WriteProtectedPaths), func(x string) bool { return strings.EqualFold(x, e) }) {
			b.p.ProtectedPaths = append(b.p.ProtectedPaths, e)
			b.prov.set("denied_paths", e, Source{Origin: OriginHost})
		}
	}
	return b, nil
}

// sortSkipped puts the skipped settings in file order: the user file's, then the project
// file's, each by line.
func (b *builder) sortSkipped() {
	rank := func(o Origin) int {
		if o == OriginProject {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(b.skipped, func(x, y Skipped) int {
		return cmp.Or(cmp.Compare(rank(x.Source.Origin), rank(y.Source.Origin)), cmp.Compare(x.Source.Line, y.Source.Line))
	})
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

// judged reports whether f's settings apply only where they keep the profile at least as
// restrictive: an untrusted project file, and, under a managed tier that allows managed rules
// only, the user file and the project file.
func (b *builder) judged(f *parsedFile) bool {
	switch f.layer {
	case OriginProject:
		return !b.allowProject || b.rulesOnly
	case OriginUser:
		return b.rulesOnly
	}
	return false
}

// lower reports whether f is a layer below the managed tier that the managed tier governs: the
// user file or the project file.
func lower(f *parsedFile) bool { return f.layer == OriginUser || f.layer == OriginProject }

// loosens says how changing the profile so far to cand would loosen it, when f is judged (see
// judged), or "": profile.AtLeastAsRestrictive decides. A done context counts as a loosening
// (nothing more applies; build returns the context's error).
func (b *builder) loosens(f *parsedFile, cand *profile.Profile) string {
	if !b.judged(f) {
		return ""
	}
	if err := b.ctx.Err(); err != nil {
		return "not judged: " + err.Error()
	}
	_, why := profile.AtLeastAsRestrictive(*cand, b.p)
	return why
}

// gate decides whether a setting of f applies: when reason is "" (it does not loosen, or f is
// not judged); otherwise it is recorded as skipped, with the reason.
func (b *builder) gate(f *parsedFile, ptr string, s Setting, reason string) bool {
	if reason == "" || !b.judged(f) {
		return true
	}
	if b.rulesOnly {
		reason = "managed rules only: the user and project files may only tighten, and this " + reason
	}
	b.skipped = append(b.skipped, Skipped{Source: f.src(ptr), Setting: s, Reason: reason, Managed: b.rulesOnly})
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
		switch {
		case f.layer == OriginManaged && r.Action != policy.Allow:
			continue // the managed tier's floor: imposed by manage, ahead of every rule
		case lower(f) && b.floor[r.ID]:
			b.skipped = append(b.skipped, Skipped{Source: f.src(ptr), Setting: Setting{"rules", r.ID}, Managed: true,
				Reason: fmt.Sprintf("the managed tier sets the rule %q: no other layer replaces it", r.ID)})
			continue
		case lower(f) && b.rulesOnly && r.Action == policy.Allow:
			b.skipped = append(b.skipped, Skipped{Source: f.src(ptr), Setting: Setting{"rules", r.ID}, Managed: true,
				Reason: "managed rules only: the managed tier drops the user's and the project's ALLOW rules"})
			continue
		}
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
		} else if b.judged(f) {
			reason = fmt.Sprintf("removes %q from the protected paths", e)
		}
		if b.gate(f, ptr, Setting{"unprotected_paths", e}, reason) {
			b.p.ProtectedPaths, b.p.WriteProtectedPaths = cand.ProtectedPaths, cand.WriteProtectedPaths
			b.prov.set("unprotected_paths", e, f.src(ptr))
		}
	}
}

// manage applies the managed tier on top of the other layers (ls.managed, which is not nil):
// its settings as the highest layer (a value it sets is the value; its list entries, groups,
// registries and ALLOW rules are added as any layer's), then its caps (a dial or a mode the
// layers below set past them is lowered to them, with provenance saying so), then its floor
// (its DENY and CONFIRM rules, protected paths and the list entries they refer to:
// profile.Managed.Impose), which also becomes the profile's Managed.
func (b *builder) manage(ls *layers) error {
	f := ls.managed
	b.apply(f)
	m := &profile.Managed{Source: ls.source, Bundle: f.bundle}
	if c := f.cfg.Managed; c != nil {
		if c.MaxBand != nil {
			band, err := policy.ParseBand(*c.MaxBand)
			if err != nil { // the schema allows only band names
				return f.doc.errorf("/managed/max_band", "%v", err)
			}
			m.MaxBand = &band
		}
		if c.MaxMode != nil {
			mode, err := profile.ParseMode(*c.MaxMode)
			if err != nil {
				return f.doc.errorf("/managed/max_permission_mode", "%v", err)
			}
			m.MaxMode = mode
		}
		m.RulesOnly = c.RulesOnly != nil && *c.RulesOnly
	}
	if m.MaxBand != nil {
		if cur, err := policy.BandOf(b.p.Autonomy); err == nil && cur > *m.MaxBand {
			was := b.p.Autonomy
			b.p.Autonomy = m.MaxBand.Dial()
			b.capped("autonomy", f.src("/managed/max_band"), fmt.Sprintf("capped at the %s band: %v before", *m.MaxBand, was))
		}
	}
	if m.MaxMode.StricterThan(b.p.Mode) {
		was := b.p.Mode
		b.p.Mode = m.MaxMode
		b.capped("permission_mode", f.src("/managed/max_permission_mode"), fmt.Sprintf("capped at %s: %s before", m.MaxMode, was))
	}

	type entry struct{ field, key, ptr string }
	var owned []entry // the floor's settings, for provenance
	refs := map[string]bool{}
	for i, r := range f.cfg.CustomRules {
		if r.Action == policy.Allow {
			continue
		}
		ptr := "/custom_rules/" + strconv.Itoa(i)
		if b.unknownRefs(f, ptr, r.Condition) {
			continue
		}
		r.Priority = max(-profile.MaxRulePriority, min(profile.MaxRulePriority, r.Priority)) // the schema bounds it
		m.Rules = append(m.Rules, r)
		owned = append(owned, entry{"rules", r.ID, ptr})
		for _, l := range [][]string{r.Condition.Commands, r.Condition.Tools, r.Condition.Hosts, r.Condition.Providers, r.Condition.Surfaces} {
			for _, e := range l {
				if name, ok := strings.CutPrefix(e, "@"); ok {
					refs[name] = true
				}
			}
		}
	}
	if len(b.errs) > 0 {
		sortErrors(b.errs)
		return joinLoadErrors(b.errs)
	}
	c := &f.cfg
	lists := []struct {
		field, ptr string
		list       []string
		dst        *[]string
	}{
		{"denied_paths", "/denied_paths", c.DeniedPaths, &m.ProtectedPaths},
		{"write_protected_paths", "/write_protected_paths", c.WriteProtected, &m.WriteProtectedPaths},
		{"shell_blocklist", "/shell_blocklist", c.ShellBlocklist, &m.ShellBlocklist},
	}
	if c.Approval != nil {
		lists = append(lists, struct {
			field, ptr string
			list       []string
			dst        *[]string
		}{"denied_paths", "/approval/denied_paths", c.Approval.DeniedPaths, &m.ProtectedPaths})
	}
	for _, l := range lists {
		for i, e := range l.list {
			*l.dst = append(*l.dst, e)
			owned = append(owned, entry{l.field, e, l.ptr + "/" + strconv.Itoa(i)})
		}
	}
	for _, g := range slices.Sorted(maps.Keys(c.HostGroups)) {
		if !refs[g] {
			continue // no floor rule refers to it: it applies as any layer's group, not carried
		}
		if m.HostGroups == nil {
			m.HostGroups = map[string][]string{}
		}
		m.HostGroups[g] = slices.Clone(c.HostGroups[g])
		for i, h := range c.HostGroups[g] {
			owned = append(owned, entry{"host_groups." + g, h, pointerOf("host_groups", g, strconv.Itoa(i))})
		}
	}
	p, err := m.Impose(b.p)
	if err != nil {
		return f.doc.errorf("", "the managed tier cannot be imposed: %v", err)
	}
	before := make(map[string]policy.Rule, len(b.p.Rules))
	for _, r := range b.p.Rules {
		before[r.ID] = r
	}
	for _, r := range p.Rules {
		old, ok := before[r.ID]
		if !ok || old.Priority == r.Priority || b.floor[r.ID] {
			continue
		}
		note := "moved ahead of the managed tier's CONFIRM rules"
		if old.Action != r.Action {
			note += ", and raised to " + r.Action.String() + ": a managed CONFIRM rule covers it"
		}
		if src, ok := b.prov.Of("rules", r.ID); ok {
			src.Note = note
			b.prov.set("rules", r.ID, src)
		}
	}
	b.p = p
	for _, e := range owned {
		b.prov.set(e.field, e.key, f.src(e.ptr))
	}
	if b.p.Hash() != b.base {
		b.p.Family = profile.FamilyCustom
	}
	return nil
}

// capped records that the managed tier capped a value: its source is the cap, with a note
// saying what the layers below had set.
func (b *builder) capped(field string, cap Source, note string) {
	if was, ok := b.prov.Of(field, ""); ok {
		note += ", set by " + was.String()
	}
	cap.Note = note
	b.prov.set(field, "", cap)
}
