package loader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// fileConfig is the content of one profile file, after schema validation. Absent keys are nil.
type fileConfig struct {
	Schema          string              `json:"$schema"`
	Comment         string              `json:"$comment"`
	ActiveProfile   *string             `json:"active_profile"`
	Autonomy        *float64            `json:"autonomy"`
	PermissionMode  *string             `json:"permission_mode"`
	ExternalWrites  *string             `json:"external_writes"`
	ExecCheckpoints *string             `json:"exec_checkpoints"`
	CustomRules     []policy.Rule       `json:"custom_rules"`
	ShellAllowlist  []string            `json:"shell_allowlist"`
	ShellBlocklist  []string            `json:"shell_blocklist"`
	NetworkAllow    []string            `json:"network_allowlist"`
	DeniedPaths     []string            `json:"denied_paths"`
	WriteProtected  []string            `json:"write_protected_paths"`
	Unprotected     []string            `json:"unprotected_paths"`
	TrustedPaths    []string            `json:"trusted_paths"`
	AllowedTools    []string            `json:"allowed_tools"`
	AutoApprove     []string            `json:"auto_approve_patterns"`
	HostGroups      map[string][]string `json:"host_groups"`
	Registries      map[string][]string `json:"registries"`
	ResourceLimits  *fileLimits         `json:"resource_limits"`
	TrustedProjects []trustedProject    `json:"trusted_projects"`
	Approval        *approvalBlock      `json:"approval"`
	Managed         *managedBlock       `json:"managed"`
}

// managedBlock is the managed file's caps.
type managedBlock struct {
	MaxBand   *string `json:"max_band"`
	MaxMode   *string `json:"max_permission_mode"`
	RulesOnly *bool   `json:"managed_rules_only"`
}

type fileLimits struct {
	MaxConcurrentOps *int `json:"max_concurrent_ops"`
	MaxFilesPerPlan  *int `json:"max_files_per_plan"`
	TimeoutSeconds   *int `json:"timeout_seconds"`
}

type trustedProject struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// approvalBlock is the approval-mode seed's YAML block.
type approvalBlock struct {
	Mode         *string  `json:"mode"`
	TrustedPaths []string `json:"trusted_paths"`
	DeniedPaths  []string `json:"denied_paths"`
	AllowedTools []string `json:"allowed_tools"`
	AutoApprove  []string `json:"auto_approve_patterns"`
}

// parsedFile is one validated profile file.
type parsedFile struct {
	layer  Origin
	path   string
	bundle uint64 // the version of the signed bundle the file came in; 0 for a file
	digest string // hex SHA-256 of the raw content
	doc    *document
	cfg    fileConfig
}

// src returns the Source of the value at ptr.
func (f *parsedFile) src(ptr string) Source {
	return Source{Origin: f.layer, File: f.path, Bundle: f.bundle, Pointer: ptr, Line: f.doc.line(ptr)}
}

// isYAML reports whether a file name says YAML.
func isYAML(name string) bool {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(name, "\\", "/")))
	return ext == ".yaml" || ext == ".yml"
}

// parseFile decodes, validates and checks one file's content. Errors are *Errors joined; when
// ctx is done first, the error is a *Error wrapping ctx's error.
func parseFile(ctx context.Context, layer Origin, name string, data []byte) (*parsedFile, error) {
	sum := sha256.Sum256(data)
	doc, err := decode(ctx, name, data, isYAML(name))
	if err != nil {
		return nil, err
	}
	errs, err := validateSchema(ctx, doc)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, joinLoadErrors(errs)
	}
	f := &parsedFile{layer: layer, path: name, digest: hex.EncodeToString(sum[:]), doc: doc}
	// The schema has checked every key and type; decode the same value into the model.
	raw, err := json.Marshal(doc.value)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		err = dec.Decode(&f.cfg)
	}
	if err != nil {
		return nil, doc.errorf("", "cannot decode: %v", err)
	}
	for i := range f.cfg.CustomRules {
		normalizeCondition(&f.cfg.CustomRules[i].Condition)
	}
	errs, err = f.check(ctx)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, joinLoadErrors(errs)
	}
	return f, nil
}

func joinLoadErrors(errs []*Error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return joinErrors(out)
}

