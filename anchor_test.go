package reins_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// memAnchorer keeps anchors in memory and signals each one.
type memAnchorer struct {
	mu      sync.Mutex
	anchors []audit.Anchor
	fail    error
	got     chan struct{}
}

func newMemAnchorer() *memAnchorer { return &memAnchorer{got: make(chan struct{}, 100)} }

func (m *memAnchorer) Anchor(_ context.Context, a audit.Anchor) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.anchors = append(m.anchors, a)
	m.got <- struct{}{}
	return nil
}

func (m *memAnchorer) list() []audit.Anchor {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]audit.Anchor(nil), m.anchors...)
}

// tick advances the clock by d and waits until the anchoring timer fired and was armed again.
func tick(t *testing.T, c *fakeClock, d time.Duration) {
	t.Helper()
	require.Equal(t, 1, c.Pending(), "one anchoring timer is armed")
	c.Advance(d)
	deadline := time.Now().Add(10 * time.Second)
	for c.Pending() != 1 {
		require.True(t, time.Now().Before(deadline), "the anchoring tick did not arm the next one")
		time.Sleep(time.Millisecond)
	}
}

func anchoredRun(t *testing.T, to reins.Anchorer) (*reins.Run, *fakeClock, *audit.JSONL) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.OpenJSONL(path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close(context.Background()) })
	clock := newFakeClock()
	r, err := reins.New(context.Background(), profile.MustBuiltin("trusted"), &reins.Options{
		Workspace: []string{workspace(t)}, ConfigDir: filepath.Join(t.TempDir(), "reins"),
		Audit: log, Clock: clock, Anchor: &reins.AnchorOptions{To: to, Every: time.Minute}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r, clock, log
}

// A run anchors its log's head on its clock when the head moved, and once more at Close; a
// log rewritten afterwards, its chain recomputed, passes Verify and fails VerifyAnchored at
// the first anchor after the rewritten record.
func TestAnchoring(t *testing.T) {
	to := newMemAnchorer()
	r, clock, log := anchoredRun(t, to)
	path := log.Path()
	ctx := context.Background()
	checks := func(n int) {
		for range n {
			_, err := r.Check(ctx, shellAction("ls"))
			require.NoError(t, err)
		}
	}
	checks(5)
	tick(t, clock, time.Minute)
	require.Len(t, to.list(), 1)
	assert.Equal(t, uint64(5), to.list()[0].Seq)
	assert.True(t, clock.Now().Equal(to.list()[0].Time), "the anchor is taken at the run's clock time")

	tick(t, clock, time.Minute)
	require.Len(t, to.list(), 1, "no anchor when the head did not move")

	checks(5)
	tick(t, clock, 30*time.Second)
	require.Len(t, to.list(), 1, "not before Every")
	tick(t, clock, 30*time.Second)
	require.Len(t, to.list(), 2)
	assert.Equal(t, uint64(10), to.list()[1].Seq)

	checks(5)
	require.NoError(t, r.Close())
	require.Len(t, to.list(), 3, "Close anchors the last head")
	assert.Equal(t, uint64(15), to.list()[2].Seq)
	assert.Zero(t, clock.Pending(), "Close stops the ticks")
	require.NoError(t, r.Close())
	require.Len(t, to.list(), 3, "a second Close anchors nothing")

	require.NoError(t, log.Flush(ctx))
	_, err := audit.VerifyAnchored(path, to.list())
	require.NoError(t, err)

	// Rewrite record 7 and recompute the chain after it.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 15)
	var prev audit.Digest
	for i := range lines {
		rec, err := audit.ParseJSON([]byte(lines[i]))
		require.NoError(t, err)
		if i >= 6 {
			if i == 6 {
				rec.Decision, rec.Reason = policy.Deny, "nothing happened here"
			}
			rec.Prev, rec.Hash = prev, audit.Digest{}
			canon, err := audit.AppendJSON(nil, &rec)
			require.NoError(t, err)
			sum := sha256.Sum256(canon)
			lines[i] = string(canon[:len(canon)-1]) + `,"hash":"` + hex.EncodeToString(sum[:]) + `"}`
			rec.Hash = sum
		}
		prev = rec.Hash
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	_, err = audit.Verify(path)
	require.NoError(t, err, "the recomputed chain verifies on its own")
	_, err = audit.VerifyAnchored(path, to.list())
	require.ErrorIs(t, err, audit.ErrAnchor)
	var ae *audit.AnchorError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, uint64(10), ae.Anchor.Seq, "the first anchor that disagrees")
	assert.Equal(t, 10, ae.Line)
}

// An anchor that cannot be written is tried again at the next tick, and Close reports it.
func TestAnchoring_Failure(t *testing.T) {
	to := newMemAnchorer()
	to.fail = errors.New("store unreachable")
	r, clock, _ := anchoredRun(t, to)
	_, err := r.Check(context.Background(), shellAction("ls"))
	require.NoError(t, err)
	tick(t, clock, time.Minute)
	assert.Empty(t, to.list())
	to.mu.Lock()
	to.fail = nil
	to.mu.Unlock()
	tick(t, clock, time.Minute)
	require.Len(t, to.list(), 1, "the head is anchored once the store answers")

	to.mu.Lock()
	to.fail = errors.New("store unreachable")
	to.mu.Unlock()
	_, err = r.Check(context.Background(), shellAction("ls"))
	require.NoError(t, err)
	err = r.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "store unreachable")
}

