package audit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
)

var allDurabilities = []audit.Durability{audit.DurabilitySync, audit.DurabilityGroup, audit.DurabilityBuffered}

func openLog(t *testing.T, path string, opts *audit.JSONLOptions) *audit.JSONL {
	t.Helper()
	s, err := audit.OpenJSONL(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func writeN(t *testing.T, s audit.Sink, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		require.NoError(t, s.Write(context.Background(), audit.Sample(i)), "record %d", i)
	}
}

// scanAll returns the log's records, failing on any error but a torn last line.
func scanAll(t *testing.T, path string, f *audit.Filter) []audit.Record {
	t.Helper()
	var out []audit.Record
	for r, err := range audit.Scan(path, f) {
		if errors.Is(err, audit.ErrTorn) {
			continue
		}
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.SplitAfter(string(b), "\n")
}

func TestJSONL_WriteScanVerify(t *testing.T) {
	for _, d := range allDurabilities {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			s := openLog(t, path, &audit.JSONLOptions{Durability: d})
			writeN(t, s, 0, 30)
			seq, head := s.Head()
			require.NoError(t, s.Close(context.Background()))

			got := scanAll(t, path, nil)
			require.Len(t, got, 30)
			for i, r := range got {
				want := audit.Sample(i)
				assert.Equal(t, uint64(i+1), r.Seq)
				assert.True(t, want.Time.Equal(r.Time), "record %d time", i)
				assert.Equal(t, time.UTC, r.Time.Location())
				assert.Equal(t, want.DecisionID, r.DecisionID)
				assert.Equal(t, want.Command, r.Command)
				assert.Equal(t, want.Targets, r.Targets)
				assert.Equal(t, want.Obligations, r.Obligations)
				assert.Equal(t, want.Risk, r.Risk)
				assert.Equal(t, want.DecidedBy, r.DecidedBy)
				assert.Equal(t, want.ProfileHash, r.ProfileHash)
				if i > 0 {
					assert.Equal(t, got[i-1].Hash, r.Prev, "record %d prev", i)
				} else {
					assert.True(t, r.Prev.IsZero())
				}
			}
			res, err := audit.Verify(path)
			require.NoError(t, err)
			assert.Equal(t, 30, res.Records)
			assert.Equal(t, uint64(30), res.Seq)
			assert.Equal(t, seq, res.Seq)
			assert.Equal(t, head, res.Head)
			assert.Nil(t, res.Torn)
			assert.Equal(t, []string{path}, res.Files)
		})
	}
}

func TestJSONL_OneLinePerRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, nil)
	r := audit.Sample(1)
	r.Reason = "line one\nline two\r\n\u2028done" // newlines inside fields are escaped
	require.NoError(t, s.Write(context.Background(), r))
	require.NoError(t, s.Close(context.Background()))
	lines := fileLines(t, path)
	require.Len(t, lines, 2) // one line and the empty rest after its newline
	assert.Equal(t, "", lines[1])
	assert.True(t, strings.HasSuffix(lines[0], "\"}\n"))
	got := scanAll(t, path, nil)
	require.Len(t, got, 1)
	assert.Equal(t, r.Reason, got[0].Reason)
}

func TestJSONL_ReopenContinuesChain(t *testing.T) {
	for _, d := range allDurabilities {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			for round := range 3 {
				s, err := audit.OpenJSONL(path, &audit.JSONLOptions{Durability: d})
				require.NoError(t, err)
				seq, _ := s.Head()
				assert.Equal(t, uint64(round*4), seq)
				writeN(t, s, round*4, 4)
				require.NoError(t, s.Close(context.Background()))
			}
			res, err := audit.Verify(path)
			require.NoError(t, err)
			assert.Equal(t, 12, res.Records)
		})
	}
}

