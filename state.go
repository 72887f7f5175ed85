package reins

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// RunState is everything a run keeps between decisions: the halt latch, the failure counts,
// the budget meters, the standing grants with their use counts, and the actions parked for
// review. A [Store] holds it; a run reads a snapshot of it before every decision and changes it
// only through Store.Update, so two agents that share a store (two processes of one hook, a
// fleet on one etcd cluster) never lose each other's updates.
//
// A *RunState returned by a Store is shared: treat it as read-only. Update hands its function
// a deep copy to change.
type RunState struct {
	// Rev counts the updates the state has seen; the store sets it.
	Rev uint64 `json:"rev"`
	// Halt is the latched hard stop, if any.
	Halt *gate.Halt `json:"halt,omitempty"`
	// Failures counts, per tool, the failures in a row.
	Failures map[string]int `json:"failures,omitempty"`
	// Meters are the budget meters, by name.
	Meters map[string]MeterStatus `json:"meters,omitempty"`
	// Grants are the standing grants, with their use counts.
	Grants []Grant `json:"grants,omitempty"`
	// Parked are the actions waiting for review, oldest first.
	Parked []Parked `json:"parked,omitempty"`
	// Seq numbers parked actions.
	Seq uint64 `json:"seq,omitempty"`
}

// Clone returns a deep copy of s (grant rules are shared: a grant's rules never change after it
// is made).
func (s *RunState) Clone() *RunState {
	if s == nil {
		return &RunState{}
	}
	c := *s
	if s.Halt != nil {
		h := *s.Halt
		c.Halt = &h
	}
	c.Failures = maps.Clone(s.Failures)
	c.Meters = maps.Clone(s.Meters)
	c.Grants = slices.Clone(s.Grants)
	for i := range c.Grants {
		c.Grants[i].Env = slices.Clone(c.Grants[i].Env)
	}
	c.Parked = slices.Clone(s.Parked)
	for i := range c.Parked {
		c.Parked[i].Action = cloneAction(c.Parked[i].Action)
	}
	return &c
}

func cloneAction(a policy.Action) policy.Action {
	a.Targets = slices.Clone(a.Targets)
	a.Env = slices.Clone(a.Env)
	return a
}

// Store holds a run's state. It is the seam through which one halt, one budget or one grant
// spans every agent that shares it: [MemoryStore] for one process, [FileStore] for the
// processes of one machine (a hook the agent CLI starts per call), and implementations on a
// shared database for a fleet. The conformance kit in package reinstest checks an
// implementation.
//
// Rules for implementations:
//
//   - Load returns the current state, or an empty one (Rev 0) when nothing was ever stored. The
//     caller must not modify what Load returns; Load may return the same pointer again while
//     nothing changed, and should, since a run loads before every decision.
//   - Update runs fn on a deep copy of the current state and stores the result atomically, as
//     one check-and-update: no update is lost and none is applied twice, whatever other
//     goroutines, processes or machines update concurrently. fn may be called more than once
//     (optimistic concurrency retries); it must have no side effects besides changing its
//     argument. When fn returns an error nothing is stored and Update returns that error
//     (errors.Is holds for it). Update sets Rev to the previous Rev plus one and returns the
//     stored state.
//   - Both honour ctx: a done context makes them return its error without changing anything.
//   - Update stores only a state that passes RunState.Validate; it returns Validate's error
//     otherwise.
//   - A store that cannot be reached returns an error; the run then denies (fail closed).
//   - Both are safe for concurrent use.
//
// A store that holds resources also implements io.Closer.
type Store interface {
	Load(ctx context.Context) (*RunState, error)
	Update(ctx context.Context, fn func(*RunState) error) (*RunState, error)
}

// Watcher is implemented by a Store whose state other runs can change (a store shared across
// processes or machines): Watch calls f with each new state until ctx is done, so a run cancels
// its work in flight when another run halts the fleet. A run that has a Watcher store starts
// one goroutine for it, stopped by Run.Close.
type Watcher interface {
	Watch(ctx context.Context, f func(*RunState)) error
}

// MemoryStore is a Store in this process's memory: the default store of a run. The zero value
// is an empty store ready to use. Load costs one atomic load and no allocation.
type MemoryStore struct {
	mu  sync.Mutex
	cur atomic.Pointer[RunState]
}

var _ Store = (*MemoryStore)(nil)

var emptyState = &RunState{}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Load implements Store.
func (m *MemoryStore) Load(ctx context.Context) (*RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s := m.cur.Load(); s != nil {
		return s, nil
	}
	return emptyState, nil
}

// Update implements Store.
func (m *MemoryStore) Update(ctx context.Context, fn func(*RunState) error) (*RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next := m.cur.Load().Clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	next.Rev++
	m.cur.Store(next)
	return next, nil
}

// Bounds on what a state holds, so a shared store cannot be grown without limit.
const (
	maxGrants   = 4096
	maxParked   = 1024
	maxMeters   = 256
	maxFailures = 4096
)

// ErrStateTooLarge is returned by an update that would make a run state exceed its bounds.
var ErrStateTooLarge = errors.New("reins: run state too large")

// Validate checks what every store enforces on what it stores, before it stores it: the bounds
// (at most 4,096 grants, 1,024 parked actions, 256 meters, 4,096 failure counts; the error
// matches ErrStateTooLarge), unique grant ids, and that every grant is as narrow as a grant can
// be ([Grant.Validate]). A Store implementation calls it on the result of every Update.
func (s *RunState) Validate() error {
	switch {
	case len(s.Grants) > maxGrants:
		return errBound("grants", len(s.Grants), maxGrants)
	case len(s.Parked) > maxParked:
		return errBound("parked actions", len(s.Parked), maxParked)
	case len(s.Meters) > maxMeters:
		return errBound("meters", len(s.Meters), maxMeters)
	case len(s.Failures) > maxFailures:
		return errBound("failure counts", len(s.Failures), maxFailures)
	}
	seen := make(map[string]bool, len(s.Grants))
	for i := range s.Grants {
		g := &s.Grants[i]
		if seen[g.ID] {
			return errors.New("reins: grant id " + g.ID + " appears twice")
		}
		seen[g.ID] = true
		if err := g.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func errBound(what string, n, max int) error {
	return &boundError{what: what, n: n, max: max}
}

type boundError struct {
	what   string
	n, max int
}

func (e *boundError) Error() string {
	return "reins: run state too large: " + strconv.Itoa(e.n) + " " + e.what + " (at most " + strconv.Itoa(e.max) + ")"
}

func (e *boundError) Is(target error) bool { return target == ErrStateTooLarge }

// Parked is an action waiting for review.
type Parked struct {
	ID       string        `json:"id"`
	Time     time.Time     `json:"time"`
	Action   policy.Action `json:"action"`
	Decision gate.Decision `json:"decision"`
}
