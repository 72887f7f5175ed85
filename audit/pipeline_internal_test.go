package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The buffered pipeline hands many small batches to the chainer while Head is asked in
// between: every head Head reports is the hash the record of that seq carries in the log, and
// the log verifies.
func TestJSONL_PipelineHeads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, err := OpenJSONL(path, &JSONLOptions{Durability: DurabilityBuffered, BufferSize: 3000, FlushInterval: -1, MaxFileSize: 40 << 10})
	require.NoError(t, err)
	heads := map[uint64]Digest{}
	ctx := context.Background()
	for i := range 300 {
		require.NoError(t, s.Write(ctx, sample(i)))
		if i%7 == 0 {
			seq, h := s.Head()
			require.Equal(t, uint64(i+1), seq)
			heads[seq] = h
		}
	}
	seq, h := s.Head()
	require.NoError(t, s.Close(ctx))
	res, err := Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 300, res.Records)
	assert.Equal(t, seq, res.Seq)
	assert.Equal(t, h, res.Head)
	assert.Greater(t, len(res.Files), 1, "the log rotated")
	n := 0
	for r, err := range Scan(path, nil) {
		require.NoError(t, err)
		if want, ok := heads[r.Seq]; ok {
			assert.Equal(t, want, r.Hash, "seq %d", r.Seq)
			n++
		}
	}
	assert.Equal(t, len(heads), n)
}

// When the chainer cannot write a batch, acknowledged records are lost: every later Write,
// Flush and Close fails, and what the file holds still verifies.
func TestJSONL_PipelineWriteFailureIsSticky(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, err := OpenJSONL(path, &JSONLOptions{Durability: DurabilityBuffered, BufferSize: 2000, FlushInterval: -1})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 5 {
		require.NoError(t, s.Write(ctx, sample(i)))
	}
	require.NoError(t, s.Flush(ctx))
	// Make the file read-only underneath the sink: the next batch's write(2) fails.
	s.mu.Lock()
	ro, err := os.Open(path)
	require.NoError(t, err)
	s.f.Close()
	s.f = ro
	s.mu.Unlock()
	var werr error
	for i := 5; i < 50 && werr == nil; i++ {
		werr = s.Write(ctx, sample(i))
	}
	require.Error(t, werr, "a Write after the failed batch fails")
	assert.ErrorContains(t, werr, "buffered records were lost")
	assert.Error(t, s.Write(ctx, sample(99)))
	assert.Error(t, s.Flush(ctx))
	assert.Error(t, s.Close(ctx))
	res, err := Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 5, res.Records)
}

// Batches queue behind the one the chainer holds. Once a batch fails, the chainer writes none
// of the batches queued after it (they would follow a gap in the chain): each comes back with
// the first failure, the file keeps only what verifies, and the sink fails from then on.
func TestJSONL_PipelineNothingWrittenAfterAFailedBatch(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, err := OpenJSONL(path, &JSONLOptions{Durability: DurabilityBuffered, BufferSize: 1 << 20, FlushInterval: -1})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, sample(0)))
	require.NoError(t, s.Flush(ctx))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	s.mu.Lock()
	for i := range maxInFlight {
		require.NoError(t, s.appendOne(sample(i+1)))
		c := &chainBatch{b: s.pending, lines: s.pendLines}
		if i == 0 {
			// The first batch claims to start the chain although the chain has a head: the
			// chainer refuses it before writing anything.
			c.lines[0].prev = false
		}
		s.pending, s.pendLines = nil, nil
		s.inFlight++
		s.work <- c // both queue before the chainer hands the first back
	}
	err = s.waitChainer()
	s.mu.Unlock()
	require.Error(t, err)
	assert.ErrorContains(t, err, "bug: a buffered line's prev does not match the chain")
	assert.ErrorContains(t, err, "buffered records were lost")

	after, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	assert.Equal(t, before, after, "no batch after the failed one was written")
	assert.Error(t, s.Write(ctx, sample(9)))
	assert.Error(t, s.Close(ctx))
	res, err := Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Records)
}

// appendOne encodes r and appends it to pending (s.mu held), as Write does.
func (s *JSONL) appendOne(r Record) error {
	e := s.getEncoder()
	defer s.putEncoder(e)
	if err := e.encode(&r, false, true); err != nil {
		return err
	}
	return s.appendPending(e)
}
