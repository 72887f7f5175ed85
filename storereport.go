package reins

import (
	"context"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

// StoreEvent is what a Store reports about the state it serves: that it starts serving its last
// known state because its backend cannot be reached (a grace period the host opted into, such
// as etcdstore.Options.Grace), or that it stops (it reached its backend again, or the grace ran
// out and it now fails, so the run denies). A run records each event in its audit log (kind
// run_state), so decisions taken on a stale state are marked as such.
type StoreEvent struct {
	// Stale is true when the store starts serving a stale state, false when it stops.
	Stale bool
	// Failing, when Stale is false, says the grace period ran out before the backend could be
	// reached: the store fails from now on (and the run denies) until it reaches it again.
	Failing bool
	// Since is when the store last read the current state.
	Since time.Time
	// Reason says what happened and why, for a human (the cause, the grace period).
	Reason string
}

// StoreReporter is implemented by a Store that can serve a stale state. New calls ReportTo with
// a function that records each event, before the run's first decision; the store calls it
// (synchronously, before the Load that it reports on returns) once when a grace period starts
// and once when it ends. A later ReportTo replaces the function.
type StoreReporter interface {
	ReportTo(f func(StoreEvent))
}

// CheckRunState's suffixes in the records of store events.
const (
	checkRunStateStale   = CheckRunState + ":stale"
	checkRunStateCurrent = CheckRunState + ":current"
)

// hearStore subscribes the run to its stores' events (the run's store and the grants store).
func (r *Run) hearStore() {
	for _, s := range []Store{r.store, r.kept} {
		if rep, ok := s.(StoreReporter); ok {
			rep.ReportTo(r.storeEvent)
		}
	}
}

// storeEvent records e: the start of a grace period is an Allow (decisions go on, on the last
// known state), its end a Deny when the store now fails and an Allow when it is current again.
func (r *Run) storeEvent(e StoreEvent) {
	rec := audit.Record{Kind: audit.KindRunState, Decision: policy.Allow, DecidedBy: audit.DecidedByDefault,
		Layer: policy.LayerInput, RuleMatched: checkRunStateCurrent, Reason: e.Reason}
	if e.Stale {
		rec.RuleMatched = checkRunStateStale
	} else if e.Failing {
		rec.Decision = policy.Deny
	}
	if err := r.record(context.Background(), rec); err != nil {
		r.log.Error("reins: the run-state event could not be recorded", "stale", e.Stale, "err", err)
	}
}
