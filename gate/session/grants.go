package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// Grant is a standing answer to a CONFIRM: the narrowest rules that cover what a human
// approved. For a command line, one rule per simple command that was asked about: its literal
// argument vector as a "commands" entry and its exact text as an anchored command pattern (so
// `git push origin main` covers that command and nothing else: not with more arguments, not
// under sudo or another wrapper, not beside another command); for a file action, the exact target path; for a
// network action, the exact host; always with the tool, the operation type and the risk levels.
// A command the analysis cannot see through (opaque, a substitution, a non-literal word) is
// never granted.
//
// The gate consults grants at the rule layer and only for parts its rules and matrix would
// CONFIRM (see gate.GrantSource): a grant never outranks the halt latch, hard stops, protected
// paths or the permission mode, and never turns a DENY into an ALLOW. A grant made under one
// profile applies under that profile and under profiles at most as restrictive, not under a
// more restrictive one.
type Grant struct {
	ID    string        `json:"id"`
	Rules []policy.Rule `json:"rules"`
	Scope Scope         `json:"scope"`
	// Profile is the profile the grant was made under; ProfileHash its content hash.
	Profile     profile.Profile `json:"profile"`
	ProfileHash string          `json:"profile_hash"`
	Created     time.Time       `json:"created"`
	// Expires, when not zero, ends the grant.
	Expires time.Time `json:"expires,omitzero"`
	// MaxUses, when not zero, ends the grant after that many actions.
	MaxUses int `json:"max_uses,omitempty"`
	// Used counts the actions the grant allowed (at the time of a List).
	Used int    `json:"used,omitempty"`
	By   string `json:"by,omitempty"`
	Note string `json:"note,omitempty"`
}

// GrantStore persists "always" grants. Load returns the saved grants; Save replaces them.
type GrantStore interface {
	Load(ctx context.Context) ([]Grant, error)
	Save(ctx context.Context, grants []Grant) error
}

// FileStore is a GrantStore in one JSON file, written atomically (a temporary file renamed over
// it) with mode 0600. Put it in the user's configuration directory, beside the user profile
// file, which the gate protects from the agent.
type FileStore struct {
	Path string
	mu   sync.Mutex
}

// NewFileStore returns a FileStore at path.
func NewFileStore(path string) *FileStore { return &FileStore{Path: path} }

// maxGrantFile bounds the grant file read.
const maxGrantFile = 4 << 20

// Load reads the grants; a missing file holds none.
func (f *FileStore) Load(context.Context) ([]Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, err := os.Open(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var doc struct {
		Grants []Grant `json:"grants"`
	}
	dec := json.NewDecoder(&limitedReader{r: fh, n: maxGrantFile})
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("session: grant file %s: %w", f.Path, err)
	}
	return doc.Grants, nil
}

