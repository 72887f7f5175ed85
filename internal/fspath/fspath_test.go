package fspath

import (
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlatformLexical(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pl         Platform
		p          string
		abs        bool
		vol        int
		clean      string
		components []string
	}{
		{Linux, "/a/b/../c", true, 0, "/a/c", []string{"a", "b", "..", "c"}},
		{Linux, "a//b/./", false, 0, "a/b", []string{"a", "b"}},
		{Linux, "/../x", true, 0, "/x", []string{"..", "x"}},
		{Linux, `a\b`, false, 0, `a\b`, []string{`a\b`}},
		{Linux, "", false, 0, ".", nil},
		{Darwin, "/Users/Me/../me", true, 0, "/Users/me", []string{"Users", "Me", "..", "me"}},
		{Windows, `C:\Users\me\..\x`, true, 2, "C:/Users/x", []string{"Users", "me", "..", "x"}},
		{Windows, `c:/x`, true, 2, "C:/x", []string{"x"}},
		{Windows, `C:x`, false, 2, "C:x", []string{"x"}},
		{Windows, `\x`, false, 0, "/x", []string{"x"}},
		{Windows, `\\server\share\dir\..\f`, true, 14, "//server/share/f", []string{"dir", "..", "f"}},
		{Windows, `\\server\share`, true, 14, "//server/share/", nil},
		{Windows, `..\..\x`, false, 0, "../../x", []string{"..", "..", "x"}},
	} {
		assert.Equal(t, tc.abs, tc.pl.IsAbs(tc.p), "%s IsAbs(%q)", tc.pl.Name, tc.p)
		assert.Equal(t, tc.vol, tc.pl.VolumeLen(tc.p), "%s VolumeLen(%q)", tc.pl.Name, tc.p)
		assert.Equal(t, tc.clean, tc.pl.Clean(tc.p), "%s Clean(%q)", tc.pl.Name, tc.p)
		assert.Equal(t, tc.components, tc.pl.Components(tc.p), "%s Components(%q)", tc.pl.Name, tc.p)
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pl           Platform
		p, dir       string
		within, fold bool
	}{
		{Linux, "/ws", "/ws", true, true},
		{Linux, "/ws/a", "/ws", true, true},
		{Linux, "/ws-evil/a", "/ws", false, false},
		{Linux, "/wsa", "/ws", false, false},
		{Linux, "/WS/a", "/ws", false, true},
		{Linux, "/anything", "/", true, true},
		{Linux, "/w", "/ws", false, false},
		{Darwin, "/Users/ME/ws", "/Users/me", false, true},
		{Windows, `C:\ws\a`, "C:/ws", true, true},
		{Windows, `c:/ws/a`, "C:/ws", true, true}, // drive letters fold always
		{Windows, `C:/WS/a`, "C:/ws", false, true},
		{Windows, `D:/ws/a`, "C:/ws", false, false},
		{Windows, `C:/x`, "C:/", true, true},
		{Windows, `//srv/share/x`, "//srv/share", true, true},
	} {
		assert.Equal(t, tc.within, tc.pl.Within(tc.p, tc.dir), "%s Within(%q, %q)", tc.pl.Name, tc.p, tc.dir)
		assert.Equal(t, tc.fold, tc.pl.WithinFold(tc.p, tc.dir), "%s WithinFold(%q, %q)", tc.pl.Name, tc.p, tc.dir)
	}
	if runtime.GOOS != "windows" {
		assert.True(t, Within("/a/b", "/a"))
		assert.False(t, Within("/ab", "/a"))
	}
}

// Cleaning a Windows path never gives a relative one a drive (FuzzClean found ".\A:" becoming
// "A:", a path on drive A), and a drive stays a drive.
func TestWindowsCleanKeepsRelativePathsRelative(t *testing.T) {
	t.Parallel()
	for _, tc := range [][2]string{
		{`.\A:`, "./A:"}, {`a\..\c:`, "./c:"}, {`a\..\c:\x`, "./c:/x"}, {`.\a:b`, "./a:b"},
		{`c:`, "C:."}, {`c:\a\..`, "C:/"}, {`x\..\y:z\..`, "."}, {`\a\..\c:`, "/c:"},
	} {
		got := Windows.Clean(tc[0])
		assert.Equal(t, tc[1], got, "Clean(%q)", tc[0])
		assert.Equal(t, Windows.VolumeLen(Windows.ToSlash(tc[0])) > 0, Windows.VolumeLen(got) > 0, "Clean(%q) = %q changes whether there is a drive", tc[0], got)
	}
}

