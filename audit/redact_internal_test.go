package audit

import (
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
		"internal/server/handler.go", "low and medium risk actions run automatically in the DEV profile",
		"ls src/a/b/c", "make all", "rm build/x.o",
	} {
		assert.False(t, maySecret(s), "maySecret(%q)", s)
	}
	for _, s := range []string{
		"a=b", "a:b", "-x", "x '-y", "Bearer", "a bEaReR", "abcdefghijklmno", "sk-abcdefghijklmnopqrstuvwx",
	} {
		assert.True(t, maySecret(s), "maySecret(%q)", s)
	}
}
