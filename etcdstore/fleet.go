package etcdstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// FleetOptions configure a Fleet. A nil *FleetOptions, and every zero field, means the
// documented default.
type FleetOptions struct {
	// Prefix is the fleet's key prefix (Options.Prefix of its runs). Default DefaultPrefix.
	Prefix string
	// Timeout bounds each call to the cluster. Default DefaultTimeout.
	Timeout time.Duration
	// Audit, when not nil, receives a record of every command that changes the fleet (halt,
	// emergency stop, reset, meter reset, revoke, forget), decided by the user. A command whose
	// record cannot be written returns that error (the change is made).
	Audit audit.Sink
	// By names the operator in those records (audit.Record.Approver), e.g. the user's login.
	By string
	// Clock tells the time of halts, resets and records. Default: the system clock.
	Clock reins.Clock
}

// Fleet is the operator's handle on a fleet of runs that share a prefix of one cluster: what
// `reins fleet status|halt|reset|grants` call. Its commands take effect at every run's next
// decision (each decision reads the state from the cluster); an emergency stop also cancels the
// runs' operations in flight, through their watch. Unlike a run, the operator may loosen what
// the fleet shares: clear its halt, reset its meters, revoke its grants.
//
// A Fleet holds no goroutine and no lease; it does not own the client.
type Fleet struct {
	v     view
	clock reins.Clock
	sink  audit.Sink
	by    string
}

// NewFleet returns the operator's handle on the fleet under opts.Prefix of client c.
func NewFleet(c *clientv3.Client, opts *FleetOptions) (*Fleet, error) {
	if c == nil {
		return nil, errors.New("etcdstore: the client is nil")
	}
	var o FleetOptions
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, err
	}
	if o.Timeout < 0 {
		return nil, errors.New("etcdstore: Timeout must not be negative")
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	f := &Fleet{v: view{c: c, l: layout{o.Prefix}, operator: true, timeout: o.Timeout}, clock: o.Clock, sink: o.Audit, by: o.By}
	if f.clock == nil {
		f.clock = systemClock{}
	}
	return f, nil
}

// Status is the fleet at one revision of the cluster.
type Status struct {
	// Revision is the cluster revision the status was read at.
	Revision int64
	// Halt is the fleet's halt, if any: every run denies every decision until Reset.
	Halt *gate.Halt
	// Meters are the shared meters, by name.
	Meters []reins.MeterStatus
	// Grants counts the fleet's shared grants (Grants lists them).
	Grants int
	// Runs are the runs that are live (their lease holds) or have state, by id.
	Runs []RunStatus
}

// RunStatus is one run of the fleet.
type RunStatus struct {
	ID string
	// Live says the run's lease holds: its process renewed it within Options.TTL.
	Live bool
	// Host, PID and Started say where and since when it runs (live runs only).
	Host    string
	PID     int
	Started time.Time
	// LastActive is when its store last reached the cluster (live runs only; renewed every
	// Options.TTL/3).
	LastActive time.Time
	// Halt is the run's own halt (tool failures), if any.
	Halt *gate.Halt
	// Failures are its failure counts; Parked and Grants count its parked actions and session
	// grants.
	Failures map[string]int
	Parked   int
	Grants   int
	// Problem says why the run's keys could not be read (they do not decode, or hold a grant
	// broader than an approval); the run denies until they are fixed or forgotten.
	Problem string
}

// maxFleetKeys bounds what one Status or Grants reads.
const maxFleetKeys = 1 << 20

