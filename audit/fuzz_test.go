package audit_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

// seedLines are canonical chained lines and near misses.
func seedLines(f *testing.F) [][]byte {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.jsonl")
	s, err := audit.OpenJSONL(path, &audit.JSONLOptions{KeepSecrets: true})
	require.NoError(f, err)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 4 {
		require.NoError(f, s.Write(context.Background(), audit.Sample(i)))
		require.NoError(f, s.Write(context.Background(), audit.RandomRecord(rng)))
	}
	require.NoError(f, s.Close(context.Background()))
	b, err := os.ReadFile(path)
	require.NoError(f, err)
	return bytes.SplitAfter(b, []byte("\n"))
}

// FuzzParseJSON: the parser never panics, and whatever it accepts re-encodes to the same bytes.
func FuzzParseJSON(f *testing.F) {
	for _, line := range seedLines(f) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		f.Add(line)
		if len(line) > 10 {
			f.Add(line[:len(line)/2])
			f.Add(bytes.Replace(line, []byte(`"ALLOW"`), []byte(`"ask"`), 1))
			f.Add(bytes.Replace(line, []byte(`":`), []byte(`": `), 1))
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"timestamp":"2025-01-01T00:00:00Z"}`))
	f.Add([]byte(`null`))
	f.Add([]byte("{\"reason\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := audit.ParseJSON(line)
		if err != nil {
			return
		}
		again, err := audit.AppendJSON(nil, &r)
		require.NoError(t, err, "an accepted record must encode")
		require.Equal(t, string(line), string(again))
	})
}

// FuzzLog: Verify and Scan never panic on any file content and report lines that exist; a
// log that verifies can be opened and appended to, and then verifies with no torn line.
func FuzzLog(f *testing.F) {
	lines := seedLines(f)
	whole := bytes.Join(lines, nil)
	f.Add(whole)
	f.Add(whole[:len(whole)-7])
	f.Add(bytes.Join(lines[:3], nil))
	f.Add(append(bytes.Join(lines[:2], nil), lines[3]...))
	f.Add(append(bytes.Join(lines[:3], nil), lines[1]...))
	f.Add([]byte{})
	f.Add([]byte("\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(memTempDir(t), "audit.jsonl")
		require.NoError(t, os.WriteFile(path, content, 0o600))
		nlines := bytes.Count(content, []byte("\n"))
		if len(content) > 0 && content[len(content)-1] != '\n' {
			nlines++
		}

		res, verr := audit.Verify(path)
		var le *audit.LineError
		if errors.As(verr, &le) {
			assert.GreaterOrEqual(t, le.Line, 1)
			assert.LessOrEqual(t, le.Line, nlines)
		}
		if res.Torn != nil {
			assert.Equal(t, nlines, res.Torn.Line, "only the last line can be torn")
		}
		scanned := 0
		for _, err := range audit.Scan(path, nil) {
			if err == nil {
				scanned++
			} else if errors.As(err, &le) {
				assert.LessOrEqual(t, le.Line, nlines)
			}
		}
		if verr != nil {
			return
		}
		assert.Equal(t, res.Records, scanned)
		// It verified: a sink opens it, recovers a torn tail, and appends.
		s, err := audit.OpenJSONL(path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered})
		require.NoError(t, err)
		require.NoError(t, s.Write(context.Background(), audit.Sample(1)))
		require.NoError(t, s.Close(context.Background()))
		after, err := audit.Verify(path)
		require.NoError(t, err)
		assert.Nil(t, after.Torn)
		want := res.Records + 1
		if res.Torn != nil {
			want++
		}
		assert.Equal(t, want, after.Records)
	})
}

// FuzzMaskSecrets: masking never panics, returns the input itself when it masks nothing, and
// masking again changes nothing.
func FuzzMaskSecrets(f *testing.F) {
	for _, s := range []string{
		"curl -H 'Authorization: Bearer abc' -u a:b https://u:p@h/x?token=t&x=1",
		"GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a git push --password x",
		"echo '-----BEGIN PRIVATE KEY-----\nabc' AKIAIOSFODNN7EXAMPLE eyJa.eyJb.c",
		"--password", "-u", "a=", "'", "Authorization:", "https://@", "x=\"", "--token '",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := audit.MaskSecrets(s)
		if !strings.Contains(m, audit.Mask) {
			require.Equal(t, s, m)
		}
		require.Equal(t, m, audit.MaskSecrets(m), "masking is idempotent")
	})
}

// memTempDir returns a temporary directory in memory (/dev/shm) where there is one, so that
// fuzzing runs at the speed of the code rather than of fsync; otherwise t.TempDir().
func memTempDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "reins-audit-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
