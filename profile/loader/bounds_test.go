package loader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/profile/loader"
)

// laughs is issue 23's example: a 34 KB YAML file within every documented size limit whose
// blocklist is 10,000 uses of one alias to a 4,000-byte string: about 40 MB as JSON.
func laughs() string {
	return "$comment: &a \"" + strings.Repeat("x", 4000) + "\"\nshell_blocklist: [*a" + strings.Repeat(",*a", 9999) + "]\n"
}

// nestedLaughs is the classic billion laughs: each level is ten uses of the level below.
func nestedLaughs(levels int) string {
	var b strings.Builder
	b.WriteString("$comment: &l0 \"lol\"\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "x%d: &l%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// TestYAMLAliasExpansionIsBounded: a YAML file may not stand for more than a JSON file could
// hold once its aliases are expanded (1 MiB counted as the JSON it converts to, and 200,000
// values). The 34 KB file and a nested billion laughs are refused promptly, in bounded
// memory, with an error naming the file and the limit; a file that uses aliases within the
// budget loads. Not parallel: it measures allocations.
func TestYAMLAliasExpansionIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name, content, reason string
	}{
		{"34 KB expanding to 40 MB", laughs(), "the YAML stands for more than 1048576 bytes of JSON once its aliases are expanded"},
		{"billion laughs", nestedLaughs(9), "more than 200000 values (aliases count each time they are used)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Less(t, len(tc.content), 64<<10, "the file is small")
			dir := t.TempDir()
			file := filepath.Join(dir, "profile.yaml")
			require.NoError(t, os.WriteFile(file, []byte(tc.content), 0o644))
			var err error
			boundedBy(t, "Load", 32<<20, func() error {
				_, err = loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: "profile.yaml"})
				return err
			})
			requireLoadError(t, err, file, tc.reason)
			require.Len(t, loader.Errors(err), 1)
		})
	}
	t.Run("aliases within the budget", func(t *testing.T) {
		dir := t.TempDir()
		content := "shell_blocklist: &b [\"make deploy\", \"npm publish\"]\nnetwork_allowlist: &n [\"api.example\"]\napproval:\n  denied_paths: [\"~/.kube\"]\n  allowed_tools: *n\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "profile.yaml"), []byte(content), 0o644))
		l, err := loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: "profile.yaml"})
		require.NoError(t, err)
		assert.Contains(t, l.Profile.AllowedTools, "api.example")
	})
}

// bigValidFile returns a valid user file of about 350 KB: lists of thousands of entries, and
// host groups and rules, every part of which decoding, validation and the checks walk.
func bigValidFile() string {
	var b strings.Builder
	b.WriteString(`{"active_profile": "PROFILE-DEV", "shell_blocklist": [`)
	for i := range 4000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"blocked-tool-%05d --with-some-long-option"`, i)
	}
	b.WriteString(`], "host_groups": {`)
	for g := range 20 {
		if g > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"group-%02d": [`, g)
		for i := range 200 {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `"host-%03d.group-%02d.example.com"`, i, g)
		}
		b.WriteString("]")
	}
	b.WriteString(`}, "custom_rules": [`)
	for i := range 300 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": "deny-%03d", "priority": %d, "condition": {"command_pattern": "^tool-%03d( |$)", "hosts": ["@group-%02d"]}, "action": "DENY"}`, i, i%7, i, i%20)
	}
	b.WriteString("]}")
	return b.String()
}

// countingCtx is a context whose Err becomes context.DeadlineExceeded at its n-th call: a
// deadline that passes at a chosen point of the load, without timing.
type countingCtx struct {
	context.Context
	n, calls atomic.Int64
}

func (c *countingCtx) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *countingCtx) Done() <-chan struct{} { return nil }