// Status reads the fleet: its halt, its meters, and every run, in one transaction.
func (f *Fleet) Status(ctx context.Context) (*Status, error) {
	cctx, cancel := f.v.call(ctx)
	defer cancel()
	l := f.v.l
	resp, err := f.v.c.Txn(cctx).Then(
		clientv3.OpGet(l.fleet(), clientv3.WithPrefix(), clientv3.WithLimit(maxStateKeys)),
		clientv3.OpGet(l.members(), clientv3.WithPrefix(), clientv3.WithLimit(maxFleetKeys)),
		clientv3.OpGet(l.runs(), clientv3.WithPrefix(), clientv3.WithLimit(maxFleetKeys)),
	).Commit()
	if err != nil {
		return nil, f.v.clientErr(ctx, err)
	}
	rs := [3]map[string][]byte{}
	for i, r := range resp.Responses {
		rr := r.GetResponseRange()
		if rr.More {
			return nil, fmt.Errorf("etcdstore: too many keys under %s to read the fleet's status", l.prefix)
		}
		rs[i] = map[string][]byte{}
		for _, kv := range rr.Kvs {
			rs[i][string(kv.Key)] = kv.Value
		}
	}
	fp, err := decodePart(l.fleet(), true, rs[0], nil)
	if err != nil {
		return nil, err
	}
	st := &Status{Revision: resp.Header.Revision, Halt: fp.halt, Grants: len(fp.grants)}
	for _, m := range fp.meters {
		st.Meters = append(st.Meters, m)
	}
	slices.SortFunc(st.Meters, func(a, b reins.MeterStatus) int { return strings.Compare(a.Name, b.Name) })

	runs := map[string]*RunStatus{}
	get := func(id string) *RunStatus {
		if runs[id] == nil {
			runs[id] = &RunStatus{ID: id}
		}
		return runs[id]
	}
	for key, b := range rs[1] {
		id := strings.TrimPrefix(key, l.members())
		r := get(id)
		var m memberInfo
		if err := decodeStrict(key, b, &m); err != nil {
			r.Problem = err.Error()
			continue
		}
		r.Live, r.Host, r.PID, r.Started, r.LastActive = true, m.Host, m.PID, m.Started, m.LastActive
	}
	byRun := map[string]map[string][]byte{}
	for key, b := range rs[2] {
		id, _, _ := strings.Cut(strings.TrimPrefix(key, l.runs()), "/")
		if byRun[id] == nil {
			byRun[id] = map[string][]byte{}
		}
		byRun[id][key] = b
	}
	for id, raw := range byRun {
		r := get(id)
		p, err := decodePart(l.run(id), false, raw, nil)
		if err != nil {
			r.Problem = err.Error()
			continue
		}
		r.Halt, r.Failures, r.Parked, r.Grants = p.halt, p.failures, len(p.parked.Parked), len(p.grants)
	}
	for _, r := range runs {
		st.Runs = append(st.Runs, *r)
	}
	slices.SortFunc(st.Runs, func(a, b RunStatus) int { return strings.Compare(a.ID, b.ID) })
	return st, nil
}

// Halt latches a manual halt on the whole fleet: every run's next decision is denied, until
// Reset. When the fleet is already halted the first halt stays (the first cause wins). It
// returns the halt in force.
func (f *Fleet) Halt(ctx context.Context, reason string) (gate.Halt, error) {
	return f.halt(ctx, gate.Halt{Cause: gate.CauseManual, Reason: "fleet halt: " + reason})
}

// EmergencyStop latches the emergency-stop halt on the whole fleet: every run's next decision
// is denied, and every run that watches its store (every reins.Run on a Store) cancels its
// operations in flight (context.Cause reports reins.ErrEmergencyStop). It replaces a halt of
// any other cause. It returns the halt in force.
func (f *Fleet) EmergencyStop(ctx context.Context, reason string) (gate.Halt, error) {
	return f.halt(ctx, gate.Halt{Cause: gate.CauseEmergency, Reason: "emergency stop: " + reason})
}

func (f *Fleet) halt(ctx context.Context, h gate.Halt) (gate.Halt, error) {
	h.Time = f.clock.Now()
	latched := false
	st, err := f.v.update(ctx, func(s *reins.RunState) error {
		latched = s.Halt == nil || h.Cause == gate.CauseEmergency && s.Halt.Cause != gate.CauseEmergency
		if latched {
			hh := h
			s.Halt = &hh
		}
		return nil
	})
	if err != nil {
		return gate.Halt{}, fmt.Errorf("etcdstore: halting the fleet: %w", err)
	}
	if !latched {
		return *st.Halt, nil
	}
	return h, f.record(ctx, audit.Record{Time: h.Time, Kind: audit.KindHalt, Decision: policy.Deny, RuleMatched: h.Cause.CheckID(),
		Layer: policy.LayerHardStop, Reason: h.Reason})
}

