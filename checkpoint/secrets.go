package checkpoint

import (
	"fmt"
	"path"
	"strings"
)

// defaultSecrets are the read-protected names inside a workspace: a path
// with a component matching one of them (ignoring ASCII case; * and ? are
// wildcards) is never stored in a checkpoint object and never deleted or
// overwritten by a restore. They are the in-workspace entries of the
// gate's and the sandbox's read-and-write protected list (the seeds' .env,
// .env.local, .ssh, id_rsa and id_ed25519, every .env variant, the other
// OpenSSH private key names and copied credential files).
//
// TODO(internal/fspath): take this list from the shared definition
// (fspath.Defaults().ReadWrite, its in-workspace names) once that package
// is committed, so that checkpoint cannot drift from the gate and sandbox.
var defaultSecrets = []string{
	".env", ".env.local", ".env.*",
	".ssh", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa",
	".netrc", ".git-credentials",
}

// secretMatcher matches workspace paths against read-protected names.
type secretMatcher struct {
	exact    map[string]bool // lower-case names without wildcards
	patterns []string        // lower-case names with * or ?
}

func newSecretMatcher(extra []string) secretMatcher {
	m := secretMatcher{exact: make(map[string]bool)}
	for _, list := range [][]string{defaultSecrets, extra} {
		for _, n := range list {
			n = lowerASCII(n)
			if strings.ContainsAny(n, "*?") {
				m.patterns = append(m.patterns, n)
			} else {
				m.exact[n] = true
			}
		}
	}
	return m
}

// validSecretName checks an [Options.Secrets] entry: one path component,
// with * and ? as the only special characters.
func validSecretName(n string) error {
	switch {
	case n == "" || n == "." || n == "..":
		return fmt.Errorf("%q is not a file name", n)
	case strings.ContainsAny(n, "/\\[]\x00\n\r"):
		return fmt.Errorf("%q: a name is one path component; only * and ? are wildcards", n)
	}
	return nil
}

// match reports whether the slash-separated path p has a read-protected
// component.
func (m *secretMatcher) match(p string) bool {
	for p != "" {
		el := p
		if i := strings.IndexByte(p, '/'); i >= 0 {
			el, p = p[:i], p[i+1:]
		} else {
			p = ""
		}
		if m.component(el) {
			return true
		}
	}
	return false
}

func (m *secretMatcher) component(el string) bool {
	if el == "" {
		return false
	}
	l := lowerASCII(el)
	if m.exact[l] {
		return true
	}
	for _, pat := range m.patterns {
		if ok, _ := path.Match(pat, l); ok {
			return true
		}
	}
	return false
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
