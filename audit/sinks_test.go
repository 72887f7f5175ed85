package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

func TestSlog_Attributes(t *testing.T) {
	var buf bytes.Buffer
	s := audit.NewSlog(slog.NewJSONHandler(&buf, nil), nil)
	r := audit.Sample(1)
	r.Command = "deploy --token abc"
	r.Outcome, r.CheckpointID, r.Seq = audit.OutcomeRolledBack, "cp-7", 9
	r.Hash[0] = 1
	require.NoError(t, s.Write(context.Background(), r))

	var got map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	assert.Equal(t, "audit", got["msg"])
	assert.Equal(t, "INFO", got["level"])
	assert.Equal(t, "PROFILE-DEV", got["active_profile"])
	assert.Equal(t, "ALLOW", got["decision"])
	assert.Equal(t, "rule", got["decided_by"])
	assert.Equal(t, false, got["user_override"])
	assert.Equal(t, []any{"checkpoint", "notify"}, got["obligations"])
	assert.Equal(t, []any{"mutating", "exec"}, got["risk_levels"])
	assert.Equal(t, []any{"internal/server/handler.go"}, got["targets"])
	assert.Equal(t, "deploy --token "+audit.Mask, got["command"], "redacted by default")
	assert.Equal(t, "rolled_back", got["outcome"])
	assert.Equal(t, float64(9), got["seq"])
	assert.Equal(t, r.Hash.String(), got["hash"])
	assert.NotContains(t, got, "prev", "empty fields are left out as in the JSON encoding")
	assert.NotContains(t, got, "host")

	// The attributes decode back into the record, since their keys are the JSON names.
	var back audit.Record
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Equal(t, r.DecisionID, back.DecisionID)
	assert.True(t, r.Time.Equal(back.Time))
	assert.Equal(t, r.Obligations, back.Obligations)
	assert.Equal(t, r.Risk, back.Risk)
}

func TestSlog_Options(t *testing.T) {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})
	r := audit.Sample(1)
	r.Command = "deploy --token abc"

	err := audit.NewSlog(h, nil).Write(context.Background(), r)
	require.Error(t, err, "a handler that would drop the record is an error")
	assert.Contains(t, err.Error(), "not enabled")
	assert.Zero(t, buf.Len())

	s := audit.NewSlog(h, &audit.SlogOptions{Message: "decision", Level: slog.LevelWarn, KeepSecrets: true})
	require.NoError(t, s.Write(context.Background(), r))
	assert.Contains(t, buf.String(), `"msg":"decision"`)
	assert.Contains(t, buf.String(), `"level":"WARN"`)
	assert.Contains(t, buf.String(), "--token abc")

	buf.Reset()
	s = audit.NewSlog(h, &audit.SlogOptions{Level: slog.LevelError, Redact: func(r *audit.Record) { r.Command = "hidden" }})
	require.NoError(t, s.Write(context.Background(), r))
	assert.Contains(t, buf.String(), `"command":"hidden"`)

	assert.Error(t, audit.NewSlog(nil, nil).Write(context.Background(), r))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, audit.NewSlog(h, nil).Write(ctx, r), context.Canceled)
}

// failingHandler fails every record, like a handler whose collector is down.
type failingHandler struct{ slog.Handler }

func (failingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (failingHandler) Handle(context.Context, slog.Record) error {
	return errors.New("collector unreachable")
}

func TestSlog_HandlerErrorIsReturned(t *testing.T) {
	err := audit.NewSlog(failingHandler{}, nil).Write(context.Background(), audit.Sample(1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "collector unreachable")
}

func TestMemory_Ring(t *testing.T) {
	m := audit.NewMemory(3)
	for i := range 5 {
		require.NoError(t, m.Write(context.Background(), audit.Sample(i)))
	}
	got := m.Records()
	require.Len(t, got, 3)
	assert.Equal(t, 3, m.Len())
	for i, r := range got {
		assert.Equal(t, audit.Sample(i+2).DecisionID, r.DecisionID)
	}
	got[0].Targets[0] = "changed"
	assert.Equal(t, audit.Sample(2).Targets, m.Records()[0].Targets, "Records returns copies")
}

func TestFanOut(t *testing.T) {
	a, b := audit.NewMemory(0), audit.NewMemory(0)
	boom := errors.New("boom")
	failing := audit.SinkFunc(func(context.Context, audit.Record) error { return boom })
	r := audit.Sample(1)

	require.NoError(t, audit.FanOut{a, b}.Write(context.Background(), r))
	assert.Equal(t, 1, a.Len())
	assert.Equal(t, 1, b.Len())

	err := audit.FanOut{a, failing, b, nil}.Write(context.Background(), r)
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "fan-out sink 1")
	assert.Contains(t, err.Error(), "fan-out sink 3 is nil")
	assert.Equal(t, 2, a.Len(), "every sink gets the record even when one fails")
	assert.Equal(t, 2, b.Len())

	assert.Error(t, audit.FanOut{}.Write(context.Background(), r), "an empty fan-out keeps nothing")
}

func TestDiscard_DoesNotAllocate(t *testing.T) {
	r := audit.Sample(1)
	allocs := testing.AllocsPerRun(100, func() { _ = audit.Discard.Write(context.Background(), r) })
	assert.Zero(t, allocs)
}

func TestJSONL_BufferedWriteDoesNotAllocate(t *testing.T) {
	s := openLog(t, filepath.Join(t.TempDir(), "audit.jsonl"), &audit.JSONLOptions{Durability: audit.DurabilityBuffered})
	r := audit.Sample(1)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, r)) // grow the buffers
	allocs := testing.AllocsPerRun(1000, func() { _ = s.Write(ctx, r) })
	assert.Zero(t, allocs)
}