func TestJSONL_Rotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	const max = 3000
	s := openLog(t, path, &audit.JSONLOptions{MaxFileSize: max, Durability: audit.DurabilityGroup})
	writeN(t, s, 0, 40)
	require.NoError(t, s.Close(context.Background()))

	files, err := audit.Files(path)
	require.NoError(t, err)
	require.Greater(t, len(files), 3)
	assert.Equal(t, path, files[len(files)-1])
	for i, f := range files[:len(files)-1] {
		assert.Equal(t, fmt.Sprintf("%s.%06d", path, i+1), f)
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.LessOrEqual(t, fi.Size(), int64(max), f)
		assert.Greater(t, fi.Size(), int64(max/2), "%s: rotated before it was nearly full", f)
	}
	res, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 40, res.Records)
	assert.Equal(t, files, res.Files)
	got := scanAll(t, path, nil)
	require.Len(t, got, 40)
	for i, r := range got {
		assert.Equal(t, audit.Sample(i).DecisionID, r.DecisionID)
	}

	// Reopening picks up the chain in the active file; after a crash between renaming the
	// active file and creating the next, it picks it up from the newest rotated file.
	last := fmt.Sprintf("%s.%06d", path, len(files))
	require.NoError(t, os.Rename(path, last))
	s = openLog(t, path, &audit.JSONLOptions{MaxFileSize: max})
	seq, _ := s.Head()
	assert.Equal(t, uint64(40), seq)
	writeN(t, s, 40, 3)
	require.NoError(t, s.Close(context.Background()))
	res, err = audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 43, res.Records)
}

func TestJSONL_NeverRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, &audit.JSONLOptions{MaxFileSize: -1, Durability: audit.DurabilityBuffered})
	writeN(t, s, 0, 200)
	require.NoError(t, s.Close(context.Background()))
	files, err := audit.Files(path)
	require.NoError(t, err)
	assert.Equal(t, []string{path}, files)
}

func TestJSONL_SecondWriterIsLockedOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, nil)
	_, err := audit.OpenJSONL(path, nil)
	require.ErrorIs(t, err, audit.ErrInUse)
	_, err = audit.OpenJSONL(path, &audit.JSONLOptions{Shared: true, LockTimeout: 30 * time.Millisecond})
	require.ErrorIs(t, err, audit.ErrInUse, "a shared writer waits for a non-shared one, but not forever")
	require.NoError(t, s.Close(context.Background()))
	s2, err := audit.OpenJSONL(path, nil)
	require.NoError(t, err)
	require.NoError(t, s2.Close(context.Background()))
}

func TestJSONL_Closed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, nil)
	require.NoError(t, s.Close(context.Background()))
	require.NoError(t, s.Close(context.Background()), "closing twice")
	err := s.Write(context.Background(), audit.Sample(1))
	require.ErrorIs(t, err, audit.ErrClosed)
	require.ErrorIs(t, s.Flush(context.Background()), audit.ErrClosed)
}

func TestJSONL_CanceledContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Write(ctx, audit.Sample(1)), context.Canceled)
	require.ErrorIs(t, s.Flush(ctx), context.Canceled)
	seq, _ := s.Head()
	assert.Zero(t, seq, "nothing was written")
}

func TestJSONL_RefusesBadRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, nil)
	writeN(t, s, 0, 2)
	tests := []struct {
		name   string
		modify func(*audit.Record)
		want   string
	}{
		{"invalid verdict", func(r *audit.Record) { r.Decision = policy.Verdict(9) }, "verdict"},
		{"time out of range", func(r *audit.Record) { r.Time = time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC) }, "timestamp"},
		{"line too long", func(r *audit.Record) { r.Command = strings.Repeat("x", audit.MaxLineSize) }, "MaxLineSize"},
	}
	for _, tt := range tests {
		r := audit.Sample(2)
		tt.modify(&r)
		err := s.Write(context.Background(), r)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
	writeN(t, s, 2, 2) // the chain is unharmed
	require.NoError(t, s.Close(context.Background()))
	res, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 4, res.Records)
}

