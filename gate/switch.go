package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// ErrSwitchRefused is returned (wrapped) when a profile switch is refused: the new profile is
// looser than the active one and nobody confirmed it, or it does not compile.
var ErrSwitchRefused = errors.New("gate: profile switch refused")

// SwitchRequest is what ConfirmSwitch is asked about: a switch from the active profile to one
// that is not at least as restrictive, and the first setting that loosens.
type SwitchRequest struct {
	From, To profile.Profile
	Why      string
}

// Switch reports how a profile switch went.
type Switch struct {
	From, To string
	// Applied reports that the switch took effect before the call returned (no operation was in
	// flight); otherwise it takes effect when the last operation in flight ends.
	Applied bool
	// Confirmed reports that ConfirmSwitch approved a loosening.
	Confirmed bool
}

type pendingSwitch struct {
	st        *state
	from      string
	decidedBy audit.DecidedBy
}

// ProfileInfo describes a profile SwitchTo can select.
type ProfileInfo struct {
	Name        string
	Family      profile.Family
	Description string
	Active      bool
}

// Profiles lists the profiles SwitchTo can select: those given in Options.Profiles, then the
// built-in ones they do not shadow.
func (g *Gate) Profiles() []ProfileInfo {
	active := g.st.Load().name
	var out []ProfileInfo
	seen := map[string]bool{}
	for _, p := range append(append([]profile.Profile(nil), g.opts.Profiles...), profile.All()...) {
		key := strings.ToLower(p.Name)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, ProfileInfo{Name: p.Name, Family: p.Family, Description: p.Description, Active: p.Name == active})
	}
	return out
}

// LookupProfile returns the profile SwitchTo(name) would select (names compare case-insensitively).
func (g *Gate) LookupProfile(name string) (profile.Profile, error) {
	for _, p := range g.opts.Profiles {
		if strings.EqualFold(p.Name, name) {
			return p.Clone(), nil
		}
	}
	return profile.Builtin(name)
}

// ShowProfile describes the named profile (see LookupProfile): its effective settings, rules by
// priority and limits, printable.
func (g *Gate) ShowProfile(name string) (string, error) {
	p, err := g.LookupProfile(name)
	if err != nil {
		return "", err
	}
	return p.Describe(), nil
}

// SwitchTo switches to the named profile; see SwitchProfile.
func (g *Gate) SwitchTo(ctx context.Context, name string) (Switch, error) {
	p, err := g.LookupProfile(name)
	if err != nil {
		return Switch{To: name}, fmt.Errorf("%w: %v", ErrSwitchRefused, err)
	}
	return g.SwitchProfile(ctx, p)
}

// SwitchProfile switches the active profile to p, following the policy spec's switching rules:
// a switch to a profile at least as restrictive as the active one (profile.AtLeastAsRestrictive)
// is always allowed; any other needs Options.ConfirmSwitch to approve it, and without that
// callback it is refused. A switch never takes effect while an operation is in flight: it is
// applied when the last one ends, and Begin waits for it meanwhile. Every request, refusal and
// application is an audit record.
func (g *Gate) SwitchProfile(ctx context.Context, p profile.Profile) (Switch, error) {
	return g.switchProfile(ctx, p, false)
}

// Reload replaces the active profile with p, typically re-read from files that changed. The host
// vouches for it (the loader has already applied the project-trust rules), so no confirmation is
// asked; otherwise it behaves like SwitchProfile: a p that does not compile is refused and the
// active profile stays, and it takes effect at the next operation boundary.
func (g *Gate) Reload(ctx context.Context, p profile.Profile) (Switch, error) {
	return g.switchProfile(ctx, p, true)
}

func (g *Gate) switchProfile(ctx context.Context, p profile.Profile, vouched bool) (Switch, error) {
	from := g.target()
	sw := Switch{From: from.Name, To: p.Name}
	now := g.clock()
	rec := audit.Record{Time: now, Kind: audit.KindProfileSwitchRequested, DecisionID: newV7(now), Profile: from.Name,
		ProfileHash: from.Hash(), RequestedProfile: p.Name, RequestedProfileHash: p.Hash(), Decision: policy.Confirm,
		DecidedBy: audit.DecidedByUser, RuleMatched: "profile-switch"}
	rec.CorrelationID = rec.DecisionID
	if err := g.sink.Write(ctx, rec); err != nil {
		return sw, fmt.Errorf("%w: the request could not be recorded: %v", ErrSwitchRefused, err)
	}
	refuse := func(reason string) (Switch, error) {
		r := rec
		r.Kind, r.Decision, r.Reason, r.DecisionID = audit.KindProfileSwitchRefused, policy.Deny, reason, newV7(g.clock())
		if err := g.sink.Write(ctx, r); err != nil {
			g.log.Error("gate: profile switch refusal could not be recorded", "err", err)
		}
		return sw, fmt.Errorf("%w: %s -> %s: %s", ErrSwitchRefused, sw.From, sw.To, reason)
	}
	st, err := g.compile(p)
	if err != nil {
		return refuse(err.Error())
	}
	decidedBy := audit.DecidedByDefault // a tightening goes through on its own
	if ok, why := profile.AtLeastAsRestrictive(p, from); !ok && !vouched {
		if g.opts.ConfirmSwitch == nil {
			return refuse("the new profile is looser (" + why + ") and no one can confirm it")
		}
		approved, err := g.opts.ConfirmSwitch(ctx, SwitchRequest{From: from.Clone(), To: p.Clone(), Why: why})
		switch {
		case err != nil:
			return refuse("confirmation failed: " + err.Error())
		case !approved:
			return refuse("the user did not confirm a looser profile (" + why + ")")
		}
		sw.Confirmed, decidedBy = true, audit.DecidedByUser
	} else if vouched {
		decidedBy = audit.DecidedByHook
	}
	g.opMu.Lock()
	defer g.opMu.Unlock()
	g.pending = &pendingSwitch{st: st, from: from.Name, decidedBy: decidedBy}
	if g.drained == nil {
		g.drained = make(chan struct{})
	}
	if g.inflight == 0 {
		g.applyPendingLocked(ctx)
		sw.Applied = true
	}
	return sw, nil
}

// target returns the profile that will be active once pending switches apply.
func (g *Gate) target() profile.Profile {
	g.opMu.Lock()
	defer g.opMu.Unlock()
	if g.pending != nil {
		return g.pending.st.prof.Profile()
	}
	return g.st.Load().prof.Profile()
}

// applyPendingLocked makes the pending switch the active profile. g.opMu is held and no
// operation is in flight.
func (g *Gate) applyPendingLocked(ctx context.Context) {
	ps := g.pending
	g.pending = nil
	g.st.Store(ps.st)
	if g.drained != nil {
		close(g.drained)
		g.drained = nil
	}
	now := g.clock()
	rec := audit.Record{Time: now, Kind: audit.KindProfileSwitchApplied, DecisionID: newV7(now), Profile: ps.from,
		RequestedProfile: ps.st.name, RequestedProfileHash: ps.st.hash, Decision: policy.Allow, DecidedBy: ps.decidedBy,
		RuleMatched: "profile-switch", Reason: "applied at an operation boundary"}
	rec.CorrelationID = rec.DecisionID
	if err := g.sink.Write(ctx, rec); err != nil {
		g.log.Error("gate: applied profile switch could not be recorded", "err", err)
	}
}
