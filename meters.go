package reins

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// Conventional meter names. MeterWallTime and MeterActions are measured by the run itself
// (seconds since the meter started, and actions admitted); the others are reported by the host
// through Use.
const (
	MeterCost     = "cost"
	MeterTokens   = "tokens"
	MeterWallTime = "wall_time"
	MeterActions  = "actions"
)

// DefaultWarnAt is the fraction of a meter's limit at which the warning is given.
const DefaultWarnAt = 0.8

// Meter is one budget: a named quantity with a limit. Reaching the limit latches the run's
// budget hard stop (every decision is a Deny until the meter is reset); passing WarnAt times
// the limit first sends one warning notice. The actions meter is an admission budget: an action
// that would take it past its limit is denied before it runs, so a budget shared by several
// runs is never overspent.
type Meter struct {
	Name  string  `json:"name"`
	Limit float64 `json:"limit"`
	// WarnAt is the warning fraction, in (0, 1]. Default DefaultWarnAt.
	WarnAt float64 `json:"warn_at"`
}

// MeterStatus is a meter's state.
type MeterStatus struct {
	Meter
	Used      float64 `json:"used"`
	Warned    bool    `json:"warned,omitempty"`
	Exhausted bool    `json:"exhausted,omitempty"`
	// Reason says why it is exhausted.
	Reason string `json:"reason,omitempty"`
	// Start is when the wall-time meter started counting.
	Start time.Time `json:"start,omitzero"`
}

func validMeter(m *Meter) error {
	if m.Name == "" {
		return fmt.Errorf("reins: a meter has no name")
	}
	if !(m.Limit > 0) || math.IsInf(m.Limit, 0) {
		return fmt.Errorf("reins: meter %q: limit %v is not a finite positive number", m.Name, m.Limit)
	}
	if m.WarnAt == 0 {
		m.WarnAt = DefaultWarnAt
	}
	if !(m.WarnAt > 0 && m.WarnAt <= 1) {
		return fmt.Errorf("reins: meter %q: WarnAt %v is not in (0, 1]", m.Name, m.WarnAt)
	}
	return nil
}