func TestAnchoring_Options(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    reins.Options
		want string
	}{
		{"no store", reins.Options{Anchor: &reins.AnchorOptions{}}, "To is nil"},
		{"a sink without a head", reins.Options{Audit: audit.NewMemory(0), Anchor: &reins.AnchorOptions{To: newMemAnchorer()}}, "has no chain head"},
		{"negative interval", reins.Options{Anchor: &reins.AnchorOptions{To: newMemAnchorer(), Log: emptyHead{}, Every: -time.Second}}, "negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Workspace, o.ConfigDir = []string{workspace(t)}, filepath.Join(t.TempDir(), "reins")
			_, err := reins.New(context.Background(), profile.MustBuiltin("trusted"), &o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

type emptyHead struct{}

func (emptyHead) Head() (uint64, audit.Digest) { return 0, audit.Digest{} }

// reportingStore is a MemoryStore that reports store events on demand.
type reportingStore struct {
	reins.MemoryStore
	f func(reins.StoreEvent)
}

func (s *reportingStore) ReportTo(f func(reins.StoreEvent)) { s.f = f }

// A store's grace period is recorded: its start, and its end (current again, or failing).
func TestStoreEventsAreRecorded(t *testing.T) {
	st := &reportingStore{}
	f := newPlain(t, profile.MustBuiltin("trusted"), func(o *reins.Options) { o.Store = st })
	require.NotNil(t, st.f, "New subscribes the run to its store's events")
	since := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	st.f(reins.StoreEvent{Stale: true, Since: since, Reason: "serving the state read at 09:00: unreachable"})
	st.f(reins.StoreEvent{Since: since, Reason: "current again"})
	st.f(reins.StoreEvent{Failing: true, Since: since, Reason: "the grace ran out"})
	var got []audit.Record
	for _, rec := range f.sink.Records() {
		if rec.Kind == audit.KindRunState {
			got = append(got, rec)
		}
	}
	require.Len(t, got, 3)
	assert.Equal(t, reins.CheckRunState+":stale", got[0].RuleMatched)
	assert.Equal(t, policy.Allow, got[0].Decision)
	assert.Contains(t, got[0].Reason, "unreachable")
	assert.Equal(t, reins.CheckRunState+":current", got[1].RuleMatched)
	assert.Equal(t, policy.Allow, got[1].Decision)
	assert.Equal(t, policy.Deny, got[2].Decision, "a grace that ran out: the run denies from now on")
}
