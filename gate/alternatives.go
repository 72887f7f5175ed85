package gate

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"

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
// that would allow it. It decides each candidate as Check would, without recording anything. A
// halt or a hard stop has no alternative but Reset; an input error none at all.
func (g *Gate) Alternatives(ctx context.Context, a policy.Action, d Decision) []Alternative {
	if ctx.Err() != nil || d.Verdict != policy.Deny {
		return nil
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
	st := g.st.Load()
	out = append(out, g.narrowerPaths(st, a)...)
	if p, v, ok := g.nearestProfile(st, a); ok {
		out = append(out, Alternative{Kind: AltProfile, Profile: p, Verdict: v,
			Description: "under profile " + p + " the action would be " + verdictWords(v)})
	}
	return out
}

// narrowerPaths proposes, for a denied action with targets, the same action on entries of a
// directory target and, for a target outside the workspace, on the same name inside it.
func (g *Gate) narrowerPaths(st *state, a policy.Action) []Alternative {
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
			if d, _ := g.decide(st, &b, nil); d.Verdict != policy.Deny {
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
func (g *Gate) nearestProfile(st *state, a policy.Action) (string, policy.Verdict, bool) {
	cur := st.prof.Profile()
	best, bestV, bestDist := "", policy.Deny, math.Inf(1)
	for _, info := range g.Profiles() {
		if info.Name == st.name {
			continue
		}
		alt, ok := g.altState(info.Name)
		if !ok {
			continue
		}
		b := a
		d, _ := g.decide(alt, &b, nil)
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

// altState compiles (once per gate) the state of a profile SwitchTo can select.
func (g *Gate) altState(name string) (*state, bool) {
	if v, ok := g.alts.Load(name); ok {
		st, _ := v.(*state)
		return st, st != nil
	}
	var st *state
	if p, err := g.LookupProfile(name); err == nil {
		st, _ = g.compile(p)
	}
	g.alts.Store(name, st)
	return st, st != nil
}

func verdictWords(v policy.Verdict) string {
	if v == policy.Allow {
		return "allowed"
	}
	return "asked about"
}
