package audit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

// anchoredLog writes n records and takes an anchor (the sink's head) after each record whose
// number (1-based) is in at. It returns the log's path, its lines and the anchors.
func anchoredLog(t *testing.T, n int, at ...int) (string, []string, []audit.Anchor) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered})
	var anchors []audit.Anchor
	for i := 1; i <= n; i++ {
		writeN(t, s, i-1, 1)
		for _, k := range at {
			if k == i {
				seq, d := s.Head()
				anchors = append(anchors, audit.Anchor{Seq: seq, Digest: d, Time: time.Unix(1700000000+int64(i), 0)})
			}
		}
	}
	require.NoError(t, s.Close(context.Background()))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return path, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), anchors
}

// rewriteFrom edits record i (0-based) and recomputes the chain from there to the end: what an
// attacker who can write the file and knows the format does. Verify cannot tell.
func rewriteFrom(t *testing.T, lines []string, i int) []string {
	t.Helper()
	out := append([]string(nil), lines...)
	var prev audit.Digest
	if i > 0 {
		prev = parse(t, out[i-1]).Hash
	}
	for j := i; j < len(out); j++ {
		r := parse(t, out[j])
		if j == i {
			r.Decision = policy.Deny
			r.Reason = "rewritten after the fact"
		}
		r.Prev = prev
		out[j] = chained(t, r)
		prev = parse(t, out[j]).Hash
	}
	return out
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
}

func TestVerifyAnchored(t *testing.T) {
	const n = 20
	tests := []struct {
		name   string
		tamper func(t *testing.T, l []string) []string
		seq    uint64 // the anchor named; 0: no error
		line   int    // its line; 0 when the log ends before it
	}{
		{"untouched", func(_ *testing.T, l []string) []string { return l }, 0, 0},
		{"a middle record rewritten, chain recomputed", func(t *testing.T, l []string) []string { return rewriteFrom(t, l, 7) }, 10, 10},
		{"an anchored record rewritten", func(t *testing.T, l []string) []string { return rewriteFrom(t, l, 9) }, 10, 10},
		{"the first record rewritten", func(t *testing.T, l []string) []string { return rewriteFrom(t, l, 0) }, 5, 5},
		{"a record after the last anchor rewritten", func(t *testing.T, l []string) []string { return rewriteFrom(t, l, 16) }, 0, 0},
		{"the tail cut off", func(_ *testing.T, l []string) []string { return l[:12] }, 15, 0},
		{"the tail cut off and rewritten", func(t *testing.T, l []string) []string { return rewriteFrom(t, l[:12], 11) }, 15, 0},
		{"the anchored record torn", func(_ *testing.T, l []string) []string {
			l = l[:15]
			l[14] = l[14][:len(l[14])/2]
			return l
		}, 15, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, lines, anchors := anchoredLog(t, n, 5, 10, 15)
			lines = tt.tamper(t, lines)
			if tt.name == "the anchored record torn" {
				require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600))
			} else {
				writeLines(t, path, lines)
			}
			_, err := audit.Verify(path)
			require.NoError(t, err, "the chain alone cannot tell")

			// Anchors in any order.
			shuffled := []audit.Anchor{anchors[2], anchors[0], anchors[1]}
			res, err := audit.VerifyAnchored(path, shuffled)
			if tt.seq == 0 {
				require.NoError(t, err)
				assert.Equal(t, len(lines), res.Records)
				return
			}
			require.ErrorIs(t, err, audit.ErrAnchor)
			var ae *audit.AnchorError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.seq, ae.Anchor.Seq, "the first anchor that disagrees: %v", err)
			if tt.line == 0 {
				assert.Empty(t, ae.File)
				assert.Contains(t, err.Error(), "before seq")
				return
			}
			assert.Equal(t, path, ae.File)
			assert.Equal(t, tt.line, ae.Line)
			assert.NotEqual(t, ae.Anchor.Digest, ae.Got)
			assert.Contains(t, err.Error(), path+":")
		})
	}
}

// A broken chain is reported as Verify reports it, before any anchor is looked at; malformed
// anchors are refused.
func TestVerifyAnchored_ChainAndBadAnchors(t *testing.T) {
	path, lines, anchors := anchoredLog(t, 10, 8)
	lines[2] = strings.Replace(lines[2], `"decision":"ALLOW"`, `"decision":"DENY"`, 1)
	writeLines(t, path, lines)
	_, err := audit.VerifyAnchored(path, anchors)
	require.ErrorIs(t, err, audit.ErrAltered)
	assert.NotErrorIs(t, err, audit.ErrAnchor)

	for _, a := range []audit.Anchor{{Seq: 0, Digest: anchors[0].Digest}, {Seq: 3}} {
		_, err := audit.VerifyAnchored(path, []audit.Anchor{a})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not a chain head")
	}
}