// FuzzClean: Platform.Clean is filepath.Clean's reading on each platform: path.Clean on Unix,
// and on the host the same as filepath.Clean in slash form.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", ".", "..", "/..", "a/../..", "//a//b/", `C:\a\..\b`, `\\s\sh\x`, "a/./b/../../c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.IndexByte(p, 0) >= 0 {
			return
		}
		require.Equal(t, path.Clean(p), Linux.Clean(p), "%q", p)
		if runtime.GOOS != "windows" {
			require.Equal(t, filepath.ToSlash(filepath.Clean(p)), Host().Clean(p), "%q", p)
		}
		w := Windows.Clean(p)
		require.Equal(t, w, Windows.Clean(w), "Clean is idempotent: %q", p)
		require.Equal(t, Windows.VolumeLen(Windows.ToSlash(p)) > 0, Windows.VolumeLen(w) > 0, "Clean(%q) = %q changes whether there is a drive", p, w)
	})
}

// ? stands for one character, a UTF-8 sequence, as in path.Match (FuzzMatchName found it taking
// one byte: "key?.pem" did not protect "keyé.pem"). A shell glob could mean either: the locale
// decides whether its ? and bracket expressions match a byte or a character.
func TestWildcardsMatchCharacters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, name string
		ok            bool
	}{
		{"?", "é", true}, {"??", "é", false}, {"key?.pem", "keyé.pem", true}, {"*?", "é", true},
		{"a*b", "aéb", true}, {"*é", "xé", true}, {"?", "\xff", true}, {"??", "\xff", false}, {"?.env", "€.env", true},
	} {
		assert.Equal(t, tc.ok, MatchName(tc.pattern, tc.name), "MatchName(%q, %q)", tc.pattern, tc.name)
	}
	for _, tc := range []struct {
		glob, entry string
		ok          bool
	}{
		{"key?", "keyé", true}, {"key??", "keyé", true}, {"key[x]", "keyé", true}, {"key[x][y]", "keyé", true},
		{"key???", "keyé", false}, {"*?", "é", true}, {"k*y?", "keyé", true}, {"key?", "key", false},
	} {
		assert.Equal(t, tc.ok, globCouldMatch(tc.glob, tc.entry), "globCouldMatch(%q, %q)", tc.glob, tc.entry)
	}
}

func TestMatchName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, name string
		ok            bool
	}{
		{".env.*", ".env.production", true},
		{".env.*", ".ENV.Local", true},
		{".env.*", ".env.", true},
		{".env.*", ".env", false},
		{".env.*", ".envrc", false},
		{"id_?sa", "id_rsa", true},
		{"id_?sa", "id_rrsa", false},
		{"*.pem", "server.PEM", true},
		{"*", "", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{".git", ".GIT", true},
		{".git", ".gitignore", false},
	} {
		assert.Equal(t, tc.ok, MatchName(tc.pattern, tc.name), "MatchName(%q, %q)", tc.pattern, tc.name)
	}
}

// FuzzMatchName: MatchName agrees with path.Match on lower-cased names for patterns made of
// literals, * and ?.
func FuzzMatchName(f *testing.F) {
	f.Add(".env.*", ".env.production")
	f.Add("a*b?c", "aXXbYc")
	f.Add("**", "x")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if strings.ContainsAny(pattern+name, "/[]\\") || len(pattern) > 64 || len(name) > 64 {
			return
		}
		want, err := path.Match(strings.ToLower(pattern), strings.ToLower(name))
		if err != nil {
			return
		}
		if strings.ToLower(pattern) != asciiLower(pattern) || strings.ToLower(name) != asciiLower(name) {
			return // MatchName folds ASCII only
		}
		require.Equal(t, want, MatchName(pattern, name), "MatchName(%q, %q)", pattern, name)
	})
}

func asciiLower(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lower(b[i])
	}
	return string(b)
}

