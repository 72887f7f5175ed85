package profile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/reins-go/reins/policy"
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

// sameOverlay reports whether to and from are built-in profiles of one family with the same
// changes made to each (none, or the same files applied to both, as loader.Loaded.Rebase does), and
// returns their bases.
func sameOverlay(to, from Profile) (bt, bf Profile, ok bool) {
	bt, errT := Builtin(to.Name)
	bf, errF := Builtin(from.Name)
	if errT != nil || errF != nil || bt.Family != bf.Family {
		return bt, bf, false
	}
	return bt, bf, overlay(to, bt) == overlay(from, bf)
}

// overlay describes, canonically, what p changes relative to its base built-in profile: the
// scalar settings it sets to other values, the list entries, groups and rules it adds or drops.
func overlay(p, base Profile) string {
	type delta struct {
		Autonomy       *float64
		Mode           *Mode
		ExternalWrites *ExternalWrites
		Exec           *ExecCheckpoints
		Limits         *Limits
		Lists          map[string][2][]string
		Groups         map[string][2][]string
		Registries     map[string][2][]string
		Rules          [2][]policy.Rule
	}
	var d delta
	if p.Autonomy != base.Autonomy {
		d.Autonomy = &p.Autonomy
	}
	if p.Mode != base.Mode {
		d.Mode = &p.Mode
	}
	if p.ExternalWrites != base.ExternalWrites {
		d.ExternalWrites = &p.ExternalWrites
	}
	if p.ExecCheckpoints != base.ExecCheckpoints {
		d.Exec = &p.ExecCheckpoints
	}
	if p.Limits != base.Limits {
		d.Limits = &p.Limits
	}
	diff := func(a, b []string) [2][]string {
		var added, dropped []string
		for _, x := range a {
			if !slices.Contains(b, x) {
				added = append(added, x)
			}
		}
		for _, x := range b {
			if !slices.Contains(a, x) {
				dropped = append(dropped, x)
			}
		}
		slices.Sort(added)
		slices.Sort(dropped)
		return [2][]string{added, dropped}
	}
	d.Lists = map[string][2][]string{
		"protected":    diff(p.ProtectedPaths, base.ProtectedPaths),
		"write":        diff(p.WriteProtectedPaths, base.WriteProtectedPaths),
		"trusted":      diff(p.TrustedPaths, base.TrustedPaths),
		"allow":        diff(p.ShellAllowlist, base.ShellAllowlist),
		"block":        diff(p.ShellBlocklist, base.ShellBlocklist),
		"network":      diff(p.NetworkAllowlist, base.NetworkAllowlist),
		"tools":        diff(p.AllowedTools, base.AllowedTools),
		"auto-approve": diff(p.AutoApprovePatterns, base.AutoApprovePatterns),
	}
	mapDiff := func(a, b map[string][]string) map[string][2][]string {
		out := map[string][2][]string{}
		for _, k := range slices.Sorted(maps.Keys(a)) {
			out[k] = diff(a[k], b[k])
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				out[k] = diff(nil, b[k])
			}
		}
		return out
	}
	d.Groups, d.Registries = mapDiff(p.HostGroups, base.HostGroups), mapDiff(p.Registries, base.Registries)
	for _, r := range p.Rules {
		if !slices.ContainsFunc(base.Rules, func(b policy.Rule) bool { return reflect.DeepEqual(b, r) }) {
			d.Rules[0] = append(d.Rules[0], r)
		}
	}
	for _, r := range base.Rules {
		if !slices.ContainsFunc(p.Rules, func(q policy.Rule) bool { return reflect.DeepEqual(q, r) }) {
			d.Rules[1] = append(d.Rules[1], r)
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic("profile: bug: " + err.Error())
	}
	return string(b)
}

