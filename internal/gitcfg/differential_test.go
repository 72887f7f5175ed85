package gitcfg_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/gitcfg"
)

// gitList returns what git itself reads from a configuration file, as "key=value" (or "key"
// for a bare name), or ok=false when git rejects the file.
func gitList(t *testing.T, src string) ([]string, bool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(f, []byte(src), 0o644))
	cmd := exec.Command("git", "config", "--file", f, "--list", "--null")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var list []string
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		key, val, hasVal := strings.Cut(rec, "\n")
		if hasVal {
			list = append(list, key+"="+val)
		} else {
			list = append(list, key)
		}
	}
	return list, true
}

// TestParseAgreesWithGit: for files git accepts, Parse reads the same variables and values
// (git prints section and variable names lower-case and keeps a quoted subsection's case); a
// file git rejects, Parse rejects too.
func TestParseAgreesWithGit(t *testing.T) {
	needGit(t)
	for _, src := range []string{
		"[core]\n\tfsmonitor = ./x.sh\n\tbare\n",
		"[CoRe]\n\tPaGeR = \"less -R\" ; c\n",
		"[diff \"Foo Bar\"]\n\ttextconv = a\\tb \\\"c\\\" \\\\ d\n",
		"[diff.Foo]\n\tcommand = x\n",
		"[a] k = v\n[b \"s\"] k2 = w # c\n",
		"[a]\nk = one \\\n  two\n",
		"[a]\nk =  x  \"  y  \"  z  \n",
		"[a]\r\nk = v\r\n",
		"\xef\xbb\xbf[a]\nk=v\n",
		"[a]\nk=\n",
		"[a \"x\\\\y\\\"z\"]\nk=v\n",
		"[a]\nk = \"unterminated\n",
		"[a]\nk = \\q\n",
		"k = v\n",
		"[a]\n1k = v\n",
		"[a]\nk v\n",
		"[a \"x\" ]\nk=v\n",
		"[include]\n\tpath = other.cfg\n",
	} {
		want, ok := gitList(t, src)
		got, err := entries(t, src)
		if !ok {
			assert.Error(t, err, "git rejects %q", src)
			continue
		}
		if !assert.NoError(t, err, "git accepts %q", src) {
			continue
		}
		if strings.Contains(src, "[include]") {
			want = []string{"include.path=other.cfg"} // git follows it (missing: ignored); Parse lists it
		}
		assert.Equal(t, want, got, "%q", src)
	}
	_ = gitcfg.Entry{}
}
