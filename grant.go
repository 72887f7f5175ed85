package reins

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// Scope is how far an approval reaches.
type Scope uint8

// The scopes. The zero Scope is Once.
const (
	// Once approves this action only.
	Once Scope = iota
	// ForSession approves this action and those the same narrow grant covers, for the rest of the
	// run (see Grant).
	ForSession
	// Always does the same, and keeps the grant in Options.Grants (a store that outlives the
	// run) after the approver has seen the proposed grant and a preview of what it would and
	// would not match.
	Always
)

// String returns "once", "session" or "always".
func (s Scope) String() string {
	switch s {
	case Once:
		return "once"
	case ForSession:
		return "session"
	case Always:
		return "always"
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// Grant is a standing answer to a CONFIRM: exactly what a human approved, no wider. For a
// command line it covers that line as written (wrappers included: a grant for `go test ./...`
// does not cover `nice go test ./...` or `go test ./... && x`), in the working directory where
// it was approved, with the environment assignments it was approved with; its rules say which
// parts it answers (the literal argument vector and exact text of each simple command asked
// about). For a file action it covers the exact targets asked about; for a network action the
// exact host; always with the tool, the operation type and the risk levels.
//
// The gate consults grants at the rule layer and only for parts its rules and matrix would
// CONFIRM (see gate.GrantSource): a grant never outranks the halt latch, hard stops, protected
// paths or the permission mode, and never turns a DENY into an ALLOW. A grant made under one
// profile applies under that profile and under profiles at most as restrictive, not under a
// more restrictive one. A grant's use count is kept with it in its store and updated atomically,
// so a grant limited to two uses allows two actions in all, across runs and processes.
type Grant struct {
	ID    string        `json:"id"`
	Rules []policy.Rule `json:"rules"`
	Scope Scope         `json:"scope"`
	// Line, Dir and Env are the command line as approved, the directory it ran in and its
	// environment assignments (set for a grant that covers a command; empty otherwise).
	Line string   `json:"line,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	Env  []string `json:"env,omitempty"`
	// Profile is the profile the grant was made under; ProfileHash its content hash.
	Profile     profile.Profile `json:"profile"`
	ProfileHash string          `json:"profile_hash"`
	Created     time.Time       `json:"created"`
	// Expires, when not zero, ends the grant.
	Expires time.Time `json:"expires,omitzero"`
	// MaxUses, when not zero, ends the grant after that many actions.
	MaxUses int `json:"max_uses,omitempty"`
	// Used counts the actions the grant allowed.
	Used int    `json:"used,omitempty"`
	By   string `json:"by,omitempty"`
	Note string `json:"note,omitempty"`
}

// ErrBroadGrant is matched by the error of a grant broader than any grant reins makes: a rule
// that matches every action of its kind, a pattern, a bare program name, a command rule without
// the line it was approved for. Stores refuse such grants, so a grant file edited by hand (or
// by an agent) cannot widen what a human approved.
var ErrBroadGrant = errors.New("reins: grant broader than an approval")

// Validate reports whether g is a grant reins could have made from an approval: every rule an
// ALLOW of one operation type and explicit risk levels, naming an exact command (its argument
// vector and its anchored literal text, within the grant's line), an exact target or an exact
// host; the tool a literal name. The error matches ErrBroadGrant and names the grant and rule.
func (g *Grant) Validate() error {
	bad := func(i int, format string, args ...any) error {
		where := "grant " + strconv.Quote(g.ID)
		if i >= 0 {
			where += " rule " + strconv.Itoa(i+1)
		}
		return fmt.Errorf("%w: %s: %s", ErrBroadGrant, where, fmt.Sprintf(format, args...))
	}
	switch {
	case g.ID == "":
		return bad(-1, "it has no id")
	case len(g.Rules) == 0:
		return bad(-1, "it has no rules")
	case g.Scope > Always:
		return bad(-1, "unknown scope %d", g.Scope)
	case g.MaxUses < 0 || g.Used < 0:
		return bad(-1, "negative use count")
	}
	for _, kv := range g.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return bad(-1, "environment entry %q is not KEY=VALUE", kv)
		}
	}
	for i := range g.Rules {
		r := &g.Rules[i]
		c := &r.Condition
		if r.Action != policy.Allow {
			return bad(i, "a grant only allows (action %s)", r.Action)
		}
		if r.Obligations != 0 {
			return bad(i, "a grant adds no obligations")
		}
		if len(c.OperationType) != 1 {
			return bad(i, "it must name exactly one operation type")
		}
		if c.Risk.Levels.Empty() || c.Risk.Severities != 0 {
			return bad(i, "it must name its risk levels, and no severities")
		}
		if len(c.Tools) > 1 || len(c.Tools) == 1 && !literalGlob(c.Tools[0]) {
			return bad(i, "the tool must be one literal name")
		}
		if len(c.Providers) > 0 || len(c.Surfaces) > 0 {
			return bad(i, "a grant does not condition on providers or surfaces")
		}
		kinds := 0
		if len(c.Commands) > 0 || c.CommandPattern != "" {
			text, ok := anchoredLiteral(c.CommandPattern)
			if !ok || text == "" {
				return bad(i, "a command must be given as its anchored literal text (^...$), not %q", c.CommandPattern)
			}
			if len(c.Commands) != 1 {
				return bad(i, "a command must be given as exactly one argument vector")
			}
			for _, tok := range strings.Fields(strings.TrimSuffix(c.Commands[0], " >")) {
				if strings.HasPrefix(tok, "@") || tok == "$()" {
					return bad(i, "the argument %q is a reference or a pattern", tok)
				}
			}
			if g.Line == "" || !strings.Contains(g.Line, text) {
				return bad(i, "the command %q is not part of the line the grant was approved for (%q)", text, g.Line)
			}
			kinds++
		}
		if c.TargetPattern != "" {
			switch {
			case !literalGlob(c.TargetPattern):
				return bad(i, "the target must be a literal path, not the pattern %q", c.TargetPattern)
			case c.TargetPattern == "." || c.TargetPattern == "/" || c.TargetPattern == "~" || c.TargetPattern == "~/":
				return bad(i, "the target %q is a whole tree", c.TargetPattern)
			}
			kinds++
		} else if c.OutsideWorkspace {
			return bad(i, "outside_workspace without a target matches every outside path")
		}
		if len(c.Hosts) > 0 {
			if len(c.Hosts) != 1 || !literalGlob(c.Hosts[0]) || strings.HasPrefix(c.Hosts[0], "@") || c.Hosts[0] == "" {
				return bad(i, "the host must be one literal name")
			}
			kinds++
		}
		if kinds == 0 {
			return bad(i, "it names no command, target or host, so it would match every %s action", c.OperationType[0])
		}
	}
	return nil
}

// literalGlob reports whether a doublestar pattern matches only itself: every metacharacter is
// escaped.
func literalGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[', ']', '{', '}', '!':
			return false
		}
	}
	return true
}

// anchoredLiteral returns the text an anchored regular expression ^...$ matches when it matches
// exactly one literal string (regexp.QuoteMeta's output between the anchors).
func anchoredLiteral(p string) (string, bool) {
	if len(p) < 2 || p[0] != '^' || p[len(p)-1] != '$' {
		return "", false
	}
	inner := p[1 : len(p)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c == '\\' {
			if i+1 == len(inner) {
				return "", false
			}
			i++
			b.WriteByte(inner[i])
			continue
		}
		if strings.IndexByte(`.+*?()|[]{}^$`, c) >= 0 {
			return "", false
		}
		b.WriteByte(c)
	}
	text := b.String()
	return text, regexp.QuoteMeta(text) == inner
}

// valid reports whether g still applies at now: not expired, not used up.
func (g *Grant) valid(now time.Time) bool {
	if !g.Expires.IsZero() && !now.Before(g.Expires) {
		return false
	}
	return g.MaxUses == 0 || g.Used < g.MaxUses
}

// sameGrant reports whether b would replace a: the same scope, profile, line, directory,
// environment and rules.
func sameGrant(a, b *Grant) bool {
	if a.Scope != b.Scope || a.ProfileHash != b.ProfileHash || a.Line != b.Line || a.Dir != b.Dir ||
		!slices.Equal(a.Env, b.Env) || len(a.Rules) != len(b.Rules) {
		return false
	}
	for i := range a.Rules {
		x, y := a.Rules[i].Clone(), b.Rules[i].Clone()
		x.ID, y.ID, x.Reason, y.Reason = "", "", "", ""
		if fmt.Sprint(x) != fmt.Sprint(y) {
			return false
		}
	}
	return true
}

// grantOf returns the grant id of a grant rule's id ("grant:<id>" or "grant:<id>#<n>").
func grantOf(ruleID string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(ruleID, gate.CheckGrantPrefix), "#")
	return id
}

// ruleIDs names a grant's rules after the grant ("grant:<id>", "grant:<id>#1", ...) and makes
// them ALLOW rules.
func (g *Grant) ruleIDs() {
	for i := range g.Rules {
		g.Rules[i].ID, g.Rules[i].Action = gate.CheckGrantPrefix+g.ID, policy.Allow
		if i > 0 {
			g.Rules[i].ID += "#" + strconv.Itoa(i)
		}
	}
}

func newGrantID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "g" + hex.EncodeToString(b[:])
}

// grantIndex answers the gate (gate.GrantSource) from the grants of one or two states: the
// run's (session grants) and the grants store's (always grants). It is built once per pair of
// revisions and is immutable; the rule set of the grants that apply under a profile is compiled
// once per profile hash.
type grantIndex struct {
	runRev, keptRev uint64
	asks            *policy.RuleSet // the managed tier's CONFIRM rules (managed.go); nil for none
	grants          []*indexedGrant
	perProf         sync.Map // profile hash -> []*indexedGrant that apply
	now             func() time.Time
}

type indexedGrant struct {
	g    Grant
	kept bool // in the grants store (always), not the run's
	rs   *policy.RuleSet
}

func newGrantIndex(run, kept *RunState, now func() time.Time) *grantIndex {
	ix := &grantIndex{now: now}
	if run != nil {
		ix.runRev = run.Rev
	}
	if kept != nil {
		ix.keptRev = kept.Rev
	}
	add := func(s *RunState, isKept bool) {
		if s == nil {
			return
		}
		for _, g := range s.Grants {
			rs, err := policy.Compile(g.Rules, nil)
			if err != nil {
				continue // a store validates what it keeps; a grant that does not compile allows nothing
			}
			ix.grants = append(ix.grants, &indexedGrant{g: g, kept: isKept, rs: rs})
		}
	}
	add(run, false)
	add(kept, true)
	return ix
}

// applies reports whether a grant made under gp applies under the profile of scope: the same
// profile, or one at most as restrictive.
func applies(g *Grant, scope *gate.GrantScope) bool {
	if g.ProfileHash == scope.Hash {
		return true
	}
	if scope.Profile == nil {
		return false
	}
	ok, _ := profile.AtLeastAsRestrictive(g.Profile, scope.Profile.Profile())
	return ok
}

// MatchGrant implements gate.GrantSource: the first grant (run grants first, then kept ones, in
// the order they were made) that applies under the scope's profile, was approved for this line,
// directory and environment, is still valid, and whose rules cover the part; none for a part a
// CONFIRM rule of the managed tier matches.
func (ix *grantIndex) MatchGrant(scope gate.GrantScope, sub policy.Subject) (string, string, bool) {
	if len(ix.grants) == 0 {
		return "", "", false
	}
	if ix.asks != nil {
		if _, ok := ix.asks.Evaluate(&sub); ok {
			return "", "", false // a managed CONFIRM rule asks: no grant answers for the human
		}
	}
	var list []*indexedGrant
	if v, ok := ix.perProf.Load(scope.Hash); ok {
		list = v.([]*indexedGrant)
	} else {
		for _, ig := range ix.grants {
			if applies(&ig.g, &scope) {
				list = append(list, ig)
			}
		}
		ix.perProf.Store(scope.Hash, list)
	}
	now := ix.now()
	for _, ig := range list {
		g := &ig.g
		if g.Line != scope.Line || g.Line != "" && (g.Dir != scope.Dir || !sameEnv(g.Env, scope.Env)) || !g.valid(now) {
			continue
		}
		if m, ok := ig.rs.Evaluate(&sub); ok {
			return m.Rule.ID, m.Rule.Reason, true
		}
	}
	return "", "", false
}

// sameEnv reports whether two lists of assignments hold the same assignments.
func sameEnv(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if slices.Equal(a, b) {
		return true
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// ErrNotGrantable reports that no narrow grant can cover an action (an opaque command, a word
// the rule language cannot express): the approval holds for this action only.
var ErrNotGrantable = errors.New("reins: no narrow grant covers this action")

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
	// (so the same words with more arguments are not covered; the grant's line does the rest).
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
		if c.TargetPattern == "" && len(c.Hosts) == 0 {
			// Nothing narrows it: a grant without a target, host or command would match every
			// action of its kind.
			if a.Command != "" {
				continue
			}
			return nil, fmt.Errorf("%w: the action names no target, host or command", ErrNotGrantable)
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

// Proposal is a grant before it is kept: the grant, and what it would and would not match,
// decided by the grant's own matcher (not guessed).
type Proposal struct {
	Grant Grant
	// Matches and NonMatches are sample actions, described on one line each. NonMatches lists
	// the near misses a human would ask about: the same line under each wrapper, in another
	// directory, chained with another command, with another environment.
	Matches, NonMatches []string
}

// previewWrappers are the prefixes that run a command in another way; a grant never covers
// them.
var previewWrappers = []string{"nice ", "timeout 60 ", "nohup ", "command ", "setsid ", "env -i ", "stdbuf -oL ",
	"taskset 1 ", "exec ", "sudo ", "xargs "}

// preview builds the proposal's samples: variants of the approved action, each decided by the
// grant the way the gate would ask it (its line, directory and environment, then its rules on
// every part).
func preview(a policy.Action, g Grant, prof *profile.Compiled) (matches, non []string) {
	g.ruleIDs()
	ix := newGrantIndex(&RunState{Grants: []Grant{g}}, nil, time.Now)
	scope := gate.GrantScope{Profile: prof, Hash: g.ProfileHash, Line: g.Line, Dir: g.Dir, Env: g.Env}
	op := a.Operation.Canonical()
	if a.Command != "" {
		type cand struct {
			line, dir string
			env       []string
			what      string
		}
		var cands []cand
		add := func(line, what string) { cands = append(cands, cand{line, g.Dir, g.Env, what}) }
		add(a.Command, "")
		add(a.Command+" --extra-flag", "")
		for _, w := range previewWrappers {
			add(w+a.Command, "")
		}
		add(a.Command+" > out.txt", "")
		add(a.Command+" && rm -rf ~", "")
		add("cd /tmp && "+a.Command, "")
		add("other-program "+a.Command, "")
		cands = append(cands, cand{a.Command, filepath.Dir(g.Dir), g.Env, " (in " + filepath.Dir(g.Dir) + ")"})
		cands = append(cands, cand{a.Command, g.Dir, append(slices.Clone(g.Env), "LD_PRELOAD=/tmp/x.so"), " (with LD_PRELOAD=/tmp/x.so)"})
		for _, c := range cands {
			an, err := shell.Analyze(c.line, nil)
			ok := err == nil && an != nil && len(an.Commands) > 0
			sc := scope
			sc.Line, sc.Dir, sc.Env = c.line, c.dir, c.env
			if ok {
				for _, cmd := range an.Commands {
					sub := policy.Subject{Tool: a.Tool, Operation: op, Command: cmd.Text, Argv: cmd.Argv, Line: c.line,
						Redirects: cmd.Redirects, Substitution: cmd.Substitution, Elevated: cmd.Elevated}
					hit := false
					for l := range cmd.Risk.All() {
						sub.Level = l
						if _, _, m := ix.MatchGrant(sc, sub); m {
							hit = true
							break
						}
					}
					if !hit || cmd.Opaque {
						ok = false
						break
					}
				}
			}
			if ok {
				matches = append(matches, c.line+c.what)
			} else {
				non = append(non, c.line+c.what)
			}
		}
		return matches, non
	}
	for _, r := range g.Rules {
		if r.Condition.TargetPattern == "" {
			continue
		}
		target := unescapeGlob(r.Condition.TargetPattern)
		dir := filepath.ToSlash(filepath.Dir(target))
		lv := r.Condition.Risk.Levels
		var level risk.Level
		for l := range lv.All() {
			level = l
			break
		}
		for _, t := range []string{target, pathJoin(dir, "other-file"), dir, target + ".bak"} {
			sub := policy.Subject{Tool: a.Tool, Operation: op, Level: level, Root: "/", Target: t}
			line := a.Tool + " " + t
			if _, _, m := ix.MatchGrant(scope, sub); m {
				matches = append(matches, line)
			} else {
				non = append(non, line)
			}
		}
		other := policy.Subject{Tool: a.Tool + "-other", Operation: op, Level: level, Root: "/", Target: target}
		if _, _, m := ix.MatchGrant(scope, other); !m {
			non = append(non, other.Tool+" "+target)
		}
		break
	}
	return matches, non
}

func unescapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func pathJoin(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
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
