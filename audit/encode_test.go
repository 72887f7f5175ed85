package audit

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// The append encoder must produce exactly what encoding/json produces for the same record, but
// for invalid UTF-8, which it writes as a literal U+FFFD rather than the escape \ufffd.
func TestAppendJSON_MatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		r := randomRecord(rng)
		want, err := json.Marshal(r)
		require.NoError(t, err, "record %d", i)
		want = []byte(strings.ReplaceAll(string(want), `\ufffd`, "\uFFFD"))
		got, err := AppendJSON(nil, &r)
		require.NoError(t, err, "record %d", i)
		require.Equal(t, string(want), string(got), "record %d", i)
	}
	s := sample(1)
	want, err := json.Marshal(s)
	require.NoError(t, err)
	got, err := AppendJSON(nil, &s)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestAppendJSON_Errors(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Record)
		want   string
	}{
		{"year after 9999", func(r *Record) { r.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "timestamp"},
		{"negative year", func(r *Record) { r.Time = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, "timestamp"},
		{"invalid verdict", func(r *Record) { r.Decision = policy.Verdict(7) }, "invalid verdict"},
		{"invalid obligations", func(r *Record) { r.Obligations = 0x80 }, "obligations"},
		{"invalid risk bits", func(r *Record) { r.Risk = risk.Set(1) }, "risk_levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sample(1)
			tt.modify(&r)
			_, err := AppendJSON(nil, &r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, jerr := json.Marshal(r)
			assert.Error(t, jerr, "encoding/json must refuse it too")
		})
	}
}

func TestAppendJSON_DoesNotAllocate(t *testing.T) {
	r := sample(1)
	buf := make([]byte, 0, 2048)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		buf, err = AppendJSON(buf[:0], &r)
		if err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	allocs = testing.AllocsPerRun(100, func() {
		buf, _, _ = appendChained(buf[:0], &r)
	})
	assert.Zero(t, allocs)
}

func TestParseJSON_RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		r := randomRecord(rng)
		line, err := AppendJSON(nil, &r)
		require.NoError(t, err)
		got, err := ParseJSON(line)
		require.NoError(t, err, "record %d: %s", i, line)
		again, err := AppendJSON(nil, &got)
		require.NoError(t, err)
		require.Equal(t, string(line), string(again))
		assert.True(t, r.Time.Equal(got.Time), "record %d time", i)
	}
}

func TestParseJSON_Strict(t *testing.T) {
	r := sample(1)
	canon, err := AppendJSON(nil, &r)
	require.NoError(t, err)
	tests := []struct {
		name string
		line string
	}{
		{"empty", ``},
		{"not an object", `[]`},
		{"trailing space", string(canon) + " "},
		{"trailing data", string(canon) + "{}"},
		{"unknown field", `{"timestamp":"2025-01-01T00:00:00Z","bogus":1}`},
		{"ask instead of CONFIRM", replaceOnce(string(canon), `"decision":"ALLOW"`, `"decision":"ask"`)},
		{"lower-case verdict", replaceOnce(string(canon), `"decision":"ALLOW"`, `"decision":"allow"`)},
		{"unknown verdict", replaceOnce(string(canon), `"decision":"ALLOW"`, `"decision":"MAYBE"`)},
		{"space after colon", replaceOnce(string(canon), `"kind":"decision"`, `"kind": "decision"`)},
		{"needless escape", replaceOnce(string(canon), `"kind":"decision"`, `"kind":"d\u0065cision"`)},
		{"upper-case key", replaceOnce(string(canon), `"kind":`, `"KIND":`)},
		{"obligations out of order", replaceOnce(string(canon), `["checkpoint","notify"]`, `["notify","checkpoint"]`)},
		{"explicit empty optional", replaceOnce(string(canon), `"tool":"bash"`, `"tool":"bash","host":""`)},
		{"uuid without dashes", replaceOnce(string(canon), `"0195a7c4-8d2e-7c1a-9b3f-4e5d6c7b8a90"`, `"0195a7c48d2e7c1a9b3f4e5d6c7b8a90"`)},
		{"fields reordered", `{"correlation_id":"0195a7c4-8d2e-7c1a-9b3f-4e5d6c7b8a90",` + replaceOnce(string(canon[1:]), `"correlation_id":"0195a7c4-8d2e-7c1a-9b3f-4e5d6c7b8a90",`, ``)},
		{"upper-case digest", string(canon[:len(canon)-1]) + `,"prev":"` + "AB" + string(make62()) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotEqual(t, string(canon), tt.line)
			_, err := ParseJSON([]byte(tt.line))
			assert.Error(t, err)
		})
	}
	got, err := ParseJSON(canon)
	require.NoError(t, err)
	assert.Equal(t, r.Targets, got.Targets)
	assert.Equal(t, r.Command, got.Command)
}

func make62() []byte {
	b := make([]byte, 62)
	for i := range b {
		b[i] = 'a'
	}
	return b
}

func replaceOnce(s, old, new string) string {
	i := indexOf(s, old)
	if i < 0 {
		panic("replaceOnce: " + old + " not in " + s)
	}
	return s[:i] + new + s[i+len(old):]
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestDigest_Text(t *testing.T) {
	var d Digest
	for i := range d {
		d[i] = byte(i)
	}
	text, err := d.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, d.String(), string(text))
	var back Digest
	require.NoError(t, back.UnmarshalText(text))
	assert.Equal(t, d, back)
	assert.Error(t, back.UnmarshalText([]byte("abc")))
	assert.Error(t, back.UnmarshalText([]byte("AB"+string(make62()))))
	assert.True(t, Digest{}.IsZero())
	assert.False(t, d.IsZero())
}

func TestDecidedByLayer(t *testing.T) {
	tests := []struct {
		layer policy.Layer
		want  DecidedBy
	}{
		{policy.LayerRule, DecidedByRule}, {policy.LayerMatrix, DecidedByMatrix},
		{policy.LayerHardStop, DecidedByHardStop}, {policy.LayerHalted, DecidedByHardStop},
		{policy.LayerBoundary, DecidedByBoundary}, {policy.LayerMode, DecidedByMode},
		{policy.LayerInput, DecidedByDefault}, {policy.LayerAudit, DecidedByDefault},
		{policy.LayerApproval, DecidedByDefault}, {policy.LayerObligation, DecidedByDefault},
		{policy.LayerNone, DecidedByDefault}, {policy.Layer(200), DecidedByDefault},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DecidedByLayer(tt.layer), "DecidedByLayer(%v)", tt.layer)
	}
}

func TestEncodeRejectsInvalidLayer(t *testing.T) {
	r := sample(1)
	r.Layer = policy.Layer(200)
	_, err := AppendJSON(nil, &r)
	require.ErrorContains(t, err, "layer")
}
