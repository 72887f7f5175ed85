package etcdstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reins-go/reins"
)

// Defaults of Options.
const (
	DefaultPrefix     = "/reins"
	DefaultTimeout    = 2 * time.Second
	DefaultTTL        = 30 * time.Second
	DefaultMaxAnchors = 1000
)

// Options configure a Store. A nil *Options, and every zero field, means the documented
// default.
type Options struct {
	// Prefix is the fleet's key prefix: every run whose store has the same prefix on the same
	// cluster shares the fleet's halt, meters and "always" grants. It starts with '/' and does
	// not end with one. Default DefaultPrefix.
	Prefix string
	// RunID names this run within the fleet: its failure counts, parked actions, session
	// grants, liveness and anchors are kept under it. A run started again with the same id
	// finds them again. 1 to 128 letters, digits, '.', '_', '-' or ':' (see CheckRunID).
	// Default: "<host>-<pid>-<8 random hex digits>".
	RunID string
	// Timeout bounds each call to the cluster; a call that takes longer fails with
	// ErrUnavailable (the run then denies). Default DefaultTimeout.
	Timeout time.Duration
	// Grace, when positive, lets Load serve the last state it read while the cluster cannot be
	// reached, as long as that read is at most Grace old; the start and end of such a period are
	// reported to the run (reins.StoreReporter), which records them. Updates are never served
	// from memory: a meter, a use count or a halt written while the cluster is away fails, and
	// so does what needs it (a Do under an actions budget, a grant's use). Default 0: an
	// unreachable cluster fails every call, and the run denies at once.
	Grace time.Duration
	// TTL is the lease of the run's member key (its liveness in Fleet.Status), renewed every
	// TTL/3. At least 2 s. Default DefaultTTL.
	TTL time.Duration
	// MaxAnchors is how many audit anchors of the run are kept; older ones are deleted (the
	// newest anchor vouches for every record before it). Default DefaultMaxAnchors.
	MaxAnchors int
	// Clock tells the time of grace periods, liveness and anchors. Default: the system clock.
	Clock reins.Clock
	// Logger receives what the store cannot return (a liveness key that could not be renewed).
	// Default: discard.
	Logger *slog.Logger
}

// Store is a reins.Store on an etcd v3 cluster, shared by a fleet of runs: see the package
// documentation for the keys, the leases and the failure modes. It also implements
// reins.Watcher (a run that uses it cancels its operations when any run or the operator latches
// an emergency stop), reins.StoreReporter (grace periods are recorded by the run) and
// reins.Anchorer (the run's audit heads are kept in the cluster).
//
// A Store holds a goroutine that keeps its run's liveness key: Close it. It does not own the
// client: close that after the Store.
type Store struct {
	v          view
	opts       Options
	clock      reins.Clock
	log        *slog.Logger
	host       string
	started    time.Time
	lastActive atomic.Int64 // unix nanoseconds of the last call that reached the cluster

	mu         sync.Mutex
	lastOK     time.Time // when the cluster last answered
	episode    episode   // what the store reported last
	staleSince time.Time
	report     func(reins.StoreEvent)

	stopBeat  context.CancelFunc
	beatDone  chan struct{}
	lease     atomic.Int64
	closeOnce sync.Once
}

var (
	_ reins.Store         = (*Store)(nil)
	_ reins.Watcher       = (*Store)(nil)
	_ reins.StoreReporter = (*Store)(nil)
	_ reins.Anchorer      = (*Store)(nil)
)

// episode is where the store stands in an outage of the cluster, as it reported to the run.
type episode uint8

