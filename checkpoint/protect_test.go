package checkpoint

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/fspath"
)

// The gate's compiled lists convert to a Protection as they are: a host
// wires one list into both (this stops compiling if the two drift apart).
var _ = Protection(fspath.Lists{}.WithSeeds())

// The protection lists, row by row: the seeds' names and their variants,
// the shared defaults of both classes, and host entries of every form the
// gate accepts (a name with wildcards, several components, an absolute
// path, a path under ~).
func TestProtector(t *testing.T) {
	root := filepath.FromSlash("/work/ws")
	home := filepath.FromSlash("/home/u")
	// The gate's lists: the defaults and the profile's entries.
	def := fspath.Defaults()
	m, err := newProtector(&Protection{
		ReadWrite: append(def.ReadWrite, "*.pem", "credentials?.json", "secrets/prod.json", "/work/ws/private", "~/notes/keys.txt"),
		Write:     append(def.Write, "deploy/*.tf"),
	}, root, home)
	require.NoError(t, err)
	for _, tc := range []struct {
		path string
		want bool
	}{
		{".env", true},
		{".env.local", true},
		{".ssh", true},
		{"id_rsa", true},
		{"id_ed25519", true},
		{".env.production", true},
		{".ENV", true},
		{"app/.Env.Local", true},
		{".ssh/config", true},
		{"home/.SSH/known_hosts", true},
		{"keys/ID_RSA", true},
		{"deploy/id_ed25519", true},
		{"id_ecdsa", true},
		{".netrc", true},
		{"server.pem", true},
		{"conf/credentials1.json", true},
		{"secrets/prod.json", true},
		{"app/Secrets/PROD.json", true},
		{"secrets/prod.json/x", true},
		{"private", true},
		{"private/a/b", true},
		{"deploy/main.tf", true},
		{".envrc", true}, // write-protected: never restored either
		{".github/workflows/ci.yml", true},
		{".reins/project-profile.json", true},
		{".vscode/tasks.json", true},
		{"secrets/dev.json", false},
		{"prod.json", false},
		{"secrets", false},
		{"privateer", false},
		{"sub/private", false},
		{"notes/keys.txt", false}, // ~/notes is not in the workspace
		{"id_rsa.pub", false},
		{"env", false},
		{"my.env", false},
		{".environment", false},
		{"src/main.go", false},
		{"credentials12.json", false},
		{"deploy/sub/main.tf", false},
	} {
		assert.Equal(t, tc.want, m.match(tc.path), tc.path)
	}
	// A workspace in the home directory: ~ entries reach into it.
	h, err := newProtector(&Protection{ReadWrite: []string{"~/notes/keys.txt"}}, home, home)
	require.NoError(t, err)
	assert.True(t, h.match("notes/keys.txt"))
	assert.False(t, h.match("notes/other.txt"))
	d, err := newProtector(nil, home, home)
	require.NoError(t, err)
	assert.True(t, d.match(".aws/credentials"), "the default credential stores")
	// A workspace under a protected directory is protected as a whole.
	w, err := newProtector(&Protection{Write: []string{"/work"}}, root, home)
	require.NoError(t, err)
	assert.True(t, w.match("src/main.go"))
	// The host's lists are the lists: what a profile unprotects (the gate
	// then allows it) is covered by checkpoints; the seeds never are.
	n, err := newProtector(&Protection{ReadWrite: []string{"*.pem"}}, root, home)
	require.NoError(t, err)
	for _, p := range []string{".vscode/settings.json", ".envrc", ".env.production", "x.pem.txt"} {
		assert.False(t, n.match(p), p)
	}
	for _, p := range []string{"x.pem", ".git/config", ".env", ".env.local", ".ssh/k", "a/id_rsa", "ID_ED25519"} {
		assert.True(t, n.match(p), p)
	}
}