// AtLeastAsRestrictive reports whether switching from profile from to profile to makes nothing
// more permissive. The profile-switching rules use it: such a switch is always allowed; any other
// needs confirmation. When the answer is no, why names the first setting that loosens.
//
// The order is a partial one, documented setting by setting (incomparable profiles count as
// looser, so a switch between them needs confirmation):
//
//   - A profile that denies everything is at least as restrictive as any, emergency-stop before
//     plan: leaving an emergency stop always needs confirmation.
//   - Between built-in profiles of one family, unmodified or changed in exactly the same way
//     (the same files applied to both, as loader.Loaded.Rebase does), the family's own order holds:
//     PROFILE-SAFE < PROFILE-DEV < PROFILE-FULL-AUTO; emergency-stop < plan < read-only <
//     supervised < trusted < autonomous; ask < safe < auto < yolo.
//   - Otherwise every setting must be at least as restrictive: the mode (read-only is stricter
//     than default), the autonomy dial (lower is stricter, and the matrix is monotonic in it),
//     external writes (halt is stricter), protected paths and the shell blocklist (a superset is
//     stricter), the allow-side lists (shell allowlist, network allowlist, allowed tools,
//     auto-approve patterns, trusted paths, host groups, registries: a subset is stricter), and
//     the rules: every ALLOW rule of to is in from unchanged, every DENY or CONFIRM rule of from
//     is in to with the same condition and priority and an action at least as strict, and the
//     rules to adds are DENY rules. (An added CONFIRM rule could win over a DENY and loosen.)
func AtLeastAsRestrictive(to, from Profile) (ok bool, why string) {
	// Modes that deny everything: emergency-stop, then plan.
	for _, m := range []Mode{ModeEmergencyStop, ModePlan} {
		switch {
		case to.Mode == m:
			return true, ""
		case from.Mode == m:
			return false, "leaves " + m.String() + ", which denies everything"
		}
	}
	if bt, bf, ok := sameOverlay(to, from); ok {
		if modeRank(bt.Mode) < modeRank(bf.Mode) || modeRank(bt.Mode) == modeRank(bf.Mode) && bt.Autonomy <= bf.Autonomy {
			return true, ""
		}
		return false, fmt.Sprintf("%s is more autonomous than %s", to.Name, from.Name)
	}
	switch {
	case modeRank(to.Mode) > modeRank(from.Mode):
		return false, fmt.Sprintf("permission mode %s is looser than %s", to.Mode, from.Mode)
	case to.Autonomy > from.Autonomy:
		return false, fmt.Sprintf("autonomy %v is higher than %v", to.Autonomy, from.Autonomy)
	case to.ExternalWrites > from.ExternalWrites:
		return false, "external writes are left to the rules instead of halting the run"
	case to.ExecCheckpoints > from.ExecCheckpoints:
		return false, "commands that execute programs are no longer checkpointed"
	}
	if missing := notIn(from.ProtectedPaths, to.ProtectedPaths, true); missing != "" {
		return false, "no longer protects " + missing
	}
	if missing := notIn(from.WriteProtectedPaths, slices.Concat(to.WriteProtectedPaths, to.ProtectedPaths), true); missing != "" {
		return false, "no longer write-protects " + missing
	}
	if missing := notIn(from.ShellBlocklist, to.ShellBlocklist, false); missing != "" {
		return false, "no longer blocks " + missing
	}
	for _, l := range []struct {
		name     string
		to, from []string
	}{
		{"shell_allowlist", to.ShellAllowlist, from.ShellAllowlist},
		{"network_allowlist", to.NetworkAllowlist, from.NetworkAllowlist},
		{"allowed_tools", to.AllowedTools, from.AllowedTools},
		{"auto_approve_patterns", to.AutoApprovePatterns, from.AutoApprovePatterns},
		{"trusted_paths", to.TrustedPaths, from.TrustedPaths},
	} {
		if extra := notIn(l.to, l.from, false); extra != "" {
			return false, fmt.Sprintf("%s adds %s", l.name, extra)
		}
	}
	for _, m := range []struct {
		name     string
		to, from map[string][]string
	}{{"host group", to.HostGroups, from.HostGroups}, {"registry", to.Registries, from.Registries}} {
		for _, k := range slices.Sorted(maps.Keys(m.to)) {
			if extra := notIn(m.to[k], m.from[k], false); extra != "" {
				return false, fmt.Sprintf("%s %q adds %s", m.name, k, extra)
			}
		}
	}
	return rulesAtLeastAsStrict(to.Rules, from.Rules)
}

func rulesAtLeastAsStrict(to, from []policy.Rule) (bool, string) {
	byID := func(rules []policy.Rule) map[string]policy.Rule {
		m := make(map[string]policy.Rule, len(rules))
		for _, r := range rules {
			m[r.ID] = r
		}
		return m
	}
	toByID, fromByID := byID(to), byID(from)
	for _, r := range to {
		old, had := fromByID[r.ID]
		switch {
		case r.Action == policy.Allow && (!had || !reflect.DeepEqual(r, old)):
			return false, fmt.Sprintf("rule %q allows where the current profile does not", r.ID)
		case !had && r.Action != policy.Deny:
			return false, fmt.Sprintf("added rule %q asks instead of denying, which can override a denial", r.ID)
		}
	}
	for _, r := range from {
		if r.Action == policy.Allow {
			continue
		}
		nr, kept := toByID[r.ID]
		switch {
		case !kept:
			return false, fmt.Sprintf("drops the %s rule %q", r.Action, r.ID)
		case nr.Priority != r.Priority || !reflect.DeepEqual(nr.Condition, r.Condition):
			return false, fmt.Sprintf("changes the %s rule %q", r.Action, r.ID)
		case r.Action.StricterThan(nr.Action):
			return false, fmt.Sprintf("rule %q now says %s instead of %s", r.ID, nr.Action, r.Action)
		}
	}
	return true, ""
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
