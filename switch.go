package reins

import (
	"context"
	"errors"
	"fmt"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// ErrSwitchRefused is returned (wrapped) when a profile switch is refused: the new profile is
// looser than the active one and nobody confirmed it, or it does not compile.
var ErrSwitchRefused = errors.New("reins: profile switch refused")

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
	act       *active
	from      string
	decidedBy audit.DecidedBy
}

// Profiles lists the profiles SwitchTo can select: those given in Options.Profiles, then the
// built-in ones they do not shadow.
func (r *Run) Profiles() []gate.ProfileInfo {
	return gate.ListProfiles(r.opts.Profiles, r.act.Load().name)
}

// SwitchTo switches to the named profile; see SwitchProfile.
func (r *Run) SwitchTo(ctx context.Context, name string) (Switch, error) {
	p, err := gate.LookupProfile(r.opts.Profiles, name)
	if err != nil {
		return Switch{To: name}, fmt.Errorf("%w: %v", ErrSwitchRefused, err)
	}
	return r.SwitchProfile(ctx, p)
}

// SwitchProfile switches the active profile to p, following the policy spec's switching rules:
// a switch to a profile at least as restrictive as the active one (profile.AtLeastAsRestrictive,
// limits included) is always allowed; any other needs Options.ConfirmSwitch to approve it, and
// without that callback it is refused. A switch never takes effect while an operation is in
// flight: it is applied when the last one ends, and Begin waits for it meanwhile. Every request,
// refusal and application is an audit record. Under a managed tier (profile.Managed) the new
// profile is put under it, and one past its caps is refused whatever ConfirmSwitch says (see
// managed.go).
func (r *Run) SwitchProfile(ctx context.Context, p profile.Profile) (Switch, error) {
	return r.switchProfile(ctx, p, false)
}

// Reload replaces the active profile with p, typically re-read from files that changed. The host
// vouches for it (the loader has already applied the project-trust rules), so no confirmation is
// asked; otherwise it behaves like SwitchProfile: a p that does not compile is refused and the
// active profile stays, and it takes effect at the next operation boundary. p's managed tier, if
// it carries one, replaces the active one (a newer policy bundle's); see managed.go.
func (r *Run) Reload(ctx context.Context, p profile.Profile) (Switch, error) {
	return r.switchProfile(ctx, p, true)
}

func (r *Run) switchProfile(ctx context.Context, p profile.Profile, vouched bool) (Switch, error) {
	from := r.target()
	sw := Switch{From: from.Name, To: p.Name}
	now := r.clock.Now()
	rec := audit.Record{Time: now, Kind: audit.KindProfileSwitchRequested, Profile: from.Name,
		ProfileHash: from.Hash(), RequestedProfile: p.Name, RequestedProfileHash: p.Hash(), Decision: policy.Confirm,
		DecidedBy: audit.DecidedByUser, RuleMatched: "profile-switch"}
	rec.DecisionID = newV7(now)
	if err := r.record(ctx, rec); err != nil {
		return sw, fmt.Errorf("%w: the request could not be recorded: %v", ErrSwitchRefused, err)
	}
	refuse := func(reason string) (Switch, error) {
		x := rec
		x.Kind, x.Decision, x.Reason, x.Time, x.CorrelationID = audit.KindProfileSwitchRefused, policy.Deny, reason, r.clock.Now(), rec.DecisionID
		x.DecisionID = newV7(x.Time)
		if err := r.record(ctx, x); err != nil {
			r.log.Error("reins: profile switch refusal could not be recorded", "err", err)
		}
		return sw, fmt.Errorf("%w: %s -> %s: %s", ErrSwitchRefused, sw.From, sw.To, reason)
	}
	p, err := r.managed(p, vouched) // the managed tier stays in force (managed.go)
	if err != nil {
		return refuse(err.Error())
	}
	g, err := r.act.Load().g.With(p)
	if err != nil {
		return refuse(err.Error())
	}
	decidedBy := audit.DecidedByDefault // a tightening goes through on its own
	if ok, why := profile.AtLeastAsRestrictive(p, from); !ok && !vouched {
		if r.opts.ConfirmSwitch == nil {
			return refuse("the new profile is looser: it " + why + "; no one can confirm it")
		}
		approved, err := r.opts.ConfirmSwitch(ctx, SwitchRequest{From: from.Clone(), To: p.Clone(), Why: why})
		switch {
		case err != nil:
			return refuse("confirmation failed: " + err.Error())
		case !approved:
			return refuse("the user did not confirm a looser profile: it " + why)
		}
		sw.Confirmed, decidedBy = true, audit.DecidedByUser
	} else if vouched {
		decidedBy = audit.DecidedByHook
	}
	r.opMu.Lock()
	defer r.opMu.Unlock()
	r.pending = &pendingSwitch{act: newActive(g), from: from.Name, decidedBy: decidedBy}
	if r.drained == nil {
		r.drained = make(chan struct{})
	}
	if r.inflight == 0 {
		r.applyPendingLocked(ctx)
		sw.Applied = true
	}
	return sw, nil
}

// target returns the profile that will be active once pending switches apply.
func (r *Run) target() profile.Profile {
	r.opMu.Lock()
	defer r.opMu.Unlock()
	if r.pending != nil {
		return r.pending.act.g.Profile().Profile()
	}
	return r.act.Load().g.Profile().Profile()
}

// applyPendingLocked makes the pending switch the active profile. r.opMu is held and no
// operation is in flight.
func (r *Run) applyPendingLocked(ctx context.Context) {
	ps := r.pending
	r.pending = nil
	r.act.Store(ps.act)
	if r.drained != nil {
		close(r.drained)
		r.drained = nil
	}
	rec := audit.Record{Time: r.clock.Now(), Kind: audit.KindProfileSwitchApplied, Profile: ps.from,
		RequestedProfile: ps.act.name, RequestedProfileHash: ps.act.hash, Decision: policy.Allow, DecidedBy: ps.decidedBy,
		RuleMatched: "profile-switch", Reason: "applied at an operation boundary"}
	if err := r.record(ctx, rec); err != nil {
		r.log.Error("reins: applied profile switch could not be recorded", "err", err)
	}
}