func TestJSONL_Options(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		opts audit.JSONLOptions
		want string
	}{
		{"invalid durability", "a.jsonl", audit.JSONLOptions{Durability: 7}, "Durability"},
		{"negative buffer", "b.jsonl", audit.JSONLOptions{BufferSize: -1}, "BufferSize"},
		{"bad permission", "c.jsonl", audit.JSONLOptions{Perm: os.ModeDir | 0o600}, "Perm"},
		{"missing directory", "missing/d.jsonl", audit.JSONLOptions{}, "no such file"},
		{"a directory", ".", audit.JSONLOptions{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := audit.OpenJSONL(filepath.Join(dir, tt.path), &tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := audit.OpenJSONL("", nil)
	assert.Error(t, err)

	require.NoError(t, os.Symlink("/dev/null", filepath.Join(dir, "null.jsonl")))
	_, err = audit.OpenJSONL(filepath.Join(dir, "null.jsonl"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")

	s := openLog(t, filepath.Join(dir, "perm.jsonl"), &audit.JSONLOptions{Perm: 0o640})
	fi, err := os.Stat(s.Path())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

func TestDurability_Text(t *testing.T) {
	for _, d := range allDurabilities {
		text, err := d.MarshalText()
		require.NoError(t, err)
		var back audit.Durability
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, d, back)
	}
	var d audit.Durability = audit.DurabilityBuffered
	require.Error(t, d.UnmarshalText([]byte("fast")))
	assert.Equal(t, audit.DurabilitySync, d, "an unknown name falls back to the safest mode")
	_, err := audit.Durability(9).MarshalText()
	assert.Error(t, err)
	assert.Equal(t, "Durability(9)", audit.Durability(9).String())
}

func TestJSONL_RedactsByDefault(t *testing.T) {
	const secret = "s3cr3t-Pa55word"
	dir := t.TempDir()
	r := audit.Sample(1)
	r.Command = "curl -u admin:" + secret + " https://example.com"
	r.Targets = []string{"https://bot:" + secret + "@example.com/repo.git"}
	targets := r.Targets

	tests := []struct {
		name string
		opts audit.JSONLOptions
		keep bool
	}{
		{"default", audit.JSONLOptions{}, false},
		{"custom", audit.JSONLOptions{Redact: func(r *audit.Record) {
			r.Command = strings.ReplaceAll(r.Command, secret, "***")
			r.Targets = nil
		}}, false},
		{"keep secrets", audit.JSONLOptions{KeepSecrets: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".jsonl")
			s := openLog(t, path, &tt.opts)
			require.NoError(t, s.Write(context.Background(), r))
			require.NoError(t, s.Close(context.Background()))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.keep, strings.Contains(string(b), secret), "%s", b)
			assert.Equal(t, "https://bot:"+secret+"@example.com/repo.git", targets[0], "the caller's slice is untouched")
		})
	}
}

func TestJSONL_GroupCommitConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, &audit.JSONLOptions{Durability: audit.DurabilityGroup, MaxFileSize: 16 << 10})
	const writers, each = 16, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := audit.Sample(w*1000 + i)
				if err := s.Write(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close(context.Background()))
	res, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, writers*each, res.Records)
	seen := map[uuid.UUID]int{}
	for _, r := range scanAll(t, path, nil) {
		seen[r.DecisionID]++
	}
	assert.Len(t, seen, writers*each)
	for id, n := range seen {
		assert.Equal(t, 1, n, "record %s", id)
	}
}

func TestJSONL_BufferedFlush(t *testing.T) {
	dir := t.TempDir()
	t.Run("interval", func(t *testing.T) {
		path := filepath.Join(dir, "interval.jsonl")
		s := openLog(t, path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered, FlushInterval: 10 * time.Millisecond})
		writeN(t, s, 0, 3)
		require.Eventually(t, func() bool { return len(scanAll(t, path, nil)) == 3 }, 5*time.Second, 5*time.Millisecond)
	})
	t.Run("only on flush", func(t *testing.T) {
		path := filepath.Join(dir, "manual.jsonl")
		s := openLog(t, path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered, FlushInterval: -1})
		writeN(t, s, 0, 3)
		time.Sleep(20 * time.Millisecond)
		assert.Empty(t, scanAll(t, path, nil), "records stay in memory until Flush")
		require.NoError(t, s.Flush(context.Background()))
		assert.Len(t, scanAll(t, path, nil), 3)
	})
	t.Run("when full", func(t *testing.T) {
		path := filepath.Join(dir, "full.jsonl")
		s := openLog(t, path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered, FlushInterval: -1, BufferSize: 2000})
		writeN(t, s, 0, 10)
		n := len(scanAll(t, path, nil))
		assert.Greater(t, n, 0)
		assert.Less(t, n, 10)
		require.NoError(t, s.Close(context.Background()))
		assert.Len(t, scanAll(t, path, nil), 10)
	})
}