func TestCheckEntry(t *testing.T) {
	t.Parallel()
	for e, want := range map[string]string{
		".env":              "",
		".env.*":            "",
		".github/workflows": "",
		"~/.aws":            "",
		"$HOME/.kube":       "",
		"${HOME}/.kube":     "",
		"/etc":              "",
		"/":                 "",
		"":                  "names no path",
		" ":                 "names no path",
		".":                 "names no path",
		"a/../b":            `".." is not allowed in a relative entry`,
		"/etc/../x":         `".." is not allowed in a protected path`,
		"[ab]":              "protected paths are literal paths (a name may hold * and ?), not patterns",
		"{a,b}":             "protected paths are literal paths (a name may hold * and ?), not patterns",
		`a\b`:               "protected paths are literal paths (a name may hold * and ?), not patterns",
		"**/x":              `"**" is not allowed: a name is matched anywhere in a path already`,
		"/etc/*.conf":       "wildcards are allowed in names matched anywhere, not in absolute paths",
		"~root/x":           "only ~/ is expanded (not ~user)",
		"a\x00":             "contains a NUL byte",
	} {
		assert.Equal(t, want, CheckEntry(e), "%q", e)
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	home := "/home/u"
	if runtime.GOOS == "windows" {
		home = `C:\Users\u`
	}
	sep := string(filepath.Separator)
	for e, want := range map[string]string{
		"~":           home,
		"~/.aws":      home + sep + ".aws",
		"$HOME/.kube": home + sep + ".kube",
		"${HOME}/x/y": home + sep + "x" + sep + "y",
		".env":        ".env",
		"/etc":        "/etc",
		"~user-not/x": "",
		"$HOMEWORK/x": "$HOMEWORK/x",
	} {
		got, err := Expand(e, home)
		if want == "" {
			assert.Error(t, err, e)
			continue
		}
		require.NoError(t, err, e)
		assert.Equal(t, want, got, e)
	}
	_, err := Expand("~/.aws", "")
	assert.ErrorIs(t, err, ErrNoHome)
	_, err = Expand("~/.aws", "relative")
	assert.ErrorIs(t, err, ErrNoHome)
}

func TestListsAndSeeds(t *testing.T) {
	t.Parallel()
	d := Defaults()
	for _, s := range Seeds() {
		switch SeedClass(s) {
		case ReadWriteProtected:
			if s == ".git" {
				// The seeds deny .git to the paths an action names; the default lists, which a
				// sandbox mounts too, keep it readable for git (issue 23).
				assert.Contains(t, d.Write, s)
				assert.NotContains(t, d.ReadWrite, s)
				continue
			}
			assert.Contains(t, d.ReadWrite, s)
		default:
			t.Errorf("seed %q has class %s, want read-write-protected", s, SeedClass(s))
		}
	}
	assert.Equal(t, ReadWriteProtected, SeedClass(".GIT/"))
	assert.Equal(t, Unprotected, SeedClass(".vscode"))
	for _, e := range append(d.ReadWrite, d.Write...) {
		assert.Empty(t, CheckEntry(e), e)
	}
	l := Lists{}.WithSeeds()
	assert.ElementsMatch(t, []string{".git", ".env", ".env.local", ".ssh", "id_rsa", "id_ed25519"}, l.ReadWrite)
	assert.Empty(t, l.Write)
	l = d.WithSeeds()
	assert.Contains(t, l.ReadWrite, ".git", "the seeds' .git is added to ReadWrite even where Write holds it")
	assert.Contains(t, l.Write, ".git")
	assert.True(t, ReadWriteProtected.Denies(false))
	assert.False(t, WriteProtected.Denies(false))
	assert.True(t, WriteProtected.Denies(true))
	assert.False(t, Unprotected.Denies(true))
	assert.Equal(t, "write-protected", WriteProtected.String())
}

func TestMatcher(t *testing.T) {
	t.Parallel()
	home := "/home/u"
	if runtime.GOOS == "windows" {
		t.Skip("the table uses Unix paths; the lexical rules are tested per platform in TestWithin")
	}
	l := Defaults()
	l.ReadWrite = append(l.ReadWrite, "/srv/vault", "deploy/keys")
	m, err := NewMatcher(l, home)
	require.NoError(t, err)
	for _, tc := range []struct {
		root, rel string // root "" means rel is absolute
		entry     string
		class     Class
	}{
		{"/ws", ".env", ".env", ReadWriteProtected},
		{"/ws", "app/.env.production", ".env.*", ReadWriteProtected},
		{"/ws", ".git/hooks/pre-commit", ".git", WriteProtected},
		{"/ws", ".github/workflows/ci.yml", ".github/workflows", WriteProtected},
		{"/ws", ".github/ci.yml", "", Unprotected},
		{"/ws", "x/deploy/keys/k", "deploy/keys", ReadWriteProtected},
		{"/ws", "deploy/x/keys", "", Unprotected},
		{"/ws", "src/main.go", "", Unprotected},
		{"/ws", ".", "", Unprotected},
		{"/home/u", ".aws/credentials", "~/.aws", ReadWriteProtected},
		{"/home/u", ".npmrc", "~/.npmrc", ReadWriteProtected}, // the secret beats the write-protected name
		{"/home/u/.aws", "x", "~/.aws", ReadWriteProtected},   // the whole root is protected
		{"/home/u/.aws", ".", "~/.aws", ReadWriteProtected},
		{"/home/.git", "x", "", Unprotected}, // names match below the root only
		{"", "/home/u/.kube/config", "~/.kube", ReadWriteProtected},
		{"", "/home/U/.KUBE/config", "~/.kube", ReadWriteProtected},
		{"", "/srv/vault/k", "/srv/vault", ReadWriteProtected},
		{"", "/srv/vaults", "", Unprotected},
		{"", "/etc/x/.bashrc", ".bashrc", WriteProtected},
		{"", "/tmp/a", "", Unprotected},
	} {
		var h Hit
		if tc.root == "" {
			h = m.Abs(tc.rel)
		} else {
			h = m.In(tc.root, tc.rel)
		}
		assert.Equal(t, Hit{tc.entry, tc.class}, h, "%s %s", tc.root, tc.rel)
	}
	for _, tc := range []struct {
		glob string
		want Class
	}{
		{"/ws/.e*", ReadWriteProtected},
		{"/ws/.env.p*", ReadWriteProtected},
		{"/ws/*.go", Unprotected},
		{"/ws/*", ReadWriteProtected}, // could be id_rsa
		{"/ws/src/*", ReadWriteProtected},
		{"/ws/src/[a-z]*.go", Unprotected},
		{"/ws/.*", ReadWriteProtected},
		{"/ws/.g?t/config", WriteProtected},
		{"/ws/[.]git", Unprotected},        // a bracket does not match a leading dot
		{"/ws/.[g]it", ReadWriteProtected}, // errs towards reaching: .env.* could match too
		{"/ws/**", ReadWriteProtected},
		{"/ws/id_*", ReadWriteProtected},
		{"/ws/src/*.txt", Unprotected},
	} {
		assert.Equal(t, tc.want, m.GlobReaches(tc.glob), tc.glob)
	}
	_, err = NewMatcher(Lists{ReadWrite: []string{"~/.aws"}}, "")
	assert.ErrorIs(t, err, ErrNoHome)
	_, err = NewMatcher(Lists{Write: []string{"a/../b"}}, home)
	assert.ErrorContains(t, err, `".." is not allowed`)
}

func TestMatcherAndResolveDoNotAllocate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a build without the race detector")
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755))
	w, err := NewWorkspace([]string{dir}, nil, "/home/u")
	require.NoError(t, err)
	m, err := NewMatcher(Defaults(), "/home/u")
	require.NoError(t, err)
	root := w.Primary()
	require.NoError(t, os.WriteFile(filepath.Join(root, "src", "pkg", "main.go"), nil, 0o644))
	ids := m.Identities(w.Roots(), "/home/u")
	for _, target := range []string{"src/pkg/main.go", "src/pkg/new.go", "README.md", "src"} {
		allocs := testing.AllocsPerRun(100, func() {
			r, p, err := w.Resolve(target)
			if err != nil || r != root {
				panic("resolve")
			}
			_ = m.In(r, p)
			_ = ids.In(r, p) // one link: the index is not consulted
		})
		assert.Zero(t, allocs, target)
	}
}

