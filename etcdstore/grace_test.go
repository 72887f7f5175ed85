package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/etcdstore"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/reinstest"
)

// runStateRecords returns the run_state records of log.
func runStateRecords(log *audit.Memory) []audit.Record {
	var out []audit.Record
	for _, r := range log.Records() {
		if r.Kind == audit.KindRunState {
			out = append(out, r)
		}
	}
	return out
}

// With a grace period, a run cut off from the cluster decides on the last state it read for at
// most that long, and says so in its log; then it denies, naming the cause; when the cluster
// answers again, that is recorded too. Updates are never served from memory.
func TestGracePeriod(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	p := newProxy(t, srv.client.Host)
	clock := reinstest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st, err := etcdstore.New(clientVia(t, p), &etcdstore.Options{Prefix: srv.prefix(), RunID: "a",
		Timeout: time.Second, Grace: time.Minute, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	log := audit.NewMemory(0)
	r := newRun(t, st, func(o *reins.Options) { o.Audit, o.Clock = log, clock })
	d, err := r.Check(ctx, readme)
	require.NoError(t, err)
	require.Equal(t, policy.Allow, d.Verdict)
	require.Empty(t, runStateRecords(log))

	p.down()
	clock.Advance(30 * time.Second)
	d, err = r.Check(ctx, readme)
	require.NoError(t, err, "within the grace period the last state read is served")
	assert.Equal(t, policy.Allow, d.Verdict)
	recs := runStateRecords(log)
	require.Len(t, recs, 1, "the start of the grace period is recorded once")
	assert.Equal(t, reins.CheckRunState+":stale", recs[0].RuleMatched)
	assert.Contains(t, recs[0].Reason, "cannot be reached")
	_, err = st.Update(ctx, func(s *reins.RunState) error { s.Seq++; return nil })
	require.ErrorIs(t, err, etcdstore.ErrUnavailable, "an update needs the cluster")

	clock.Advance(31 * time.Second)
	d, err = r.Check(ctx, readme)
	require.ErrorIs(t, err, reins.ErrRunState)
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Contains(t, d.Reason, "grace period of 1m0s")
	recs = runStateRecords(log)
	require.Len(t, recs, 2)
	assert.Equal(t, policy.Deny, recs[1].Decision, "the end of the grace period: the run denies from now on")

	p.up()
	waitAllowed(t, r)
	recs = runStateRecords(log)
	require.Len(t, recs, 3)
	assert.Equal(t, reins.CheckRunState+":current", recs[2].RuleMatched)
	assert.Contains(t, recs[2].Reason, "answers again")
}

// Without a grace period (the default), a partition denies at once.
func TestNoGraceDeniesAtOnce(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	p := newProxy(t, srv.client.Host)
	st, err := etcdstore.New(clientVia(t, p), &etcdstore.Options{Prefix: srv.prefix(), RunID: "a", Timeout: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	r := newRun(t, st, nil)
	d, err := r.Check(ctx, readme)
	require.NoError(t, err)
	require.Equal(t, policy.Allow, d.Verdict)
	p.down()
	d, err = r.Check(ctx, readme)
	require.ErrorIs(t, err, reins.ErrRunState)
	require.ErrorIs(t, err, etcdstore.ErrUnavailable)
	assert.Equal(t, policy.Deny, d.Verdict)
	assert.Contains(t, d.Reason, p.addr, "the reason names the cluster")
	p.up()
	waitAllowed(t, r)
}
