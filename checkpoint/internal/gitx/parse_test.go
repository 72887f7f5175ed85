package gitx

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	oidA = "3683f870be446c7cc05ffaef9fa06415276e1828"
	oidB = "e920d2739b442cb50fff9f8bc7adf20ea40c329a"
	oidZ = "0000000000000000000000000000000000000000"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"git version 2.39.5\n", Version{2, 39, 5}, false},
		{"git version 2.45.1.windows.1", Version{2, 45, 1}, false},
		{"git version 2.39.3 (Apple Git-146)", Version{2, 39, 3}, false},
		{"git version 2.46.0-rc1", Version{2, 46, 0}, false},
		{"git version 2.31", Version{2, 31, 0}, false},
		{"hg version 6", Version{}, true},
		{"git version x.y", Version{}, true},
		{"git version 2", Version{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseVersion(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.True(t, Version{2, 31, 9}.Less(MinVersion))
	assert.False(t, Version{2, 39, 0}.Less(MinVersion))
}

func TestParseRaw(t *testing.T) {
	one := ":100644 100755 " + oidA + " " + oidB + " M\x00dir/a file\x00" +
		":000000 120000 " + oidZ + " " + oidB + " A\x00-lead\x00" +
		":100644 000000 " + oidA + " " + oidZ + " D\x00ünï\x00"
	pairs, err := ParseRaw([]byte(one), false)
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	assert.Equal(t, []RawEntry{
		{OldMode: ModeFile, NewMode: ModeExec, OldOID: oidA, NewOID: oidB, Status: Modified, Path: "dir/a file"},
		{OldMode: ModeNone, NewMode: ModeSymlink, OldOID: oidZ, NewOID: oidB, Status: Added, Path: "-lead"},
		{OldMode: ModeFile, NewMode: ModeNone, OldOID: oidA, NewOID: oidZ, Status: Deleted, Path: "ünï"},
	}, pairs[0].Entries)

	stdin := oidA + " " + oidB + "\n" + ":100644 100644 " + oidA + " " + oidB + " M\x00" + oidA + " " + oidB + "\nx\x00" +
		oidB + " " + oidA + "\n"
	pairs, err = ParseRaw([]byte(stdin), true)
	require.NoError(t, err)
	require.Len(t, pairs, 2)
	assert.Equal(t, oidA+" "+oidB+"\nx", pairs[0].Entries[0].Path, "a path that looks like a header stays a path")
	assert.Empty(t, pairs[1].Entries)

	for _, bad := range []string{
		":100644 100644 " + oidA + " " + oidB + " M\x00",              // no path
		":100644 100644 " + oidA + " " + oidB + " R100\x00a\x00b\x00", // rename
		":100644 000000 " + oidA + " " + oidB + " A\x00a\x00",         // inconsistent
		":10064 100644 " + oidA + " " + oidB + " M\x00a\x00",          // short mode
		":100644 100644 " + oidA[:39] + " " + oidB + " M\x00a\x00",    // short oid
		"junk",
	} {
		_, err := ParseRaw([]byte(bad), false)
		assert.Error(t, err, "%q", bad)
	}
}

func TestParseRefs(t *testing.T) {
	rec := func(name, body string) string {
		return name + "\x00" + oidA + "\x00" + oidB + "\x001700000000\x00" + body + "\x00\n"
	}
	refs, err := ParseRefs([]byte(rec("refs/reins/checkpoints/x", "{\"v\":1}\nmore\n") + rec("refs/reins/checkpoints/y", "")))
	require.NoError(t, err)
	require.Len(t, refs, 2)
	assert.Equal(t, Ref{Name: "refs/reins/checkpoints/x", Commit: oidA, Tree: oidB, Committed: 1700000000, Body: "{\"v\":1}\nmore\n"}, refs[0])
	assert.Equal(t, "refs/reins/checkpoints/y", refs[1].Name)
	for _, bad := range []string{"x", rec("heads/x", ""), rec("refs/x y", ""), strings.Replace(rec("refs/x", ""), "1700000000", "soon", 1)} {
		_, err := ParseRefs([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestSplitNUL(t *testing.T) {
	got, err := SplitNUL([]byte("a\x00b c\x00\x00"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b c", ""}, got)
	_, err = SplitNUL([]byte("a\x00b"))
	require.Error(t, err)
	got, err = SplitNUL(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func formatRaw(pairs []RawPair, stdin bool) []byte {
	var b bytes.Buffer
	for _, p := range pairs {
		if stdin {
			b.WriteString(p.Header + "\n")
		}
		for _, e := range p.Entries {
			fmt.Fprintf(&b, ":%06o %06o %s %s %c\x00%s\x00", e.OldMode, e.NewMode, e.OldOID, e.NewOID, e.Status, e.Path)
		}
	}
	return b.Bytes()
}

func FuzzParseRaw(f *testing.F) {
	f.Add([]byte(":100644 100755 "+oidA+" "+oidB+" M\x00a\x00"), false)
	f.Add([]byte(oidA+" "+oidB+"\n:000000 100644 "+oidZ+" "+oidB+" A\x00b/c\x00"), true)
	f.Add([]byte(":160000 000000 "+oidA+" "+oidZ+" D\x00sub\x00"), false)
	f.Add([]byte(""), true)
	f.Fuzz(func(t *testing.T, b []byte, stdin bool) {
		pairs, err := ParseRaw(b, stdin)
		if err != nil {
			return
		}
		for _, p := range pairs {
			for _, e := range p.Entries {
				require.NotEmpty(t, e.Path)
				require.NotContains(t, e.Path, "\x00")
				require.Contains(t, []Status{Added, Deleted, Modified, TypeChanged}, e.Status)
				require.True(t, IsOID(e.OldOID) && IsOID(e.NewOID))
			}
		}
		again, err := ParseRaw(formatRaw(pairs, stdin), stdin)
		require.NoError(t, err)
		if !stdin && len(pairs[0].Entries) == 0 {
			return
		}
		require.Equal(t, pairs, again)
	})
}

func FuzzParseRefs(f *testing.F) {
	f.Add([]byte("refs/reins/checkpoints/a\x00" + oidA + "\x00" + oidB + "\x001\x00body\x00\n"))
	f.Add([]byte("refs/a\x00" + oidA + "\x00" + oidB + "\x00-5\x00\x00\n\nrefs/b\x00" + oidA + "\x00" + oidB + "\x002\x00x\ny\x00\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		refs, err := ParseRefs(b)
		if err != nil {
			return
		}
		var out bytes.Buffer
		for _, r := range refs {
			require.True(t, strings.HasPrefix(r.Name, "refs/"))
			require.True(t, IsOID(r.Commit) && IsOID(r.Tree))
			fmt.Fprintf(&out, "%s\x00%s\x00%s\x00%d\x00%s\x00\n", r.Name, r.Commit, r.Tree, r.Committed, r.Body)
		}
		again, err := ParseRefs(out.Bytes())
		require.NoError(t, err)
		require.Equal(t, refs, again)
	})
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"git version 2.39.5", "git version 2.45.1.windows.1", "git version 9999999.1", "git version 2.-1.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		for _, n := range v {
			require.GreaterOrEqual(t, n, 0)
		}
	})
}

func TestParseStatusV2(t *testing.T) {
	one := func(xy, mw, path string) string {
		return "1 " + xy + " N... 100644 100644 " + mw + " " + oidA + " " + oidA + " " + path + "\x00"
	}
	out := one(".M", "100644", "a/f") + one(".D", "000000", "tr") + one("D.", "000000", "gone x") +
		"? a/link\x00? nest/r/\x00! build/\x00! logs/x.log\x00? -lead \n name\x00"
	got, err := ParseStatusV2([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, []StatusEntry{
		{Kind: '1', X: '.', Y: 'M', Path: "a/f", IndexMode: ModeFile, IndexOID: oidA},
		{Kind: '1', X: '.', Y: 'D', Path: "tr", IndexMode: ModeFile, IndexOID: oidA},
		{Kind: '1', X: 'D', Y: '.', Path: "gone x", IndexMode: ModeFile, IndexOID: oidA},
		{Kind: '?', Path: "a/link"},
		{Kind: '?', Path: "nest/r/"},
		{Kind: '!', Path: "build/"},
		{Kind: '!', Path: "logs/x.log"},
		{Kind: '?', Path: "-lead \n name"},
	}, got)
	got, err = ParseStatusV2(nil)
	require.NoError(t, err)
	assert.Empty(t, got)

	for _, bad := range []string{
		"? a",                        // not terminated
		"# branch.oid (initial)\x00", // header
		"2 R. N... 100644 100644 100644 " + oidA + " " + oidA + " R100 b\x00a\x00", // rename
		"u UU N... 100644 100644 100644 100644 " + oidA + " " + oidA + " " + oidA + " c\x00",
		one("..", "100644", "a"),    // nothing changed
		one(".A", "100644", "a"),    // Y cannot be A
		one(".M", "100644", "dir/"), // a tracked entry is no directory
		one(".M", "10064", "a"),     // short mode
		one(".M", "100644", ""),     // empty path
		"1 .M N... 100644 100644 100644 " + oidA + " " + oidA[:39] + " a\x00",
		"1 .M X... 100644 100644 100644 " + oidA + " " + oidA + " a\x00",
		"? \x00", "?a\x00", "! /abs\x00",
	} {
		_, err := ParseStatusV2([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func FuzzParseStatusV2(f *testing.F) {
	f.Add([]byte("1 .M N... 100644 100644 100644 " + oidA + " " + oidB + " a b\x00? c/\x00! d\x00"))
	f.Add([]byte("1 D. N... 100644 000000 000000 " + oidA + " " + oidZ + " x\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParseStatusV2(b)
		if err != nil {
			return
		}
		for _, e := range entries {
			require.NotEmpty(t, e.Path)
			require.NotContains(t, e.Path, "\x00")
			require.False(t, strings.HasPrefix(e.Path, "/"))
			require.Contains(t, []byte{'1', '?', '!'}, e.Kind)
			if e.Kind == '1' {
				require.False(t, e.X == '.' && e.Y == '.')
				require.False(t, strings.HasSuffix(e.Path, "/"))
			}
		}
	})
}
