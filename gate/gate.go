package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Options configure a Gate. A nil *Options, and every zero field, means the documented default.
// New copies the options; later changes to them have no effect.
type Options struct {
	// Workspace lists the workspace roots. Targets inside them are "inside"; relative targets are
	// relative to the first. Default: the current working directory. Each root must exist.
	Workspace []string
	// ConfigDir is the user configuration directory reins profiles are loaded from. The gate
	// always protects it, whatever the profile says, so an agent cannot edit its own
	// permissions. Default: os.UserConfigDir()/reins (if the user configuration directory is
	// unknown, none).
	ConfigDir string
	// Audit receives one record per decision, halt and reset. Default: audit.Discard. If a write
	// fails, the decision is Deny.
	Audit audit.Sink
	// Clock returns the current time. Default: time.Now.
	Clock func() time.Time
	// Budget is the spend (in whatever unit the host reports through RecordSpend) after which
	// the gate halts. Default: 0, no budget.
	Budget float64
	// MaxConsecutiveFailures is how many failures in a row of one tool halt the run. Default: 3.
	MaxConsecutiveFailures int
	// Logger receives diagnostics the gate cannot return (a halt record that could not be
	// written). Default: discard; the gate never writes to the global logger.
	Logger *slog.Logger
	// Profiles are named profiles, besides the built-in ones, that SwitchTo can select (loaded
	// from files, say). A name here shadows a built-in profile of the same name.
	Profiles []profile.Profile
	// ConfirmSwitch is asked before a switch to a profile that is not at least as restrictive
	// as the active one (see profile.AtLeastAsRestrictive). Nil means such switches are refused.
	ConfirmSwitch func(ctx context.Context, req SwitchRequest) (bool, error)
	// OnRepeatedFailure says what MaxConsecutiveFailures failures of one tool in a row do:
	// FailuresLatch (the default, the autonomy seed's hard stop) or FailuresDeescalate (the
	// policy spec: step the autonomy down one band).
	OnRepeatedFailure FailurePolicy
}

// Gate decides whether an agent may take an action: ALLOW, DENY or CONFIRM, with obligations.
// It is safe for concurrent use. New starts no goroutines and holds no resources, so a Gate needs
// no Close.
type Gate struct {
	opts     Options
	sink     audit.Sink
	clock    func() time.Time
	log      *slog.Logger
	maxFail  int
	roots    []string
	config   string
	home     string
	tmp      string
	st       atomic.Pointer[state]
	halt     atomic.Pointer[Halt]
	budget   atomic.Uint64 // float64 bits
	spent    atomic.Uint64 // float64 bits
	failMu   sync.Mutex
	failures map[string]int
	repos    repoTrust                 // per-directory answers of repository trust for git (repotrust.go)
	grants   atomic.Pointer[grantHook] // standing grants consulted at the rule layer (grants.go)
	alts     sync.Map                  // profile name -> *state, for Alternatives

	// Operation boundaries and pending profile switches (not on Check's path).
	opMu     sync.Mutex
	inflight int
	pending  *pendingSwitch
	drained  chan struct{}    // closed when a pending switch is applied
	ops      map[*Op]struct{} // operations in flight, for EmergencyStop
}

// state is everything a decision needs from the active profile, derived once per profile.
type state struct {
	prof       *profile.Compiled
	name       string
	band       policy.Band
	mode       profile.Mode
	rules      *policy.RuleSet
	external   profile.ExternalWrites
	execCkpt   bool // checkpoint exec parts (profile.ExecCheckpointsOn)
	ws         *workspace
	prot       *protector
	registries map[string][]string
	hash       string // the profile's content hash, for audit records
	limits     profile.Limits
	sem        *semaphore.Weighted // operations in flight; nil means no limit
	shellCache analysisCache
}

// New returns a gate enforcing profile p (validated and compiled here) with the given options.
func New(p profile.Profile, opts *Options) (*Gate, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Profiles = append([]profile.Profile(nil), o.Profiles...)
	g := &Gate{opts: o, sink: o.Audit, clock: o.Clock, log: o.Logger, maxFail: o.MaxConsecutiveFailures, failures: map[string]int{}}
	if g.sink == nil {
		g.sink = audit.Discard
	}
	if g.clock == nil {
		g.clock = time.Now
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.maxFail == 0 {
		g.maxFail = 3
	}
	if o.OnRepeatedFailure > FailuresDeescalate {
		return nil, fmt.Errorf("gate: OnRepeatedFailure %d is not a known policy", o.OnRepeatedFailure)
	}
	if g.maxFail < 0 {
		return nil, fmt.Errorf("gate: MaxConsecutiveFailures %d is negative", g.maxFail)
	}
	if math.IsNaN(o.Budget) || o.Budget < 0 || math.IsInf(o.Budget, 0) {
		return nil, fmt.Errorf("gate: Budget %v is not a finite, non-negative number", o.Budget)
	}
	g.budget.Store(math.Float64bits(o.Budget))
	g.roots = append([]string(nil), o.Workspace...)
	if len(g.roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("gate: no workspace given and no working directory: %w", err)
		}
		g.roots = []string{wd}
	}
	g.home, _ = os.UserHomeDir()
	g.tmp = os.TempDir()
	g.config = o.ConfigDir
	if g.config == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			g.config = filepath.Join(dir, "reins")
		}
	}
	st, err := g.compile(p)
	if err != nil {
		return nil, err
	}
	g.st.Store(st)
	return g, nil
}

