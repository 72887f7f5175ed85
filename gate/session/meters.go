package session

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// Conventional meter names. MeterWallTime and MeterActions are measured by the session itself
// (seconds since New, and actions run); the others are reported by the host through Use.
const (
	MeterCost     = "cost"
	MeterTokens   = "tokens"
	MeterWallTime = "wall_time"
	MeterActions  = "actions"
)

// DefaultWarnAt is the fraction of a meter's limit at which the warning is given.
const DefaultWarnAt = 0.8

// Meter is one budget: a named quantity with a limit. Reaching the limit latches the gate's
// budget hard stop; passing WarnAt times the limit first sends one warning notice.
type Meter struct {
	Name  string
	Limit float64
	// WarnAt is the warning fraction, in (0, 1]. Default DefaultWarnAt.
	WarnAt float64
}

// MeterStatus is a meter's state.
type MeterStatus struct {
	Meter
	Used              float64
	Warned, Exhausted bool
}

type meter struct {
	MeterStatus
}

type meters struct {
	mu    sync.Mutex
	start time.Time
	clock func() time.Time
	m     map[string]*meter
	order []string
}

func newMeters(ms []Meter, clock func() time.Time) (*meters, error) {
	out := &meters{start: clock(), clock: clock, m: map[string]*meter{}}
	for _, m := range ms {
		if m.Name == "" {
			return nil, fmt.Errorf("session: a meter has no name")
		}
		if out.m[m.Name] != nil {
			return nil, fmt.Errorf("session: meter %q given twice", m.Name)
		}
		if !(m.Limit > 0) || math.IsInf(m.Limit, 0) {
			return nil, fmt.Errorf("session: meter %q: limit %v is not a finite positive number", m.Name, m.Limit)
		}
		if m.WarnAt == 0 {
			m.WarnAt = DefaultWarnAt
		}
		if !(m.WarnAt > 0 && m.WarnAt <= 1) {
			return nil, fmt.Errorf("session: meter %q: WarnAt %v is not in (0, 1]", m.Name, m.WarnAt)
		}
		out.m[m.Name] = &meter{MeterStatus{Meter: m}}
		out.order = append(out.order, m.Name)
	}
	return out, nil
}

// Use adds amount to the named meter (a finite, non-negative number). Passing the warning
// fraction sends a NoticeBudgetWarning; reaching the limit latches the gate's budget hard stop
// (every later decision is a Deny until Reset) and sends a NoticeBudgetExceeded. Both are
// recorded. A meter the session was not given is an error.
func (s *Session) Use(ctx context.Context, name string, amount float64) error {
	if math.IsNaN(amount) || math.IsInf(amount, 0) || amount < 0 {
		return fmt.Errorf("session: Use %q: %v is not a finite, non-negative number", name, amount)
	}
	return s.meterSet(ctx, name, func(m *meter) { m.Used += amount })
}

// tick updates the wall-time meter; it runs before every decision.
func (s *Session) tick(ctx context.Context) {
	if _, ok := s.meters.m[MeterWallTime]; ok {
		el := s.meters.clock().Sub(s.meters.start).Seconds()
		_ = s.meterSet(ctx, MeterWallTime, func(m *meter) {
			if el > m.Used {
				m.Used = el
			}
		})
	}
}

func (s *Session) meterSet(ctx context.Context, name string, f func(*meter)) error {
	s.meters.mu.Lock()
	m, ok := s.meters.m[name]
	if !ok {
		s.meters.mu.Unlock()
		return fmt.Errorf("session: no meter %q", name)
	}
	f(m)
	warn := !m.Warned && m.Used >= m.WarnAt*m.Limit
	if warn {
		m.Warned = true
	}
	exhausted := !m.Exhausted && m.Used >= m.Limit
	if exhausted {
		m.Exhausted = true
	}
	st := m.MeterStatus
	s.meters.mu.Unlock()
	if warn {
		msg := fmt.Sprintf("budget %s: %g of %g used (warning at %g%%)", name, st.Used, st.Limit, st.WarnAt*100)
		s.notifyMeter(ctx, NoticeBudgetWarning, st, msg)
	}
	if exhausted {
		msg := fmt.Sprintf("budget exceeded: %s used %g of %g", name, st.Used, st.Limit)
		s.g.Latch(ctx, gate.CauseBudget, msg)
		s.notifyMeter(ctx, NoticeBudgetExceeded, st, msg)
	}
	return nil
}

func (s *Session) notifyMeter(ctx context.Context, k NoticeKind, st MeterStatus, msg string) {
	v := policy.Allow
	if k == NoticeBudgetExceeded {
		v = policy.Deny
	}
	if err := s.g.Record(ctx, audit.Record{Kind: KindBudget, Decision: v, DecidedBy: audit.DecidedByHardStop,
		RuleMatched: "budget:" + st.Name + ":" + k.String(), Reason: msg}); err != nil {
		s.log.Error("session: budget record could not be written", "err", err)
	}
	if s.opts.Notifier != nil {
		if err := s.opts.Notifier.Notify(context.WithoutCancel(ctx), Notice{Kind: k, Meter: st, Message: msg}); err != nil {
			s.log.Error("session: budget notice could not be sent", "err", err)
		}
	}
}

// Meters returns every meter's state, in the order given.
func (s *Session) Meters() []MeterStatus {
	s.meters.mu.Lock()
	defer s.meters.mu.Unlock()
	out := make([]MeterStatus, 0, len(s.meters.order))
	for _, n := range s.meters.order {
		out = append(out, s.meters.m[n].MeterStatus)
	}
	return out
}

// ResetMeter sets a meter back to zero (the wall-time meter starts again now), raising its limit
// first when limit > 0, and records who did it and why. It does not clear a latched halt: call
// the gate's Reset for that (Session.Reset does both).
func (s *Session) ResetMeter(ctx context.Context, name string, limit float64, reason string) error {
	s.meters.mu.Lock()
	m, ok := s.meters.m[name]
	if !ok {
		s.meters.mu.Unlock()
		return fmt.Errorf("session: no meter %q", name)
	}
	if limit > 0 && !math.IsInf(limit, 0) {
		m.Limit = limit
	}
	m.Used, m.Warned, m.Exhausted = 0, false, false
	if name == MeterWallTime {
		s.meters.start = s.meters.clock()
	}
	st := m.MeterStatus
	s.meters.mu.Unlock()
	return s.g.Record(ctx, audit.Record{Kind: KindBudget, Decision: policy.Allow, DecidedBy: audit.DecidedByUser, UserOverride: true,
		RuleMatched: "budget:" + name + ":reset", Reason: fmt.Sprintf("meter %s reset (limit %g): %s", name, st.Limit, reason)})
}

// Reset resets every exhausted meter and then the gate's halt latch, each recorded.
func (s *Session) Reset(ctx context.Context, reason string) error {
	for _, st := range s.Meters() {
		if st.Exhausted {
			if err := s.ResetMeter(ctx, st.Name, 0, reason); err != nil {
				return err
			}
		}
	}
	return s.g.Reset(ctx, reason)
}
