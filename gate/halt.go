package gate

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

// Cause says why the gate halted.
type Cause string

// The hard stops of the autonomy seed, plus a manual halt.
const (
	CauseBudget        Cause = "budget"         // the reported spend exceeded the budget
	CauseSandboxEscape Cause = "sandbox_escape" // a sandbox reported a violation
	CauseToolFailures  Cause = "tool_failures"  // a tool failed MaxConsecutiveFailures times in a row
	CauseExternalWrite Cause = "external_write" // an action would write outside the workspace
	CauseManual        Cause = "manual"         // the host called Halt
	CauseEmergency     Cause = "emergency_stop" // the host called EmergencyStop
)

// FailurePolicy says what repeated failures of one tool do (Options.OnRepeatedFailure).
type FailurePolicy uint8

// The failure policies.
const (
	// FailuresLatch latches the tool-failures hard stop (the autonomy seed). The default.
	FailuresLatch FailurePolicy = iota
	// FailuresDeescalate steps the autonomy down one band (autonomous to trusted, trusted to
	// supervised) through a profile switch, which takes effect at the next operation boundary
	// and is recorded like any switch; the tool's failure count starts again. A run that is
	// already supervised has nowhere to step down to, and latches the hard stop instead.
	FailuresDeescalate
)

// Halt describes a latched hard stop. While one is latched, every Check is a Deny until Reset.
type Halt struct {
	Cause  Cause
	Reason string
	Time   time.Time
}

// Halted returns the latched hard stop, if any.
func (g *Gate) Halted() (Halt, bool) {
	if h := g.halt.Load(); h != nil {
		return *h, true
	}
	return Halt{}, false
}

// latch records h as the gate's halt unless one is already latched (the first cause wins).
func (g *Gate) latch(ctx context.Context, h *Halt, profileName string) {
	if h.Time.IsZero() {
		h.Time = g.clock()
	}
	if !g.halt.CompareAndSwap(nil, h) {
		return
	}
	rec := audit.Record{Time: h.Time, Kind: audit.KindHalt, DecisionID: newV7(h.Time), Profile: profileName,
		Decision: policy.Deny, RuleMatched: h.Cause.CheckID(), Layer: policy.LayerHardStop,
		DecidedBy: audit.DecidedByHardStop, Reason: h.Reason}
	rec.CorrelationID = rec.DecisionID
	if err := g.sink.Write(ctx, rec); err != nil {
		// The halt holds regardless: failing to record it must not un-halt the run.
		g.log.Error("gate: halt record could not be written", "cause", h.Cause, "err", err)
	}
}

// Latch latches a hard stop with the given cause, as a host-side meter or monitor reports it
// (a budget meter, a sandbox escape seen elsewhere). It reports whether this call latched it:
// false when a halt was already latched (the first cause wins).
func (g *Gate) Latch(ctx context.Context, cause Cause, reason string) bool {
	h := &Halt{Cause: cause, Reason: reason}
	g.latch(ctx, h, g.st.Load().name)
	return g.halt.Load() == h
}

// Halt latches a manual hard stop: every Check is denied until Reset.
func (g *Gate) Halt(ctx context.Context, reason string) {
	g.latch(ctx, &Halt{Cause: CauseManual, Reason: reason}, g.st.Load().name)
}

// Reset clears a latched hard stop and the tool failure counts, and records who reset it and
// why. The reported spend is kept: if it still exceeds the budget, the next Check halts again
// (raise the budget with SetBudget first). Reset returns the audit sink's error, if any; the
// halt is cleared even then, since the host asked for it explicitly.
func (g *Gate) Reset(ctx context.Context, reason string) error {
	prev := g.halt.Swap(nil)
	g.failMu.Lock()
	clear(g.failures)
	g.failMu.Unlock()
	now := g.clock()
	rec := audit.Record{Time: now, Kind: audit.KindReset, DecisionID: newV7(now), Profile: g.st.Load().name,
		Decision: policy.Allow, RuleMatched: CheckReset, Layer: policy.LayerHalted, DecidedBy: audit.DecidedByUser,
		Reason: reason, UserOverride: true}
	rec.CorrelationID = rec.DecisionID
	if prev != nil {
		rec.Reason = fmt.Sprintf("%s (was halted: %s)", reason, prev.Reason)
	}
	return g.sink.Write(ctx, rec)
}