const (
	current episode = iota // the cluster answers (or the store never served a stale state)
	stale                  // a grace period: Load serves the last state read
	failing                // the grace period ran out: Load fails
)

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// New returns the store of one run on client c. It contacts the cluster only in the background
// (the liveness key): an unreachable cluster shows at the first Load or Update.
func New(c *clientv3.Client, opts *Options) (*Store, error) {
	if c == nil {
		return nil, errors.New("etcdstore: the client is nil")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	if o.RunID == "" {
		o.RunID = defaultRunID(host)
	}
	if err := CheckRunID(o.RunID); err != nil {
		return nil, err
	}
	switch {
	case o.Timeout < 0, o.Grace < 0, o.TTL < 0, o.MaxAnchors < 0:
		return nil, errors.New("etcdstore: Timeout, Grace, TTL and MaxAnchors must not be negative")
	case o.TTL > 0 && o.TTL < 2*time.Second:
		return nil, fmt.Errorf("etcdstore: TTL %v is shorter than 2s", o.TTL)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.MaxAnchors == 0 {
		o.MaxAnchors = DefaultMaxAnchors
	}
	s := &Store{opts: o, clock: o.Clock, log: o.Logger, host: host,
		v: view{c: c, l: layout{o.Prefix}, run: o.RunID, timeout: o.Timeout}}
	if s.clock == nil {
		s.clock = systemClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.started = s.clock.Now()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopBeat, s.beatDone = cancel, make(chan struct{})
	go s.beat(ctx)
	return s, nil
}

func defaultRunID(host string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	clean := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, host)
	if len(clean) > 64 {
		clean = clean[:64]
	}
	if clean == "" {
		clean = "run"
	}
	return fmt.Sprintf("%s-%d-%s", clean, os.Getpid(), hex.EncodeToString(b[:]))
}

// RunID returns the run's id.
func (s *Store) RunID() string { return s.opts.RunID }

// Prefix returns the fleet's prefix.
func (s *Store) Prefix() string { return s.opts.Prefix }

// Load implements reins.Store: one linearizable round trip to the cluster, which returns the
// state it returned last when nothing changed since. Within a grace period (Options.Grace) it
// returns the last state it read instead of ErrUnavailable.
func (s *Store) Load(ctx context.Context) (*reins.RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sn, err := s.v.load(ctx)
	if err == nil {
		s.reached()
		return sn.st, nil
	}
	return s.unreached(ctx, err)
}

// Update implements reins.Store with one etcd transaction per attempt: it writes the keys whose
// value changes and bumps the rev keys, if neither rev key moved since the state fn was given
// was read; otherwise it reads again (in the same round trip) and calls fn again. A run's
// update that would loosen what the fleet shares fails with ErrFleetOwned.
func (s *Store) Update(ctx context.Context, fn func(*reins.RunState) error) (*reins.RunState, error) {
	st, err := s.v.update(ctx, fn)
	if err == nil {
		s.reached()
	}
	return st, err
}

// ReportTo implements reins.StoreReporter.
func (s *Store) ReportTo(f func(reins.StoreEvent)) {
	s.mu.Lock()
	s.report = f
	s.mu.Unlock()
}

// reached notes that the cluster answered, ending a grace period (or the failures after it).
func (s *Store) reached() {
	now := s.clock.Now()
	s.lastActive.Store(now.UnixNano())
	s.mu.Lock()
	s.lastOK = now
	was, since, f := s.episode, s.staleSince, s.report
	s.episode = current
	s.mu.Unlock()
	if was != current && f != nil {
		f(reins.StoreEvent{Since: since, Reason: fmt.Sprintf("etcdstore: the cluster answers again: decisions use the current state (it was last read at %s)", since.UTC().Format(time.RFC3339Nano))})
	}
}

// unreached handles a Load that failed: within a grace period it serves the last state read.
func (s *Store) unreached(ctx context.Context, err error) (*reins.RunState, error) {
	if ctx.Err() != nil || !errors.Is(err, ErrUnavailable) {
		return nil, err
	}
	now := s.clock.Now()
	cur := s.v.cur.Load()
	s.mu.Lock()
	lastOK, f := s.lastOK, s.report
	if g := s.opts.Grace; g > 0 && cur != nil && !lastOK.IsZero() && now.Sub(lastOK) <= g {
		start := s.episode != stale
		if start {
			s.episode, s.staleSince = stale, lastOK
		}
		s.mu.Unlock()
		if start {
			s.log.Warn("etcdstore: serving the last known state", "since", lastOK, "grace", g, "err", err)
			if f != nil {
				f(reins.StoreEvent{Stale: true, Since: lastOK, Reason: fmt.Sprintf(
					"etcdstore: serving the run state read at %s for up to %v (Options.Grace): %v", lastOK.UTC().Format(time.RFC3339Nano), g, err)})
			}
		}
		return cur.st, nil
	}
	ended := s.episode == stale
	if ended {
		s.episode = failing
	}
	s.mu.Unlock()
	if s.opts.Grace > 0 && cur != nil && !lastOK.IsZero() {
		err = fmt.Errorf("%w (the grace period of %v since the last read at %s is over)", err, s.opts.Grace, lastOK.UTC().Format(time.RFC3339))
	}
	if ended && f != nil {
		f(reins.StoreEvent{Failing: true, Since: lastOK, Reason: "etcdstore: the grace period is over and the cluster still cannot be reached; every decision is denied until it answers: " + err.Error()})
	}
	return nil, err
}

// Watch implements reins.Watcher: it calls f with the state each time the fleet's or the run's
// keys change, until ctx is done (then it returns nil). It survives the cluster going away: it
// watches again once it answers, starting with the current state, so no halt latched meanwhile
// is missed.
func (s *Store) Watch(ctx context.Context, f func(*reins.RunState)) error {
	var last *reins.RunState
	deliver := func() bool {
		st, err := s.Load(ctx)
		if err != nil {
			return false
		}
		if st != last {
			last = st
			f(st)
		}
		return true
	}
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		if !deliver() || s.v.cur.Load() == nil {
			if !sleep(ctx, backoff) {
				break
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		from := s.v.cur.Load().rev + 1
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		fch := s.v.c.Watch(wctx, s.v.l.fleet(), clientv3.WithPrefix(), clientv3.WithRev(from))
		rch := s.v.c.Watch(wctx, s.v.l.run(s.v.run), clientv3.WithPrefix(), clientv3.WithRev(from))
		ok := true
		for ok {
			var wr clientv3.WatchResponse
			select {
			case <-ctx.Done():
				cancel()
				return nil
			case wr, ok = <-fch:
			case wr, ok = <-rch:
			}
			if ok && (wr.Err() != nil || wr.Canceled) {
				ok = false
			}
			if ok && len(wr.Events) > 0 {
				deliver()
				backoff = 50 * time.Millisecond
			}
		}
		cancel()
		if !sleep(ctx, backoff) {
			break
		}
		backoff = min(2*backoff, 2*time.Second)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close stops keeping the run's liveness key and revokes its lease, so the run leaves
// Fleet.Status at once. The run's state stays (see Fleet.Forget). It does not close the client.
// Close is safe to call more than once.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.stopBeat()
		<-s.beatDone
		if id := clientv3.LeaseID(s.lease.Load()); id != 0 {
			ctx, cancel := s.v.call(context.Background())
			defer cancel()
			if _, rerr := s.v.c.Revoke(ctx, id); rerr != nil && !errors.Is(rerr, rpctypes.ErrLeaseNotFound) {
				err = fmt.Errorf("etcdstore: revoking the run's lease: %w", rerr)
			}
		}
	})
	return err
}

// beat keeps the run's member key: granted under a lease of TTL, renewed every TTL/3, rewritten
// when the run's last activity moved. A lease that expired (a long outage) is granted anew.
func (s *Store) beat(ctx context.Context) {
	defer close(s.beatDone)
	wrote := int64(-1)
	t := time.NewTicker(s.opts.TTL / 3)
	defer t.Stop()
	for {
		wrote = s.beatOnce(ctx, wrote)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Store) beatOnce(ctx context.Context, wrote int64) int64 {
	cctx, cancel := s.v.call(ctx)
	defer cancel()
	c := s.v.c
	id := clientv3.LeaseID(s.lease.Load())
	if id != 0 {
		if _, err := c.KeepAliveOnce(cctx, id); err != nil {
			if !errors.Is(err, rpctypes.ErrLeaseNotFound) {
				if ctx.Err() == nil {
					s.log.Warn("etcdstore: the run's lease could not be renewed", "run", s.opts.RunID, "err", err)
				}
				return wrote
			}
			id = 0
		}
	}
	if id == 0 {
		g, err := c.Grant(cctx, int64(s.opts.TTL/time.Second))
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("etcdstore: the run's lease could not be granted", "run", s.opts.RunID, "err", err)
			}
			return -1
		}
		id, wrote = g.ID, -1
		s.lease.Store(int64(id))
	}
	last := s.lastActive.Load()
	if last == wrote {
		return wrote
	}
	info := memberInfo{Run: s.opts.RunID, Host: s.host, PID: os.Getpid(), Started: s.started}
	if last != 0 {
		info.LastActive = time.Unix(0, last).UTC()
	}
	b, err := encode(info)
	if err == nil {
		_, err = c.Put(cctx, s.v.l.member(s.opts.RunID), string(b), clientv3.WithLease(id))
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("etcdstore: the run's member key could not be written", "run", s.opts.RunID, "err", err)
		}
		return wrote
	}
	return last
}
