package audit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

func TestMaskSecrets(t *testing.T) {
	const R = audit.Mask
	tests := []struct {
		name, in, want string
	}{
		// Flags and key=value pairs.
		{"password flag with =", "mysql --password=hunter2 db", "mysql --password=" + R + " db"},
		{"password flag, separate value", "tool --password hunter2 --verbose", "tool --password " + R + " --verbose"},
		{"quoted value with spaces", `tool --password "correct horse battery" -v`, `tool --password "` + R + `" -v`},
		{"quoted = value", `tool --token='ab cd' x`, `tool --token='` + R + `' x`},
		{"token flag", "gh auth login --with-token ghx123 --hostname h", "gh auth login --with-token " + R + " --hostname h"},
		{"api key flag", "client --api-key=k-123456 run", "client --api-key=" + R + " run"},
		{"env assignment", "GITHUB_TOKEN=abc123 git push", "GITHUB_TOKEN=" + R + " git push"},
		{"export", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "export AWS_SECRET_ACCESS_KEY=" + R},
		{"pg password", "PGPASSWORD=pw psql -h db", "PGPASSWORD=" + R + " psql -h db"},
		{"mysql pwd env", "MYSQL_PWD=x mysql", "MYSQL_PWD=" + R + " mysql"},
		{"query string", "curl 'https://api.example.com/v1?user=bob&access_token=xyz789&page=2'", "curl 'https://api.example.com/v1?user=bob&access_token=" + R + "&page=2'"},
		{"client secret", "oauth --client-secret s3cr3t", "oauth --client-secret " + R},
		// URLs and -u.
		{"url password", "git clone https://bob:pa55@github.com/org/repo.git", "git clone https://bob:" + R + "@github.com/org/repo.git"},
		{"url token as user", "git clone https://0123456789abcdef0123456789@example.com/r.git", "git clone https://" + R + "@example.com/r.git"},
		{"curl -u", "curl -u admin:s3cret https://x", "curl -u admin:" + R + " https://x"},
		{"curl --user", "curl --user 'admin:s3 cret' https://x", "curl --user 'admin:" + R + "' https://x"},
		// Headers.
		{"bearer header", `curl -H "Authorization: Bearer eyXabc.def" https://x`, `curl -H "Authorization: Bearer ` + R + `" https://x`},
		{"basic header single quotes", `curl -H 'authorization: Basic dXNlcjpwYXNz' https://x`, `curl -H 'authorization: Basic ` + R + `' https://x`},
		{"header without scheme", `curl -H "Authorization:abc123" u`, `curl -H "Authorization:` + R + `" u`},
		{"proxy authorization", `curl -H "Proxy-Authorization: Basic Zm9vOmJhcg==" u`, `curl -H "Proxy-Authorization: Basic ` + R + `" u`},
		{"api key header", `curl -H "X-Api-Key: 12345" u`, `curl -H "X-Api-Key: ` + R + `" u`},
		{"gitlab header", `curl --header "PRIVATE-TOKEN: glx-abc" u`, `curl --header "PRIVATE-TOKEN: ` + R + `" u`},
		{"unquoted header", `http GET u Authorization:Bearer\ tok`, `http GET u Authorization:` + R + ` tok`},
		{"bare bearer", "the token was Bearer abc.def.ghi", "the token was Bearer " + R},
		// Token formats.
		{"github token", "echo ghp_16C7e42F292c6912E7710c838347Ae178B4a done", "echo ghp_" + R + " done"},
		{"github fine-grained", "x=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "x=github_pat_" + R},
		{"gitlab token", "glab --x glpat-abcdefghij0123456789", "glab --x glpat-" + R},
		{"slack token", "post xoxb-123456789012-abcdef", "post xoxb-" + R},
		{"openai key", "OPENAI=sk-proj-abcdefghijklmnopqrstuvwx", "OPENAI=sk-" + R},
		{"stripe key", "stripe sk_live_abcdefghijklmnop1234", "stripe sk_live_" + R},
		{"aws key id", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "aws configure set aws_access_key_id AKIA" + R},
		{"google key", "maps?key=AIzaSyA-abcdefghijklmnopqrstuvwxyz12345", "maps?key=AIza" + R},
		{"jwt", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-nature_x", "jwt " + R},
		{"private key", "echo '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----' > k", "echo '-----BEGIN RSA PRIVATE KEY-----" + R + "-----END RSA PRIVATE KEY-----' > k"},
		// Several at once.
		{"several", "A_TOKEN=x B_SECRET=y cmd --password z", "A_TOKEN=" + R + " B_SECRET=" + R + " cmd --password " + R},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, audit.MaskSecrets(tt.in))
		})
	}
}

