package checkpoint_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	for _, kind := range []string{"git", "plain"} {
		t.Run(kind, func(t *testing.T) {
			dir := newPlainDir(t)
			if kind == "git" {
				dir = newRepo(t)
			}
			ctx := context.Background()
			c := newCheckpointer(t, dir, nil)
			before := readTree(t, dir, nil)
			cp, err := c.Create(ctx, "first")
			require.NoError(t, err)
			writeFile(t, dir, "new/deep/file.txt", "x", 0o644)
			writeFile(t, dir, "src/main.go", "changed", 0o755)
			writeFile(t, dir, "debug.log", "ignored", 0o644)
			res, err := c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			t.Logf("changes %v", res.Changes)
			after := readTree(t, dir, nil)
			delete(after, "debug.log")
			require.Equal(t, before, after)
			list, err := c.List(ctx)
			require.NoError(t, err)
			for _, l := range list {
				t.Logf("%+v", l)
			}
		})
	}
}
