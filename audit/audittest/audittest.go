// Package audittest checks that an [audit.Sink] keeps the contract documented on
// [audit.Sink.Write], the way testing/slogtest checks slog handlers. Every sink reins ships
// passes it, and a host that writes its own sink (to a database, a message queue, a SIEM) runs
// it from a test:
//
//	func TestMySink(t *testing.T) {
//		audittest.Run(t, func(t *testing.T) audittest.Harness {
//			s := mysink.New(...)
//			return audittest.Harness{Sink: s, Records: s.ReadBack}
//		})
//	}
//
// It checks that the sink keeps every field of every kind of record, keeps records in the order
// they were written, is safe for concurrent use and keeps each record exactly once, does not
// hold on to the caller's slices, leaves the caller's record alone, and does not hang on a
// cancelled context. A sink that chains its records must number them 1, 2, 3, ... and link each
// to the one before it.
//
// It does not check durability (that a record survives a crash) or redaction: records here
// hold no secrets, so a sink that redacts by default keeps them unchanged.
package audittest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// Harness is one fresh sink under test.
type Harness struct {
	// Sink is the sink under test. It has kept no records yet.
	Sink audit.Sink
	// Records returns the records the sink kept, oldest first. Run calls it once, after every
	// Write has returned; it may flush or close the sink.
	Records func() ([]audit.Record, error)
}

// Run runs the conformance checks as subtests of t. It calls newSink for a fresh sink in each.
func Run(t *testing.T, newSink func(t *testing.T) Harness) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"Fields", testFields},
		{"Order", testOrder},
		{"Concurrent", testConcurrent},
		{"NoRetain", testNoRetain},
		{"Canceled", testCanceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newSink(t)
			require.NotNil(t, h.Sink, "Harness.Sink")
			require.NotNil(t, h.Records, "Harness.Records")
			c.run(t, h)
		})
	}
}

// Records returns the records the checks write: one of each kind, every field set in at least
// one, with strings JSON must escape and non-ASCII text.
func Records() []audit.Record {
	base := time.Date(2025, 6, 1, 9, 30, 15, 123456789, time.UTC)
	id := func(n byte) uuid.UUID {
		return uuid.UUID{0x01, 0x97, 0x2b, 0x5e, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, n}
	}
	corr := id(0xff)
	return []audit.Record{
		{
			Time: base, CorrelationID: corr, Profile: "PROFILE-DEV", Operation: "shell",
			Target: "src/main.go", Decision: policy.Allow, RuleMatched: "allow-go-test",
			Kind: audit.KindDecision, DecisionID: id(1), Layer: policy.LayerRule, DecidedBy: audit.DecidedByRule,
			Reason: `tests are fine: "quoted" <tag> & tab	newline
end`, Obligations: policy.Checkpoint | policy.Notify | policy.Sandbox,
			Risk: risk.Of(risk.Exec, risk.ReadOnly), Tool: "bash", Command: "go test ./... && echo ✓ 日本",
			Host: "proxy.golang.org", Targets: []string{"src/main.go", "src/main_test.go"},
			ProfileHash: "sha256:0123456789abcdef",
		},
		{
			Time: base.Add(time.Second), CorrelationID: corr, Profile: "PROFILE-DEV", Operation: "write",
			Target: ".git/config", Decision: policy.Deny, RuleMatched: "protected-path",
			Kind: audit.KindDecision, DecisionID: id(2), Layer: policy.LayerBoundary, DecidedBy: audit.DecidedByBoundary,
			Reason: "protected path", Risk: risk.Of(risk.Mutating), Tool: "edit_file", Targets: []string{".git/config"},
		},
		{
			Time: base.Add(2 * time.Second), CorrelationID: corr, Profile: "PROFILE-SAFE", Operation: "delete",
			Decision: policy.Confirm, RuleMatched: "matrix", UserOverride: true, Kind: audit.KindDecision,
			DecisionID: id(3), Layer: policy.LayerMatrix, DecidedBy: audit.DecidedByUser, Reason: "approved by a human",
			Risk: risk.Of(risk.Destructive), Tool: "rm",
		},
		{
			Time: base.Add(3 * time.Second), CorrelationID: corr, Profile: "PROFILE-DEV", Kind: audit.KindOutcome,
			DecisionID: id(1), Outcome: audit.OutcomeRolledBack, CheckpointID: "cp-0042",
			Error: "exit status 1: FAIL ./pkg", Reason: "rolled back after a failure",
		},
		{
			Time: base.Add(4 * time.Second), CorrelationID: id(5), Profile: "PROFILE-DEV", Decision: policy.Deny,
			RuleMatched: "hard-stop:budget", Kind: audit.KindHalt, DecisionID: id(5), Layer: policy.LayerHardStop,
			DecidedBy: audit.DecidedByHardStop, Reason: "budget exceeded: spent 12 of 10",
		},
		{
			Time: base.Add(5 * time.Second), CorrelationID: id(6), Profile: "PROFILE-DEV", Decision: policy.Allow,
			RuleMatched: "reset", UserOverride: true, Kind: audit.KindReset, DecisionID: id(6), Layer: policy.LayerHalted,
			DecidedBy: audit.DecidedByUser, Reason: "raised the budget",
		},
		{
			Time: base.Add(6 * time.Second), CorrelationID: id(7), Profile: "PROFILE-DEV", ProfileHash: "sha256:aa",
			Kind: audit.KindProfileSwitchRequested, DecisionID: id(7), RequestedProfile: "PROFILE-FULL-AUTO",
			RequestedProfileHash: "sha256:bb", Decision: policy.Confirm, Reason: "upgrade needs confirmation",
		},
		{
			Time: base.Add(7 * time.Second), CorrelationID: id(7), Profile: "PROFILE-DEV", Kind: audit.KindProfileSwitchRefused,
			DecisionID: id(8), RequestedProfile: "PROFILE-FULL-AUTO", Decision: policy.Deny, DecidedBy: audit.DecidedByUser,
			Reason: "the user declined",
		},
		{
			Time: base.Add(8 * time.Second), CorrelationID: id(9), Profile: "PROFILE-DEV", Kind: audit.KindProfileSwitchApplied,
			DecisionID: id(9), RequestedProfile: "PROFILE-SAFE", Decision: policy.Allow, DecidedBy: audit.DecidedByUser,
			Reason: "downgrade, at an operation boundary", Layer: policy.LayerNone, Obligations: 0,
		},
	}
}

