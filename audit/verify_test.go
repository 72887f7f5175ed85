package audit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

// buildLog writes n records to a fresh log and returns its path and its lines (without
// newlines).
func buildLog(t *testing.T, n int, opts *audit.JSONLOptions) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, opts)
	writeN(t, s, 0, n)
	require.NoError(t, s.Close(context.Background()))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return path, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// chained returns the line for r as a chained sink writes it, with a correct hash: what an
// attacker who knows the format can forge.
func chained(t *testing.T, r audit.Record) string {
	t.Helper()
	r.Hash = audit.Digest{}
	canon, err := audit.AppendJSON(nil, &r)
	require.NoError(t, err)
	h := sha256.Sum256(canon)
	return string(canon[:len(canon)-1]) + `,"hash":"` + hex.EncodeToString(h[:]) + `"}`
}

func parse(t *testing.T, line string) audit.Record {
	t.Helper()
	r, err := audit.ParseJSON([]byte(line))
	require.NoError(t, err)
	return r
}

// Tampering with a log in any way breaks its chain, and Verify names the first line that does
// not hold.
func TestVerify_Tampering(t *testing.T) {
	const n = 10
	tests := []struct {
		name   string
		tamper func(t *testing.T, lines []string) []string
		want   error // nil: Verify passes (only an anchored head tells)
		line   int
	}{
		{"edit a field", func(t *testing.T, l []string) []string {
			l[4] = strings.Replace(l[4], `"decision":"ALLOW"`, `"decision":"DENY"`, 1)
			return l
		}, audit.ErrAltered, 5},
		{"edit a field and its hash", func(t *testing.T, l []string) []string {
			r := parse(t, l[4])
			r.Decision = policy.Deny
			l[4] = chained(t, r)
			return l
		}, audit.ErrBrokenChain, 6},
		{"edit the form, not the content", func(t *testing.T, l []string) []string {
			l[4] = strings.Replace(l[4], `"kind":"decision"`, `"kind": "decision"`, 1)
			return l
		}, audit.ErrMalformed, 5},
		{"delete a line", func(t *testing.T, l []string) []string {
			return slices.Delete(l, 4, 5)
		}, audit.ErrBrokenChain, 5},
		{"delete the first line", func(t *testing.T, l []string) []string {
			return l[1:]
		}, audit.ErrBrokenChain, 1},
		{"swap two lines", func(t *testing.T, l []string) []string {
			l[3], l[4] = l[4], l[3]
			return l
		}, audit.ErrBrokenChain, 4},
		{"insert a copied line", func(t *testing.T, l []string) []string {
			return slices.Insert(l, 4, l[2])
		}, audit.ErrBrokenChain, 5},
		{"insert a forged line with a stale hash", func(t *testing.T, l []string) []string {
			r := parse(t, l[3])
			r.DecisionID = uuid.MustParse("11111111-2222-7333-8444-555555555555")
			forged, err := audit.AppendJSON(nil, &r)
			require.NoError(t, err)
			return slices.Insert(l, 4, string(forged))
		}, audit.ErrAltered, 5},
		{"insert a forged line chained to the one before", func(t *testing.T, l []string) []string {
			before := parse(t, l[3])
			r := before
			r.DecisionID = uuid.MustParse("11111111-2222-7333-8444-555555555555")
			r.Seq, r.Prev = before.Seq+1, before.Hash
			return slices.Insert(l, 4, chained(t, r))
		}, audit.ErrBrokenChain, 6},
		{"replay the last line", func(t *testing.T, l []string) []string {
			return append(l, l[len(l)-1])
		}, audit.ErrBrokenChain, n + 1},
		{"edit the line before the last", func(t *testing.T, l []string) []string {
			l[n-2] = strings.Replace(l[n-2], `"decision":"ALLOW"`, `"decision":"CONFIRM"`, 1)
			return l
		}, audit.ErrAltered, n - 1},
		{"truncate a line in the middle", func(t *testing.T, l []string) []string {
			l[4] = l[4][:len(l[4])/2]
			return l
		}, audit.ErrMalformed, 5},
		{"replace a line with garbage", func(t *testing.T, l []string) []string {
			l[4] = "rm -rf / # nothing to see here"
			return l
		}, audit.ErrMalformed, 5},
		{"insert an empty line", func(t *testing.T, l []string) []string {
			return slices.Insert(l, 4, "")
		}, audit.ErrMalformed, 5},
		{"end a line with CRLF", func(t *testing.T, l []string) []string {
			l[4] += "\r"
			return l
		}, audit.ErrMalformed, 5},
		{"drop the hash", func(t *testing.T, l []string) []string {
			r := parse(t, l[4])
			r.Hash = audit.Digest{}
			b, err := audit.AppendJSON(nil, &r)
			require.NoError(t, err)
			l[4] = string(b)
			return l
		}, audit.ErrMalformed, 5},
		// Rewriting the whole chain from the edit on, or cutting the tail off, keeps the chain
		// intact: only a head kept elsewhere shows it (see the test below).
		{"edit and rewrite the rest of the chain", func(t *testing.T, l []string) []string {
			prev := parse(t, l[3])
			for i := 4; i < len(l); i++ {
				r := parse(t, l[i])
				if i == 4 {
					r.Decision = policy.Deny
				}
				r.Prev = prev.Hash
				l[i] = chained(t, r)
				prev = parse(t, l[i])
			}
			return l
		}, nil, 0},
		{"delete the last line", func(t *testing.T, l []string) []string {
			return l[:len(l)-1]
		}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, lines := buildLog(t, n, &audit.JSONLOptions{Durability: audit.DurabilityBuffered})
			orig, err := audit.Verify(path)
			require.NoError(t, err)
			lines = tt.tamper(t, lines)
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))

			res, err := audit.Verify(path)
			if tt.want == nil {
				require.NoError(t, err)
				assert.NotEqual(t, orig.Head, res.Head, "the head differs from the one anchored before the tampering")
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			var le *audit.LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, path, le.File)
			assert.Equal(t, tt.line, le.Line, "%v", err)
			assert.Contains(t, err.Error(), path+":")
			assert.Nil(t, res.Torn)
			// A sink refuses to append after damage in the last two records (it checks only
			// those; Verify checks the whole chain).
			s, oerr := audit.OpenJSONL(path, nil)
			if tt.line >= len(lines)-1 {
				require.Error(t, oerr)
				assert.Contains(t, oerr.Error(), "damaged")
			} else {
				require.NoError(t, oerr)
				require.NoError(t, s.Close(context.Background()))
			}
		})
	}
}

