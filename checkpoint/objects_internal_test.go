package checkpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// The tree comparison a restore makes through its cat-file session gives
// exactly what "git diff-tree -r --no-renames" gives, on random pairs of
// trees where files become directories and back, links and executable
// bits come and go.
func TestDiffTreesInMatchesDiffTree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gitIn(t, dir, nil, "init", "-q")
	c, err := New(ctx, dir, &Options{ShadowRoot: t.TempDir()})
	require.NoError(t, err)
	o, err := c.openObjects(ctx)
	require.NoError(t, err)
	defer o.close()

	rng := rand.New(rand.NewPCG(3, 9))
	names := []string{"a", "b", "a.txt", "a-b", "c d", "z"}
	pick := func() string {
		var parts []string
		for n := 1 + rng.IntN(3); n > 0; n-- {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		return strings.Join(parts, "/")
	}
	clear := func(p string) {
		for d := filepath.Dir(p); d != "." && d != "/"; d = filepath.Dir(d) {
			if st, err := os.Lstat(filepath.Join(dir, d)); err == nil && !st.IsDir() {
				require.NoError(t, os.Remove(filepath.Join(dir, d)))
			}
		}
		require.NoError(t, os.RemoveAll(filepath.Join(dir, p)))
	}
	mutate := func() {
		for n := 1 + rng.IntN(6); n > 0; n-- {
			p := pick()
			clear(p)
			full := filepath.Join(dir, filepath.FromSlash(p))
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			switch rng.IntN(4) {
			case 0:
				require.NoError(t, os.Symlink("target-"+fmt.Sprint(rng.IntN(3)), full))
			case 1:
				require.NoError(t, os.WriteFile(full, []byte(fmt.Sprint(rng.IntN(3))), 0o755))
			default:
				require.NoError(t, os.WriteFile(full, []byte(fmt.Sprint(rng.IntN(3))), 0o644))
			}
		}
	}
	tree := func() string {
		idx := filepath.Join(t.TempDir(), "index")
		env := []string{"GIT_INDEX_FILE=" + idx}
		gitIn(t, dir, env, "add", "-A")
		return strings.TrimSpace(gitIn(t, dir, env, "write-tree"))
	}
	mutate()
	prev := tree()
	for round := 0; round < 60; round++ {
		mutate()
		cur := tree()
		out, err := c.git.Run(ctx, gitx.Cmd{Dir: dir, Env: c.privEnv,
			Args: []string{"diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", prev, cur}})
		require.NoError(t, err)
		pairs, err := gitx.ParseRaw(out, false)
		require.NoError(t, err)
		got, err := c.diffTreesIn(o, prev, cur)
		require.NoError(t, err)
		want := pairs[0].Entries
		sortRaw(want)
		assert.Equal(t, want, got, "round %d: %s..%s", round, prev, cur)
		prev = cur
	}
}

func TestParseCommit(t *testing.T) {
	raw := "tree " + strings.Repeat("a", 40) + "\nparent " + strings.Repeat("b", 40) +
		"\nauthor reins <reins@localhost> 1700000000 +0000\ncommitter reins <reins@localhost> 1700000001 +0000\n\n" +
		"reins checkpoint: label\n\n{\"v\":2}\n"
	r, err := parseCommit("refs/reins/checkpoints/x", strings.Repeat("c", 40), []byte(raw))
	require.NoError(t, err)
	assert.Equal(t, gitx.Ref{Name: "refs/reins/checkpoints/x", Commit: strings.Repeat("c", 40), Tree: strings.Repeat("a", 40),
		Committed: 1700000001, Body: "{\"v\":2}\n"}, r)
	for _, bad := range []string{"", "parent x\n\nmsg", "tree zz\n\nmsg", "tree " + strings.Repeat("a", 40) + "\ncommitter x> y z\n\nm"} {
		_, err := parseCommit("r", "c", []byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}