// normalize clears what a sink may add or change without losing information: the chain fields
// and the time's location and monotonic reading.
func normalize(r audit.Record) audit.Record {
	r.Seq, r.Prev, r.Hash = 0, audit.Digest{}, audit.Digest{}
	r.Time = r.Time.UTC().Round(0)
	if len(r.Targets) == 0 {
		r.Targets = nil
	}
	return r
}

func read(t *testing.T, h Harness) []audit.Record {
	t.Helper()
	got, err := h.Records()
	require.NoError(t, err, "Harness.Records")
	checkChain(t, got)
	return got
}

// checkChain: if the sink chains its records, they are numbered from 1 and linked.
func checkChain(t *testing.T, got []audit.Record) {
	t.Helper()
	if len(got) == 0 || got[0].Seq == 0 {
		for i, r := range got {
			assert.Zero(t, r.Seq, "record %d: some records are chained and others not", i)
		}
		return
	}
	for i, r := range got {
		assert.Equal(t, uint64(i+1), r.Seq, "record %d: seq", i)
		assert.False(t, r.Hash.IsZero(), "record %d: a chained record has a hash", i)
		if i == 0 {
			assert.True(t, r.Prev.IsZero(), "the first record has no prev")
		} else {
			assert.Equal(t, got[i-1].Hash, r.Prev, "record %d: prev is the hash of the record before", i)
		}
	}
}

func testFields(t *testing.T, h Harness) {
	want := Records()
	for _, r := range want {
		require.NoError(t, h.Sink.Write(context.Background(), r), "Write(%s)", r.Kind)
	}
	got := read(t, h)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, normalize(want[i]), normalize(got[i]), "record %d (%s)", i, want[i].Kind)
	}
}

func testOrder(t *testing.T, h Harness) {
	base := Records()[0]
	var want []uuid.UUID
	for i := range 20 {
		r := base
		r.DecisionID[15] = byte(i)
		r.Time = base.Time.Add(time.Duration(20-i) * time.Second) // order is write order, not time order
		want = append(want, r.DecisionID)
		require.NoError(t, h.Sink.Write(context.Background(), r))
	}
	var ids []uuid.UUID
	for _, r := range read(t, h) {
		ids = append(ids, r.DecisionID)
	}
	assert.Equal(t, want, ids)
}

func testConcurrent(t *testing.T, h Harness) {
	const writers, each = 8, 25
	base := Records()[0]
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := base
				r.DecisionID[14], r.DecisionID[15] = byte(w), byte(i)
				r.Targets = []string{"w", "x"}
				if err := h.Sink.Write(context.Background(), r); err != nil {
					t.Errorf("writer %d: Write: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	seen := map[uuid.UUID]int{}
	for _, r := range read(t, h) {
		seen[r.DecisionID]++
	}
	assert.Len(t, seen, writers*each, "every record kept")
	for id, n := range seen {
		assert.Equal(t, 1, n, "record %s kept %d times", id, n)
	}
}

func testNoRetain(t *testing.T, h Harness) {
	r := Records()[0]
	targets := []string{"a.go", "b.go"}
	r.Targets = targets
	require.NoError(t, h.Sink.Write(context.Background(), r))
	assert.Equal(t, []string{"a.go", "b.go"}, targets, "Write modified the caller's slice")
	targets[0], targets[1] = "changed", "changed"
	got := read(t, h)
	require.Len(t, got, 1)
	assert.Equal(t, []string{"a.go", "b.go"}, got[0].Targets, "the sink kept the caller's slice")
}

func testCanceled(t *testing.T, h Harness) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- h.Sink.Write(ctx, Records()[0]) }()
	select {
	case err := <-done:
		if err != nil {
			assert.ErrorIs(t, err, context.Canceled, "an error for a cancelled context says so")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Write with a cancelled context did not return")
	}
	_, err := h.Records()
	require.NoError(t, err)
}