func TestResolveAbsoluteOutside(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	dir := t.TempDir()
	w, err := NewWorkspace([]string{dir}, nil, "")
	require.NoError(t, err)
	for target, want := range map[string]string{
		"/nonexistent-reins-dir/x":   "/nonexistent-reins-dir/x",
		"//nonexistent-reins-dir//x": "/nonexistent-reins-dir/x",
		"/nonexistent-reins-dir/./x": "/nonexistent-reins-dir/x",
	} {
		root, p, err := w.Resolve(target)
		require.NoError(t, err, target)
		assert.Empty(t, root, target)
		assert.Equal(t, want, p, target)
	}
	root, p, err := w.Resolve(w.Primary() + "//a/./b")
	require.NoError(t, err)
	assert.Equal(t, w.Primary(), root)
	assert.Equal(t, "a/b", p)
}

// FuzzRootMatcher: a RootMatcher answers as Matcher.In does, for roots under, over and beside
// the absolute entries.
func FuzzRootMatcher(f *testing.F) {
	for _, s := range []string{"src/main.go", ".aws/credentials", "x/.env.prod", ".", ".AWS", "a/.github/workflows/x"} {
		f.Add(s)
	}
	if runtime.GOOS == "windows" {
		f.Skip("Unix paths")
	}
	m, err := NewMatcher(Lists{ReadWrite: append(Defaults().ReadWrite, "/srv/vault/keys"), Write: Defaults().Write}, "/home/u")
	require.NoError(f, err)
	roots := []string{"/home/u", "/home/u/.aws", "/home", "/srv/vault", "/work/repo", "/"}
	var rms []*RootMatcher
	for _, r := range roots {
		rms = append(rms, m.ForRoot(r))
	}
	f.Fuzz(func(t *testing.T, rel string) {
		if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "..") {
			return
		}
		rel = path.Clean(rel)
		for i, r := range roots {
			require.Equal(t, m.In(r, rel), rms[i].In(rel), "%s %s", r, rel)
		}
	})
}