// TestLoadHonoursTheDeadlineThroughout: a load of a large valid file looks at its context all
// along (reading, decoding, validation, the checks and the merge), not only while reading: with
// a deadline that passes at the k-th look, for every k, the load stops with the context's
// error, as a *Error naming the file while the file is processed. A deadline already past, or
// one of a millisecond, stops it too.
func TestLoadHonoursTheDeadlineThroughout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "profile.json")
	require.NoError(t, os.WriteFile(file, []byte(bigValidFile()), 0o644))
	opts := &loader.Options{UserDir: dir}

	never := &countingCtx{Context: context.Background()}
	never.n.Store(1 << 62)
	l, err := loader.Load(never, opts)
	require.NoError(t, err, "the file is valid")
	assert.Len(t, l.Profile.HostGroups, 23)
	looks := never.calls.Load()
	t.Logf("a load of %d bytes looks at its context %d times", len(bigValidFile()), looks)
	require.Greater(t, looks, int64(100), "the context is looked at during decoding, validation and checks, not only when reading")

	var at []int64
	for k := int64(1); k <= 8; k++ {
		at = append(at, k)
	}
	for i := int64(1); i <= 12; i++ {
		at = append(at, looks*i/12)
	}
	for _, k := range at {
		ctx := &countingCtx{Context: context.Background()}
		ctx.n.Store(k)
		_, err := loader.Load(ctx, opts)
		require.ErrorIs(t, err, context.DeadlineExceeded, "deadline at look %d of %d", k, looks)
		for _, e := range loader.Errors(err) {
			assert.Equal(t, file, e.File, "look %d", k)
		}
	}

	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = loader.Load(past, opts)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	_, err = loader.Load(short, opts)
	if err != nil { // a fast machine may finish first; if it does not, the error is the deadline's
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
}

// TestHostileContentIsBounded: content within the file size limit that once cost memory or
// time out of proportion to its size is refused or loaded promptly: a key of 50 KB over 2,000
// values (each value's pointer held the key), 200,000 invalid list entries (every one a problem
// the schema reported), and 75,000 unknown keys. At most 100 problems are reported, then one
// saying there were more. Not parallel: it measures allocations.
func TestHostileContentIsBounded(t *testing.T) {
	var unknown strings.Builder
	unknown.WriteString(`{"k0": 1`)
	for i := 1; i < 75_000; i++ {
		fmt.Fprintf(&unknown, `, "k%d": 1`, i)
	}
	unknown.WriteString("}")
	for _, tc := range []struct {
		name, content, reason string
		problems              int
	}{
		{"a long key over many values", `{"` + strings.Repeat("k", 50_000) + `": [0` + strings.Repeat(",0", 1999) + `]}`, "a key is longer than 1024 bytes", 1},
		{"200,000 invalid entries", `{"shell_allowlist": [1` + strings.Repeat(",1", 199_990) + `]}`, "maximum 10000 items", 101},
		{"200,000 invalid entries in a host group", `{"host_groups": {"a": [1` + strings.Repeat(",1", 199_990) + `]}}`, "maximum 10000 items", 101},
		{"75,000 unknown keys", unknown.String(), `unknown key "k0"`, 101},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "profile.json")
			require.NoError(t, os.WriteFile(file, []byte(tc.content), 0o644))
			var err error
			boundedBy(t, "Load", 256<<20, func() error {
				_, err = loader.Load(context.Background(), &loader.Options{UserDir: dir})
				return err
			})
			errs := loader.Errors(err)
			require.Equal(t, tc.problems, len(errs))
			assert.Contains(t, err.Error(), tc.reason)
			if tc.problems > 100 {
				assert.Equal(t, "more than 100 problems; only the first 100 are reported", errs[100].Reason)
			}
		})
	}
}

// boundedBy runs fn like bounded, with its own allocation limit and a longer guard against a
// hang (these loads decode and validate up to 200,000 values). Not for parallel tests: it reads
// the process's allocation counter.
func boundedBy(t *testing.T, what string, limit uint64, fn func() error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = fn()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: still running after 60s", what)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, limit, "%s: allocated %d bytes", what, after.TotalAlloc-before.TotalAlloc)
}