// Two sinks in one process on the same log in Shared mode behave like two processes: flock
// excludes open file descriptions, so each picks up the other's records and rotations.
func TestJSONL_SharedInProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	opts := &audit.JSONLOptions{Shared: true, Durability: audit.DurabilityBuffered, MaxFileSize: 8 << 10}
	a := openLog(t, path, opts)
	b := openLog(t, path, opts)
	var wg sync.WaitGroup
	for w, s := range []*audit.JSONL{a, b, a, b} {
		wg.Go(func() {
			for i := range 50 {
				if err := s.Write(context.Background(), audit.Sample(w*1000+i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, a.Close(context.Background()))
	require.NoError(t, b.Close(context.Background()))
	res, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 200, res.Records)
	assert.Greater(t, len(res.Files), 2)
	assert.Len(t, scanAll(t, path, nil), 200)
}

func TestJSONL_TornLastLine(t *testing.T) {
	for _, d := range allDurabilities {
		t.Run(d.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			s := openLog(t, path, &audit.JSONLOptions{Durability: d})
			writeN(t, s, 0, 3)
			require.NoError(t, s.Close(context.Background()))
			lines := fileLines(t, path)
			torn := lines[1][:len(lines[1])/2] // half a record, as a crash leaves it
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.WriteString(torn)
			require.NoError(t, err)
			require.NoError(t, f.Close())

			res, err := audit.Verify(path)
			require.NoError(t, err, "a torn last line is not tampering")
			require.NotNil(t, res.Torn)
			assert.Equal(t, 4, res.Torn.Line)
			assert.Equal(t, path, res.Torn.File)
			assert.ErrorIs(t, res.Torn, audit.ErrTorn)
			assert.Equal(t, 3, res.Records)

			var scanErrs []error
			for _, err := range audit.Scan(path, nil) {
				if err != nil {
					scanErrs = append(scanErrs, err)
				}
			}
			require.Len(t, scanErrs, 1)
			assert.ErrorIs(t, scanErrs[0], audit.ErrTorn)

			// Reopening truncates the torn bytes, says so in a recovery record, and appends.
			s = openLog(t, path, &audit.JSONLOptions{Durability: d})
			writeN(t, s, 3, 1)
			require.NoError(t, s.Close(context.Background()))
			res, err = audit.Verify(path)
			require.NoError(t, err)
			assert.Nil(t, res.Torn)
			assert.Equal(t, 5, res.Records)
			got := scanAll(t, path, nil)
			require.Len(t, got, 5)
			assert.Equal(t, audit.KindRecovery, got[3].Kind)
			assert.Contains(t, got[3].Reason, fmt.Sprintf("torn last line of %d bytes", len(torn)))
			assert.Equal(t, audit.Sample(3).DecisionID, got[4].DecisionID)
		})
	}
}

func TestJSONL_OnlyATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"timestamp":"2025-`), 0o600))
	res, err := audit.Verify(path)
	require.NoError(t, err)
	require.NotNil(t, res.Torn)
	assert.Equal(t, 1, res.Torn.Line)
	assert.Zero(t, res.Records)
	s := openLog(t, path, nil)
	writeN(t, s, 0, 1)
	require.NoError(t, s.Close(context.Background()))
	res, err = audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Records)
}

func TestJSONL_DamagedLastLineRefusesToAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, nil)
	writeN(t, s, 0, 3)
	require.NoError(t, s.Close(context.Background()))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := strings.Replace(string(b), `"decision":"ALLOW"`, `"decision":"DENY"`, 3)
	edited = strings.Replace(edited, `"decision":"DENY"`, `"decision":"ALLOW"`, 2) // only the third stays edited
	require.NotEqual(t, string(b), edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o600))
	_, err = audit.OpenJSONL(path, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 3:")
	assert.Contains(t, err.Error(), "damaged")
}

func TestJSONL_HeadTracksOtherWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	opts := &audit.JSONLOptions{Shared: true}
	a := openLog(t, path, opts)
	b := openLog(t, path, opts)
	writeN(t, a, 0, 2)
	writeN(t, b, 2, 1)
	seq, head := b.Head()
	res, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, res.Seq, seq)
	assert.Equal(t, res.Head, head)
	assert.Equal(t, uint64(3), seq)
}

// Concurrent writers of a buffered log, across rotations: the chain verifies and holds every
// record once.
func TestJSONL_BufferedConcurrentWritersVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openLog(t, path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered, MaxFileSize: 64 << 10, BufferSize: 4096})
	const writers, each = 8, 250
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := audit.Sample(w*each + i)
				r.Command = "curl -H 'Authorization: Bearer Zq7tokenZq7' https://x" // not hex: a hash never holds it
				assert.NoError(t, s.Write(context.Background(), r))
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close(context.Background()))
	res, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Equal(t, writers*each, res.Records)
	files, err := audit.Files(path)
	require.NoError(t, err)
	assert.Greater(t, len(files), 1, "the log rotated")
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "Zq7tokenZq7", "redacted before it was written")
	}
}