// Cutting the file in the middle of a line looks like a crash (a torn last line); the records
// after the cut are gone, which only an anchored head shows.
func TestVerify_TruncatedFile(t *testing.T) {
	path, lines := buildLog(t, 10, nil)
	orig, err := audit.Verify(path)
	require.NoError(t, err)
	cut := len(strings.Join(lines[:4], "\n")) + 1 + len(lines[4])/2
	require.NoError(t, os.Truncate(path, int64(cut)))
	res, err := audit.Verify(path)
	require.NoError(t, err)
	require.NotNil(t, res.Torn)
	assert.Equal(t, 5, res.Torn.Line)
	assert.Equal(t, 4, res.Records)
	assert.Equal(t, uint64(4), res.Seq)
	assert.NotEqual(t, orig.Head, res.Head)
	assert.Equal(t, parse(t, lines[3]).Hash, res.Head)
}

func TestVerify_AcrossRotatedFiles(t *testing.T) {
	opts := &audit.JSONLOptions{MaxFileSize: 2500, Durability: audit.DurabilityBuffered}
	t.Run("edit in a rotated file", func(t *testing.T) {
		path, _ := buildLog(t, 20, opts)
		files, err := audit.Files(path)
		require.NoError(t, err)
		require.Greater(t, len(files), 3)
		b, err := os.ReadFile(files[1])
		require.NoError(t, err)
		lines := strings.SplitAfter(string(b), "\n")
		lines[1] = strings.Replace(lines[1], `"user_override":false`, `"user_override":true`, 1)
		require.NoError(t, os.WriteFile(files[1], []byte(strings.Join(lines, "")), 0o600))
		_, err = audit.Verify(path)
		var le *audit.LineError
		require.ErrorAs(t, err, &le)
		assert.ErrorIs(t, err, audit.ErrAltered)
		assert.Equal(t, files[1], le.File)
		assert.Equal(t, 2, le.Line)
	})
	t.Run("delete a rotated file", func(t *testing.T) {
		path, _ := buildLog(t, 20, opts)
		files, err := audit.Files(path)
		require.NoError(t, err)
		require.NoError(t, os.Remove(files[1]))
		_, err = audit.Verify(path)
		var le *audit.LineError
		require.ErrorAs(t, err, &le)
		assert.ErrorIs(t, err, audit.ErrBrokenChain)
		assert.Equal(t, files[2], le.File)
		assert.Equal(t, 1, le.Line)
	})
	t.Run("delete the oldest file", func(t *testing.T) {
		path, _ := buildLog(t, 20, opts)
		files, err := audit.Files(path)
		require.NoError(t, err)
		require.NoError(t, os.Remove(files[0]))
		_, err = audit.Verify(path)
		var le *audit.LineError
		require.ErrorAs(t, err, &le)
		assert.ErrorIs(t, err, audit.ErrBrokenChain)
		assert.Equal(t, files[1], le.File)
		assert.Contains(t, err.Error(), "does not start at the beginning")
	})
	t.Run("unterminated rotated file", func(t *testing.T) {
		path, _ := buildLog(t, 20, opts)
		files, err := audit.Files(path)
		require.NoError(t, err)
		fi, err := os.Stat(files[0])
		require.NoError(t, err)
		require.NoError(t, os.Truncate(files[0], fi.Size()-1))
		_, err = audit.Verify(path)
		assert.ErrorIs(t, err, audit.ErrMalformed, "only the log's last line may be torn")
	})
}

