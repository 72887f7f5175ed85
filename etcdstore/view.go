package etcdstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/gate"
)

// ErrUnavailable is matched by the error of a call that could not reach the cluster (no
// answer within the timeout, no leader, a closed client): the run denies, naming it.
var ErrUnavailable = errors.New("etcdstore: the cluster cannot be reached")

// ErrFleetOwned is matched by the error of a run's update that would loosen what the fleet
// shares: clear or change the fleet's halt, lower a shared meter's use, raise its limit or clear
// its warning or exhaustion, remove a meter, or change a shared grant other than counting a use.
// Only the operator does that (Fleet).
var ErrFleetOwned = errors.New("etcdstore: only the operator loosens the fleet's state")

// ErrContention is matched by the error of an update that lost the race for its keys too many
// times in a row (maxAttempts): nothing was stored.
var ErrContention = errors.New("etcdstore: the update kept conflicting with others")

// maxAttempts bounds how often one update retries after a conflict.
const maxAttempts = 1000

// maxTxnOps is etcd's default limit on the operations of one transaction (--max-txn-ops).
const maxTxnOps = 128

// unavailable wraps an error of the client: the cluster did not answer as asked.
type unavailable struct {
	endpoints []string
	err       error
}

func (e *unavailable) Error() string {
	return fmt.Sprintf("etcdstore: the cluster at %s cannot be reached: %v", strings.Join(e.endpoints, ","), e.err)
}

func (e *unavailable) Unwrap() error        { return e.err }
func (e *unavailable) Is(target error) bool { return target == ErrUnavailable }

// snap is one consistent read of a view's keys, decoded.
type snap struct {
	st         *reins.RunState // the view: shared, read-only
	raw        map[string][]byte
	fleet, run part
	rev        int64 // the cluster revision of the read (or of the write that made it)
}

// view is the state one handle sees: the fleet's part, and one run's part unless run is empty
// (the operator's view of the fleet). operator lifts the rules of ErrFleetOwned.
type view struct {
	c        *clientv3.Client
	l        layout
	run      string
	operator bool
	timeout  time.Duration
	cur      atomic.Pointer[snap]
}

func (v *view) fleetRev() string { return v.l.fleet() + keyRev }
func (v *view) runRev() string   { return v.l.run(v.run) + keyRev }

// call bounds ctx by the view's timeout.
func (v *view) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, v.timeout)
}

// clientErr turns an error of the client into the caller's context error (when ctx is done) or
// an unavailable error.
func (v *view) clientErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return &unavailable{endpoints: v.c.Endpoints(), err: err}
}

// gets are the reads of the view's keys.
func (v *view) gets() []clientv3.Op {
	ops := []clientv3.Op{clientv3.OpGet(v.l.fleet(), clientv3.WithPrefix(), clientv3.WithLimit(maxStateKeys))}
	if v.run != "" {
		ops = append(ops, clientv3.OpGet(v.l.run(v.run), clientv3.WithPrefix(), clientv3.WithLimit(maxStateKeys)))
	}
	return ops
}

// cmps are the compares that hold while nothing changed since s.
func (v *view) cmps(s *snap) []clientv3.Cmp {
	c := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(v.fleetRev()), "=", s.fleet.mod)}
	if v.run != "" {
		c = append(c, clientv3.Compare(clientv3.ModRevision(v.runRev()), "=", s.run.mod))
	}
	return c
}

// load returns the current state: the cached snap when the rev keys did not move since it was
// read, else a fresh read. One round trip either way, linearizable.
func (v *view) load(ctx context.Context) (*snap, error) {
	cur := v.cur.Load()
	cctx, cancel := v.call(ctx)
	defer cancel()
	txn := v.c.Txn(cctx)
	if cur != nil {
		txn = txn.If(v.cmps(cur)...).Else(v.gets()...)
	} else {
		txn = txn.Then(v.gets()...)
	}
	resp, err := txn.Commit()
	if err != nil {
		return nil, v.clientErr(ctx, err)
	}
	if cur != nil && resp.Succeeded {
		return cur, nil
	}
	s, err := v.decode(resp)
	if err != nil {
		return nil, err
	}
	v.keep(s)
	return s, nil
}

