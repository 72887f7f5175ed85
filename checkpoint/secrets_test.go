package checkpoint

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/fspath"
)

// The seeds' read-protected names and their variants, row by row.
func TestSecretMatcher(t *testing.T) {
	m, err := newSecretMatcher([]string{"*.pem", "credentials?.json"})
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
		{"id_rsa.pub", false},
		{".envrc", false},
		{"env", false},
		{"my.env", false},
		{".environment", false},
		{"src/main.go", false},
		{".git/config", false},
		{"credentials12.json", false},
		{"", false},
	} {
		assert.Equal(t, tc.want, m.match(tc.path), tc.path)
	}
}

func TestSecretNameValidation(t *testing.T) {
	for _, ok := range []string{"*.pem", "secret?.txt", ".vault-token"} {
		assert.NoError(t, validSecretName(ok), ok)
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "[ab]", "x\x00"} {
		assert.Error(t, validSecretName(bad), bad)
	}
}

func FuzzSecretMatch(f *testing.F) {
	for _, s := range []string{".env", "a/.ENV.x/b", "id_rsa.pub", ".ssh", "x/y/z", "ID_ED25519", ".env.", "a//b"} {
		f.Add(s)
	}
	m, err := newSecretMatcher(nil)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, p string) {
		got := m.match(p)
		// Case does not matter (ASCII).
		require.Equal(t, got, m.match(strings.ToUpper(p)), "upper %q", p)
		require.Equal(t, got, m.match(lowerASCII(p)), "lower %q", p)
		// A path matches exactly when one of its components does, and a
		// component matches by the seeds' rule: the six names and .env.*
		// always match, and nothing that is not a listed name does.
		want := false
		for _, el := range strings.Split(p, "/") {
			l := lowerASCII(el)
			seed := l == ".env" || l == ".env.local" || l == ".ssh" || l == "id_rsa" || l == "id_ed25519" ||
				(strings.HasPrefix(l, ".env.") && !strings.ContainsRune(l, '\\'))
			listed := false
			for _, n := range defaultSecrets() {
				listed = listed || fspathMatchName(n, el)
			}
			if seed {
				require.True(t, m.match(el), "component %q", el)
			}
			require.Equal(t, listed, m.match(el), "component %q", el)
			want = want || listed
		}
		require.Equal(t, want, got, "%q", p)
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

func fspathMatchName(pattern, name string) bool { return fspath.MatchName(pattern, name) }
