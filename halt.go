package reins

import (
	"context"
	"errors"
	"fmt"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// ErrEmergencyStop is the cause (context.Cause) of the contexts EmergencyStop cancels.
var ErrEmergencyStop = errors.New("reins: emergency stop")

// Halted returns the latched hard stop, if any. A run state that cannot be read counts as
// halted (the run denies everything until it can be read again).
func (r *Run) Halted(ctx context.Context) (gate.Halt, bool) {
	s, err := r.store.Load(ctx)
	if err != nil {
		return gate.Halt{Cause: gate.CauseManual, Reason: "the run state could not be read: " + err.Error()}, true
	}
	if s.Halt != nil {
		return *s.Halt, true
	}
	return gate.Halt{}, false
}

// latch latches h unless a halt is already latched (the first cause wins), and records it. It
// reports whether this call latched it.
func (r *Run) latch(ctx context.Context, h gate.Halt) bool {
	if h.Time.IsZero() {
		h.Time = r.clock.Now()
	}
	latched := false
	_, err := r.store.Update(context.WithoutCancel(ctx), func(s *RunState) error {
		latched = s.Halt == nil
		if latched {
			hh := h
			s.Halt = &hh
		}
		return nil
	})
	if err != nil {
		r.log.Error("reins: the halt could not be stored", "cause", h.Cause, "err", err)
		return false
	}
	if latched {
		r.recordHalt(ctx, h)
	}
	return latched
}

// recordHalt writes the record of a halt that latched.
func (r *Run) recordHalt(ctx context.Context, h gate.Halt) {
	rec := audit.Record{Time: h.Time, Kind: audit.KindHalt, Decision: policy.Deny, RuleMatched: h.Cause.CheckID(),
		Layer: policy.LayerHardStop, DecidedBy: audit.DecidedByHardStop, Reason: h.Reason}
	if err := r.record(ctx, rec); err != nil {
		// The halt holds regardless: failing to record it must not un-halt the run.
		r.log.Error("reins: halt record could not be written", "cause", h.Cause, "err", err)
	}
}

// Latch latches a hard stop with the given cause, as a host-side meter or monitor reports it
// (a sandbox escape seen elsewhere, a cause of the host's own). It reports whether this call
// latched it: false when a halt was already latched (the first cause wins) or the store could
// not be updated.
func (r *Run) Latch(ctx context.Context, cause gate.Cause, reason string) bool {
	return r.latch(ctx, gate.Halt{Cause: cause, Reason: reason})
}

// Halt latches a manual hard stop: every decision is denied until Reset.
func (r *Run) Halt(ctx context.Context, reason string) {
	r.latch(ctx, gate.Halt{Cause: gate.CauseManual, Reason: reason})
}

// EmergencyStop stops the run from any goroutine: it latches the emergency-stop halt, so every
// new decision is a Deny until Reset, and cancels the context of every operation in flight
// (context.Cause reports ErrEmergencyStop), so work that honours its context stops too. It is
// recorded like any halt. Calling it again while halted cancels operations begun since. Runs
// that share the store and watch it (see Watcher) cancel their operations too.
func (r *Run) EmergencyStop(ctx context.Context, reason string) {
	r.latch(ctx, gate.Halt{Cause: gate.CauseEmergency, Reason: "emergency stop: " + reason})
	r.cancelOps()
}

// RecordViolation reports a sandbox escape signal (a violation a sandbox observed). It halts the
// run at once.
func (r *Run) RecordViolation(ctx context.Context, detail string) {
	r.latch(ctx, gate.Halt{Cause: gate.CauseSandboxEscape, Reason: "sandbox escape signal: " + detail})
}

// Reset clears a latched hard stop, the tool failure counts and every exhausted meter (each
// meter's count starts again, its limit kept), and records who reset it and why. Reset returns
// the store's or the audit sink's error, if any.
func (r *Run) Reset(ctx context.Context, reason string) error {
	now := r.clock.Now()
	var prev *gate.Halt
	var meters []string
	_, err := r.store.Update(ctx, func(s *RunState) error {
		prev, meters = s.Halt, meters[:0]
		s.Halt = nil
		clear(s.Failures)
		for n, m := range s.Meters {
			if m.Exhausted {
				m.Used, m.Warned, m.Exhausted, m.Reason = 0, false, false, ""
				if n == MeterWallTime {
					m.Start = now
				}
				s.Meters[n] = m
				meters = append(meters, n)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reins: reset: %w", err)
	}
	for _, n := range meters {
		if err := r.record(ctx, audit.Record{Kind: audit.KindBudget, Decision: policy.Allow, DecidedBy: audit.DecidedByUser,
			UserOverride: true, RuleMatched: "budget:" + n + ":reset", Reason: "meter " + n + " reset: " + reason}); err != nil {
			return err
		}
	}
	rec := audit.Record{Time: now, Kind: audit.KindReset, Decision: policy.Allow, RuleMatched: gate.CheckReset,
		Layer: policy.LayerHalted, DecidedBy: audit.DecidedByUser, Reason: reason, UserOverride: true}
	if prev != nil {
		rec.Reason = fmt.Sprintf("%s (was halted: %s)", reason, prev.Reason)
	}
	return r.record(ctx, rec)
}

// RecordResult reports how a tool call that Check allowed ended, for hosts that run their tools
// themselves (Do calls it on its own): it records the outcome of decision d, and counts the
// failure. A nil err is a success and clears the tool's failure count; MaxConsecutiveFailures
// failures of one tool in a row halt the run (or step its autonomy down; see
// Options.OnRepeatedFailure).
func (r *Run) RecordResult(ctx context.Context, a policy.Action, d gate.Decision, err error) error {
	r.countResult(ctx, a.Tool, err)
	rec := audit.Record{Kind: audit.KindOutcome, Decision: d.Verdict, DecidedBy: audit.DecidedByLayer(d.Layer),
		Outcome: audit.OutcomeSucceeded}
	if err != nil {
		rec.Outcome, rec.Error = audit.OutcomeFailed, err.Error()
	}
	return r.recordAbout(ctx, r.act.Load(), a, d, rec)
}

// countResult keeps the tool's failure count in the store: a success clears it; the
// MaxConsecutiveFailures-th failure in a row latches the tool-failures hard stop in the same
// update (or de-escalates).
func (r *Run) countResult(ctx context.Context, tool string, ferr error) {
	s, err := r.store.Load(ctx) // a done ctx fails the load: then the update below decides
	if err == nil && ferr == nil && s.Failures[tool] == 0 {
		return // nothing to clear: no write
	}
	ctx = context.WithoutCancel(ctx)
	now := r.clock.Now()
	deesc := r.opts.OnRepeatedFailure == FailuresDeescalate
	var n int
	var latched bool
	reason := ""
	_, err = r.store.Update(ctx, func(s *RunState) error {
		latched = false
		if ferr == nil {
			delete(s.Failures, tool)
			return nil
		}
		if s.Failures == nil {
			s.Failures = map[string]int{}
		}
		s.Failures[tool]++
		n = s.Failures[tool]
		if n >= r.maxFail && !deesc && s.Halt == nil {
			reason = fmt.Sprintf("tool %q failed %d times in a row (last: %v)", tool, n, ferr)
			s.Halt = &gate.Halt{Cause: gate.CauseToolFailures, Reason: reason, Time: now}
			latched = true
		}
		return nil
	})
	if err != nil {
		r.log.Error("reins: the failure count could not be stored", "tool", tool, "err", err)
		return
	}
	if latched {
		r.recordHalt(ctx, gate.Halt{Cause: gate.CauseToolFailures, Reason: reason, Time: now})
	}
	if deesc && ferr != nil && n >= r.maxFail {
		if !r.deescalate(ctx, tool, n, ferr) {
			r.latch(ctx, gate.Halt{Cause: gate.CauseToolFailures, Reason: fmt.Sprintf("tool %q failed %d times in a row (last: %v)", tool, n, ferr), Time: now})
		}
	}
}

// deescalate switches to the active profile with its autonomy one band lower. It reports false
// when there is no lower band (the caller latches instead) or the switch was refused.
func (r *Run) deescalate(ctx context.Context, tool string, n int, cause error) bool {
	p := r.target()
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
	if _, err := r.SwitchProfile(ctx, p); err != nil {
		r.log.Error("reins: de-escalation refused", "err", err)
		return false
	}
	_, err = r.store.Update(ctx, func(s *RunState) error {
		delete(s.Failures, tool)
		return nil
	})
	return err == nil
}
