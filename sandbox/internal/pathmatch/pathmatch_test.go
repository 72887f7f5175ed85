package pathmatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPathMatcherMatch(t *testing.T) {
	t.Parallel()
	m, err := New([]string{"config/prod.json", "/srv/vault"})
	require.NoError(t, err)
	tests := []struct {
		path  string
		entry string
		ok    bool
	}{
		{"/w/.git", ".git", true},
		{"/w/.git/config", ".git", true},
		{"/w/.GIT/hooks/pre-commit", ".git", true},
		{"/w/sub/.Env", ".env", true},
		{"/w/.env.local", ".env.local", true},
		{"/home/u/.ssh/known_hosts", ".ssh", true},
		{"/w/keys/ID_RSA", "id_rsa", true},
		{"/w/keys/id_ed25519", "id_ed25519", true},
		{"/w/a/config/prod.json", "config/prod.json", true},
		{"/srv/vault", "/srv/vault", true},
		{"/srv/vault/key", "/srv/vault", true},
		{"/SRV/Vault/key", "/srv/vault", true},
		{"/w/.gitignore", "", false},
		{"/w/.github/workflows", ".github/workflows", true}, // write-protected: also denied here
		{"/w/.envrc", ".envrc", true},
		{"/w/.env.production", ".env.*", true},
		{"/w/.github/dependabot.yml", "", false},
		{"/w/id_rsa.pub", "", false},
		{"/w/config/prod.json.bak", "", false},
		{"/w/prod.json", "", false},
		{"/srv/vaults", "", false},
		{"/other/srv/vault", "", false},
	}
	for _, tt := range tests {
		entry, ok := m.Match(tt.path)
		assert.Equal(t, tt.ok, ok, "match(%q)", tt.path)
		assert.Equal(t, tt.entry, entry, "match(%q)", tt.path)
	}
}

// fuzzTree builds a workspace with plain directories, denied entries and
// symlinks (inside, outside, to denied entries, dangling, a loop).
func fuzzTree(t testing.TB) (root string) {
	base := t.TempDir()
	root = filepath.Join(base, "ws")
	for _, d := range []string{"ws/a/b", "ws/.git/hooks", "ws/sub/.ssh", "outside/.env.d", "outside/plain"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	for _, f := range []string{"ws/a/file", "ws/.env", "outside/plain/f"} {
		require.NoError(t, os.WriteFile(filepath.Join(base, f), nil, 0o644))
	}
	links := map[string]string{
		"ws/l-git":      ".git",
		"ws/a/l-up":     "..",
		"ws/l-out":      filepath.Join(base, "outside", "plain"),
		"ws/l-dangle":   filepath.Join(base, "outside", "id_rsa"),
		"ws/l-loop":     "l-loop",
		"ws/a/l-env":    "../.env",
		"ws/l-abs-root": "/",
	}
	for l, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(base, l)))
	}
	return root
}

// FuzzPathCheck compares the lexical check with the resolved one: the
// resolved check never allows what the lexical check denies; when no
// symlink lies on the way they agree; the resolved path is absolute,
// clean and free of symlinks in its existing part.
func FuzzPathCheck(f *testing.F) {
	for _, s := range []string{
		"a/file", ".git/config", "l-git/config", "a/l-up/.env", "l-out/f", "l-dangle", "l-loop/x",
		"a/l-env", "../outside/.env.d/x", "l-abs-root/etc/passwd", "sub/.SSH/id_rsa", "./a/../.GIT",
		"a/b/../../l-git", "/etc/passwd", "", ".", "..", "a//b///c", "l-out/../../ws/.env", "\x00",
	} {
		f.Add(s)
	}
	m, err := New(nil)
	require.NoError(f, err)
	root := fuzzTree(f)
	fuzzMemo := &Memo{}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.IndexByte(p, 0) >= 0 {
			return // the backends refuse NUL bytes before checking
		}
		abs := p
		if !filepath.IsAbs(abs) {
			// Not Join: ".." must apply after the links ("l-out/..").
			abs = root + "/" + p
		}
		// As Check reads it: cleaned, and as written (".git/.." names .git).
		_, cleanDenied := m.Match(filepath.Clean(abs))
		_, rawDenied := m.Match(abs)
		lexDenied := cleanDenied || rawDenied
		sawLink := false
		_, rerr := ResolvePath(abs, func(string) { sawLink = true })
		pc, err := m.Check(root, p)
		// The memo changes nothing: the same answer, read through one
		// memo shared with earlier checks.
		mpc, merr := m.CheckMemo(root, p, fuzzMemo)
		require.Equal(t, err != nil, merr != nil, "%q: %v / %v", p, err, merr)
		require.Equal(t, pc, mpc, "%q", p)
		if err != nil {
			require.Error(t, rerr)
			return // unresolvable paths are refused by the callers
		}
		if lexDenied {
			require.True(t, pc.Denied, "lexically denied %q allowed after resolution (%s)", p, pc.Resolved)
		}
		if !sawLink {
			require.Equal(t, lexDenied, pc.Denied, "%q: no symlink, yet the checks disagree", p)
			require.Equal(t, filepath.Clean(abs), pc.Resolved)
		}
		require.True(t, filepath.IsAbs(pc.Resolved))
		require.Equal(t, filepath.Clean(pc.Resolved), pc.Resolved)
		// Every existing prefix of the resolved path is a real directory
		// or file, never a symlink.
		cur := "/"
		for _, c := range SplitComponents(pc.Resolved) {
			cur = filepath.Join(cur, c)
			fi, err := os.Lstat(cur)
			if err != nil {
				break
			}
			require.Zero(t, fi.Mode()&os.ModeSymlink, "%q resolved to %q, which still has symlink %q", p, pc.Resolved, cur)
		}
	})
}
