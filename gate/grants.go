package gate

import (
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// GrantSource holds standing grants: answers a human already gave to a CONFIRM ("allow this for
// the session", "always allow this"). The gate consults it at the rule layer, for a part of an
// action that layers 5 and 6 decided as CONFIRM, and nowhere else, so a grant
//
//   - never outranks layers 1 to 4: the halt latch, the hard stops, protected paths and the
//     permission mode decide before it is asked (a plan-mode run never sees a grant);
//   - never turns a DENY into an ALLOW: it only answers the question a CONFIRM would have asked;
//   - keeps the part's obligations (a checkpoint, a notification, the sandbox);
//   - does not lift the opaque-command rule: a command line the analysis cannot see through is
//     asked about again.
//
// MatchGrant is called from Check, concurrently, and must be fast and must not block. It
// returns the rule id the decision names (by convention [CheckGrantPrefix] and the grant's id) and a
// reason for a human. The session package's grant store implements it.
type GrantSource interface {
	MatchGrant(scope GrantScope, sub policy.Subject) (ruleID, reason string, ok bool)
}

// GrantScope is what a GrantSource needs to know of the decision it is asked about: the profile
// in force and its content hash. A grant made under one profile must not apply under a more
// restrictive one.
type GrantScope struct {
	Profile *profile.Compiled
	Hash    string
}

type grantHook struct{ src GrantSource }

// SetGrants installs src as the gate's grant source (nil removes it). The change applies to the
// decisions that start after it.
func (g *Gate) SetGrants(src GrantSource) {
	if src == nil {
		g.grants.Store(nil)
		return
	}
	g.grants.Store(&grantHook{src: src})
}

// applyGrant lets a standing grant answer a CONFIRM part. It keeps the part's obligations.
func (g *Gate) applyGrant(st *state, sub *policy.Subject, out *partOutcome) {
	h := g.grants.Load()
	if h == nil || st.mode != profile.ModeDefault && st.mode != profile.ModeReadOnly {
		return
	}
	if id, reason, ok := h.src.MatchGrant(GrantScope{Profile: st.prof, Hash: st.hash}, *sub); ok {
		out.verdict, out.layer, out.ruleID, out.reason = policy.Allow, policy.LayerRule, id, reason
	}
}
