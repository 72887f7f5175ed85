package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

// A restore whose content does not fit the budget it reads in advance
// checks the objects first and streams them while writing, with the same
// result.
func TestRestoreBeyondTheReadAheadBudget(t *testing.T) {
	for _, budget := range []int64{0, 1, 100} {
		t.Run(fmt.Sprintf("budget=%d", budget), func(t *testing.T) {
			ctx := context.Background()
			dir := newRepo(t)
			c := newCheckpointer(t, dir, nil)
			if budget > 0 {
				checkpoint.SetFetchBudget(c, budget)
			}
			for i := 0; i < 5; i++ {
				writeFile(t, dir, fmt.Sprintf("f/%d.txt", i), strings.Repeat(fmt.Sprint(i), 40+i), 0o644)
			}
			writeFile(t, dir, "f/run.sh", "#!/bin/sh\n", 0o755)
			cp, err := c.Create(ctx, "target")
			require.NoError(t, err)
			want := readTree(t, dir, nil)
			for i := 0; i < 5; i++ {
				writeFile(t, dir, fmt.Sprintf("f/%d.txt", i), "edited", 0o644)
			}
			writeFile(t, dir, "f/run.sh", "#!/bin/sh\nexit 1\n", 0o644)
			writeFile(t, dir, "g/new.txt", "new", 0o644)
			res, err := c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			assert.Len(t, res.Changes, 7)
			assert.Equal(t, want, readTree(t, dir, nil))
		})
	}
}

// A repository with SHA-256 object ids: the private index the package
// writes, the cache tree and the trees a restore compares use 32-byte ids.
func TestSHA256Repository(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "--object-format=sha256", "-b", "main")
	writeFile(t, dir, "a/one.txt", "one\n", 0o644)
	writeFile(t, dir, "b/run.sh", "#!/bin/sh\n", 0o755)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "initial")
	backdate(t, dir)
	c := newCheckpointer(t, dir, nil)
	first, err := c.Create(ctx, "first")
	require.NoError(t, err)
	assert.Len(t, first.Commit, 64)
	want := readTree(t, dir, nil)
	writeFile(t, dir, "a/one.txt", "changed\n", 0o644)
	writeFile(t, dir, "c/new.txt", "new\n", 0o644)
	second, err := c.Create(ctx, "second")
	require.NoError(t, err)
	after := readTree(t, dir, nil)
	_, err = c.Rewind(ctx, first.ID)
	require.NoError(t, err)
	assert.Equal(t, want, readTree(t, dir, nil))
	_, err = c.Rewind(ctx, second.ID)
	require.NoError(t, err)
	assert.Equal(t, after, readTree(t, dir, nil))
}