func TestVerify_NoLog(t *testing.T) {
	_, err := audit.Verify(filepath.Join(t.TempDir(), "none.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	for _, err := range audit.Scan(filepath.Join(t.TempDir(), "none.jsonl"), nil) {
		assert.ErrorIs(t, err, os.ErrNotExist)
	}
}

func TestVerify_EmptyLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	res, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Zero(t, res.Records)
	assert.True(t, res.Head.IsZero())
}

func TestVerify_LongLine(t *testing.T) {
	path, lines := buildLog(t, 3, nil)
	lines[1] = strings.Repeat("x", audit.MaxLineSize+10)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	_, err := audit.Verify(path)
	var le *audit.LineError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, audit.ErrMalformed)
	assert.Equal(t, 2, le.Line)
	// Scan reports the line and goes on.
	var recs, errs int
	for _, err := range audit.Scan(path, nil) {
		if err != nil {
			errs++
		} else {
			recs++
		}
	}
	assert.Equal(t, 2, recs)
	assert.Equal(t, 1, errs)
}

func TestScan_StopsWhenAsked(t *testing.T) {
	path, _ := buildLog(t, 5, nil)
	n := 0
	for _, err := range audit.Scan(path, nil) {
		require.NoError(t, err)
		n++
		if n == 2 {
			break
		}
	}
	assert.Equal(t, 2, n)
}

func TestFiles_Order(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	for _, name := range []string{"audit.jsonl.10", "audit.jsonl.2", "audit.jsonl.000001", "audit.jsonl.lock",
		"audit.jsonl.3.gz", "audit.jsonl.", "audit.jsonl.x1", "other.jsonl.4", "audit.jsonl"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "audit.jsonl.5"), 0o700))
	files, err := audit.Files(path)
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(dir, "audit.jsonl.000001"), filepath.Join(dir, "audit.jsonl.2"),
		filepath.Join(dir, "audit.jsonl.10"), path,
	}, files)
}
