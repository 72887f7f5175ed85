package checkpoint

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

func gitIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "LC_ALL=C"}, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// Every index version git writes is read back entry for entry, and what
// the package writes reads back in git with the same entries and stat
// data, and with nothing modified.
func TestIndexRoundTripWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := t.TempDir()
			gitIn(t, dir, nil, "init", "-q")
			files := map[string]string{"a.txt": "a", "a-b": "x", "a/b/c": "deep", "ünï é": "u", "-dash": "d",
				strings.Repeat("long/", 40) + "f": "long name"}
			for p, content := range files {
				full := filepath.Join(dir, filepath.FromSlash(p))
				require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
				require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
			}
			require.NoError(t, os.Chmod(filepath.Join(dir, "a-b"), 0o755))
			require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
			gitIn(t, dir, nil, "-c", "index.version="+version, "add", "-A")
			if version == "3" {
				gitIn(t, dir, nil, "update-index", "--index-version", "3")
			}
			data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			require.NoError(t, err)
			idx, err := parseIndex(data, sha1.Size, sha1.New())
			require.NoError(t, err)
			require.Len(t, idx.entries, len(files)+1)
			lsFiles := gitIn(t, dir, nil, "ls-files", "--stage", "--debug")

			mine := filepath.Join(t.TempDir(), "index")
			require.NoError(t, os.WriteFile(mine, encodeIndex(idx.entries, sha1.New()), 0o644))
			env := []string{"GIT_INDEX_FILE=" + mine}
			assert.Equal(t, lsFiles, gitIn(t, dir, env, "ls-files", "--stage", "--debug"))
			assert.Empty(t, gitIn(t, dir, env, "diff-files", "--name-only"))
			assert.Empty(t, gitIn(t, dir, env, "ls-files", "--modified", "--deleted"))
			tree := strings.TrimSpace(gitIn(t, dir, nil, "write-tree"))
			assert.Equal(t, tree, strings.TrimSpace(gitIn(t, dir, env, "write-tree")))

			// The cache tree is the one git writes (git's index has it now),
			// byte for byte, and git takes the root tree from it.
			data, err = os.ReadFile(filepath.Join(dir, ".git", "index"))
			require.NoError(t, err)
			i := bytes.Index(data, []byte("TREE"))
			require.Positive(t, i)
			n := int(binary.BigEndian.Uint32(data[i+4:]))
			c := &Checkpointer{zeroOID: strings.Repeat("0", 40)}
			assert.Equal(t, data[i:i+8+n], c.cacheTree(idx.entries))
			withTree := filepath.Join(t.TempDir(), "index")
			require.NoError(t, os.WriteFile(withTree, encodeIndex(idx.entries, sha1.New(), c.cacheTree(idx.entries)), 0o644))
			env = []string{"GIT_INDEX_FILE=" + withTree}
			assert.Equal(t, lsFiles, gitIn(t, dir, env, "ls-files", "--stage", "--debug"))
			assert.Equal(t, tree, strings.TrimSpace(gitIn(t, dir, env, "write-tree")))
		})
	}
}

func TestIndexApply(t *testing.T) {
	e := func(p string) indexEntry { return indexEntry{path: p, mode: gitx.ModeFile, oid: make([]byte, 20)} }
	paths := func(es []indexEntry) []string {
		var out []string
		for _, x := range es {
			out = append(out, x.path)
		}
		return out
	}
	old := []indexEntry{e("a"), e("a-b"), e("b/c"), e("b/d/e"), e("c"), e("x/y")}
	got := indexUpdate{
		set:    []indexEntry{e("a/new"), e("b"), e("zz"), e("c"), e("x/y/z")},
		remove: []string{"a-b", "missing"},
	}.apply(old)
	assert.Equal(t, []string{"a/new", "b", "c", "x/y/z", "zz"}, paths(got),
		"a file replaces a directory and a directory a file; removals drop entries")
	assert.Equal(t, paths(old), paths(indexUpdate{}.apply(old)))
}

