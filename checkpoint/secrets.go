package checkpoint

import (
	"fmt"
	"strings"

	"github.com/reins-go/reins/internal/fspath"
)

// defaultSecrets are the read-protected names inside a workspace: the
// entries of the shared read-and-write protected list (internal/fspath,
// the one definition the gate and the sandbox use) that are names matched
// anywhere, without the credential stores in the home directory. A path
// with a component matching one of them (ignoring ASCII case; * and ? are
// wildcards) is never stored in a checkpoint object and never deleted or
// overwritten by a restore.
func defaultSecrets() []string {
	var out []string
	for _, e := range fspath.Defaults().ReadWrite {
		if !fspath.IsAbsEntry(e) {
			out = append(out, e)
		}
	}
	return out
}

// secretMatcher matches workspace-relative paths against read-protected
// names.
type secretMatcher struct {
	m *fspath.Matcher
}

func newSecretMatcher(extra []string) (secretMatcher, error) {
	names := append(defaultSecrets(), extra...)
	m, err := fspath.NewMatcher(fspath.Lists{ReadWrite: names}, "")
	if err != nil {
		return secretMatcher{}, fmt.Errorf("checkpoint: read-protected names: %w", err)
	}
	return secretMatcher{m: m}, nil
}

// validSecretName checks an [Options.Secrets] entry: one path component,
// with * and ? as the only special characters.
func validSecretName(n string) error {
	switch {
	case n == "" || n == "." || n == "..":
		return fmt.Errorf("%q is not a file name", n)
	case strings.ContainsAny(n, "/\\[]{}~$\x00\n\r"):
		return fmt.Errorf("%q: a name is one path component; only * and ? are wildcards", n)
	}
	return nil
}

// match reports whether the slash-separated workspace-relative path p has
// a read-protected component.
func (m *secretMatcher) match(p string) bool {
	return m.m.Names(p).Class == fspath.ReadWriteProtected
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
