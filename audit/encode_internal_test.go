package audit

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzAppendJSON: for any strings and any UTC time, the append encoder writes what
// encoding/json writes (invalid UTF-8 aside, which it writes as a literal U+FFFD), and
// encoding/json reads the record back unchanged.
func FuzzAppendJSON(f *testing.F) {
	f.Add("go test ./...", "reason <b> & \"q\"", "a/b.go", int64(1741964966), int64(535897932))
	f.Add("\x00\x1f\x7f\u2028\u2029", "\xff\xfe é € 😀", "\\\t\n\r", int64(-62167219200), int64(0))
	f.Add("12345678<1234567", "abcdefgh\u2028", "", int64(253402300799), int64(999999999))
	f.Add(strings.Repeat("x", 17)+"\xc3", "&&&&&&&&>", "\xe2\x80", int64(0), int64(100))
	f.Add("curl -u a:b https://u:p@h/?token=t", "tool --password x", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", int64(1), int64(1))
	f.Fuzz(func(t *testing.T, command, reason, target string, sec, nsec int64) {
		r := sample(1)
		r.Command, r.Reason, r.Target = command, reason, target
		r.Targets = []string{target, reason}
		r.Time = time.Unix(sec, nsec%1e9).UTC()
		got, err := AppendJSON(nil, &r)
		want, jerr := json.Marshal(&r)
		if err == nil {
			// Redacted while encoding, with and without what the encoder keeps from the record
			// before: what RedactSecrets and AppendJSON write.
			red := r
			RedactSecrets(&red)
			wantRed, err := AppendJSON(nil, &red)
			require.NoError(t, err)
			var st encState
			for range 2 {
				gotRed, err := appendJSON(nil, &r, &st, true)
				require.NoError(t, err)
				require.Equal(t, string(wantRed), string(gotRed))
			}
			gotRed, err := appendJSON(nil, &r, nil, true)
			require.NoError(t, err)
			require.Equal(t, string(wantRed), string(gotRed))
		}
		if jerr != nil {
			require.Error(t, err, "encoding/json refuses the record (%v); so must AppendJSON", jerr)
			return
		}
		require.NoError(t, err)
		require.Equal(t, strings.ReplaceAll(string(want), `\ufffd`, "\uFFFD"), string(got))
		var back Record
		require.NoError(t, json.Unmarshal(got, &back))
		if utf8.ValidString(command) && utf8.ValidString(reason) && utf8.ValidString(target) {
			assert.Equal(t, r.Command, back.Command)
			assert.Equal(t, r.Reason, back.Reason)
			assert.Equal(t, r.Targets, back.Targets)
		}
		assert.True(t, r.Time.Equal(back.Time))
	})
}

// appendTime's own formatter agrees with time.Time.AppendText on UTC times of the years 0 to
// 9999, and defers to it elsewhere.
func TestAppendTime(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	times := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 1, time.UTC),
		time.Date(2000, 2, 29, 12, 0, 0, 100, time.UTC), time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("", 3600)),
		time.Date(2025, 3, 14, 15, 9, 26, 0, time.Local),
	}
	for range 20000 {
		times = append(times, time.Unix(rng.Int64N(253402300800+62167219200)-62167219200, rng.Int64N(1e9)).UTC())
	}
	for _, tm := range times {
		want, werr := tm.AppendText(nil)
		got, err := appendTime(nil, tm)
		if werr != nil {
			assert.Error(t, err, "%v", tm)
			continue
		}
		require.NoError(t, err, "%v", tm)
		require.Equal(t, string(want), string(got), "%v", tm)
	}
}

// The two-step encoder of the buffered sink writes, for any record and chain position, the
// line appendChained writes, and the same hash.
func TestChainEncoder_MatchesAppendChained(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var e chainEncoder
	for i := range 2000 {
		r := randomRecord(rng)
		seq := 1 + rng.Uint64N(1<<40)
		var prev Digest
		if i%3 != 0 {
			for j := range prev {
				prev[j] = byte(rng.Uint32())
			}
		}
		want := r
		want.Seq, want.Prev = seq, prev
		line, h, err := appendChained(nil, &want)
		perr := e.encode(&r, true, false)
		if err != nil {
			require.Error(t, perr, "record %d", i)
			continue
		}
		require.NoError(t, perr, "record %d", i)
		require.Equal(t, h, e.finish(seq, prev), "record %d", i)
		require.Equal(t, len(line), e.lineLen(), "record %d", i)
		require.Equal(t, string(line), string(e.appendLine(nil)), "record %d", i)
	}
}

