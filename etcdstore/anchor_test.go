package etcdstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
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

// tickAnchors advances the clock by d and waits until the run's anchoring timer fired and was
// armed again (the only timer of the run).
func tickAnchors(t *testing.T, c *reinstest.Clock, d time.Duration) {
	t.Helper()
	require.Equal(t, 1, c.Pending())
	c.Advance(d)
	deadline := time.Now().Add(30 * time.Second)
	for c.Pending() != 1 {
		require.True(t, time.Now().Before(deadline), "the anchoring tick did not arm the next one")
		time.Sleep(time.Millisecond)
	}
}

// A run anchors its audit log's head in the cluster; the operator reads the anchors back and
// verifies the log against them: a log rewritten afterwards, chain recomputed, is caught at the
// first anchor after the rewritten record.
func TestAnchorsInTheCluster(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	clock := reinstest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := srv.newStore(t, prefix, "a", func(o *etcdstore.Options) { o.Clock = clock })
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.OpenJSONL(path, nil)
	require.NoError(t, err)
	defer log.Close(ctx)
	r := newRun(t, st, func(o *reins.Options) {
		o.Audit, o.Clock = log, clock
		o.Anchor = &reins.AnchorOptions{To: st, Every: time.Minute}
	})
	for range 6 {
		_, err := r.Check(ctx, readme)
		require.NoError(t, err)
	}
	tickAnchors(t, clock, time.Minute)
	for range 6 {
		_, err := r.Check(ctx, readme)
		require.NoError(t, err)
	}
	require.NoError(t, r.Close())

	f := srv.newFleet(t, prefix, nil)
	anchors, err := f.Anchors(ctx, "a")
	require.NoError(t, err)
	require.Len(t, anchors, 2)
	assert.Equal(t, []uint64{6, 12}, []uint64{anchors[0].Seq, anchors[1].Seq})
	_, err = audit.VerifyAnchored(path, anchors)
	require.NoError(t, err)

	// Rewrite record 3 and recompute the chain from there.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var prev audit.Digest
	for i := range lines {
		rec, err := audit.ParseJSON([]byte(lines[i]))
		require.NoError(t, err)
		if i >= 2 {
			if i == 2 {
				rec.Decision, rec.Reason = policy.Deny, "never allowed"
			}
			rec.Prev, rec.Hash = prev, audit.Digest{}
			canon, err := audit.AppendJSON(nil, &rec)
			require.NoError(t, err)
			rec.Hash = sha256.Sum256(canon)
			lines[i] = string(canon[:len(canon)-1]) + `,"hash":"` + hex.EncodeToString(rec.Hash[:]) + `"}`
		}
		prev = rec.Hash
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	_, err = audit.Verify(path)
	require.NoError(t, err, "the chain alone cannot tell")
	_, err = audit.VerifyAnchored(path, anchors)
	var ae *audit.AnchorError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, uint64(6), ae.Anchor.Seq, "the first anchor that disagrees")

	// Anchors are written once: the same again is fine, another digest for the seq is refused.
	require.NoError(t, st.Anchor(ctx, anchors[1]))
	forged := anchors[1]
	forged.Digest[0] ^= 1
	require.ErrorIs(t, st.Anchor(ctx, forged), etcdstore.ErrAnchorConflict)
	// One overwritten behind the store's back is refused when read.
	c := srv.newClient(t)
	_, err = c.Put(ctx, prefix+"/anchors/a/00000000000000000006", `{"seq":6,"digest":"`+forged.Digest.String()+`","time":"2026-03-01T09:01:00Z"}`)
	require.NoError(t, err)
	_, err = f.Anchors(ctx, "a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "written 2 times")
	// So is one deleted and written again (its version starts again at 1).
	_, err = c.Delete(ctx, prefix+"/anchors/a/00000000000000000006")
	require.NoError(t, err)
	_, err = c.Put(ctx, prefix+"/anchors/a/00000000000000000006", `{"seq":6,"digest":"`+forged.Digest.String()+`","time":"2026-03-01T09:01:00Z"}`)
	require.NoError(t, err)
	_, err = f.Anchors(ctx, "a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "deleted and written again")
}

// A run keeps its newest MaxAnchors anchors.
func TestAnchorsArePruned(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	st := srv.newStore(t, prefix, "a", func(o *etcdstore.Options) { o.MaxAnchors = 3 })
	for seq := uint64(1); seq <= 5; seq++ {
		require.NoError(t, st.Anchor(ctx, audit.Anchor{Seq: seq * 10, Digest: audit.Digest{byte(seq)}, Time: time.Unix(int64(seq), 0)}))
	}
	anchors, err := srv.newFleet(t, prefix, nil).Anchors(ctx, "a")
	require.NoError(t, err)
	var seqs []uint64
	for _, a := range anchors {
		seqs = append(seqs, a.Seq)
	}
	assert.Equal(t, []uint64{30, 40, 50}, seqs)
	require.Error(t, st.Anchor(ctx, audit.Anchor{Seq: 0, Digest: audit.Digest{1}}))
}
