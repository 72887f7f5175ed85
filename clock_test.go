package reins_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Issue 24: the run's clock is injectable, so expiry is tested without sleeping. A grant that
// expires after an hour answers until the hour is up on the run's clock, then the action is
// asked about again; records carry the clock's time. (The wall-time meter and the approval
// timeout are tested on the fake clock in TestWallTimeMeter and TestApprovalTimeoutIsADenial,
// the operation timeout in TestConcurrencyLimitAndTimeout.)
func TestGrantExpiresOnTheRunsClock(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	ap := &script{answers: []reins.Answer{{Verdict: policy.Allow, Scope: reins.ForSession, By: "alice", Expires: time.Hour}}}
	f := newPlain(t, builtin(profile.PermissionTrusted), func(o *reins.Options) {
		o.Approver, o.Clock, o.Checkpointer = ap, clock, &nopCheckpointer{}
	})
	rm := shellAction("rm -rf build")
	_, err := f.r.Do(ctx, rm, ok)
	require.NoError(t, err)
	gs := f.grants(t)
	require.Len(t, gs, 1)
	assert.Equal(t, clock.Now(), gs[0].Created)
	assert.Equal(t, clock.Now().Add(time.Hour), gs[0].Expires)

	clock.Advance(time.Hour - time.Second)
	out, err := f.r.Do(ctx, rm, ok)
	require.NoError(t, err)
	assert.True(t, grantedBy(out.Decision), "still valid: %s", out.Decision)
	assert.Equal(t, 1, ap.count())

	clock.Advance(time.Second)
	assert.Empty(t, f.grants(t), "expired grants are not listed")
	d := f.check(t, rm)
	assert.Equal(t, policy.Confirm, d.Verdict, "expired: asked again")
	_, err = f.r.Do(ctx, rm, ok)
	require.ErrorIs(t, err, gate.ErrDenied, "the script refuses")
	assert.Equal(t, 2, ap.count())

	recs := f.sink.Records()
	require.NotEmpty(t, recs)
	assert.Equal(t, clock.Now(), recs[len(recs)-1].Time, "records carry the run's time")
	assert.Equal(t, clock.Now().UnixMilli(), unixMilliOfV7(recs[len(recs)-1].DecisionID), "decision ids carry the run's time")
}
