package checkpoint

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func FuzzValidID(f *testing.F) {
	for _, s := range []string{
		"01a20484-ba5b-7b32-8968-47d1a901831f",
		"01A20484-BA5B-7B32-8968-47D1A901831F",
		"{01a20484-ba5b-7b32-8968-47d1a901831f}",
		"urn:uuid:01a20484-ba5b-7b32-8968-47d1a901831f",
		"../../heads/main",
		"01a20484ba5b7b32896847d1a901831f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidID(s) {
			require.Error(t, checkID(s))
			return
		}
		require.Len(t, s, 36)
		require.Equal(t, strings.ToLower(s), s)
		u, err := uuid.Parse(s)
		require.NoError(t, err)
		require.Equal(t, s, u.String())
		require.NotContains(t, s, "/")
		require.NotContains(t, s, ".")
	})
}

func FuzzCheckRelPath(f *testing.F) {
	for _, s := range []string{"a", "a/b", "-x", "c d/ünï", "../x", "a/../b", "/abs", ".git/config", "x/.GIT", "a//b", "a/", ".", "", "a\x00b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if checkTreePath(p) == nil {
			require.NotContains(t, p, "\x00")
		}
		if checkRelPath(p) != nil {
			return
		}
		require.NoError(t, checkTreePath(p))
		require.True(t, utf8.ValidString(p))
		require.Equal(t, path.Clean(p), p)
		require.False(t, path.IsAbs(p))
		for _, el := range strings.Split(p, "/") {
			require.NotEqual(t, "..", el)
			require.NotEqual(t, ".", el)
			require.False(t, strings.EqualFold(el, ".git"))
		}
	})
}

func FuzzNormalizePaths(f *testing.F) {
	for _, s := range []string{"a.txt", "/work/ws/a", "/work/wsx/a", "/work/ws/../ws/a", "./a/./b", "a/../../b", "/work/ws",
		"/etc/passwd", "/work/link/a", "/work/link", ".", "a/b", "a", "..", "/work/link/../ws/x"} {
		f.Add(s, "a")
	}
	const root, given = "/work/ws", "/work/link"
	c := &Checkpointer{root: root, given: given}
	f.Fuzz(func(t *testing.T, p, q string) {
		got, full, err := c.normalizePaths("paths", []string{p, q})
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidPath)
			return
		}
		inside := func(s string) (string, bool) {
			x := filepath.Clean(s)
			if !filepath.IsAbs(x) {
				x = filepath.Join(root, x)
			} else if within(given, x) {
				rel, _ := filepath.Rel(given, x)
				x = filepath.Join(root, rel)
			}
			return x, within(root, x)
		}
		if full {
			require.Nil(t, got)
			a, _ := inside(p)
			b, _ := inside(q)
			require.True(t, a == root || b == root, "full snapshot for %q, %q", p, q)
			return
		}
		require.NotEmpty(t, got)
		for _, g := range got {
			require.NoError(t, checkRelPath(g))
			full := filepath.Join(root, filepath.FromSlash(g))
			require.True(t, within(root, full), "%q escapes %q", g, root)
			require.NotEqual(t, root, full)
			for _, h := range got {
				require.False(t, strings.HasPrefix(h, g+"/"), "%q is inside %q", h, g)
			}
		}
		// Every input is covered by a result.
		for _, s := range []string{p, q} {
			x, ok := inside(s)
			require.True(t, ok, "%q accepted but outside", s)
			rel, err := filepath.Rel(root, x)
			require.NoError(t, err)
			covered := false
			for _, g := range got {
				covered = covered || rel == g || strings.HasPrefix(rel, g+"/")
			}
			require.True(t, covered, "%q not covered by %q", s, got)
		}
	})
}

func FuzzParseMeta(f *testing.F) {
	good := meta{V: 1, ID: "01a20484-ba5b-7b32-8968-47d1a901831f", Label: "edit main.go", Correlation: "d-1", Reason: ReasonCreate, Scope: ":", Paths: []string{"a", "b/c"}}
	msg, err := good.message()
	if err != nil {
		f.Fatal(err)
	}
	body := string(msg[strings.Index(string(msg), "\n\n")+2:])
	f.Add(body)
	f.Add(`{"v":1,"id":"01a20484-ba5b-7b32-8968-47d1a901831f","label":"","reason":"before-restore","scope":""}`)
	f.Add(`{"v":2}`)
	f.Add(`{"v":1,"id":"x","label":"","reason":"create","scope":"","paths":["../x"]}`)
	f.Add(`{"v":1} {"v":1}`)
	f.Fuzz(func(t *testing.T, body string) {
		m, err := parseMeta(body)
		if err != nil {
			return
		}
		require.True(t, ValidID(m.ID))
		for _, p := range m.Paths {
			require.NoError(t, checkRelPath(p))
		}
		msg, err := m.message()
		require.NoError(t, err)
		s := string(msg)
		again, err := parseMeta(s[strings.Index(s, "\n\n")+2:])
		require.NoError(t, err)
		require.Equal(t, m, again)
	})
}

// quotePath must produce a C-style quoted string that decodes back to the
// same bytes (checked with Go's decoder for valid UTF-8 paths; git's
// decoder accepts the same escapes) and never contains a raw newline.
func FuzzQuotePath(f *testing.F) {
	for _, s := range []string{"a", "c d/é é.go", "-dash", "\"quoted\"", "back\\slash", "new\nline", "tab\there", "\x7f\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		q := quotePath(p)
		require.NotContains(t, q, "\n")
		require.True(t, strings.HasPrefix(q, `"`) && strings.HasSuffix(q, `"`))
		if !utf8.ValidString(p) {
			return
		}
		got, err := strconv.Unquote(q)
		require.NoError(t, err)
		require.Equal(t, p, got)
	})
}