// Reset clears the fleet's halt and resets every exhausted shared meter (its use starts again
// from zero, its limit kept), then clears every run's own halt and failure counts: what
// reins.Run.Reset does for one run, for the whole fleet.
func (f *Fleet) Reset(ctx context.Context, reason string) error {
	now := f.clock.Now()
	var prev *gate.Halt
	var meters []string
	_, err := f.v.update(ctx, func(s *reins.RunState) error {
		prev, meters = s.Halt, meters[:0]
		s.Halt = nil
		for n, m := range s.Meters {
			if m.Exhausted {
				resetMeter(&m, now)
				s.Meters[n] = m
				meters = append(meters, n)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("etcdstore: resetting the fleet: %w", err)
	}
	ids, err := f.runIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		rv := &view{c: f.v.c, l: f.v.l, run: id, operator: true, timeout: f.v.timeout}
		err := rv.apply(ctx, func(raw map[string][]byte) []clientv3.Op {
			var ops []clientv3.Op
			for _, k := range []string{rv.l.run(id) + keyHalt, rv.l.run(id) + keyFailures} {
				if _, ok := raw[k]; ok {
					ops = append(ops, clientv3.OpDelete(k))
				}
			}
			return ops
		})
		if err != nil {
			return fmt.Errorf("etcdstore: resetting run %s: %w", id, err)
		}
	}
	slices.Sort(meters)
	for _, n := range meters {
		if err := f.record(ctx, audit.Record{Time: now, Kind: audit.KindBudget, Decision: policy.Allow, UserOverride: true,
			RuleMatched: "budget:" + n + ":reset", Reason: "fleet meter " + n + " reset: " + reason}); err != nil {
			return err
		}
	}
	rec := audit.Record{Time: now, Kind: audit.KindReset, Decision: policy.Allow, RuleMatched: gate.CheckReset,
		Layer: policy.LayerHalted, UserOverride: true, Reason: "fleet reset: " + reason}
	if prev != nil {
		rec.Reason += " (was halted: " + prev.Reason + ")"
	}
	return f.record(ctx, rec)
}

func resetMeter(m *reins.MeterStatus, now time.Time) {
	m.Used, m.Warned, m.Exhausted, m.Reason = 0, false, false, ""
	if m.Name == reins.MeterWallTime {
		m.Start = now
	}
}

// ResetMeter sets a shared meter back to zero, raising (or lowering) its limit first when limit
// is a positive finite number. It does not clear the fleet's halt: Reset does both.
func (f *Fleet) ResetMeter(ctx context.Context, name string, limit float64, reason string) error {
	now := f.clock.Now()
	var st reins.MeterStatus
	_, err := f.v.update(ctx, func(s *reins.RunState) error {
		m, ok := s.Meters[name]
		if !ok {
			return fmt.Errorf("etcdstore: the fleet has no meter %q", name)
		}
		if limit > 0 && !math.IsInf(limit, 0) {
			m.Limit = limit
		}
		resetMeter(&m, now)
		s.Meters[name] = m
		st = m
		return nil
	})
	if err != nil {
		return fmt.Errorf("etcdstore: resetting meter %q: %w", name, err)
	}
	return f.record(ctx, audit.Record{Time: now, Kind: audit.KindBudget, Decision: policy.Allow, UserOverride: true,
		RuleMatched: "budget:" + name + ":reset", Reason: fmt.Sprintf("fleet meter %s reset (limit %g): %s", name, st.Limit, reason)})
}

// FleetGrant is a grant of the fleet: a shared one (Run empty) or a run's session grant.
type FleetGrant struct {
	Run   string
	Grant reins.Grant
	// Problem says why the grant's key could not be read (it does not decode, or is broader
	// than an approval): Grant then holds only the id from its key. Revoke removes it.
	Problem string
}

// Grants lists the fleet's grants: the shared ones, then each run's session grants, each group
// in the order they were made.
func (f *Fleet) Grants(ctx context.Context) ([]FleetGrant, error) {
	cctx, cancel := f.v.call(ctx)
	defer cancel()
	l := f.v.l
	resp, err := f.v.c.Txn(cctx).Then(
		clientv3.OpGet(l.fleet()+dirGrants, clientv3.WithPrefix(), clientv3.WithLimit(maxStateKeys)),
		clientv3.OpGet(l.runs(), clientv3.WithPrefix(), clientv3.WithLimit(maxFleetKeys)),
	).Commit()
	if err != nil {
		return nil, f.v.clientErr(ctx, err)
	}
	var out []FleetGrant
	for i, r := range resp.Responses {
		rr := r.GetResponseRange()
		if rr.More {
			return nil, fmt.Errorf("etcdstore: too many keys under %s to list the grants", l.prefix)
		}
		for _, kv := range rr.Kvs {
			key := string(kv.Key)
			var run, esced string
			if i == 0 {
				esced = strings.TrimPrefix(key, l.fleet()+dirGrants)
			} else {
				rest := strings.TrimPrefix(key, l.runs())
				var name string
				run, name, _ = strings.Cut(rest, "/")
				var ok bool
				if esced, ok = strings.CutPrefix(name, dirGrants); !ok {
					continue
				}
			}
			fg := FleetGrant{Run: run}
			if err := decodeStrict(key, kv.Value, &fg.Grant); err != nil {
				fg.Problem = err.Error()
			} else if err := fg.Grant.Validate(); err != nil {
				fg.Problem = err.Error()
			} else if esc(fg.Grant.ID) != esced {
				fg.Problem = fmt.Sprintf("key %s holds grant %q", key, fg.Grant.ID)
			}
			if fg.Problem != "" {
				fg.Grant = reins.Grant{ID: unesc(esced)}
			}
			out = append(out, fg)
		}
	}
	slices.SortStableFunc(out, func(a, b FleetGrant) int {
		if c := cmp.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return byCreated(a.Grant, b.Grant)
	})
	return out, nil
}

// Revoke removes grant id, the fleet's or a run's, wherever it is (also one whose key does not
// decode): no run's decision matches it from then on.
func (f *Fleet) Revoke(ctx context.Context, id, reason string) error {
	if id == "" {
		return errors.New("etcdstore: revoke: no grant id")
	}
	found := false
	key := f.v.l.fleet() + dirGrants + esc(id)
	err := f.v.apply(ctx, func(raw map[string][]byte) []clientv3.Op {
		if _, ok := raw[key]; ok {
			found = true
			return []clientv3.Op{clientv3.OpDelete(key)}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("etcdstore: revoking grant %q: %w", id, err)
	}
	ids, err := f.runIDs(ctx)
	if err != nil {
		return err
	}
	for _, run := range ids {
		rv := &view{c: f.v.c, l: f.v.l, run: run, operator: true, timeout: f.v.timeout}
		key := rv.l.run(run) + dirGrants + esc(id)
		err := rv.apply(ctx, func(raw map[string][]byte) []clientv3.Op {
			if _, ok := raw[key]; ok {
				found = true
				return []clientv3.Op{clientv3.OpDelete(key)}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("etcdstore: revoking grant %q of run %s: %w", id, run, err)
		}
	}
	if !found {
		return fmt.Errorf("etcdstore: the fleet has no grant %q", id)
	}
	return f.record(ctx, audit.Record{Time: f.clock.Now(), Kind: audit.KindGrantRevoked, Decision: policy.Deny, UserOverride: true,
		RuleMatched: gate.CheckGrantPrefix + id, Reason: "grant revoked for the fleet: " + reason})
}

// Anchors returns the audit anchors run id keeps (reins.AnchorOptions), by seq, for
// audit.VerifyAnchored. Anchors are written once and in the order of their seqs, so an anchor
// key written more than once (its etcd version is not 1), created after the anchor of a later
// seq (deleted and written again), or holding another seq than its key names is an error.
func (f *Fleet) Anchors(ctx context.Context, run string) ([]audit.Anchor, error) {
	if err := CheckRunID(run); err != nil {
		return nil, err
	}
	cctx, cancel := f.v.call(ctx)
	defer cancel()
	dir := f.v.l.anchors(run)
	resp, err := f.v.c.Get(cctx, dir, clientv3.WithPrefix(), clientv3.WithLimit(maxFleetKeys),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, f.v.clientErr(ctx, err)
	}
	if resp.More {
		return nil, fmt.Errorf("etcdstore: more than %d anchors under %s", maxFleetKeys, dir)
	}
	out := make([]audit.Anchor, 0, len(resp.Kvs))
	var created int64
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		var a audit.Anchor
		if err := decodeStrict(key, kv.Value, &a); err != nil {
			return nil, err
		}
		if n, err := strconv.ParseUint(strings.TrimPrefix(key, dir), 10, 64); err != nil || n != a.Seq {
			return nil, fmt.Errorf("etcdstore: key %s holds the anchor of seq %d", key, a.Seq)
		}
		if kv.Version != 1 {
			return nil, fmt.Errorf("etcdstore: anchor key %s was written %d times: anchors are written once", key, kv.Version)
		}
		if kv.CreateRevision < created {
			return nil, fmt.Errorf("etcdstore: anchor key %s was created after the anchor of a later seq: it was deleted and written again", key)
		}
		created = kv.CreateRevision
		out = append(out, a)
	}
	return out, nil
}

// Forget deletes the state of a run that is not live (its failure counts, halt, parked actions
// and session grants), for a run that will not come back. Its anchors stay. A live run is
// refused.
func (f *Fleet) Forget(ctx context.Context, run, reason string) error {
	if err := CheckRunID(run); err != nil {
		return err
	}
	cctx, cancel := f.v.call(ctx)
	defer cancel()
	member := f.v.l.member(run)
	resp, err := f.v.c.Txn(cctx).If(clientv3.Compare(clientv3.CreateRevision(member), "=", 0)).
		Then(clientv3.OpDelete(f.v.l.run(run), clientv3.WithPrefix())).Commit()
	if err != nil {
		return f.v.clientErr(ctx, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcdstore: run %s is live: stop it first", run)
	}
	return f.record(ctx, audit.Record{Time: f.clock.Now(), Kind: audit.KindReset, Decision: policy.Allow, UserOverride: true,
		RuleMatched: gate.CheckReset, Reason: "fleet forgot run " + run + ": " + reason})
}

// runIDs lists the runs that have state.
func (f *Fleet) runIDs(ctx context.Context) ([]string, error) {
	cctx, cancel := f.v.call(ctx)
	defer cancel()
	resp, err := f.v.c.Get(cctx, f.v.l.runs(), clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(maxFleetKeys))
	if err != nil {
		return nil, f.v.clientErr(ctx, err)
	}
	if resp.More {
		return nil, fmt.Errorf("etcdstore: too many keys under %s", f.v.l.runs())
	}
	var ids []string
	for _, kv := range resp.Kvs {
		id, _, _ := strings.Cut(strings.TrimPrefix(string(kv.Key), f.v.l.runs()), "/")
		if len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// record writes an operator's record, when the fleet has a sink.
func (f *Fleet) record(ctx context.Context, rec audit.Record) error {
	if f.sink == nil {
		return nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	rec.DecisionID, rec.CorrelationID = id, id
	rec.DecidedBy, rec.Approver = audit.DecidedByUser, f.by
	rec.Profile = "fleet " + f.v.l.prefix
	if err := f.sink.Write(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("etcdstore: audit: %w", err)
	}
	return nil
}