// RecordSpend adds cost to the run's spend. When the spend exceeds a non-zero budget the gate
// halts. cost must be a finite, non-negative number.
func (g *Gate) RecordSpend(ctx context.Context, cost float64) error {
	if math.IsNaN(cost) || math.IsInf(cost, 0) || cost < 0 {
		return fmt.Errorf("gate: RecordSpend: cost %v is not a finite, non-negative number", cost)
	}
	for {
		old := g.spent.Load()
		if g.spent.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+cost)) {
			break
		}
	}
	if b := g.budgetValue(); b > 0 && g.spentValue() > b {
		g.latch(ctx, &Halt{Cause: CauseBudget, Reason: fmt.Sprintf("budget exceeded: spent %g of %g", g.spentValue(), b)}, g.st.Load().name)
	}
	return nil
}

// SetBudget replaces the budget (0 removes it). It does not clear a latched halt; see Reset.
func (g *Gate) SetBudget(budget float64) error {
	if math.IsNaN(budget) || math.IsInf(budget, 0) || budget < 0 {
		return fmt.Errorf("gate: SetBudget: %v is not a finite, non-negative number", budget)
	}
	g.budget.Store(math.Float64bits(budget))
	return nil
}

// Spent returns the spend reported so far.
func (g *Gate) Spent() float64 { return g.spentValue() }

func (g *Gate) budgetValue() float64 { return math.Float64frombits(g.budget.Load()) }
func (g *Gate) spentValue() float64  { return math.Float64frombits(g.spent.Load()) }

// RecordResult reports how a tool call ended. A nil err is a success and clears the tool's
// failure count; MaxConsecutiveFailures failures of one tool in a row halt the gate.
func (g *Gate) RecordResult(ctx context.Context, tool string, err error) {
	g.failMu.Lock()
	if err == nil {
		delete(g.failures, tool)
		g.failMu.Unlock()
		return
	}
	g.failures[tool]++
	n := g.failures[tool]
	g.failMu.Unlock()
	if n >= g.maxFail && g.opts.OnRepeatedFailure == FailuresDeescalate && g.deescalate(ctx, tool, n, err) {
		return
	}
	if n >= g.maxFail {
		g.latch(ctx, &Halt{Cause: CauseToolFailures, Reason: fmt.Sprintf("tool %q failed %d times in a row (last: %v)", tool, n, err)}, g.st.Load().name)
	}
}

// RecordViolation reports a sandbox escape signal (a violation a sandbox observed). It halts the
// gate at once.
func (g *Gate) RecordViolation(ctx context.Context, detail string) {
	g.latch(ctx, &Halt{Cause: CauseSandboxEscape, Reason: "sandbox escape signal: " + detail}, g.st.Load().name)
}

// deescalate switches to the active profile with its autonomy one band lower. It reports false
// when there is no lower band (the caller latches instead) or the switch was refused.
func (g *Gate) deescalate(ctx context.Context, tool string, n int, cause error) bool {
	p := g.target()
	band, err := policy.BandOf(p.Autonomy)
	if err != nil || band == policy.BandSupervised {
		return false
	}
	lower := policy.BandSupervised
	if band == policy.BandAutonomous {
		lower = policy.BandTrusted
	}
	p.Autonomy = lower.Dial()
	p.Description = fmt.Sprintf("%s (de-escalated to %s after tool %q failed %d times in a row: %v)", p.Description, lower, tool, n, cause)
	if _, err := g.SwitchProfile(ctx, p); err != nil {
		g.log.Error("gate: de-escalation refused", "err", err)
		return false
	}
	g.failMu.Lock()
	delete(g.failures, tool)
	g.failMu.Unlock()
	return true
}
