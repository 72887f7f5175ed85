//go:build unix

package checkpoint_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint"
)

// FIFOs and sockets are never opened (a FIFO would block the snapshot),
// never stored and left alone by restores, wherever they are: alone in a
// directory, among many new files (a directory the snapshot lists instead
// of looking at its files one by one), or where a recorded file was.
func TestSpecialFilesAreSkipped(t *testing.T) {
	for _, portable := range []bool{false, true} {
		t.Run(fmt.Sprintf("portable=%v", portable), func(t *testing.T) {
			ctx := context.Background()
			dir := newPlainDir(t)
			// Unix socket paths are short: bind through a relative path.
			sock := func(rel string) {
				wd, err := os.Getwd()
				require.NoError(t, err)
				require.NoError(t, os.Chdir(filepath.Dir(filepath.Join(dir, rel))))
				defer func() { require.NoError(t, os.Chdir(wd)) }()
				l, err := net.Listen("unix", filepath.Base(rel))
				require.NoError(t, err)
				t.Cleanup(func() { l.Close() })
			}
			writeFile(t, dir, "tracked/was-file", "recorded\n", 0o644)
			c := newCheckpointer(t, dir, nil)
			if portable {
				checkpoint.SetPortable(c)
			}
			first, err := c.Create(ctx, "before")
			require.NoError(t, err)
			assert.Empty(t, first.Skipped)

			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
			for i := 0; i < 12; i++ {
				writeFile(t, dir, fmt.Sprintf("many/f%02d.txt", i), fmt.Sprintf("new %d\n", i), 0o644)
			}
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "many", "f05.pipe"), 0o644))
			require.NoError(t, os.Remove(filepath.Join(dir, "tracked/was-file")))
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "tracked/was-file"), 0o644))
			sock("many/zz.sock")

			cp, err := c.Create(ctx, "with special files")
			require.NoError(t, err)
			skipped := slices.Clone(cp.Skipped)
			slices.Sort(skipped)
			// git does not list special files it does not track; one that
			// replaced a recorded file is reported.
			assert.Equal(t, []string{"tracked/was-file"}, skipped)
			snap := readTree(t, dir, func(rel string) bool {
				return filepath.Ext(rel) == ".pipe" || filepath.Ext(rel) == ".sock" || rel == "pipe" || rel == "tracked/was-file"
			})

			writeFile(t, dir, "many/f00.txt", "changed\n", 0o644)
			writeFile(t, dir, "README.md", "changed\n", 0o644)
			_, err = c.Rewind(ctx, cp.ID)
			require.NoError(t, err)
			for _, p := range []string{"pipe", "many/f05.pipe", "tracked/was-file", "many/zz.sock"} {
				st, err := os.Lstat(filepath.Join(dir, p))
				require.NoError(t, err, "%s survives the restore", p)
				assert.NotZero(t, st.Mode()&(os.ModeNamedPipe|os.ModeSocket), p)
			}
			assert.Equal(t, snap, readTree(t, dir, func(rel string) bool {
				return filepath.Ext(rel) == ".pipe" || filepath.Ext(rel) == ".sock" || rel == "pipe" || rel == "tracked/was-file"
			}))
			// Back to before: the FIFO where a recorded file was is not
			// overwritten (it is not covered), the other new files go.
			_, err = c.Rewind(ctx, first.ID)
			var re *checkpoint.RestoreError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, checkpoint.RestoreConflict, re.Failure)
		})
	}
}
