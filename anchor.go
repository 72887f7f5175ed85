package reins

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/reins-go/reins/audit"
)

// Anchorer keeps a run's audit chain heads somewhere the agent's machine cannot rewrite (a
// shared store such as etcdstore.Store), so that a log rewritten after the fact, its chain
// recomputed, fails audit.VerifyAnchored against them.
type Anchorer interface {
	// Anchor keeps a, the log's head at a.Time. It must bound its own time (the run calls it
	// from a timer and from Close, with a context that is never done) and return an error
	// when a was not kept. Anchoring the same head twice is not an error.
	Anchor(ctx context.Context, a audit.Anchor) error
}

// DefaultAnchorEvery is how often a run anchors its log's head by default.
const DefaultAnchorEvery = time.Minute

// AnchorOptions make a run write its audit log's chain head to an Anchorer (Options.Anchor):
// every Every on the run's Clock, when the head moved since the last anchor, and once more at
// Close. An anchor that cannot be written is logged (Options.Logger) and tried again at the next
// tick; Close returns the error of the last one.
type AnchorOptions struct {
	// To keeps the anchors. Required.
	To Anchorer
	// Log is the log whose head is anchored. Default: Options.Audit, when it has a Head method
	// (an *audit.JSONL has one).
	Log interface {
		Head() (seq uint64, hash audit.Digest)
	}
	// Every is the time between two anchors. Default DefaultAnchorEvery.
	Every time.Duration
}

// anchoring is a run's periodic anchoring (Run.anc); nil when Options.Anchor is nil.
type anchoring struct {
	to    Anchorer
	log   interface{ Head() (uint64, audit.Digest) }
	every time.Duration

	mu     sync.Mutex // held while an anchor is written, so Close waits for a tick in progress
	stop   func() bool
	closed bool
	last   uint64 // the seq last anchored
}

// startAnchoring checks Options.Anchor and arms the first tick.
func (r *Run) startAnchoring() error {
	o := r.opts.Anchor
	if o == nil {
		return nil
	}
	a := &anchoring{to: o.To, log: o.Log, every: o.Every}
	if a.to == nil {
		return fmt.Errorf("reins: Options.Anchor: To is nil: nothing keeps the anchors")
	}
	if a.log == nil {
		h, ok := r.sink.(interface{ Head() (uint64, audit.Digest) })
		if !ok {
			return fmt.Errorf("reins: Options.Anchor: the audit sink %T has no chain head (an *audit.JSONL has one): set AnchorOptions.Log", r.sink)
		}
		a.log = h
	}
	if a.every < 0 {
		return fmt.Errorf("reins: Options.Anchor: Every %v is negative", a.every)
	}
	if a.every == 0 {
		a.every = DefaultAnchorEvery
	}
	r.anc = a
	a.mu.Lock()
	a.stop = r.clock.AfterFunc(a.every, r.anchorTick)
	a.mu.Unlock()
	return nil
}

// anchorTick anchors the head and arms the next tick.
func (r *Run) anchorTick() {
	a := r.anc
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	if err := a.anchor(r.clock.Now()); err != nil {
		r.log.Error("reins: the audit head could not be anchored", "err", err)
	}
	a.stop = r.clock.AfterFunc(a.every, r.anchorTick)
}

// anchor writes the head if it moved since the last anchor. a.mu is held.
func (a *anchoring) anchor(now time.Time) error {
	seq, d := a.log.Head()
	if seq == 0 || seq == a.last {
		return nil
	}
	if err := a.to.Anchor(context.Background(), audit.Anchor{Seq: seq, Digest: d, Time: now}); err != nil {
		return fmt.Errorf("reins: anchoring the audit head (seq %d): %w", seq, err)
	}
	a.last = seq
	return nil
}

// stopAnchoring stops the ticks and writes the last anchor (once; later calls return nil).
func (r *Run) stopAnchoring() error {
	a := r.anc
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	a.stop()
	return a.anchor(r.clock.Now())
}