// Save writes the grants.
func (f *FileStore) Save(_ context.Context, grants []Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.MarshalIndent(struct {
		Grants []Grant `json:"grants"`
	}{grants}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".grants-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}

type limitedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("file larger than %d bytes", maxGrantFile)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// grantSet holds the session's grants and answers the gate (gate.GrantSource).
type grantSet struct {
	clock func() time.Time
	mu    sync.Mutex // serializes changes
	snap  atomic.Pointer[grantSnap]
}

type liveGrant struct {
	g    Grant
	used atomic.Int64
	dead atomic.Bool
}

type grantSnap struct {
	byID    map[string]*liveGrant
	order   []*liveGrant
	perProf sync.Map // profile hash -> *policy.RuleSet (nil: no grant applies)
}

func newGrantSet(clock func() time.Time) *grantSet {
	s := &grantSet{clock: clock}
	s.snap.Store(&grantSnap{byID: map[string]*liveGrant{}})
	return s
}

// maxGrants bounds the grants a session holds.
const maxGrants = 4096

// add inserts grants (new ids) and publishes a new snapshot. Grants that expired or were used up
// are dropped, and a new grant replaces a live one with the same rules, scope and profile (so
// answering the same question again does not pile grants up).
func (s *grantSet) add(gs ...Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.snap.Load()
	now := s.clock()
	n := &grantSnap{byID: make(map[string]*liveGrant, len(old.byID)+len(gs))}
	for _, g := range gs {
		if g.ID == "" || old.byID[g.ID] != nil {
			return fmt.Errorf("grant id %q is empty or taken", g.ID)
		}
		if len(g.Rules) == 0 {
			return fmt.Errorf("grant %s has no rules", g.ID)
		}
		for i := range g.Rules {
			g.Rules[i].ID, g.Rules[i].Action = gate.CheckGrantPrefix+g.ID, policy.Allow
			if i > 0 {
				g.Rules[i].ID += "#" + strconv.Itoa(i)
			}
		}
		if _, err := policy.Compile(g.Rules, nil); err != nil {
			return fmt.Errorf("grant %s: %w", g.ID, err)
		}
	}
	for _, lg := range old.order {
		if !lg.valid(now) {
			continue
		}
		replaced := false
		for _, g := range gs {
			replaced = replaced || sameGrant(lg.g, g)
		}
		if replaced {
			lg.dead.Store(true)
			continue
		}
		n.byID[lg.g.ID] = lg
		n.order = append(n.order, lg)
	}
	for _, g := range gs {
		lg := &liveGrant{g: g}
		lg.used.Store(int64(g.Used))
		n.byID[g.ID] = lg
		n.order = append(n.order, lg)
	}
	if len(n.order) > maxGrants {
		return fmt.Errorf("more than %d grants", maxGrants)
	}
	s.snap.Store(n)
	return nil
}

// sameGrant reports whether b would replace a: the same scope, profile and rules.
func sameGrant(a, b Grant) bool {
	if a.Scope != b.Scope || a.ProfileHash != b.ProfileHash || len(a.Rules) != len(b.Rules) {
		return false
	}
	for i := range a.Rules {
		x, y := a.Rules[i], b.Rules[i]
		x.ID, y.ID, x.Reason, y.Reason = "", "", "", ""
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// prune publishes a snapshot without the grants that expired or were used up.
func (s *grantSet) prune() {
	if err := s.add(); err != nil {
		return
	}
}

// remove drops a grant; it reports whether it existed.
func (s *grantSet) remove(id string) (Grant, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.snap.Load()
	lg, ok := old.byID[id]
	if !ok {
		return Grant{}, false
	}
	lg.dead.Store(true)
	n := &grantSnap{byID: make(map[string]*liveGrant, len(old.byID))}
	for _, x := range old.order {
		if x != lg {
			n.byID[x.g.ID] = x
			n.order = append(n.order, x)
		}
	}
	s.snap.Store(n)
	return lg.g, true
}

func (s *grantSet) list() []Grant {
	snap := s.snap.Load()
	out := make([]Grant, 0, len(snap.order))
	for _, lg := range snap.order {
		g := lg.g
		g.Used = int(lg.used.Load())
		g.Rules = cloneRules(g.Rules)
		out = append(out, g)
	}
	return out
}

func cloneRules(rs []policy.Rule) []policy.Rule {
	out := make([]policy.Rule, len(rs))
	for i, r := range rs {
		out[i] = r.Clone()
	}
	return out
}

func (lg *liveGrant) valid(now time.Time) bool {
	if lg.dead.Load() {
		return false
	}
	if !lg.g.Expires.IsZero() && !now.Before(lg.g.Expires) {
		return false
	}
	return lg.g.MaxUses == 0 || lg.used.Load() < int64(lg.g.MaxUses)
}

// applies reports whether a grant made under gp applies under the active profile: the same
// profile, or one at most as restrictive (gp is at least as restrictive as it).
func applies(lg *liveGrant, scope gate.GrantScope) bool {
	if lg.g.ProfileHash == scope.Hash {
		return true
	}
	if scope.Profile == nil {
		return false
	}
	ok, _ := profile.AtLeastAsRestrictive(lg.g.Profile, scope.Profile.Profile())
	return ok
}

// MatchGrant implements gate.GrantSource.
func (s *grantSet) MatchGrant(scope gate.GrantScope, sub policy.Subject) (string, string, bool) {
	for range 2 {
		id, reason, ok, stale := s.match(scope, &sub)
		if !stale {
			return id, reason, ok
		}
		// The matching grant expired or was used up: drop it and look again.
		s.prune()
	}
	return "", "", false
}

func (s *grantSet) match(scope gate.GrantScope, sub *policy.Subject) (id, reason string, ok, stale bool) {
	snap := s.snap.Load()
	if len(snap.order) == 0 {
		return "", "", false, false
	}
	var rs *policy.RuleSet
	if v, ok := snap.perProf.Load(scope.Hash); ok {
		rs = v.(*policy.RuleSet)
	} else {
		var rules []policy.Rule
		for _, lg := range snap.order {
			if applies(lg, scope) {
				rules = append(rules, lg.g.Rules...)
			}
		}
		if len(rules) > 0 {
			rs, _ = policy.Compile(rules, nil)
		}
		snap.perProf.Store(scope.Hash, rs)
	}
	if rs == nil {
		return "", "", false, false
	}
	m, ok := rs.Evaluate(sub)
	if !ok {
		return "", "", false, false
	}
	lg := snap.byID[grantOf(m.Rule.ID)]
	if lg == nil || !lg.valid(s.clock()) {
		return "", "", false, true
	}
	return m.Rule.ID, m.Rule.Reason, true, false
}

// grantOf returns the grant id of a grant rule's id ("grant:<id>" or "grant:<id>#<n>").
func grantOf(ruleID string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(ruleID, gate.CheckGrantPrefix), "#")
	return id
}

// use counts one use of the grant named by a decision's rule id; it reports false when the
// grant is gone, expired or used up (the decision must then be asked again).
func (s *grantSet) use(ruleID string) bool {
	if !strings.HasPrefix(ruleID, gate.CheckGrantPrefix) {
		return true
	}
	lg := s.snap.Load().byID[grantOf(ruleID)]
	if lg == nil || !lg.valid(s.clock()) {
		return false
	}
	if lg.g.MaxUses == 0 {
		lg.used.Add(1)
		return true
	}
	for {
		n := lg.used.Load()
		if n >= int64(lg.g.MaxUses) {
			return false
		}
		if lg.used.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Grants lists the grants in force (session and always), with their use counts.
func (s *Session) Grants() []Grant { return s.grants.list() }

// Revoke removes a grant; an "always" grant is removed from the store too. It is recorded.
func (s *Session) Revoke(ctx context.Context, id string) error {
	g, ok := s.grants.remove(id)
	if !ok {
		return fmt.Errorf("session: no grant %q", id)
	}
	if g.Scope == Always && s.opts.Grants != nil {
		if err := s.saveAlways(ctx); err != nil {
			return err
		}
	}
	return s.g.Record(ctx, audit.Record{Kind: KindGrantRevoked, Decision: policy.Deny, DecidedBy: audit.DecidedByUser,
		UserOverride: true, RuleMatched: gate.CheckGrantPrefix + id, Reason: "grant revoked"})
}

// AddGrant installs a grant the host made itself (from a settings screen, say), after checking
// that its rules compile; its id and time are filled in when empty. It is recorded.
func (s *Session) AddGrant(ctx context.Context, g Grant) (Grant, error) {
	if g.ID == "" {
		g.ID = newGrantID()
	}
	if g.Created.IsZero() {
		g.Created = time.Now()
	}
	if g.ProfileHash == "" {
		p := s.g.Profile().Profile()
		g.Profile, g.ProfileHash = p, p.Hash()
	}
	if err := s.grants.add(g); err != nil {
		return Grant{}, fmt.Errorf("session: %w", err)
	}
	if g.Scope == Always && s.opts.Grants != nil {
		if err := s.saveAlways(ctx); err != nil {
			return g, err
		}
	}
	return g, s.recordGrant(ctx, g, nil)
}

func (s *Session) saveAlways(ctx context.Context) error {
	var keep []Grant
	for _, g := range s.grants.list() {
		if g.Scope == Always {
			keep = append(keep, g)
		}
	}
	if err := s.opts.Grants.Save(ctx, keep); err != nil {
		return fmt.Errorf("session: saving grants: %w", err)
	}
	return nil
}

func (s *Session) recordGrant(ctx context.Context, g Grant, d *gate.Decision) error {
	r := audit.Record{Kind: KindGrant, Decision: policy.Allow, DecidedBy: audit.DecidedByUser, UserOverride: true,
		RuleMatched: gate.CheckGrantPrefix + g.ID, Reason: fmt.Sprintf("grant %s (%s) by %s: %s", g.ID, g.Scope, g.By, describeRules(g.Rules)),
		Approver: g.By, ApprovalScope: g.Scope.String(), Note: g.Note}
	if d != nil {
		r.CorrelationID = d.CorrelationID
	}
	return s.g.Record(ctx, r)
}

func describeRules(rs []policy.Rule) string {
	var parts []string
	for _, r := range rs {
		c := r.Condition
		var b []string
		if len(c.Tools) > 0 {
			b = append(b, "tool "+strings.Join(c.Tools, ","))
		}
		if len(c.OperationType) > 0 {
			ops := make([]string, len(c.OperationType))
			for i, o := range c.OperationType {
				ops[i] = string(o)
			}
			b = append(b, "op "+strings.Join(ops, ","))
		}
		if len(c.Commands) > 0 {
			b = append(b, "commands ["+strings.Join(c.Commands, "; ")+"]")
		}
		if c.TargetPattern != "" {
			b = append(b, "target "+c.TargetPattern)
		}
		if len(c.Hosts) > 0 {
			b = append(b, "host "+strings.Join(c.Hosts, ","))
		}
		if !c.Risk.IsZero() {
			b = append(b, "risk "+c.Risk.String())
		}
		parts = append(parts, strings.Join(b, " "))
	}
	return strings.Join(parts, " | ")
}

func newGrantID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "g" + hex.EncodeToString(b[:])
}

// ErrNotGrantable reports that no narrow grant can cover an action (an opaque command, a word
// the rule language cannot express): the approval holds for this action only.
var ErrNotGrantable = errors.New("session: no narrow grant covers this action")

// NarrowestRules returns the narrowest rules that cover the parts of an action its explanation
// shows as CONFIRM (see Grant), or ErrNotGrantable.
func NarrowestRules(a policy.Action, exp gate.Explanation) ([]policy.Rule, error) {
	op := a.Operation.Canonical()
	base := policy.Condition{OperationType: []policy.Operation{op}}
	if a.Tool != "" {
		base.Tools = []string{escapeGlob(a.Tool)}
	}
	var rules []policy.Rule
	// Simple commands asked about: their literal argv as a token prefix, and their exact text
	// (so the same words under sudo, xargs or another wrapper, or with more arguments, are not
	// covered).
	for _, co := range exp.Commands {
		if !co.Decided || co.Verdict != policy.Confirm {
			continue
		}
		c := co.Command
		if c.Opaque || c.Substitution || len(c.Argv) == 0 || c.Program == "" || c.Text == "" {
			return nil, fmt.Errorf("%w: %q cannot be analysed", ErrNotGrantable, c.Text)
		}
		for _, tok := range c.Argv {
			if f := strings.Fields(tok); len(f) != 1 || f[0] != tok || tok == ">" || tok == "$()" || strings.HasPrefix(tok, "@") {
				return nil, fmt.Errorf("%w: the word %q of %q", ErrNotGrantable, tok, c.Text)
			}
		}
		e := strings.Join(c.Argv, " ")
		if c.Redirects {
			e += " >"
		}
		cond := cloneCond(base)
		cond.Commands = []string{e}
		cond.CommandPattern = "^" + regexp.QuoteMeta(c.Text) + "$"
		cond.Risk = policy.RiskMatch{Levels: c.Risk}
		rules = append(rules, policy.Rule{Condition: cond})
	}
	// The action's own parts asked about: per target (and host), with their level.
	type key struct {
		target string
		inside bool
	}
	own := map[key]risk.Set{}
	var order []key
	for _, p := range exp.Parts {
		if p.Command != -1 || p.Verdict != policy.Confirm {
			continue
		}
		k := key{p.Target, p.Inside}
		if _, ok := own[k]; !ok {
			order = append(order, k)
		}
		own[k] = own[k].With(p.Level)
	}
	for _, k := range order {
		c := cloneCond(base)
		c.Risk = policy.RiskMatch{Levels: own[k]}
		if k.target != "" {
			c.TargetPattern = escapeGlob(k.target)
			if !k.inside {
				c.OutsideWorkspace = true
			}
		}
		if a.Host != "" && own[k].Has(risk.Network) {
			c.Hosts = []string{escapeGlob(strings.ToLower(a.Host))}
		}
		if c.TargetPattern == "" && len(c.Hosts) == 0 && a.Command != "" {
			// The line as declared, without a target or host: only its commands can say what it is.
			continue
		}
		rules = append(rules, policy.Rule{Condition: c})
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: nothing in it was asked about", ErrNotGrantable)
	}
	for i := range rules {
		rules[i].Action = policy.Allow
	}
	return rules, nil
}

func cloneCond(c policy.Condition) policy.Condition {
	return policy.Rule{Condition: c}.Clone().Condition
}

func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\!`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Proposal is a grant before it is saved: its rules, and what they would and would not match,
// decided by the rules themselves (not guessed).
type Proposal struct {
	Grant Grant
	// Matches and NonMatches are sample actions, described on one line each.
	Matches, NonMatches []string
}

// preview builds the proposal's samples: variants of the approved action, each decided by the
// grant's rules the way the gate would decide its parts.
func preview(a policy.Action, exp gate.Explanation, rules []policy.Rule) (matches, non []string) {
	for i := range rules {
		rules[i].ID = "preview"
	}
	rs, err := policy.Compile(rules, nil)
	if err != nil {
		return nil, nil
	}
	op := a.Operation.Canonical()
	if a.Command != "" {
		var cands []string
		cands = append(cands, a.Command, a.Command+" --extra-flag")
		for _, co := range exp.Commands {
			argv := co.Command.Argv
			if len(argv) > 1 {
				cands = append(cands, strings.Join(argv[:len(argv)-1], " ")+" other", argv[0])
			}
		}
		cands = append(cands, a.Command+" > out.txt", a.Command+" && rm -rf ~", "other-program "+a.Command)
		seen := map[string]bool{}
		for _, line := range cands {
			if seen[line] {
				continue
			}
			seen[line] = true
			an, err := shell.Analyze(line, nil)
			ok := err == nil && an != nil && len(an.Commands) > 0
			if ok {
				for _, c := range an.Commands {
					sub := policy.Subject{Tool: a.Tool, Operation: op, Command: c.Text, Argv: c.Argv, Line: line,
						Redirects: c.Redirects, Substitution: c.Substitution}
					hit := false
					for l := range c.Risk.All() {
						sub.Level = l
						if _, m := rs.Evaluate(&sub); m {
							hit = true
							break
						}
					}
					if !hit || c.Opaque {
						ok = false
						break
					}
				}
			}
			if ok {
				matches = append(matches, line)
			} else {
				non = append(non, line)
			}
		}
		return matches, non
	}
	for _, p := range exp.Parts {
		if p.Command != -1 || p.Target == "" || !p.Inside {
			continue
		}
		dir := filepath.ToSlash(filepath.Dir(p.Target))
		for _, t := range []string{p.Target, pathJoin(dir, "other-file"), dir, p.Target + ".bak"} {
			sub := policy.Subject{Tool: a.Tool, Operation: op, Level: p.Level, Root: "/", Target: t}
			line := a.Tool + " " + t
			if _, m := rs.Evaluate(&sub); m {
				matches = append(matches, line)
			} else {
				non = append(non, line)
			}
		}
		other := policy.Subject{Tool: a.Tool + "-other", Operation: op, Level: p.Level, Root: "/", Target: p.Target}
		if _, m := rs.Evaluate(&other); !m {
			non = append(non, other.Tool+" "+p.Target)
		}
		break
	}
	return matches, non
}

func pathJoin(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// grant makes a grant from an approval. For an "always" answer, review (when not nil) is asked
// to confirm the proposal first; without a reviewer or a store it stays a session grant.
func (s *Session) grant(ctx context.Context, a policy.Action, exp gate.Explanation, ans Answer, review func(Proposal) bool) (Grant, error) {
	rules, err := NarrowestRules(a, exp)
	if err != nil {
		return Grant{}, err
	}
	now := time.Now()
	p := s.g.Profile().Profile()
	g := Grant{ID: newGrantID(), Rules: rules, Scope: ans.Scope, Profile: p, ProfileHash: p.Hash(), Created: now,
		MaxUses: ans.MaxUses, By: by(ans), Note: ans.Note}
	if ans.Expires > 0 {
		g.Expires = now.Add(ans.Expires)
	}
	if g.Scope == Always {
		prop := Proposal{Grant: g}
		prop.Matches, prop.NonMatches = preview(a, exp, cloneRules(rules))
		if s.opts.Grants == nil || review == nil || !review(prop) {
			g.Scope = ForSession
			g.Note = strings.TrimPrefix(g.Note+"; kept for the session only (not saved)", "; ")
		}
	}
	if err := s.grants.add(g); err != nil {
		return Grant{}, err
	}
	if g.Scope == Always {
		if err := s.saveAlways(ctx); err != nil {
			s.log.Error("session: always grant not saved", "grant", g.ID, "err", err)
		}
	}
	return g, s.recordGrant(ctx, g, &exp.Decision)
}