// declareMeters adds the configured meters the store does not hold yet.
func (r *Run) declareMeters(ctx context.Context) error {
	seen := map[string]bool{}
	for i := range r.opts.Meters {
		m := &r.opts.Meters[i]
		if err := validMeter(m); err != nil {
			return err
		}
		if seen[m.Name] {
			return fmt.Errorf("reins: meter %q given twice", m.Name)
		}
		seen[m.Name] = true
	}
	if len(r.opts.Meters) == 0 {
		return nil
	}
	now := r.clock.Now()
	_, err := r.store.Update(ctx, func(s *RunState) error {
		for _, m := range r.opts.Meters {
			if _, ok := s.Meters[m.Name]; ok {
				continue
			}
			if s.Meters == nil {
				s.Meters = map[string]MeterStatus{}
			}
			st := MeterStatus{Meter: m}
			if m.Name == MeterWallTime {
				st.Start = now
			}
			s.Meters[m.Name] = st
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reins: declaring the meters: %w", err)
	}
	return nil
}

// exhausted returns the reason of an exhausted meter of s, or "".
func (r *Run) exhausted(s *RunState) string {
	for _, m := range s.Meters {
		if m.Exhausted {
			return m.Reason
		}
	}
	return ""
}

// meterChange is what an update of one meter crossed.
type meterChange struct {
	st                         MeterStatus
	warned, exhausted, latched bool
}

// addTo applies amount to meter name in s (set: the used amount becomes amount, when larger),
// marking the warning and the exhaustion, and latching the budget hard stop at the limit.
func addTo(s *RunState, name string, amount float64, set bool, now time.Time, ch *meterChange) error {
	m, ok := s.Meters[name]
	if !ok {
		return fmt.Errorf("reins: no meter %q", name)
	}
	switch {
	case set && amount > m.Used:
		m.Used = amount
	case !set:
		m.Used += amount
	}
	*ch = meterChange{}
	if !m.Warned && m.Used >= m.WarnAt*m.Limit {
		m.Warned, ch.warned = true, true
	}
	if !m.Exhausted && m.Used >= m.Limit {
		m.Exhausted, ch.exhausted = true, true
		m.Reason = fmt.Sprintf("budget exceeded: %s used %g of %g", name, m.Used, m.Limit)
		if s.Halt == nil {
			s.Halt = &gate.Halt{Cause: gate.CauseBudget, Reason: m.Reason, Time: now}
			ch.latched = true
		}
	}
	s.Meters[name] = m
	ch.st = m
	return nil
}

// Use adds amount to the named meter (a finite, non-negative number), atomically in the store.
// Passing the warning fraction sends a NoticeBudgetWarning; reaching the limit latches the
// run's budget hard stop (every later decision is a Deny until the meter is reset) and sends a
// NoticeBudgetExceeded. Both are recorded. A meter the run was not given is an error.
func (r *Run) Use(ctx context.Context, name string, amount float64) error {
	if math.IsNaN(amount) || math.IsInf(amount, 0) || amount < 0 {
		return fmt.Errorf("reins: Use %q: %v is not a finite, non-negative number", name, amount)
	}
	return r.meterSet(ctx, name, amount, false)
}

func (r *Run) meterSet(ctx context.Context, name string, amount float64, set bool) error {
	now := r.clock.Now()
	var ch meterChange
	if _, err := r.store.Update(ctx, func(s *RunState) error { return addTo(s, name, amount, set, now, &ch) }); err != nil {
		return err
	}
	r.meterNotices(ctx, name, ch)
	return nil
}

func (r *Run) meterNotices(ctx context.Context, name string, ch meterChange) {
	if ch.warned {
		msg := fmt.Sprintf("budget %s: %g of %g used (warning at %g%%)", name, ch.st.Used, ch.st.Limit, ch.st.WarnAt*100)
		r.notifyMeter(ctx, NoticeBudgetWarning, ch.st, msg)
	}
	if ch.latched {
		r.recordHalt(ctx, gate.Halt{Cause: gate.CauseBudget, Reason: ch.st.Reason, Time: r.clock.Now()})
	}
	if ch.exhausted {
		r.notifyMeter(ctx, NoticeBudgetExceeded, ch.st, ch.st.Reason)
	}
}

// admitAction takes one unit of the actions meter for an action about to run: it fails, taking
// nothing, when the meter is exhausted or the unit would take it past its limit. No meter named
// MeterActions means no limit.
func (r *Run) admitAction(ctx context.Context, s *RunState) error {
	if _, ok := s.Meters[MeterActions]; !ok {
		return nil
	}
	now := r.clock.Now()
	var ch meterChange
	_, err := r.store.Update(ctx, func(s *RunState) error {
		m, ok := s.Meters[MeterActions]
		if !ok {
			return nil
		}
		if m.Exhausted || m.Used+1 > m.Limit {
			return errActionsSpent
		}
		return addTo(s, MeterActions, 1, false, now, &ch)
	})
	if err != nil {
		return err
	}
	r.meterNotices(ctx, MeterActions, ch)
	return nil
}

var errActionsSpent = fmt.Errorf("reins: the actions budget is spent")

// tick updates the wall-time meter before a decision. The store is written only when the meter
// crosses its warning or its limit: the used time is the clock's, not a stored count.
func (r *Run) tick(ctx context.Context, s *RunState) {
	m, ok := s.Meters[MeterWallTime]
	if !ok {
		return
	}
	el := r.clock.Now().Sub(m.Start).Seconds()
	if m.Exhausted || el < m.WarnAt*m.Limit || m.Warned && el < m.Limit {
		return
	}
	if err := r.meterSet(ctx, MeterWallTime, el, true); err != nil {
		r.log.Error("reins: wall-time meter", "err", err)
	}
}

func (r *Run) notifyMeter(ctx context.Context, k NoticeKind, st MeterStatus, msg string) {
	v := policy.Allow
	if k == NoticeBudgetExceeded {
		v = policy.Deny
	}
	if err := r.record(ctx, audit.Record{Kind: audit.KindBudget, Decision: v, DecidedBy: audit.DecidedByHardStop,
		RuleMatched: "budget:" + st.Name + ":" + k.String(), Reason: msg}); err != nil {
		r.log.Error("reins: budget record could not be written", "err", err)
	}
	if r.opts.Notifier != nil {
		if err := r.opts.Notifier.Notify(context.WithoutCancel(ctx), Notice{Kind: k, Meter: st, Message: msg}); err != nil {
			r.log.Error("reins: budget notice could not be sent", "err", err)
		}
	}
}

// Meters returns every meter's state, in the order the run was given them (then any other
// meter the store holds, by name). The wall-time meter's Used is the time elapsed now.
func (r *Run) Meters(ctx context.Context) ([]MeterStatus, error) {
	s, err := r.store.Load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]MeterStatus, 0, len(s.Meters))
	seen := map[string]bool{}
	for _, m := range r.opts.Meters {
		if st, ok := s.Meters[m.Name]; ok {
			out = append(out, r.current(st))
			seen[m.Name] = true
		}
	}
	var rest []string
	for n := range s.Meters {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	for _, n := range rest {
		out = append(out, r.current(s.Meters[n]))
	}
	return out, nil
}

func (r *Run) current(st MeterStatus) MeterStatus {
	if st.Name == MeterWallTime && !st.Exhausted {
		if el := r.clock.Now().Sub(st.Start).Seconds(); el > st.Used {
			st.Used = el
		}
	}
	return st
}

// ResetMeter sets a meter back to zero (the wall-time meter starts again now), raising its limit
// first when limit > 0, and records who did it and why. It does not clear a latched halt: Reset
// does both.
func (r *Run) ResetMeter(ctx context.Context, name string, limit float64, reason string) error {
	now := r.clock.Now()
	var st MeterStatus
	_, err := r.store.Update(ctx, func(s *RunState) error {
		m, ok := s.Meters[name]
		if !ok {
			return fmt.Errorf("reins: no meter %q", name)
		}
		if limit > 0 && !math.IsInf(limit, 0) {
			m.Limit = limit
		}
		m.Used, m.Warned, m.Exhausted, m.Reason = 0, false, false, ""
		if name == MeterWallTime {
			m.Start = now
		}
		s.Meters[name] = m
		st = m
		return nil
	})
	if err != nil {
		return err
	}
	return r.record(ctx, audit.Record{Kind: audit.KindBudget, Decision: policy.Allow, DecidedBy: audit.DecidedByUser, UserOverride: true,
		RuleMatched: "budget:" + name + ":reset", Reason: fmt.Sprintf("meter %s reset (limit %g): %s", name, st.Limit, reason)})
}
