package reins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// errGrantGone is the error of a use of a grant that expired, was used up or was revoked since
// the decision that named it.
var errGrantGone = errors.New("reins: the grant no longer applies")

// storeOf returns the store that holds grant id: the grants store for kept grants, the run's
// otherwise.
func (r *Run) storeOf(ctx context.Context, id string) Store {
	if r.kept != nil {
		if s, err := r.kept.Load(ctx); err == nil && slices.ContainsFunc(s.Grants, func(g Grant) bool { return g.ID == id }) {
			return r.kept
		}
	}
	return r.store
}

// useGrant counts one use of the grant a decision names, atomically with the grant in its
// store: it fails when the grant is gone, expired or used up (the action must then be asked
// about again), so a grant limited to n uses allows n actions in all, whatever runs share it.
func (r *Run) useGrant(ctx context.Context, ruleID string) error {
	id := grantOf(ruleID)
	now := r.clock.Now()
	_, err := r.storeOf(ctx, id).Update(ctx, func(s *RunState) error {
		i := slices.IndexFunc(s.Grants, func(g Grant) bool { return g.ID == id })
		if i < 0 || !s.Grants[i].valid(now) {
			return errGrantGone
		}
		s.Grants[i].Used++
		return nil
	})
	return err
}

// Grants lists the grants in force (the run's, then the kept ones), with their use counts.
func (r *Run) Grants(ctx context.Context) ([]Grant, error) {
	var out []Grant
	for _, st := range []Store{r.store, r.kept} {
		if st == nil {
			continue
		}
		s, err := st.Load(ctx)
		if err != nil {
			return nil, err
		}
		now := r.clock.Now()
		for _, g := range s.Grants {
			if g.valid(now) {
				g.Rules = cloneRules(g.Rules)
				g.Env = slices.Clone(g.Env)
				out = append(out, g)
			}
		}
	}
	return out, nil
}

func cloneRules(rs []policy.Rule) []policy.Rule {
	out := make([]policy.Rule, len(rs))
	for i, r := range rs {
		out[i] = r.Clone()
	}
	return out
}