// A cache tree updated from the previous one (only the directories an
// update touched recomputed) equals one computed from scratch.
func TestCacheTreeIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	names := []string{"a", "b", "a-b", "a.txt", "a0", "c d", "x"}
	randPath := func() string {
		var parts []string
		for n := 1 + rng.IntN(4); n > 0; n-- {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		return strings.Join(parts, "/")
	}
	e := func(p string) indexEntry {
		oid := make([]byte, 20)
		oid[0] = byte(rng.IntN(256))
		return indexEntry{path: p, mode: gitx.ModeFile, oid: oid}
	}
	c := &Checkpointer{zeroOID: strings.Repeat("0", 40)}
	var entries []indexEntry
	var tree *treeNode
	for round := 0; round < 300; round++ {
		var u indexUpdate
		for n := rng.IntN(6); n > 0; n-- {
			if len(entries) > 0 && rng.IntN(3) == 0 {
				u.remove = append(u.remove, entries[rng.IntN(len(entries))].path)
			} else {
				u.set = append(u.set, e(randPath()))
			}
		}
		entries = u.apply(entries)
		for i, x := range entries {
			for _, y := range entries[i+1:] {
				require.False(t, strings.HasPrefix(y.path, x.path+"/"), "%s and %s", x.path, y.path)
			}
		}
		tree = buildTree(entries, 0, sha1.New(), tree, u.dirty())
		require.Equal(t, c.cacheTree(entries), treeExtension(tree), "round %d", round)
	}
	require.NotEmpty(t, entries)
}

func TestVarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 255, 16511, 16512, 1 << 20, 1<<40 + 7} {
		b := appendVarint(nil, v)
		got, k := decodeVarint(b)
		assert.Equal(t, v, got)
		assert.Equal(t, len(b), k)
	}
	_, k := decodeVarint([]byte{0x80})
	assert.Zero(t, k, "truncated")
}

// A file rewritten within the second its index entry was recorded, with
// the same size, is smudged when the index is written again, so that git
// does not take it for unchanged.
func TestIndexRacyEntriesAreSmudged(t *testing.T) {
	if !goIndex {
		t.Skip("the private index is maintained by git on this platform")
	}
	dir := t.TempDir()
	c := &Checkpointer{workDir: dir, private: t.TempDir(), zeroOID: strings.Repeat("0", 40)}
	c.index = filepath.Join(c.private, "index")
	write := func(name, content string) statData {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		sd, _, ok := lstatData(p)
		require.True(t, ok)
		return sd
	}
	var set []indexEntry
	for _, name := range []string{"same", "changed"} {
		sd := write(name, "before")
		ent, err := c.newIndexEntry(name, gitx.ModeFile, c.blobOID([]byte("before")), sd)
		require.NoError(t, err)
		set = append(set, ent)
	}
	require.NoError(t, c.writeIndex(&gitIndex{}, indexUpdate{set: set}))
	idx, err := c.readIndex()
	require.NoError(t, err)
	// Same size, same second: only the content tells.
	sd := write("changed", "after!")
	for i := range idx.entries {
		if idx.entries[i].path == "changed" {
			sd.size = idx.entries[i].sd.size
			idx.entries[i].sd.mtimeSec = sd.mtimeSec
		}
		idx.entries[i].sd.mtimeSec = max(idx.entries[i].sd.mtimeSec, idx.mtimeSec)
	}
	idx.mtimeSec = sd.mtimeSec
	require.NoError(t, c.writeIndex(idx, indexUpdate{}))
	again, err := c.readIndex()
	require.NoError(t, err)
	sizes := map[string]uint32{}
	for _, x := range again.entries {
		sizes[x.path] = x.sd.size
	}
	assert.Equal(t, map[string]uint32{"same": 6, "changed": 0}, sizes)
}

func FuzzParseIndex(f *testing.F) {
	e := func(p string) indexEntry {
		return indexEntry{path: p, mode: gitx.ModeFile, oid: bytes.Repeat([]byte{7}, 20), sd: statData{size: 3, mtimeSec: 9}}
	}
	f.Add(encodeIndex([]indexEntry{e("a"), e("a/b"), e("b")}, sha1.New()))
	f.Add(encodeIndex(nil, sha1.New()))
	f.Add(encodeIndex([]indexEntry{e(strings.Repeat("n", 5000)), e(strings.Repeat("n", 5001))}, sha1.New()))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := parseIndex(data, sha1.Size, sha1.New())
		if err != nil {
			return
		}
		for i, x := range idx.entries {
			require.True(t, validIndexPath(x.path), "%q", x.path)
			if i > 0 {
				require.Less(t, idx.entries[i-1].path, x.path)
			}
		}
		again, err := parseIndex(encodeIndex(idx.entries, sha1.New()), sha1.Size, sha1.New())
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(idx.entries), fmt.Sprint(again.entries))
	})
}