// Entries are checked with the gate's rule; one that cannot be honoured is
// an error naming the field, the index and the entry.
func TestProtectionValidation(t *testing.T) {
	for _, ok := range []Protection{
		{ReadWrite: []string{"*.pem", "secret?.txt", ".vault-token", "a/b/c", "/abs/path", "~/.aws", "$HOME/.kube"}},
		{Write: []string{".github/workflows", "/etc"}},
	} {
		assert.NoError(t, validProtection(ok), "%v", ok)
	}
	for _, tc := range []struct {
		p    Protection
		want string
	}{
		{Protection{ReadWrite: []string{""}}, "Protected.ReadWrite[0]"},
		{Protection{ReadWrite: []string{"ok", "[ab]"}}, "Protected.ReadWrite[1]"},
		{Protection{ReadWrite: []string{"a/../b"}}, `"a/../b"`},
		{Protection{Write: []string{"~user/x"}}, "Protected.Write[0]"},
		{Protection{Write: []string{"/abs/*.pem"}}, "wildcards"},
		{Protection{Write: []string{"x\x00"}}, "Protected.Write[0]"},
		{Protection{Write: []string{"**/x"}}, "**"},
	} {
		err := validProtection(tc.p)
		require.Error(t, err, "%v", tc.p)
		assert.Contains(t, err.Error(), tc.want)
	}
	// Without a home directory, a host entry under ~ cannot be honoured;
	// the defaults under ~ are dropped (they cannot be located either).
	_, err := newProtector(&Protection{ReadWrite: []string{"~/.config/x"}}, "/w", "")
	require.ErrorIs(t, err, fspath.ErrNoHome)
	m, err := newProtector(nil, "/w", "")
	require.NoError(t, err)
	assert.True(t, m.match(".env"))
	assert.True(t, m.match(".netrc"))
}

// The checkpointer's answer is the gate's matcher's answer on the same
// lists (one matcher, not a second one), and ASCII case never matters.
func FuzzProtectorMatch(f *testing.F) {
	for _, s := range []string{".env", "a/.ENV.x/b", "id_rsa.pub", ".ssh", "x/y/z", "ID_ED25519", ".env.", "a//b",
		"secrets/prod.json", "x/Secrets/Prod.JSON/y", "keys/k.pem", "private/x", ".github/workflows/a"} {
		f.Add(s)
	}
	def := fspath.Defaults()
	lists := fspath.Lists{
		ReadWrite: append(def.ReadWrite, "secrets/prod.json", "*.pem", "/w/private"),
		Write:     append(def.Write, "/w/gen", "/etc/reins"),
	}.WithSeeds()
	p := Protection(lists)
	m, err := newProtector(&p, "/w", "/h")
	require.NoError(f, err)
	gate, err := fspath.NewMatcher(lists, "/h")
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, p string) {
		got := m.match(p)
		require.Equal(t, got, m.match(strings.ToUpper(p)), "upper %q", p)
		require.Equal(t, got, m.match(lowerASCII(p)), "lower %q", p)
		require.Equal(t, gate.In("/w", p).Class != fspath.Unprotected, got, "%q", p)
	})
}

func FuzzDecodeUncovered(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("a\x00b/\x00"))
	f.Add([]byte("build/\x00x.log\x00nest/r/\x00"))
	f.Add([]byte("../x\x00"))
	f.Add([]byte("a/.git/x\x00"))
	f.Add([]byte("no-terminator"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := decodeUncovered(b)
		if err != nil {
			return
		}
		var list []string
		for p := range u.files {
			require.NoError(t, checkTreePath(p))
			require.True(t, u.excludes(p))
			list = append(list, p)
		}
		for d := range u.dirs {
			require.NoError(t, checkTreePath(d))
			require.True(t, u.excludes(d+"/below"))
			list = append(list, d+"/")
		}
		enc, err := encodeUncovered(list)
		require.NoError(t, err)
		again, err := decodeUncovered(enc)
		require.NoError(t, err)
		require.Equal(t, u, again)
	})
}