func TestFilter(t *testing.T) {
	base := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	corr := uuid.MustParse("0195a7c4-0000-7000-8000-000000000001")
	recs := []audit.Record{
		{Time: base, Kind: audit.KindDecision, Decision: policy.Allow, Tool: "bash", Profile: "DEV", CorrelationID: corr},
		{Time: base.Add(time.Minute), Kind: audit.KindDecision, Decision: policy.Deny, Tool: "edit", Profile: "DEV"},
		{Time: base.Add(2 * time.Minute), Kind: audit.KindHalt, Decision: policy.Deny, Profile: "SAFE", CorrelationID: corr},
		{Time: base.Add(3 * time.Minute), Kind: audit.KindDecision, Decision: policy.Confirm, Tool: "bash", Profile: "SAFE"},
	}
	tests := []struct {
		name string
		f    *audit.Filter
		want []int
	}{
		{"nil", nil, []int{0, 1, 2, 3}},
		{"zero", &audit.Filter{}, []int{0, 1, 2, 3}},
		{"since", &audit.Filter{Since: base.Add(time.Minute)}, []int{1, 2, 3}},
		{"until is exclusive", &audit.Filter{Until: base.Add(2 * time.Minute)}, []int{0, 1}},
		{"range", &audit.Filter{Since: base.Add(time.Minute), Until: base.Add(3 * time.Minute)}, []int{1, 2}},
		{"decision deny", &audit.Filter{Decisions: []policy.Verdict{policy.Deny}}, []int{1, 2}},
		{"decision allow or confirm", &audit.Filter{Decisions: []policy.Verdict{policy.Allow, policy.Confirm}}, []int{0, 3}},
		{"tool", &audit.Filter{Tools: []string{"bash"}}, []int{0, 3}},
		{"profile", &audit.Filter{Profiles: []string{"SAFE"}}, []int{2, 3}},
		{"kind", &audit.Filter{Kinds: []audit.Kind{audit.KindHalt}}, []int{2}},
		{"correlation", &audit.Filter{CorrelationID: corr}, []int{0, 2}},
		{"all together", &audit.Filter{Tools: []string{"bash"}, Profiles: []string{"DEV"}, CorrelationID: corr}, []int{0}},
		{"nothing", &audit.Filter{Tools: []string{"none"}}, nil},
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, nil)
	for _, r := range recs {
		require.NoError(t, s.Write(context.Background(), r))
	}
	require.NoError(t, s.Close(context.Background()))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for i := range recs {
				if tt.f.Match(&recs[i]) {
					got = append(got, i)
				}
			}
			assert.Equal(t, tt.want, got)
			var scanned []time.Time
			for r, err := range audit.Scan(path, tt.f) {
				require.NoError(t, err)
				scanned = append(scanned, r.Time)
			}
			var wantTimes []time.Time
			for _, i := range tt.want {
				wantTimes = append(wantTimes, recs[i].Time)
			}
			assert.Equal(t, wantTimes, scanned)
			n := 0
			for _, err := range tt.f.Records(audit.Scan(path, nil)) {
				require.NoError(t, err)
				n++
			}
			assert.Equal(t, len(tt.want), n)
		})
	}
}

func TestJSONL_ConcurrentWritersAndReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, &audit.JSONLOptions{Durability: audit.DurabilityGroup, MaxFileSize: 4096})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// Writers rotate the log every few records while readers open it; each writer stops after a
	// bounded number of records so readers never chase an ever-growing log.
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 500; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := s.Write(context.Background(), audit.Sample(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Readers see a consistent prefix: at most a torn last line, never a broken chain.
	for range 10 {
		_, err := audit.Verify(path)
		require.NoError(t, err)
		for _, err := range audit.Scan(path, nil) {
			if !errors.Is(err, audit.ErrTorn) {
				require.NoError(t, err)
			}
		}
	}
	close(stop)
	wg.Wait()
	require.NoError(t, s.Close(context.Background()))
	_, err := audit.Verify(path)
	require.NoError(t, err)
}
