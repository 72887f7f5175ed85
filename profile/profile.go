package profile

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
)

// Mode is a profile's permission mode: what the gate does before it consults rules and the
// autonomy matrix. The zero Mode is Default.
type Mode uint8

// The permission modes of the autonomy seed. The seed's Supervised, Trusted and Autonomous modes
// "defer to" their autonomy gate: in reins they are ModeDefault with the dial in that band (the
// built-in profiles "supervised", "trusted" and "autonomous").
const (
	// ModeDefault defers to the profile's rules, then the autonomy matrix at the profile's dial.
	ModeDefault Mode = iota
	// ModeReadOnly allows read-only actions only; it denies mutating, exec, network and
	// destructive ones.
	ModeReadOnly
	// ModePlan denies tool execution entirely (planning-only sessions).
	ModePlan
	// ModeEmergencyStop denies every action.
	ModeEmergencyStop
)

var modeNames = [...]string{ModeDefault: "default", ModeReadOnly: "read-only", ModePlan: "plan", ModeEmergencyStop: "emergency-stop"}

// String returns "default", "read-only", "plan" or "emergency-stop".
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode parses a permission mode name (any case; "readonly" and "read_only" are accepted
// for "read-only", "emergency_stop" for "emergency-stop").
func ParseMode(name string) (Mode, error) {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	if n == "readonly" {
		n = "read-only"
	}
	for m, s := range modeNames {
		if n == s {
			return Mode(m), nil
		}
	}
	return ModeDefault, fmt.Errorf("profile: unknown permission mode %q (want default, read-only, plan or emergency-stop)", name)
}

// MarshalText implements [encoding.TextMarshaler].
func (m Mode) MarshalText() ([]byte, error) {
	if int(m) >= len(modeNames) {
		return nil, fmt.Errorf("profile: cannot marshal invalid mode %d", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseMode].
func (m *Mode) UnmarshalText(text []byte) error {
	v, err := ParseMode(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ExecCheckpoints says whether a command that executes programs is checkpointed before it runs.
//
// The autonomy seed promises that every run is reversible, and the policy spec checkpoints
// mutating and destructive actions. A command the shell analysis can only classify as exec
// ("go test", "npm install", "make", a script) may still rewrite files in the workspace, so by
// default it is checkpointed too, unless the analysis proves every part read-only. The cost is
// one snapshot of the workspace per such command (see package checkpoint's benchmarks: a
// snapshot of an unchanged workspace costs about as much as "git status").
type ExecCheckpoints uint8

const (
	// ExecCheckpointsOn checkpoints every exec part that goes ahead (the zero value and the
	// default of every built-in profile).
	ExecCheckpointsOn ExecCheckpoints = iota
	// ExecCheckpointsOff checkpoints only mutating and destructive actions, as the policy spec
	// does; a command that only executes programs is not checkpointed. Switching to it is a
	// loosening.
	ExecCheckpointsOff
)

// String returns "on" or "off", as profile files spell it (key exec_checkpoints).
func (e ExecCheckpoints) String() string {
	switch e {
	case ExecCheckpointsOn:
		return "on"
	case ExecCheckpointsOff:
		return "off"
	}
	return fmt.Sprintf("ExecCheckpoints(%d)", uint8(e))
}

// ExternalWrites says what a write outside every workspace root is.
type ExternalWrites uint8

const (
	// ExternalWritesHalt makes such a write a hard stop: it is denied and the run halts until
	// reset (the autonomy seed's "write outside workspace"). This is the zero value.
	ExternalWritesHalt ExternalWrites = iota
	// ExternalWritesByPolicy lets the profile's rules and the autonomy matrix decide it (the
	// approval-mode seed, where external writes prompt, or in yolo mode are allowed).
	// Protected paths still apply.
	ExternalWritesByPolicy
)

// String returns "halt" or "policy".
func (e ExternalWrites) String() string {
	switch e {
	case ExternalWritesHalt:
		return "halt"
	case ExternalWritesByPolicy:
		return "policy"
	}
	return fmt.Sprintf("ExternalWrites(%d)", uint8(e))
}

// Limits are a profile's resource limits (the policy spec's resource_limits). For each, 0 means
// no limit; a higher limit, and no limit most of all, is looser ([AtLeastAsRestrictive]).
type Limits struct {
	// MaxConcurrentOps bounds the operations in flight at once.
	MaxConcurrentOps int
	// MaxFilesPerPlan is the number of files a plan may touch before it needs confirmation.
	MaxFilesPerPlan int
	// Timeout bounds one operation.
	Timeout time.Duration
}

// Profile is a named policy bundle: how autonomous the agent is, what it may never touch, and
// the rules that decide the rest. It is plain data; [Profile.Compile] validates it and compiles
// its rules, and the gate uses the result. Built-in profiles come from [Builtin] and [All].
type Profile struct {
	// Name identifies the profile ("PROFILE-DEV", "trusted", "safe"). Names are compared exactly
	// (case-insensitively) and the built-in ones are distinct: PROFILE-SAFE and the approval
	// mode "safe" are different profiles.
	Name string
	// Description is one line for humans.
	Description string
	// Family says which seed vocabulary a built-in profile comes from ([FamilyPolicySpec],
	// [FamilyPermissionMode], [FamilyApprovalMode]), or [FamilyCustom].
	Family Family
	// Autonomy is the dial value, 0.0 (supervised) to 1.0 (autonomous); see [policy.BandOf].
	Autonomy float64
	// Mode is the permission mode.
	Mode Mode
	// Rules are evaluated by priority before the autonomy matrix.
	Rules []policy.Rule
	// ProtectedPaths are read-and-write protected (secrets): never read or written, in any
	// mode. An entry without a slash is a path component name matched anywhere in a path (".env"
	// denies "sub/.env"), an entry with a slash is a run of components matched anywhere
	// (".config/gh"), and an entry starting with "/", "~/" or "$HOME/" is an absolute path denied
	// with everything under it. A name may hold the wildcards * and ? (".env.*"); nothing else is
	// a pattern. Matching is ASCII case-insensitive. The seeds' .env, .env.local, .ssh, id_rsa and
	// id_ed25519 hold whatever the list says. See [DefaultProtectedPaths]. JSON: denied_paths.
	ProtectedPaths []string
	// WriteProtectedPaths are write-protected: files that make other programs run code or change
	// what an agent may do (.git, shell rc files, .envrc, editor and agent configuration). They
	// may be read, never written, created or deleted, in any mode; entries are written as for
	// ProtectedPaths. The seeds' .git holds whatever the list says. See
	// [DefaultWriteProtectedPaths]. JSON: write_protected_paths.
	WriteProtectedPaths []string
	// TrustedPaths are directories outside the workspace that count as workspace (writes there
	// are not external). "~/" is expanded.
	TrustedPaths []string
	// ShellAllowlist, ShellBlocklist, NetworkAllowlist, AllowedTools and AutoApprovePatterns are
	// the profile's lists, referenced by rules as "@shell_allowlist" and so on.
	ShellAllowlist      []string
	ShellBlocklist      []string
	NetworkAllowlist    []string
	AllowedTools        []string
	AutoApprovePatterns []string
	// HostGroups name sets of host globs for network rules ("ai-apis", "package-managers",
	// "configured-hosts"), referenced as "@name". reins ships no host names: the built-in groups
	// are empty until the host fills them.
	HostGroups map[string][]string
	// Registries name, per package ecosystem ("npm", "pypi", "go", "cargo", "rubygems",
	// "composer", "apt", "docker", ...), the hosts its installs reach, so the shell analysis can
	// tell which host "npm install" contacts. Empty by default: reins ships no registry hosts, and
	// an install to an unconfigured ecosystem reaches an unknown host.
	Registries map[string][]string
	// ExternalWrites says whether a write outside the workspace halts the run (the default) or
	// is left to the rules.
	ExternalWrites ExternalWrites
	// ExecCheckpoints says whether commands that execute programs are checkpointed first (on by
	// default). JSON: exec_checkpoints. Omitted from [Profile.Hash] when on, so the hash of a profile
	// that leaves it alone is what it was before the setting existed.
	ExecCheckpoints ExecCheckpoints `json:",omitempty"`
	// Limits are the resource limits.
	Limits Limits
	// Managed is the organisation's managed tier the profile is under, or nil (see [Managed]):
	// its rules, protected paths and lists are in the profile, ahead of every other tier's
	// ([Managed.Impose]), and the profile lies within its caps, or the profile does not compile.
	// A run keeps it through every profile switch. Omitted from [Profile.Hash] when nil.
	Managed *Managed `json:",omitempty"`
}

// Host group names the built-in profiles reference.
const (
	GroupAIAPIs          = "ai-apis"
	GroupPackageManagers = "package-managers"
	GroupConfiguredHosts = "configured-hosts"
)

// Clone returns a deep copy of p.
func (p Profile) Clone() Profile {
	q := p
	q.Rules = cloneRules(p.Rules)
	q.ProtectedPaths = slices.Clone(p.ProtectedPaths)
	q.WriteProtectedPaths = slices.Clone(p.WriteProtectedPaths)
	q.TrustedPaths = slices.Clone(p.TrustedPaths)
	q.ShellAllowlist = slices.Clone(p.ShellAllowlist)
	q.ShellBlocklist = slices.Clone(p.ShellBlocklist)
	q.NetworkAllowlist = slices.Clone(p.NetworkAllowlist)
	q.AllowedTools = slices.Clone(p.AllowedTools)
	q.AutoApprovePatterns = slices.Clone(p.AutoApprovePatterns)
	q.HostGroups = cloneMap(p.HostGroups)
	q.Registries = cloneMap(p.Registries)
	q.Managed = p.Managed.Clone()
	return q
}

func cloneMap(m map[string][]string) map[string][]string {
	if m == nil {
		return nil
	}
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

func cloneRules(rules []policy.Rule) []policy.Rule {
	if rules == nil {
		return nil
	}
	out := make([]policy.Rule, len(rules))
	for i, r := range rules {
		out[i] = r.Clone()
	}
	return out
}

// WithHostGroup returns a copy of p whose host group name holds the given host globs.
func (p Profile) WithHostGroup(name string, hosts ...string) Profile {
	q := p.Clone()
	if q.HostGroups == nil {
		q.HostGroups = map[string][]string{}
	}
	q.HostGroups[name] = slices.Clone(hosts)
	return q
}

// WithRules returns a copy of p with extra rules appended (they merge with the profile's rules
// by priority).
func (p Profile) WithRules(rules ...policy.Rule) Profile {
	q := p.Clone()
	q.Rules = append(q.Rules, cloneRules(rules)...)
	return q
}

// Compiled is a validated profile with its rules compiled. It is immutable and safe for
// concurrent use.
type Compiled struct {
	profile Profile
	band    policy.Band
	rules   *policy.RuleSet
}

// Compile validates p and compiles its rules against its lists and host groups. Every problem
// is reported, each naming the field.
func (p Profile) Compile() (*Compiled, error) {
	var errs []error
	fail := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("profile %q: %s: %s", p.Name, field, fmt.Sprintf(format, args...)))
	}
	if strings.TrimSpace(p.Name) == "" {
		fail("name", "is empty")
	}
	band, err := policy.BandOf(p.Autonomy)
	if err != nil || math.IsInf(p.Autonomy, 0) {
		fail("autonomy", "%v is not a number in [0, 1]", p.Autonomy)
	}
	if int(p.Mode) >= len(modeNames) {
		fail("mode", "invalid value %d", uint8(p.Mode))
	}
	if p.ExternalWrites > ExternalWritesByPolicy {
		fail("external_writes", "invalid value %d", uint8(p.ExternalWrites))
	}
	if p.ExecCheckpoints > ExecCheckpointsOff {
		fail("exec_checkpoints", "invalid value %d", uint8(p.ExecCheckpoints))
	}
	if p.Limits.MaxConcurrentOps < 0 {
		fail("resource_limits.max_concurrent_ops", "%d is negative", p.Limits.MaxConcurrentOps)
	}
	if p.Limits.MaxFilesPerPlan < 0 {
		fail("resource_limits.max_files_per_plan", "%d is negative", p.Limits.MaxFilesPerPlan)
	}
	if p.Limits.Timeout < 0 {
		fail("resource_limits.timeout_seconds", "%v is negative", p.Limits.Timeout)
	}
	for field, list := range map[string][]string{"protected_paths": p.ProtectedPaths, "write_protected_paths": p.WriteProtectedPaths} {
		for i, pp := range list {
			if why := fspath.CheckEntry(pp); why != "" {
				fail(fmt.Sprintf("%s[%d]", field, i), "%q: %s", pp, why)
			}
		}
	}
	lists := map[string][]string{
		policy.ListShellAllowlist:      p.ShellAllowlist,
		policy.ListShellBlocklist:      p.ShellBlocklist,
		policy.ListNetworkAllowlist:    p.NetworkAllowlist,
		policy.ListAllowedTools:        p.AllowedTools,
		policy.ListAutoApprovePatterns: p.AutoApprovePatterns,
	}
	for _, g := range slices.Sorted(maps.Keys(p.HostGroups)) {
		if _, clash := lists[g]; clash {
			fail("host_groups", "group %q has the name of a profile list", g)
			continue
		}
		lists[g] = p.HostGroups[g]
	}
	if p.Managed != nil {
		if why := p.Managed.violation(&p); why != "" {
			fail("managed", "%s", why)
		}
	}
	rules, err := policy.Compile(p.Rules, &policy.Env{Lists: lists})
	if err != nil {
		errs = append(errs, fmt.Errorf("profile %q: rules: %w", p.Name, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Compiled{profile: p.Clone(), band: band, rules: rules}, nil
}

// MustCompile is like [Profile.Compile] but panics on error; for static profiles only.
func (p Profile) MustCompile() *Compiled {
	c, err := p.Compile()
	if err != nil {
		panic(err)
	}
	return c
}

// Profile returns a copy of the profile this was compiled from.
func (c *Compiled) Profile() Profile { return c.profile.Clone() }

// Name returns the profile's name.
func (c *Compiled) Name() string { return c.profile.Name }

// Band returns the autonomy band of the profile's dial.
func (c *Compiled) Band() policy.Band { return c.band }

// Mode returns the permission mode.
func (c *Compiled) Mode() Mode { return c.profile.Mode }

// Rules returns the compiled rule set.
func (c *Compiled) Rules() *policy.RuleSet { return c.rules }

// ProtectedPaths returns the profile's read-and-write protected path entries (a copy).
func (c *Compiled) ProtectedPaths() []string { return slices.Clone(c.profile.ProtectedPaths) }

// WriteProtectedPaths returns the profile's write-protected path entries (a copy).
func (c *Compiled) WriteProtectedPaths() []string { return slices.Clone(c.profile.WriteProtectedPaths) }

// TrustedPaths returns the profile's trusted path entries (a copy).
func (c *Compiled) TrustedPaths() []string { return slices.Clone(c.profile.TrustedPaths) }

// ExecCheckpoints returns the profile's exec-checkpoint setting.
func (c *Compiled) ExecCheckpoints() ExecCheckpoints { return c.profile.ExecCheckpoints }

// ExternalWrites returns the profile's external-write setting.
func (c *Compiled) ExternalWrites() ExternalWrites { return c.profile.ExternalWrites }

// Registries returns the package registry hosts per ecosystem (a copy).
func (c *Compiled) Registries() map[string][]string { return cloneMap(c.profile.Registries) }

// Limits returns the resource limits.
func (c *Compiled) Limits() Limits { return c.profile.Limits }

// Managed returns the managed tier the profile is under (a copy), or nil.
func (c *Compiled) Managed() *Managed { return c.profile.Managed.Clone() }