func (g *Gate) compile(p profile.Profile) (*state, error) {
	c, err := p.Compile()
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	ws, err := newWorkspace(g.roots, c.TrustedPaths(), g.home)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	// The profile's two classes, the seeds' six names whatever the profile says, and the user
	// configuration directory, so an agent cannot edit its own permissions.
	lists := fspath.Lists{ReadWrite: c.ProtectedPaths(), Write: c.WriteProtectedPaths()}.WithSeeds()
	if g.config != "" {
		abs, err := filepath.Abs(g.config)
		if err != nil {
			return nil, fmt.Errorf("gate: config directory %q: %w", g.config, err)
		}
		lists.Write = append(lists.Write, filepath.ToSlash(abs))
	}
	prot, err := newProtector(lists, g.home, ws.fs.Roots())
	if err != nil {
		return nil, fmt.Errorf("gate: profile %q: %w", c.Name(), err)
	}
	st := &state{prof: c, name: c.Name(), band: c.Band(), mode: c.Mode(), rules: c.Rules(),
		external: c.ExternalWrites(), ws: ws, prot: prot, registries: c.Registries(), hash: c.Profile().Hash(),
		limits: c.Limits(), execCkpt: c.ExecCheckpoints() == profile.ExecCheckpointsOn}
	if n := st.limits.MaxConcurrentOps; n > 0 {
		st.sem = semaphore.NewWeighted(int64(n))
	}
	return st, nil
}

// Profile returns the active compiled profile.
func (g *Gate) Profile() *profile.Compiled { return g.st.Load().prof }

// Check decides whether action a may happen, records the decision in the audit sink, and returns
// it. It walks the decision order: halted, hard stops, protected paths, permission mode, the
// profile's rules, the autonomy matrix; the first layer that decides wins, and a compound action
// takes the strictest outcome of its parts.
//
// A non-nil error always comes with a Deny: the context was done, or the decision could not be
// recorded. A Deny for policy reasons is a decision, not an error; so is the Deny of an
// operation whose context EmergencyStop cancelled before its Check (recorded, LayerHalted).
func (g *Gate) Check(ctx context.Context, a policy.Action) (Decision, error) {
	return g.check(ctx, g.st.Load(), a)
}

func (g *Gate) check(ctx context.Context, st *state, a policy.Action) (Decision, error) {
	now := g.clock()
	id := newV7(now)
	var d Decision
	var latch *Halt
	if err := ctx.Err(); err == nil {
		d, latch = g.decide(st, &a, nil)
	} else if errors.Is(context.Cause(ctx), ErrEmergencyStop) {
		// An emergency stop cancelled the operation before its decision: that is the halt's
		// Deny (even if a reset has come since), recorded like every decision.
		ctx = context.WithoutCancel(ctx)
		d = Decision{Verdict: policy.Deny, Layer: policy.LayerHalted, RuleID: CheckHalted, Profile: st.name,
			Reason: "the run is halted: an emergency stop cancelled the operation before its decision"}
	} else {
		d := Decision{Verdict: policy.Deny, Layer: policy.LayerInput, RuleID: CheckContext, Reason: "context done before the decision",
			Profile: st.name, DecisionID: id, CorrelationID: correlation(a, id)}
		return d, fmt.Errorf("gate: check %q: %w", a.Tool, err)
	}
	d.DecisionID, d.CorrelationID = id, correlation(a, id)
	if latch != nil {
		latch.Time = now
		g.latch(ctx, latch, st.name)
	}
	rec := audit.Record{
		Time: now, CorrelationID: d.CorrelationID, Profile: st.name, Operation: string(a.Operation),
		Decision: d.Verdict, RuleMatched: d.RuleID, Kind: audit.KindDecision, DecisionID: d.DecisionID,
		Layer: d.Layer, DecidedBy: audit.DecidedByLayer(d.Layer), Reason: d.Reason,
		Obligations: d.Obligations, Risk: d.Risk, ProfileHash: st.hash,
		Tool: a.Tool, Command: a.Command, Host: a.Host, Targets: a.Targets,
	}
	if len(a.Targets) > 0 {
		rec.Target = a.Targets[0]
	}
	if a.Input != "" {
		rec.Input = cutInput(a.Input)
	}
	if err := g.sink.Write(ctx, rec); err != nil {
		d.Verdict, d.Obligations, d.Layer, d.RuleID = policy.Deny, 0, policy.LayerAudit, CheckAudit
		d.Reason = "the decision could not be recorded: " + err.Error()
		return d, fmt.Errorf("gate: check %q: recording the decision: %w", a.Tool, err)
	}
	return d, nil
}

func correlation(a policy.Action, id [16]byte) [16]byte {
	if a.CorrelationID != [16]byte{} {
		return a.CorrelationID
	}
	return id
}

// cutInput bounds the tool input an audit record keeps (policy.MaxInput bytes, cut at a rune
// boundary and marked).
func cutInput(in string) string {
	if len(in) <= policy.MaxInput {
		return in
	}
	n := policy.MaxInput
	for n > 0 && !utf8.RuneStart(in[n]) {
		n--
	}
	return in[:n] + "…[cut]"
}