// special8 answers exactly "is any of these bytes not plain", for every byte in every position
// and for random words; plainString agrees with the byte-by-byte answer at every length.
func TestSpecial8(t *testing.T) {
	t.Parallel()
	bytewise := func(b []byte) bool {
		for _, c := range b {
			if !plainByte[c] {
				return true
			}
		}
		return false
	}
	word := []byte("abcdefgh")
	for p := range 8 {
		for c := range 256 {
			w := append([]byte(nil), word...)
			w[p] = byte(c)
			require.Equal(t, bytewise(w), special8(load8(string(w), 0)), "byte %#x at %d", c, p)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const some = "az AZ09\"\\<>&\x00\x1f\x20\x7f\x80\xff!#%;=?@[]^`{}~\x21\x25\x27\x3b\x3d\x3f\x5b\x5d"
	for range 100_000 {
		n := rng.IntN(40)
		b := make([]byte, n)
		for i := range b {
			if rng.IntN(8) == 0 {
				b[i] = byte(rng.Uint32())
			} else {
				b[i] = some[rng.IntN(len(some))]
			}
		}
		if n >= 8 {
			require.Equal(t, bytewise(b[:8]), special8(load8(string(b), 0)), "%q", b[:8])
		}
		require.Equal(t, !bytewise(b), plainString(string(b)), "%q", b)
	}
}

// With a cache of the last second, appendTime writes what it writes without one, for times
// that share a second and times that do not.
func TestAppendTime_Cache(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	var tc timeCache
	base := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	for range 10_000 {
		tm := base.Add(time.Duration(rng.Int64N(int64(3 * time.Second))))
		if rng.IntN(50) == 0 {
			tm = time.Unix(rng.Int64N(253402300800), rng.Int64N(1e9)).UTC()
		}
		got, err := tc.appendTime(nil, tm)
		require.NoError(t, err)
		want, err := tm.AppendText(nil)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

// The lines the buffered pipeline writes, blanks filled in by chainLines, are the lines
// appendChained writes, with the same hashes, for any records and chain position.
func TestChainLines_MatchesAppendChained(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 14))
	var e chainEncoder
	for round := range 200 {
		var prev Digest
		seq := uint64(0)
		if round%2 == 1 {
			seq = 1 + rng.Uint64N(1<<40)
			prev[0], prev[31] = byte(rng.Uint32()), 1
		}
		head, var0 := prev, seq
		var batch, want []byte
		var lines []lineSlot
		for range 1 + rng.IntN(20) {
			r := randomRecord(rng)
			if err := e.encode(&r, false, false); err != nil {
				continue
			}
			seq++
			n := len(batch)
			batch = e.appendPending(batch, seq)
			require.Equal(t, e.pendingLen(seq), len(batch)-n)
			lines = append(lines, lineSlot{end: len(batch), prev: seq > 1})
			w := r
			w.Seq, w.Prev = seq, prev
			var err error
			want, prev, err = appendChained(want, &w)
			require.NoError(t, err)
		}
		require.Equal(t, prev, chainLines(batch, lines, head), "round %d from seq %d", round, var0)
		require.Equal(t, string(want), string(batch), "round %d from seq %d", round, var0)
	}
}

// Encoding with the default redaction writes what RedactSecrets followed by AppendJSON writes,
// for records whose fields hold secrets, characters JSON escapes, both or neither, and whose
// Reason and ProfileHash repeat from one record to the next (the encoder's memo) or change.
func TestAppendJSON_RedactWhileEncoding(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 16))
	texts := []string{
		"", "go test ./... -run X -count=1", "curl -H 'Authorization: Bearer abc' https://u:p@h/?token=t",
		"GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a", "a <b> & \"c\" \\ \n é \u2028 \xff",
		"--password <x>", "low and medium risk actions run automatically", "sha256:9f86d081884c7d65",
	}
	var st encState
	for i := range 5000 {
		r := randomRecord(rng)
		pick := func() string {
			if rng.IntN(3) == 0 {
				return r.Command + texts[rng.IntN(len(texts))]
			}
			return texts[rng.IntN(len(texts))]
		}
		r.Command, r.Target, r.Reason, r.ProfileHash = pick(), pick(), pick(), pick()
		r.Error, r.Note, r.Input = pick(), pick(), pick()
		r.Targets = []string{pick(), pick()}
		red := r
		RedactSecrets(&red)
		want, err := AppendJSON(nil, &red)
		require.NoError(t, err, "record %d", i)
		got, err := appendJSON(nil, &r, &st, true)
		require.NoError(t, err, "record %d", i)
		require.Equal(t, string(want), string(got), "record %d", i)
		plainWant, err := AppendJSON(nil, &r)
		require.NoError(t, err)
		plainGot, err := appendJSON(nil, &r, &st, false)
		require.NoError(t, err)
		require.Equal(t, string(plainWant), string(plainGot), "record %d without redaction", i)
	}
}
