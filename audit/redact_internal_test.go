package audit

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzMaySecret: the pre-scan never hides a secret. Whatever maySecret lets through as
// clean, the full scanner leaves unchanged.
func FuzzMaySecret(f *testing.F) {
	for _, s := range []string{
		"", "go test ./... -run TestFoo -count=1", "internal/server/handler.go",
		"low and medium risk actions run automatically in the DEV profile",
		"the token was Bearer abc.def.ghi", "the token was BEARER x", `"bearer" x`,
		"echo ghp_16C7e42F292c6912E7710c838347Ae178B4a done", "post xoxb-123456789012-abcdef",
		"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-nature_x", "aws AKIAIOSFODNN7EXAMPLE",
		"echo '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----' > k",
		"tool --password hunter2", "curl -u admin:s3cret https://x", "x=\"", "'-----BEGIN",
		"a/sk-abcdefghijklmnopqrstuvwx/b", "(glpat-abcdefghij0123456789)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !maySecret(s) {
			require.Equal(t, s, maskSecrets(s), "maySecret(%q) = false, but the scanner masks it", s)
		}
	})
}

func TestMaySecret(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "internal/server/handler.go", "low and medium risk actions run automatically in the DEV profile",
		"ls src/a/b/c", "make all", "rm build/x.o", "a=b", "a:b", "-x", "x '-y", "Bearer", "abcdefghijklmno",
		"go test ./internal/server/... -run TestHandler -count=1", "git add -u", "go get -u ./...",
		"curl https://example.com/path?page=2&sort=asc", "docker login --password-stdin -u bob registry",
		"python train.py --tokenizer=bert --passes=3", "ssh -p 2222 git@github.com", "task-ask-x",
	} {
		assert.False(t, maySecret(s), "maySecret(%q)", s)
	}
	for _, s := range []string{
		"x password=1", "--token=", "a --password x", "-u a:b", "--user 'a:b'", "a bEaReR x", `"bearer" x`,
		"sk-abcdefghijklmnopqrstuvwx", "x/ghp_", "eyJ", "https://u:p@h", "https://@", "'-----BEGIN",
		"-----BEGIN", "Authorization:", `-H "x-api-key: 1"`, "PGPASSWORD=x", "?access_token=y",
	} {
		assert.True(t, maySecret(s), "maySecret(%q)", s)
	}
}

// The pre-scan against the full scanner on text built from the pieces every rule looks for,
// which random bytes rarely hit: whatever maySecret lets through, maskSecrets leaves unchanged.
func TestMaySecret_Pieces(t *testing.T) {
	t.Parallel()
	pieces := []string{
		" ", " ", "\t", "\n", "-", "--", "=", ":", "://", "@", "/", "?", "&", "#", `"`, "'", ".", "_",
		"password", "token", "pass", "auth", "file", "stdin", "u", "user", "proxy-user", "bearer", "BeArEr",
		"authorization", "x-api-key", "cookie", "https", "abc", "x", "0123456789abcdefghij",
		"<", "&", "\\", "\x00", "\x7f", "é", "\u2028", "\xff",
		"ghp_", "github_pat_", "glpat-", "sk_live_", "rk_live_", "npm_", "pypi-", "AIza", "ASIA", "sk-", "xoxb-", "AKIA", "eyJ", "eyJa.b.c", "ABCDEFGHIJKLMNOP", "-----BEGIN", "PRIVATE KEY-----",
	}
	rng := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	for range 200_000 {
		b.Reset()
		for n := 1 + rng.IntN(10); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		if secret, plain := scanText(s); !secret {
			require.Equal(t, s, maskSecrets(s), "maySecret(%q) = false, but the scanner masks it", s)
			require.Equal(t, plainString(s), plain, "scanText(%q)", s)
		}
	}
}