// check runs the checks the schema cannot express: globs, regular expressions, command
// entries, literal paths, references, and settings that contradict each other. It reports at
// most maxProblems problems (and then one more saying so), and looks at ctx every ctxEvery
// entries, returning ctx's error as a *Error when it is done.
func (f *parsedFile) check(ctx context.Context) ([]*Error, error) {
	var errs []*Error
	truncated, n := false, 0
	var done error
	fail := func(ptr, format string, args ...any) {
		if len(errs) >= maxProblems {
			truncated = true
			return
		}
		errs = append(errs, f.doc.errorf(ptr, format, args...))
	}
	// stop reports whether to stop: too many problems, or ctx is done (looked at every ctxEvery
	// calls).
	stop := func() bool {
		if n++; n%ctxEvery == 0 && done == nil {
			done = ctx.Err()
		}
		return done != nil || truncated
	}
	c := &f.cfg

	checkStrings(f.doc.value, nil, fail, stop)

	if c.ActiveProfile != nil && c.Approval != nil && c.Approval.Mode != nil {
		fail("/approval/mode", "conflicts with active_profile %q: set the profile once", *c.ActiveProfile)
	}
	if c.PermissionMode != nil && c.Autonomy != nil {
		if b, err := policy.ParseBand(*c.PermissionMode); err == nil {
			if got, _ := policy.BandOf(*c.Autonomy); got != b {
				fail("/autonomy", "%v lies in the %s band, but permission_mode %q puts the dial in the %s band", *c.Autonomy, got, *c.PermissionMode, b)
			}
		}
	}
	if c.ResourceLimits != nil {
		// Checked by the schema; repeated so the model never holds a value it did not allow.
		for _, l := range []struct {
			name string
			v    *int
		}{{"max_concurrent_ops", c.ResourceLimits.MaxConcurrentOps}, {"max_files_per_plan", c.ResourceLimits.MaxFilesPerPlan}, {"timeout_seconds", c.ResourceLimits.TimeoutSeconds}} {
			if l.v != nil && *l.v < 1 {
				fail("/resource_limits/"+l.name, "out of range: %d is not >= 1", *l.v)
			}
		}
	}

	commands := func(ptr string, list []string) {
		for i, e := range list {
			if stop() {
				return
			}
			p := ptr + "/" + strconv.Itoa(i)
			if strings.HasPrefix(e, "@") {
				fail(p, "%q: @references are allowed in rule conditions only", e)
				continue
			}
			if why := checkCondition("commands", policy.Condition{Commands: []string{e}}); why != "" {
				fail(p, "%s", why)
			}
		}
	}
	// Glob lists may be referenced from any glob field of a rule (tools, hosts, providers,
	// surfaces), and hosts are matched in lower case: an entry must be valid both ways.
	globs := func(ptr string, list []string) {
		for i, e := range list {
			if stop() {
				return
			}
			p := ptr + "/" + strconv.Itoa(i)
			if strings.HasPrefix(e, "@") {
				fail(p, "%q: @references are allowed in rule conditions only", e)
				continue
			}
			why := checkCondition("tools", policy.Condition{Tools: []string{e}})
			if why == "" {
				why = checkCondition("hosts", policy.Condition{Hosts: []string{e}})
			}
			if why != "" {
				fail(p, "bad glob: %s", why)
			}
		}
	}
	denied := func(ptr string, list []string) {
		for i, e := range list {
			if stop() {
				return
			}
			if why := checkProtectedPath(e); why != "" {
				fail(ptr+"/"+strconv.Itoa(i), "%q: %s", e, why)
			}
		}
	}
	trusted := func(ptr string, list []string) {
		for i, e := range list {
			if !isAbsOrHome(e) {
				fail(ptr+"/"+strconv.Itoa(i), "%q: a trusted path is absolute or starts with ~/", e)
			}
		}
	}

	commands("/shell_allowlist", c.ShellAllowlist)
	commands("/shell_blocklist", c.ShellBlocklist)
	commands("/auto_approve_patterns", c.AutoApprove)
	globs("/network_allowlist", c.NetworkAllow)
	globs("/allowed_tools", c.AllowedTools)
	denied("/denied_paths", c.DeniedPaths)
	denied("/write_protected_paths", c.WriteProtected)
	denied("/unprotected_paths", c.Unprotected)
	for i, e := range c.Unprotected {
		if fspath.SeedClass(e) != fspath.Unprotected {
			fail("/unprotected_paths/"+strconv.Itoa(i), "%q: the seeds' default denied paths (%s) cannot be unprotected", e, strings.Join(fspath.Seeds(), ", "))
		}
	}
	trusted("/trusted_paths", c.TrustedPaths)
	if a := c.Approval; a != nil {
		commands("/approval/auto_approve_patterns", a.AutoApprove)
		globs("/approval/allowed_tools", a.AllowedTools)
		denied("/approval/denied_paths", a.DeniedPaths)
		trusted("/approval/trusted_paths", a.TrustedPaths)
	}
	for _, g := range slices.Sorted(maps.Keys(c.HostGroups)) {
		p := pointerOf("host_groups", g)
		if isListName(g) {
			fail(p, "%q is the name of a profile list, not a host group", g)
		}
		globs(p, c.HostGroups[g])
	}
	for _, eco := range slices.Sorted(maps.Keys(c.Registries)) {
		for i, h := range c.Registries[eco] {
			if stop() {
				break
			}
			if !hostRe.MatchString(h) {
				fail(pointerOf("registries", eco, strconv.Itoa(i)), "%q is not a host name (registry hosts are literal names, optionally with :port)", h)
			}
		}
	}
	if c.Managed != nil && f.layer != OriginManaged {
		fail("/managed", "only the managed tier (the managed file, or a signed bundle's managed profile) may set caps")
	}
	f.checkCaps(fail)
	for i, tp := range c.TrustedProjects {
		p := "/trusted_projects/" + strconv.Itoa(i)
		if f.layer != OriginUser {
			fail(p, "only the user file may list trusted projects")
			break
		}
		if !isAbsOrHome(tp.Path) {
			fail(p+"/path", "%q: a project path is absolute or starts with ~/", tp.Path)
		}
	}
	seen := map[string]int{}
	for i, r := range c.CustomRules {
		if stop() {
			break
		}
		p := "/custom_rules/" + strconv.Itoa(i)
		if j, dup := seen[r.ID]; dup {
			fail(p+"/id", "duplicate rule id %q (also /custom_rules/%d)", r.ID, j)
		} else {
			seen[r.ID] = i
		}
		for _, e := range f.checkRule(p, r) {
			fail(e.Pointer, "%s", e.Reason)
		}
	}
	if done != nil || ctx.Err() != nil {
		return nil, notLoaded(f.path, ctx.Err())
	}
	sortErrors(errs)
	if truncated {
		errs = append(errs, f.doc.errorf("", "more than %d problems; only the first %d are reported", maxProblems, maxProblems))
	}
	return errs, nil
}