// Revoke removes a grant from its store (the run's, or the grants store for an always grant).
// It is recorded.
func (r *Run) Revoke(ctx context.Context, id string) error {
	found := false
	_, err := r.storeOf(ctx, id).Update(ctx, func(s *RunState) error {
		n := len(s.Grants)
		s.Grants = slices.DeleteFunc(s.Grants, func(g Grant) bool { return g.ID == id })
		found = len(s.Grants) < n
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("reins: no grant %q", id)
	}
	return r.record(ctx, audit.Record{Kind: audit.KindGrantRevoked, Decision: policy.Deny, DecidedBy: audit.DecidedByUser,
		UserOverride: true, RuleMatched: gate.CheckGrantPrefix + id, Reason: "grant revoked"})
}

// AddGrant installs a grant the host made itself (from a settings screen, say): it must be as
// narrow as an approval's (Grant.Validate); its id, time and profile are filled in when empty.
// An always grant goes to the grants store (Options.Grants), any other to the run's. It is
// recorded.
func (r *Run) AddGrant(ctx context.Context, g Grant) (Grant, error) {
	if g.ID == "" {
		g.ID = newGrantID()
	}
	if g.Created.IsZero() {
		g.Created = r.clock.Now()
	}
	if g.ProfileHash == "" {
		p := r.act.Load().g.Profile().Profile()
		g.Profile, g.ProfileHash = p, p.Hash()
	}
	g.Rules = cloneRules(g.Rules)
	g.ruleIDs()
	if err := g.Validate(); err != nil {
		return Grant{}, err
	}
	if err := r.keep(ctx, g); err != nil {
		return Grant{}, err
	}
	return g, r.recordGrant(ctx, g, nil)
}

// keep stores a new grant: always grants in the grants store when there is one, the others in
// the run's. A live grant with the same rules, scope, profile, line, directory and environment
// is replaced (answering the same question again does not pile grants up), and grants that
// expired or were used up are dropped.
func (r *Run) keep(ctx context.Context, g Grant) error {
	if r.act.Load().rulesOnly {
		return ErrManagedRulesOnly
	}
	st := r.store
	if g.Scope == Always && r.kept != nil {
		st = r.kept
	}
	now := r.clock.Now()
	_, err := st.Update(ctx, func(s *RunState) error {
		if slices.ContainsFunc(s.Grants, func(x Grant) bool { return x.ID == g.ID }) {
			return fmt.Errorf("reins: grant id %q is taken", g.ID)
		}
		s.Grants = slices.DeleteFunc(s.Grants, func(x Grant) bool { return !x.valid(now) || sameGrant(&x, &g) })
		s.Grants = append(s.Grants, g)
		return nil
	})
	return err
}

func (r *Run) recordGrant(ctx context.Context, g Grant, d *gate.Decision) error {
	rec := audit.Record{Kind: audit.KindGrant, Decision: policy.Allow, DecidedBy: audit.DecidedByUser, UserOverride: true,
		RuleMatched: gate.CheckGrantPrefix + g.ID, Reason: fmt.Sprintf("grant %s (%s) by %s: %s", g.ID, g.Scope, g.By, describeGrant(g)),
		Approver: g.By, ApprovalScope: g.Scope.String(), Note: g.Note}
	if d != nil {
		rec.CorrelationID = d.CorrelationID
	}
	return r.record(ctx, rec)
}

func describeGrant(g Grant) string {
	s := describeRules(g.Rules)
	if g.Line != "" {
		s = "line " + fmt.Sprintf("%q", g.Line) + " in " + g.Dir + ": " + s
		if len(g.Env) > 0 {
			s += " with " + strings.Join(g.Env, " ")
		}
	}
	return s
}

// grant makes a grant from an approval. For an "always" answer, review (when not nil) is asked
// to confirm the proposal first; without a reviewer or a grants store it stays a session grant.
func (r *Run) grant(ctx context.Context, a policy.Action, exp gate.Explanation, ans Answer, review func(Proposal) bool) (Grant, error) {
	if act := r.act.Load(); act.rulesOnly {
		return Grant{}, ErrManagedRulesOnly // before the reviewer is asked about a grant that cannot be kept
	} else if managedAsked(act, exp.Decision.RuleID) {
		return Grant{}, errManagedAsks // it would never answer (MatchGrant)
	}
	rules, err := NarrowestRules(a, exp)
	if err != nil {
		return Grant{}, err
	}
	now := r.clock.Now()
	act := r.act.Load()
	p := act.g.Profile().Profile()
	g := Grant{ID: newGrantID(), Rules: rules, Scope: ans.Scope, Profile: p, ProfileHash: act.hash, Created: now,
		MaxUses: ans.MaxUses, By: by(ans), Note: ans.Note}
	if a.Command != "" {
		g.Line, g.Dir, g.Env = a.Command, exp.Dir, slices.Clone(a.Env)
	}
	if ans.Expires > 0 {
		g.Expires = now.Add(ans.Expires)
	}
	g.ruleIDs()
	if g.Scope == Always {
		prop := Proposal{Grant: g}
		prop.Grant.Rules = cloneRules(g.Rules)
		prop.Matches, prop.NonMatches = preview(a, prop.Grant, act.g.Profile())
		if r.kept == nil || review == nil || !review(prop) {
			g.Scope = ForSession
			g.Note = strings.TrimPrefix(g.Note+"; kept for the run only (not saved)", "; ")
		}
	}
	if err := g.Validate(); err != nil {
		return Grant{}, err
	}
	if err := r.keep(ctx, g); err != nil {
		return Grant{}, err
	}
	return g, r.recordGrant(ctx, g, &exp.Decision)
}