// What is not a secret stays as it is.
func TestMaskSecrets_LeavesOrdinaryText(t *testing.T) {
	for _, in := range []string{
		"",
		"go test ./... -run TestFoo -count=1",
		"git commit -m 'fix: tokenizer handles passwordless login' --author='Ann <ann@example.com>'",
		"python train.py --tokenizer=bert --passes=3",
		"docker login --password-stdin -u bob registry.example.com",
		"ssh -p 2222 git@github.com",
		"mkdir -p build && cp -r src build/",
		"curl https://example.com/path?page=2&sort=asc",
		"kubectl create secret generic x --from-file=key-file=./id.pem",
		"pip install sk-learn scikit-learn",
		"ls internal/server/handler.go",
		"git clone git@github.com:org/repo.git",
		"echo eyJhbGciOi", // too short to be a token
		"grep -r AKIA src/",
		"terraform apply -var 'region=eu-west-1'",
		"deploy --token-file /run/secrets/token --password-env PW",
	} {
		got := audit.MaskSecrets(in)
		assert.Equal(t, in, got)
		if got == in {
			assert.Equal(t, 0.0, testing.AllocsPerRun(10, func() { _ = audit.MaskSecrets(in) }), "MaskSecrets(%q) allocates", in)
		}
	}
}

func TestRedactSecrets(t *testing.T) {
	r := audit.Sample(1)
	r.Command = "curl -H 'Authorization: Bearer abcdef' https://x"
	r.Reason = "ran with --password hunter2"
	r.Error = "auth failed for https://bob:pw@x"
	r.Target = "https://u:pw@host/x"
	targets := []string{"ok.go", "https://u:pw@host/x", "https://a:b@c/d"}
	r.Targets = targets
	audit.RedactSecrets(&r)
	for _, s := range append([]string{r.Command, r.Reason, r.Error, r.Target}, r.Targets...) {
		assert.NotContains(t, s, "hunter2")
		assert.NotContains(t, s, "abcdef")
		assert.NotContains(t, s, ":pw@")
		assert.NotContains(t, s, ":b@")
	}
	assert.Equal(t, "ok.go", r.Targets[0])
	assert.Equal(t, "https://u:pw@host/x", targets[1], "the caller's slice is not modified")

	clean := audit.Sample(2)
	allocs := testing.AllocsPerRun(20, func() {
		c := clean
		audit.RedactSecrets(&c)
	})
	assert.Zero(t, allocs, "a record without secrets is redacted without allocating")
}

func TestRedact_Sink(t *testing.T) {
	mem := audit.NewMemory(0)
	r := audit.Sample(1)
	r.Command = "PGPASSWORD=pw psql"
	require.NoError(t, audit.Redact(mem, nil).Write(context.Background(), r))
	require.NoError(t, audit.Redact(mem, func(r *audit.Record) { r.Command = strings.ToUpper(r.Command) }).Write(context.Background(), r))
	got := mem.Records()
	require.Len(t, got, 2)
	assert.Equal(t, "PGPASSWORD="+audit.Mask+" psql", got[0].Command)
	assert.Equal(t, "PGPASSWORD=PW PSQL", got[1].Command)
	assert.Equal(t, "PGPASSWORD=pw psql", r.Command)
	assert.Error(t, audit.Redact(nil, nil).Write(context.Background(), r))
}
