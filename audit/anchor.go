package audit

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Anchor is a chain head kept off the machine that writes the log: the sequence number and hash
// of the record that was the log's last when the anchor was taken ([JSONL.Head]), and when. A
// run writes one periodically to a store the agent cannot rewrite (see reins.AnchorOptions);
// [VerifyAnchored] then checks the log against them.
//
// Since every record's hash covers the hash of the one before it, an anchor vouches for every
// record up to its Seq: rewriting any of them, even recomputing the whole chain after it,
// changes the hash at Seq. Records after the newest anchor are protected by the chain alone.
type Anchor struct {
	Seq    uint64    `json:"seq"`
	Digest Digest    `json:"digest"`
	Time   time.Time `json:"time"`
}

// ErrAnchor is matched by the error of [VerifyAnchored] when the log disagrees with an anchor:
// the record at the anchor's seq has another hash, or the log ends before it.
var ErrAnchor = errors.New("audit: the log disagrees with an anchored head")

// AnchorError is the error of a log that disagrees with an anchor. It matches ErrAnchor.
type AnchorError struct {
	// Anchor is the first anchor (by seq) the log disagrees with.
	Anchor Anchor
	// File and Line locate the record at Anchor.Seq, and Got is its hash; when the log ends
	// before Anchor.Seq, File is empty and End is the seq of the log's last record.
	File string
	Line int
	Got  Digest
	End  uint64
}

// Error implements error.
func (e *AnchorError) Error() string {
	at := e.Anchor.Time.UTC().Format(time.RFC3339)
	if e.File == "" {
		return fmt.Sprintf("audit: the log ends at seq %d, before seq %d anchored at %s (hash %s): records were cut off or lost",
			e.End, e.Anchor.Seq, at, e.Anchor.Digest)
	}
	return fmt.Sprintf("audit: %s:%d: seq %d has hash %s, but the anchor taken at %s says %s: the log was rewritten up to here",
		e.File, e.Line, e.Anchor.Seq, e.Got, at, e.Anchor.Digest)
}

// Is reports whether target is ErrAnchor.
func (e *AnchorError) Is(target error) bool { return target == ErrAnchor }

// VerifyAnchored verifies the log whose active file is path as [Verify] does, and checks it
// against anchors (in any order): the record at each anchor's seq must have the anchor's hash,
// and the log must reach the newest anchor. A log rewritten after the fact, chain recomputed and
// all, passes Verify but not VerifyAnchored, as long as an anchor at or after the first rewritten
// record was taken before the rewrite.
//
// The error is Verify's (a [*LineError]) when the chain itself is broken before the first anchor
// that disagrees, and otherwise a [*AnchorError] naming that anchor (the one with the lowest
// seq). An anchor with seq 0 or no digest is an error: it cannot have come from a log. A torn
// last line counts as absent: a log whose newest anchored record was torn off lost an
// acknowledged record.
func VerifyAnchored(path string, anchors []Anchor) (VerifyResult, error) {
	as := slices.Clone(anchors)
	for i, a := range as {
		if a.Seq == 0 || a.Digest.IsZero() {
			return VerifyResult{}, fmt.Errorf("audit: anchor %d (seq %d, digest %s) is not a chain head", i+1, a.Seq, a.Digest.hexOrNone())
		}
	}
	slices.SortStableFunc(as, func(a, b Anchor) int { return cmp.Compare(a.Seq, b.Seq) })
	next := 0
	res, err := verify(path, func(p *position, r *Record) error {
		for next < len(as) && as[next].Seq == r.Seq {
			if as[next].Digest != r.Hash {
				return &AnchorError{Anchor: as[next], File: p.file, Line: p.line, Got: r.Hash}
			}
			next++
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if next < len(as) {
		return res, &AnchorError{Anchor: as[next], End: res.Seq}
	}
	return res, nil
}
