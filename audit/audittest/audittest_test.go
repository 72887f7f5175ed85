package audittest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/audit/audittest"
)

func TestMemory(t *testing.T) {
	audittest.Run(t, func(t *testing.T) audittest.Harness {
		m := audit.NewMemory(0)
		return audittest.Harness{Sink: m, Records: func() ([]audit.Record, error) { return m.Records(), nil }}
	})
}

func TestJSONL(t *testing.T) {
	for _, d := range []audit.Durability{audit.DurabilitySync, audit.DurabilityGroup, audit.DurabilityBuffered} {
		for _, shared := range []bool{false, true} {
			name := d.String()
			if shared {
				name += "/shared"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				audittest.Run(t, func(t *testing.T) audittest.Harness {
					path := filepath.Join(t.TempDir(), "audit.jsonl")
					s, err := audit.OpenJSONL(path, &audit.JSONLOptions{Durability: d, Shared: shared, MaxFileSize: 4096})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close(context.Background()) })
					return audittest.Harness{Sink: s, Records: func() ([]audit.Record, error) {
						if err := s.Close(context.Background()); err != nil {
							return nil, err
						}
						if _, err := audit.Verify(path); err != nil {
							return nil, err
						}
						var out []audit.Record
						for r, err := range audit.Scan(path, nil) {
							if err != nil {
								return nil, err
							}
							out = append(out, r)
						}
						return out, nil
					}}
				})
			})
		}
	}
}

// lockedBuffer is a bytes.Buffer for concurrent handler writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func TestSlog(t *testing.T) {
	audittest.Run(t, func(t *testing.T) audittest.Harness {
		var buf lockedBuffer
		s := audit.NewSlog(slog.NewJSONHandler(&buf, nil), nil)
		return audittest.Harness{Sink: s, Records: func() ([]audit.Record, error) {
			var out []audit.Record
			sc := bufio.NewScanner(bytes.NewReader(buf.b.Bytes()))
			for sc.Scan() {
				var r audit.Record
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			return out, sc.Err()
		}}
	})
}

func TestFanOutAndRedact(t *testing.T) {
	audittest.Run(t, func(t *testing.T) audittest.Harness {
		a, b := audit.NewMemory(0), audit.NewMemory(0)
		return audittest.Harness{Sink: audit.Redact(audit.FanOut{a, b}, nil), Records: func() ([]audit.Record, error) {
			return b.Records(), nil
		}}
	})
}
