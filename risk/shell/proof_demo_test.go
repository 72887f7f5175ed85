//go:build linux

package shell_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk/shell"
)

// TestProofCatchesAMisclassifiedRow shows that the proofs hold a table to what the program does:
// each case is a row that passes its proof, then the same row with its table entry made to lie
// (an option that writes or reads its value listed as a plain value), whose proof must fail
// with the finding the lie hides.
func TestProofCatchesAMisclassifiedRow(t *testing.T) {
	h := newProofHarness(t, t.TempDir())
	for _, tc := range []struct {
		name, context, option, line, class string
	}{
		// sort -o writes its value: called a plain value, the line is read-only and its write
		// of out.txt is outside the claim.
		{"a write called read-only", "sort", "--output", "sort --output=out.txt data.txt", classWrite},
		// sort --files0-from reads the file its value names: called a plain value, the canary
		// it opens is not reported.
		{"a read not reported", "sort", "--files0-from", "sort --files0-from=" + proofProbe, classRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			honest := h.prove(context.Background(), proofRow{Entry: "demo", Line: tc.line})
			require.NoError(t, honest.Err)
			require.Empty(t, honest.Skipped, "the honest row must be bounded, or nothing runs")
			require.Empty(t, honest.Findings, "the honest row passes its proof")

			restore, ok := shell.ProofMisclassify(tc.context, tc.option, 0)
			require.True(t, ok, "%s %s is in the tables", tc.context, tc.option)
			lying := h.prove(context.Background(), proofRow{Entry: "demo", Line: tc.line})
			restore()
			require.NoError(t, lying.Err)
			require.Empty(t, lying.Skipped, "the lying row is bounded too: it runs")
			var classes []string
			for _, f := range lying.Findings {
				classes = append(classes, f.Class)
			}
			assert.Contains(t, classes, tc.class, "the proof of the lying row must fail: %v", lying.Findings)
		})
	}
}