// keep caches s unless a newer snap is cached.
func (v *view) keep(s *snap) {
	for {
		cur := v.cur.Load()
		if cur != nil && cur.rev >= s.rev {
			return
		}
		if v.cur.CompareAndSwap(cur, s) {
			return
		}
	}
}

// rawOf returns the keys and mod revisions the reads of a transaction (gets()) returned.
func (v *view) rawOf(resp *clientv3.TxnResponse) (raw map[string][]byte, mods map[string]int64, err error) {
	raw, mods = map[string][]byte{}, map[string]int64{}
	for i, r := range resp.Responses {
		rr := r.GetResponseRange()
		if rr == nil {
			return nil, nil, fmt.Errorf("etcdstore: response %d of a read is not a range", i)
		}
		if rr.More {
			return nil, nil, fmt.Errorf("etcdstore: more than %d keys under %s: refusing to read an unbounded state", maxStateKeys, v.gets()[i].KeyBytes())
		}
		for _, kv := range rr.Kvs {
			raw[string(kv.Key)] = kv.Value
			mods[string(kv.Key)] = kv.ModRevision
		}
	}
	return raw, mods, nil
}

// decode decodes the reads of a transaction (the responses of gets()).
func (v *view) decode(resp *clientv3.TxnResponse) (*snap, error) {
	raw, mods, err := v.rawOf(resp)
	if err != nil {
		return nil, err
	}
	s := &snap{raw: raw, rev: resp.Header.Revision}
	if s.fleet, err = decodePart(v.l.fleet(), true, raw, mods); err != nil {
		return nil, err
	}
	if v.run != "" {
		if s.run, err = decodePart(v.l.run(v.run), false, raw, mods); err != nil {
			return nil, err
		}
	}
	s.st = v.assemble(&s.fleet, &s.run)
	if err := s.st.Validate(); err != nil {
		return nil, fmt.Errorf("etcdstore: the stored state under %s: %w", v.l.prefix, err)
	}
	return s, nil
}

// assemble makes the view's RunState of its parts: Rev counts the updates of both, the fleet's
// halt outranks the run's, grants are the fleet's then the run's in the order they were made.
func (v *view) assemble(f, r *part) *reins.RunState {
	st := &reins.RunState{Rev: f.rev + r.rev, Halt: f.halt, Failures: r.failures, Meters: f.meters,
		Parked: r.parked.Parked, Seq: r.parked.Seq}
	if st.Halt == nil {
		st.Halt = r.halt
	}
	st.Grants = append(slices.Clone(f.grants), r.grants...)
	slices.SortStableFunc(st.Grants, byCreated)
	return st
}

