package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

const (
	// metaVersion is written; version 1 (no record of uncovered paths)
	// is still read.
	metaVersion       = 2
	maxLabelLen       = 1024
	maxCorrelationLen = 256
	maxScopedPaths    = 10000
)

// meta is the JSON body of a checkpoint commit's message.
type meta struct {
	V           int      `json:"v"`
	ID          string   `json:"id"`
	Label       string   `json:"label"`
	Correlation string   `json:"correlation,omitempty"`
	Reason      string   `json:"reason"`
	Scope       string   `json:"scope"`
	Paths       []string `json:"paths,omitempty"`
	// Uncovered is the object id of the blob listing what the snapshot
	// left out (see uncovered.go); version 2 only.
	Uncovered string `json:"uncovered,omitempty"`
}

// ValidID reports whether id is a checkpoint id: a UUID in canonical
// lowercase 8-4-4-4-12 form.
func ValidID(id string) bool {
	if len(id) != 36 {
		return false
	}
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

func checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%w: %q", ErrInvalidID, truncate(id, 80))
	}
	return nil
}

func newID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("checkpoint: generating id: %w", err)
	}
	return u.String(), nil
}

func checkText(field, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("checkpoint: %s: %d bytes, at most %d allowed", field, len(s), max)
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return fmt.Errorf("checkpoint: %s: not valid UTF-8 text", field)
	}
	return nil
}

// message renders the commit message: a readable subject and the JSON body.
func (m *meta) message() ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: encoding metadata: %w", err)
	}
	subject := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, m.Label)
	subject = strings.TrimSpace(subject)
	if r := []rune(subject); len(r) > 72 {
		subject = string(r[:72])
	}
	if subject == "" {
		subject = "(no label)"
	}
	var b bytes.Buffer
	b.WriteString("reins checkpoint: ")
	if m.Paths != nil {
		// A path-scoped snapshot says so where "git log" shows it.
		if r := []rune(m.Paths[0]); len(m.Paths) == 1 && len(r) <= 60 {
			b.WriteString("[scoped to " + strings.Map(func(r rune) rune {
				if unicode.IsControl(r) {
					return ' '
				}
				return r
			}, string(r)) + "] ")
		} else {
			fmt.Fprintf(&b, "[scoped to %d paths] ", len(m.Paths))
		}
	}
	b.WriteString(subject)
	b.WriteString("\n\n")
	b.Write(body)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// parseMeta decodes and validates a commit body written by message.
func parseMeta(body string) (meta, error) {
	var m meta
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("metadata: %w", err)
	}
	if dec.More() {
		return m, fmt.Errorf("metadata: trailing data")
	}
	switch {
	case m.V == 1 && m.Uncovered == "":
	case m.V == metaVersion:
		if !gitx.IsOID(m.Uncovered) {
			return m, fmt.Errorf("metadata: invalid record object id %q", truncate(m.Uncovered, 80))
		}
	default:
		return m, fmt.Errorf("metadata: unsupported version %d", m.V)
	}
	if !ValidID(m.ID) {
		return m, fmt.Errorf("metadata: invalid id %q", truncate(m.ID, 80))
	}
	if err := checkText("label", m.Label, maxLabelLen); err != nil {
		return m, fmt.Errorf("metadata: %w", err)
	}
	if err := checkText("correlation id", m.Correlation, maxCorrelationLen); err != nil {
		return m, fmt.Errorf("metadata: %w", err)
	}
	switch m.Reason {
	case ReasonCreate, ReasonBatch, ReasonBeforeRestore:
	default:
		return m, fmt.Errorf("metadata: unknown reason %q", truncate(m.Reason, 80))
	}
	if m.Paths != nil {
		if len(m.Paths) == 0 || len(m.Paths) > maxScopedPaths {
			return m, fmt.Errorf("metadata: %d scoped paths", len(m.Paths))
		}
		for _, p := range m.Paths {
			if err := checkRelPath(p); err != nil {
				return m, fmt.Errorf("metadata: %w", err)
			}
		}
		if !slices.IsSorted(m.Paths) || len(slices.Compact(slices.Clone(m.Paths))) != len(m.Paths) {
			return m, fmt.Errorf("metadata: scoped paths not sorted and unique")
		}
	}
	return m, nil
}

// fromRef builds a Checkpoint from a for-each-ref record, checking that the
// ref name and the recorded id agree.
func fromRef(r gitx.Ref) (Checkpoint, meta, error) {
	id, ok := strings.CutPrefix(r.Name, RefPrefix)
	if !ok || !ValidID(id) {
		return Checkpoint{}, meta{}, fmt.Errorf("checkpoint: unexpected ref %q", truncate(r.Name, 120))
	}
	m, err := parseMeta(r.Body)
	if err != nil {
		return Checkpoint{}, m, fmt.Errorf("checkpoint: %s: %w", r.Name, err)
	}
	if m.ID != id {
		return Checkpoint{}, m, fmt.Errorf("checkpoint: %s: records id %s", r.Name, m.ID)
	}
	return Checkpoint{
		ID:            id,
		Label:         m.Label,
		CorrelationID: m.Correlation,
		Reason:        m.Reason,
		Time:          time.Unix(r.Committed, 0).UTC(),
		Paths:         m.Paths,
		FilesChanged:  -1,
		Commit:        r.Commit,
		Tree:          r.Tree,
		record:        m.Uncovered,
	}, m, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