// checkCaps refuses a managed file whose own dial or mode lies past its caps.
func (f *parsedFile) checkCaps(fail func(ptr, format string, args ...any)) {
	c := &f.cfg
	if c.Managed == nil {
		return
	}
	if c.Managed.MaxBand != nil {
		maxBand, _ := policy.ParseBand(*c.Managed.MaxBand) // the schema checked the name
		if c.Autonomy != nil {
			if b, err := policy.BandOf(*c.Autonomy); err == nil && b > maxBand {
				fail("/autonomy", "%v lies in the %s band, past this file's max_band %q", *c.Autonomy, b, *c.Managed.MaxBand)
			}
		}
		if c.PermissionMode != nil {
			if b, err := policy.ParseBand(*c.PermissionMode); err == nil && b > maxBand {
				fail("/permission_mode", "%q lies past this file's max_band %q", *c.PermissionMode, *c.Managed.MaxBand)
			}
		}
	}
	if c.Managed.MaxMode != nil && c.PermissionMode != nil {
		maxMode, _ := profile.ParseMode(*c.Managed.MaxMode)
		m := profile.ModeDefault // a band name sets the default mode
		if mm, err := profile.ParseMode(*c.PermissionMode); err == nil {
			m = mm
		}
		if maxMode.StricterThan(m) {
			fail("/permission_mode", "%q is less restrictive than this file's max_permission_mode %q", *c.PermissionMode, *c.Managed.MaxMode)
		}
	}
}

var hostRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,5})?$`)

func (f *parsedFile) checkRule(p string, r policy.Rule) []*Error {
	var errs []*Error
	fail := func(ptr, format string, args ...any) { errs = append(errs, f.doc.errorf(ptr, format, args...)) }
	c := r.Condition
	cp := p + "/condition"
	if c.TargetPattern != "" {
		if why := checkCondition("target_pattern", policy.Condition{TargetPattern: c.TargetPattern}); why != "" {
			fail(cp+"/target_pattern", "bad glob: %s", why)
		}
	}
	if c.CommandPattern != "" {
		if why := checkCondition("command_pattern", policy.Condition{CommandPattern: c.CommandPattern}); why != "" {
			fail(cp+"/command_pattern", "bad regular expression (RE2 syntax): %s", why)
		}
	}
	for _, l := range []struct {
		field string
		list  []string
		cond  func(string) policy.Condition
	}{
		{"commands", c.Commands, func(e string) policy.Condition { return policy.Condition{Commands: []string{e}} }},
		{"tools", c.Tools, func(e string) policy.Condition { return policy.Condition{Tools: []string{e}} }},
		{"hosts", c.Hosts, func(e string) policy.Condition { return policy.Condition{Hosts: []string{e}} }},
		{"providers", c.Providers, func(e string) policy.Condition { return policy.Condition{Providers: []string{e}} }},
		{"surfaces", c.Surfaces, func(e string) policy.Condition { return policy.Condition{Surfaces: []string{e}} }},
	} {
		for i, e := range l.list {
			ep := cp + "/" + l.field + "/" + strconv.Itoa(i)
			if name, ok := strings.CutPrefix(e, "@"); ok {
				cmdList := isCommandList(name)
				switch {
				case name == "":
					fail(ep, "%q names no list", e)
				case l.field == "commands" && !cmdList:
					fail(ep, "%q: commands may refer to @shell_allowlist, @shell_blocklist or @auto_approve_patterns only", e)
				case l.field != "commands" && cmdList:
					fail(ep, "%q is a list of commands; %s may refer to @network_allowlist, @allowed_tools and host groups", e, l.field)
				}
				continue // other names are resolved against the layers when the files are merged
			}
			if why := checkCondition(l.field, l.cond(e)); why != "" {
				if l.field == "commands" {
					fail(ep, "%s", why)
				} else {
					fail(ep, "bad glob: %s", why)
				}
			}
		}
	}
	return errs
}

// checkCondition compiles a one-field condition with the real rule compiler and returns the
// reason it fails, without the compiler's rule prefix, or "".
func checkCondition(field string, c policy.Condition) string {
	_, err := policy.Compile([]policy.Rule{{ID: "check", Action: policy.Deny, Condition: c}}, &policy.Env{Home: "/home"})
	if err == nil {
		return ""
	}
	msg := err.Error()
	if i := strings.Index(msg, "condition."+field+": "); i >= 0 {
		return msg[i+len("condition."+field+": "):]
	}
	return msg
}

// checkProtectedPath returns why e cannot be a protected path entry, or "": the one rule of
// internal/fspath, which the gate and the sandbox apply too.
func checkProtectedPath(e string) string { return fspath.CheckEntry(e) }

func isAbsOrHome(p string) bool {
	return strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/")
}

// isCommandList reports whether name is a profile list of command entries (the others hold
// globs).
func isCommandList(name string) bool {
	switch name {
	case policy.ListShellAllowlist, policy.ListShellBlocklist, policy.ListAutoApprovePatterns:
		return true
	}
	return false
}

func isListName(name string) bool {
	switch name {
	case policy.ListShellAllowlist, policy.ListShellBlocklist, policy.ListNetworkAllowlist,
		policy.ListAllowedTools, policy.ListAutoApprovePatterns:
		return true
	}
	return false
}

// checkStrings rejects NUL characters anywhere in the file. path holds the reference tokens of
// v; a pointer is built only for a problem.
func checkStrings(v any, path []string, fail func(ptr, format string, args ...any), stop func() bool) {
	if stop() {
		return
	}
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			fail(pointerOf(path...), "contains a NUL character")
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if strings.ContainsRune(k, 0) {
				fail(pointerOf(append(path, k)...), "the key contains a NUL character")
			}
			checkStrings(x[k], append(path, k), fail, stop)
		}
	case []any:
		for i, e := range x {
			checkStrings(e, append(path, strconv.Itoa(i)), fail, stop)
		}
	}
}

// normalizeCondition makes empty lists nil, so a rule written with "tools": [] equals the same
// rule without the key (in comparisons and in the profile's hash).
func normalizeCondition(c *policy.Condition) {
	if len(c.OperationType) == 0 {
		c.OperationType = nil
	}
	for _, l := range []*[]string{&c.Commands, &c.Tools, &c.Hosts, &c.Providers, &c.Surfaces} {
		if len(*l) == 0 {
			*l = nil
		}
	}
}

// digestOf returns the hex SHA-256 of data, the form trusted_projects records.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
