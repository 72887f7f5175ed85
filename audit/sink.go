package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Sink receives audit records. The gate writes one record per decision before it returns the
// decision; if Write fails, the decision becomes Deny (a decision that could not be recorded
// does not happen).
//
// The contract of Write:
//   - It is safe for concurrent use.
//   - It returns only after the record is as durable as the sink promises; an error means the
//     record may not have been kept.
//   - It does not retain r's slices after it returns (copy with [Record.Clone] to keep them).
//   - It honours ctx cancellation where it blocks.
//
// Package audittest checks a Sink against this contract.
type Sink interface {
	Write(ctx context.Context, r Record) error
}

// Discard is a Sink that keeps nothing and never fails. It is the gate's default when no sink is
// configured; a host that must keep an audit trail sets one.
var Discard Sink = discard{}

type discard struct{}

func (discard) Write(context.Context, Record) error { return nil }

// SinkFunc adapts a function to a Sink.
type SinkFunc func(ctx context.Context, r Record) error

// Write calls f(ctx, r).
func (f SinkFunc) Write(ctx context.Context, r Record) error { return f(ctx, r) }

// Memory is an in-memory ring of the most recent records, for tests and UIs. The zero Memory
// keeps every record; [NewMemory] bounds it. It is safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	limit   int
	records []Record
	start   int // index of the oldest record once the ring has wrapped
}

// NewMemory returns a ring that keeps the last limit records (limit <= 0 keeps all).
func NewMemory(limit int) *Memory { return &Memory{limit: limit} }

// Write appends a copy of r, dropping the oldest record when the ring is full.
func (m *Memory) Write(_ context.Context, r Record) error {
	r = r.Clone()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.limit <= 0 || len(m.records) < m.limit {
		m.records = append(m.records, r)
		return nil
	}
	m.records[m.start] = r
	m.start = (m.start + 1) % m.limit
	return nil
}

// Records returns copies of the kept records, oldest first.
func (m *Memory) Records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Record, 0, len(m.records))
	for i := range m.records {
		out = append(out, m.records[(m.start+i)%len(m.records)].Clone())
	}
	return out
}

// Len returns the number of kept records.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.records)
}

// FanOut is a Sink that writes every record to each of its sinks, in order. A record is kept
// only if every sink kept it: Write calls every sink even after one fails, and returns the
// failures joined (each naming the sink's index), so the gate denies when any sink fails. A nil
// entry is an error, not a skip, and so is an empty FanOut. FanOut does not close its sinks; their owner does.
type FanOut []Sink

// Write writes r to every sink. An empty FanOut keeps nothing, so it is an error.
func (f FanOut) Write(ctx context.Context, r Record) error {
	if len(f) == 0 {
		return errors.New("audit: fan-out has no sinks")
	}
	var errs []error
	for i, s := range f {
		if s == nil {
			errs = append(errs, fmt.Errorf("audit: fan-out sink %d is nil", i))
			continue
		}
		if err := s.Write(ctx, r); err != nil {
			errs = append(errs, fmt.Errorf("audit: fan-out sink %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

var (
	_ Sink = (*Memory)(nil)
	_ Sink = SinkFunc(nil)
	_ Sink = FanOut(nil)
)
