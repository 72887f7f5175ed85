package gate

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// AlternativeKind says what kind of way forward an Alternative is.
type AlternativeKind string

// The alternatives the engine knows (the policy spec: a DENY shows its reason and suggests
// alternatives).
const (
	// AltSandbox: run the same command through a sandbox runner (the session package's
	// DoCommand), when the denial was about the missing sandbox.
	AltSandbox AlternativeKind = "sandbox"
	// AltNarrowerPath: the same action on a narrower path (an entry of a directory target, or the
	// file inside the workspace instead of outside it) that the active profile would not deny.
	AltNarrowerPath AlternativeKind = "narrower_path"
	// AltAsk: ask a human, when the denial was only that nobody could be asked.
	AltAsk AlternativeKind = "ask"
	// AltProfile: the nearest profile (by permission mode and autonomy) under which the action
	// would be allowed or asked about; switching to it is the user's call.
	AltProfile AlternativeKind = "profile"
)

// Alternative is one way forward after a denial.
type Alternative struct {
	Kind AlternativeKind
	// Description says it to a human.
	Description string
	// Action is the action to try instead (AltNarrowerPath, AltSandbox); zero otherwise.
	Action policy.Action
	// Profile names the profile (AltProfile).
	Profile string
	// Verdict is what the alternative would get: Allow or Confirm.
	Verdict policy.Verdict
}

// maxAltPaths bounds the narrower paths looked at per target.
const maxAltPaths = 8

// Alternatives returns the ways forward the engine knows for action a that decision d denied:
// a narrower path, the same command in the sandbox, asking for approval, the nearest profile
// that would allow it. It reads d (its layer and check) and decides only the candidates, each
// under the same run state s (nil means the zero State), recording nothing. A halt or a hard
// stop has no alternative but a reset; an input error none at all.
func (g *Gate) Alternatives(s *State, a policy.Action, d Decision) []Alternative {
	if d.Verdict != policy.Deny {
		return nil
	}
	if s == nil {
		s = &zeroState
	}
	var out []Alternative
	switch d.Layer {
	case policy.LayerHalted, policy.LayerHardStop, policy.LayerInput, policy.LayerAudit:
		return nil
	case policy.LayerObligation:
		if d.RuleID == CheckObligationSandbox && a.Command != "" {
			out = append(out, Alternative{Kind: AltSandbox, Action: a, Verdict: policy.Allow,
				Description: "run the same command through a sandbox runner (DoCommand with a Sandbox runner)"})
		}
		return out
	case policy.LayerApproval:
		if d.RuleID == CheckApprovalNone {
			out = append(out, Alternative{Kind: AltAsk, Action: a, Verdict: policy.Confirm,
				Description: "ask a human: configure an approver, or park the action for later review"})
		}
		return out
	}
	out = append(out, g.narrowerPaths(s, a)...)
	if p, v, ok := g.nearestProfile(s, a); ok {
		out = append(out, Alternative{Kind: AltProfile, Profile: p, Verdict: v,
			Description: "under profile " + p + " the action would be " + verdictWords(v)})
	}
	return out
}

// narrowerPaths proposes, for a denied action with targets, the same action on entries of a
// directory target and, for a target outside the workspace, on the same name inside it.
func (g *Gate) narrowerPaths(s *State, a policy.Action) []Alternative {
	st := g.st
	var out []Alternative
	for i, t := range a.Targets {
		var cands []string
		root, rel, err := st.ws.resolve(t)
		if err != nil {
			continue
		}
		if root == "" {
			cands = append(cands, filepath.Base(rel))
		} else if ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
			for _, e := range ents {
				if len(cands) == maxAltPaths {
					break
				}
				cands = append(cands, filepath.Join(t, e.Name()))
			}
		}
		for _, c := range cands {
			b := a
			b.Targets = slices.Clone(a.Targets)
			b.Targets[i] = c
			if d := g.decide(st, s, &b, nil); d.Verdict != policy.Deny {
				out = append(out, Alternative{Kind: AltNarrowerPath, Action: b, Verdict: d.Verdict,
					Description: "the narrower path " + c + " instead of " + t})
			}
		}
	}
	return out
}

// nearestProfile finds the profile SwitchTo can select, other than the active one, that would
// not deny a and is closest to the active one: the fewest steps of permission mode, then the
// smallest change of autonomy.
func (g *Gate) nearestProfile(s *State, a policy.Action) (string, policy.Verdict, bool) {
	st := g.st
	cur := st.prof.Profile()
	best, bestV, bestDist := "", policy.Deny, math.Inf(1)
	for _, info := range ListProfiles(g.env.opts.Profiles, st.name) {
		if info.Name == st.name {
			continue
		}
		alt, ok := g.altState(info.Name)
		if !ok {
			continue
		}
		b := a
		d := g.decide(alt, s, &b, nil)
		if d.Verdict == policy.Deny {
			continue
		}
		p := alt.prof.Profile()
		dist := math.Abs(float64(modeStep(p.Mode)-modeStep(cur.Mode)))*10 + math.Abs(p.Autonomy-cur.Autonomy)
		if p.Family != cur.Family {
			dist += 1 // another vocabulary is farther than any dial change within one
		}
		if dist < bestDist {
			best, bestV, bestDist = info.Name, d.Verdict, dist
		}
	}
	return best, bestV, best != ""
}

func modeStep(m profile.Mode) int {
	switch m {
	case profile.ModeEmergencyStop:
		return 0
	case profile.ModePlan:
		return 1
	case profile.ModeReadOnly:
		return 2
	}
	return 3
}

// altState compiles (once per run) the state of a profile a run can switch to.
func (g *Gate) altState(name string) (*state, bool) {
	if v, ok := g.env.alts.Load(name); ok {
		st, _ := v.(*state)
		return st, st != nil
	}
	var st *state
	if p, err := LookupProfile(g.env.opts.Profiles, name); err == nil {
		st, _ = g.env.compile(p)
	}
	g.env.alts.Store(name, st)
	return st, st != nil
}

// ProfileInfo describes a profile a run can switch to.
type ProfileInfo struct {
	Name        string
	Family      profile.Family
	Description string
	Active      bool
}

// ListProfiles lists the profiles a run can switch to: extra (the profiles given in
// Options.Profiles), then the built-in ones they do not shadow. Active marks the one named
// active.
func ListProfiles(extra []profile.Profile, active string) []ProfileInfo {
	var out []ProfileInfo
	seen := map[string]bool{}
	for _, p := range append(append([]profile.Profile(nil), extra...), profile.All()...) {
		key := strings.ToLower(p.Name)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, ProfileInfo{Name: p.Name, Family: p.Family, Description: p.Description, Active: p.Name == active})
	}
	return out
}

// LookupProfile returns the profile named name (case-insensitively) among extra, then the
// built-in profiles.
func LookupProfile(extra []profile.Profile, name string) (profile.Profile, error) {
	for _, p := range extra {
		if strings.EqualFold(p.Name, name) {
			return p.Clone(), nil
		}
	}
	return profile.Builtin(name)
}

func verdictWords(v policy.Verdict) string {
	if v == policy.Allow {
		return "allowed"
	}
	return "asked about"
}