// update is Store.Update for the view: see the package documentation for how a RunState maps
// onto keys and how the transaction keeps it atomic.
func (v *view) update(ctx context.Context, fn func(*reins.RunState) error) (*reins.RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := v.cur.Load()
	if s == nil {
		var err error
		if s, err = v.load(ctx); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		next := s.st.Clone()
		if err := fn(next); err != nil {
			return nil, err
		}
		if err := next.Validate(); err != nil {
			return nil, err
		}
		next.Rev = s.st.Rev + 1
		p, err := v.plan(s, next)
		if err != nil {
			return nil, err
		}
		cctx, cancel := v.call(ctx)
		resp, err := v.c.Txn(cctx).If(v.cmps(s)...).Then(p.ops...).Else(v.gets()...).Commit()
		cancel()
		if err != nil {
			return nil, v.clientErr(ctx, err)
		}
		if resp.Succeeded {
			ns := &snap{st: next, raw: p.raw, fleet: p.fleet, run: p.run, rev: resp.Header.Revision}
			if p.fleetBumped {
				ns.fleet.mod = resp.Header.Revision
			}
			if p.runBumped {
				ns.run.mod = resp.Header.Revision
			}
			v.keep(ns)
			return next, nil
		}
		if s, err = v.decode(resp); err != nil {
			return nil, err
		}
		v.keep(s)
		if attempt == maxAttempts {
			return nil, fmt.Errorf("%w: %d attempts", ErrContention, attempt)
		}
		if attempt > 2 {
			// Many runs race for the same keys (a shared budget): spread the retries.
			d := time.Duration(rand.Int64N(int64(min(attempt, 50)) * int64(100*time.Microsecond)))
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// planned is what an update writes: the operations of its transaction and the parts and keys as
// they will be once it succeeds.
type planned struct {
	ops                    []clientv3.Op
	raw                    map[string][]byte
	fleet, run             part
	fleetWrote, runWrote   bool
	fleetBumped, runBumped bool
}

// plan compares next with s and lists the writes that make the keys say next: only the keys
// whose value changes are written, and the rev keys are bumped so that next.Rev is s's plus
// one (the fleet's when the fleet's part changed, else the run's; a run's rev key is rewritten
// with its value when both parts changed, so its mod revision moves and concurrent updates of
// the run see the change).
func (v *view) plan(s *snap, next *reins.RunState) (*planned, error) {
	p := &planned{raw: maps.Clone(s.raw), fleet: s.fleet, run: s.run}
	fleetDir, runDir := v.l.fleet(), ""
	if v.run != "" {
		runDir = v.l.run(v.run)
	}
	mark := func(key string) {
		if strings.HasPrefix(key, fleetDir) {
			p.fleetWrote = true
		} else {
			p.runWrote = true
		}
	}
	put := func(key string, val any) error {
		b, err := encode(val)
		if err != nil {
			return fmt.Errorf("etcdstore: key %s: %w", key, err)
		}
		if old, ok := s.raw[key]; ok && bytes.Equal(old, b) {
			return nil
		}
		p.ops = append(p.ops, clientv3.OpPut(key, string(b)))
		p.raw[key] = b
		mark(key)
		return nil
	}
	del := func(key string) {
		if _, ok := s.raw[key]; !ok {
			return
		}
		p.ops = append(p.ops, clientv3.OpDelete(key))
		delete(p.raw, key)
		mark(key)
	}

	// The halt.
	if err := v.planHalt(s, next.Halt, p, put, del); err != nil {
		return nil, err
	}

	// The run's failure counts and parked actions.
	if v.run == "" {
		if len(next.Failures) > 0 || len(next.Parked) > 0 || next.Seq != 0 {
			return nil, errors.New("etcdstore: the fleet's view holds no failure counts or parked actions (they are a run's)")
		}
	} else {
		p.run.failures = next.Failures
		if len(next.Failures) == 0 {
			p.run.failures = nil
			del(runDir + keyFailures)
		} else if err := put(runDir+keyFailures, next.Failures); err != nil {
			return nil, err
		}
		p.run.parked = parked{Seq: next.Seq, Parked: next.Parked}
		if next.Seq == 0 && len(next.Parked) == 0 {
			del(runDir + keyParked)
		} else if err := put(runDir+keyParked, p.run.parked); err != nil {
			return nil, err
		}
	}

	// The shared meters.
	for name, old := range s.fleet.meters {
		m, ok := next.Meters[name]
		if !ok {
			if !v.operator {
				return nil, fmt.Errorf("%w: run %s may not remove meter %q", ErrFleetOwned, v.run, name)
			}
			del(fleetDir + dirMeters + esc(name))
			continue
		}
		if !v.operator {
			if err := loosens(v.run, old, m); err != nil {
				return nil, err
			}
		}
	}
	for name, m := range next.Meters {
		if name == "" || m.Name != name {
			return nil, fmt.Errorf("etcdstore: meter %q is stored under the name %q", m.Name, name)
		}
		if err := put(fleetDir+dirMeters+esc(name), m); err != nil {
			return nil, err
		}
	}
	p.fleet.meters = next.Meters

	// The grants: a new "always" grant is the fleet's, any other new one the run's (all the
	// fleet's in the operator's view of the fleet); a grant stays where it is.
	at := make(map[string]string, len(s.fleet.grants)+len(s.run.grants))
	for _, g := range s.fleet.grants {
		at[g.ID] = fleetDir
	}
	for _, g := range s.run.grants {
		at[g.ID] = runDir
	}
	where := func(g *reins.Grant) string {
		dir, ok := at[g.ID]
		switch {
		case ok:
		case v.run == "" || g.Scope == reins.Always:
			dir = fleetDir
		default:
			dir = runDir
		}
		return dir + dirGrants + esc(g.ID)
	}
	nextByID := make(map[string]*reins.Grant, len(next.Grants))
	for i := range next.Grants {
		nextByID[next.Grants[i].ID] = &next.Grants[i]
	}
	for _, ps := range []*part{&s.fleet, &s.run} {
		dir := fleetDir
		if ps == &s.run {
			dir = runDir
		}
		for i := range ps.grants {
			old := &ps.grants[i]
			key := dir + dirGrants + esc(old.ID)
			g, ok := nextByID[old.ID]
			if !ok {
				del(key)
			} else if dir == fleetDir && !v.operator {
				if err := widens(v.run, old, g); err != nil {
					return nil, err
				}
			}
		}
	}
	p.fleet.grants, p.run.grants = nil, nil
	for i := range next.Grants {
		g := &next.Grants[i]
		key := where(g)
		if err := put(key, g); err != nil {
			return nil, err
		}
		if strings.HasPrefix(key, fleetDir) {
			p.fleet.grants = append(p.fleet.grants, *g)
		} else {
			p.run.grants = append(p.run.grants, *g)
		}
	}

	// The rev keys.
	switch {
	case p.fleetWrote || v.run == "":
		p.fleet.rev++
		p.ops = append(p.ops, clientv3.OpPut(v.fleetRev(), strconv.FormatUint(p.fleet.rev, 10)))
		p.fleetBumped = true
		if p.runWrote {
			p.ops = append(p.ops, clientv3.OpPut(v.runRev(), strconv.FormatUint(p.run.rev, 10)))
			p.runBumped = true
		}
	default:
		p.run.rev++
		p.ops = append(p.ops, clientv3.OpPut(v.runRev(), strconv.FormatUint(p.run.rev, 10)))
		p.runBumped = true
	}
	if p.fleetBumped {
		p.raw[v.fleetRev()] = []byte(strconv.FormatUint(p.fleet.rev, 10))
	}
	if p.runBumped {
		p.raw[v.runRev()] = []byte(strconv.FormatUint(p.run.rev, 10))
	}
	if n := len(p.ops) + len(v.cmps(s)); n > maxTxnOps {
		return nil, fmt.Errorf("etcdstore: the update changes %d keys; one transaction holds at most %d operations (etcd's --max-txn-ops)", len(p.ops), maxTxnOps)
	}
	return p, nil
}

// planHalt maps the view's halt onto the fleet's and the run's halt keys. A new halt is the
// fleet's, except the tool-failures hard stop, which is the run's (its failure counts are the
// run's). A run may clear its own halt, never the fleet's.
func (v *view) planHalt(s *snap, h *gate.Halt, p *planned, put func(string, any) error, del func(string)) error {
	fleetKey := v.l.fleet() + keyHalt
	var runKey string
	if v.run != "" {
		runKey = v.l.run(v.run) + keyHalt
	}
	old := s.st.Halt
	if sameHalt(old, h) {
		return nil
	}
	switch {
	case h == nil && s.fleet.halt != nil && !v.operator:
		return fmt.Errorf("%w: run %s may not clear the fleet's halt (%s: %s); the operator resets it", ErrFleetOwned, v.run, s.fleet.halt.Cause, s.fleet.halt.Reason)
	case h == nil:
		del(fleetKey)
		p.fleet.halt = nil
		if runKey != "" {
			del(runKey)
			p.run.halt = nil
		}
		return nil
	case s.fleet.halt != nil && !v.operator:
		return fmt.Errorf("%w: run %s may not change the fleet's halt (%s: %s)", ErrFleetOwned, v.run, s.fleet.halt.Cause, s.fleet.halt.Reason)
	case s.fleet.halt != nil || runKey == "" || old == nil && h.Cause != gate.CauseToolFailures:
		hh := *h
		p.fleet.halt = &hh
		return put(fleetKey, h)
	default:
		hh := *h
		p.run.halt = &hh
		return put(runKey, h)
	}
}

func sameHalt(a, b *gate.Halt) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Cause == b.Cause && a.Reason == b.Reason && a.Time.Equal(b.Time)
}

// loosens refuses a run's change of a shared meter that gives the fleet more budget.
func loosens(run string, old, m reins.MeterStatus) error {
	bad := func(what string) error {
		return fmt.Errorf("%w: run %s may not %s of shared meter %q", ErrFleetOwned, run, what, old.Name)
	}
	switch {
	case m.Limit != old.Limit || m.WarnAt != old.WarnAt:
		return bad("change the limit")
	case m.Used < old.Used:
		return bad("lower the use")
	case old.Exhausted && !m.Exhausted, old.Warned && !m.Warned:
		return bad("clear the warning or the exhaustion")
	case !m.Start.Equal(old.Start):
		return bad("restart the clock")
	}
	return nil
}

// widens refuses a run's change of a shared grant other than counting uses.
func widens(run string, old, g *reins.Grant) error {
	if g.Used < old.Used {
		return fmt.Errorf("%w: run %s may not lower the use count of shared grant %q", ErrFleetOwned, run, old.ID)
	}
	o := *old
	o.Used = g.Used
	a, err1 := encode(&o)
	b, err2 := encode(g)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		return fmt.Errorf("%w: run %s may only count the uses of shared grant %q, not change it", ErrFleetOwned, run, old.ID)
	}
	return nil
}

// apply writes what ops returns for the view's current keys (raw: not decoded, so a key that
// does not decode can be deleted), with the view's own rev key bumped (the run's, or the
// fleet's in the fleet's view), as one transaction that holds only if neither rev key moved
// (retrying otherwise). When ops returns nothing, nothing is written. The operator's commands
// on single keys use it: a run's halt and failure counts, a grant.
func (v *view) apply(ctx context.Context, ops func(raw map[string][]byte) []clientv3.Op) error {
	for attempt := 1; ; attempt++ {
		cctx, cancel := v.call(ctx)
		resp, err := v.c.Txn(cctx).Then(v.gets()...).Commit()
		cancel()
		if err != nil {
			return v.clientErr(ctx, err)
		}
		raw, mods, err := v.rawOf(resp)
		if err != nil {
			return err
		}
		w := ops(raw)
		if len(w) == 0 {
			return nil
		}
		own := v.fleetRev()
		if v.run != "" {
			own = v.runRev()
		}
		n, _ := strconv.ParseUint(string(raw[own]), 10, 64)
		w = append(w, clientv3.OpPut(own, strconv.FormatUint(n+1, 10)))
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(v.fleetRev()), "=", mods[v.fleetRev()])}
		if v.run != "" {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(v.runRev()), "=", mods[v.runRev()]))
		}
		cctx, cancel = v.call(ctx)
		resp, err = v.c.Txn(cctx).If(cmps...).Then(w...).Commit()
		cancel()
		if err != nil {
			return v.clientErr(ctx, err)
		}
		if resp.Succeeded {
			v.cur.Store(nil) // the cache does not know what ops wrote: read afresh next time
			return nil
		}
		if attempt == maxAttempts {
			return fmt.Errorf("%w: %d attempts", ErrContention, attempt)
		}
	}
}
