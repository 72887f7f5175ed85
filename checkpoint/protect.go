package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"

	"github.com/reins-go/reins/internal/fspath"
)

// Protection holds reins' two protection lists, in the form the gate builds
// them (the profile's protected and write-protected paths, the seeds' names
// and the user configuration directory). Its fields are those of the lists
// the gate compiles, so a host inside this module converts them as they are
// (checkpoint.Protection(lists)); one list then reaches the gate, the sandbox
// and the checkpoints. See [Options.Protected].
//
// An entry is what the gate accepts: a name matched as a path component
// anywhere in the workspace (".env"), a run of names ("secrets/prod.json",
// ".github/workflows"), a name with the wildcards * and ? (".env.*",
// "*.pem"), or an absolute path protected with everything under it ("/srv/keys",
// "~/.aws", "$HOME/.kube"). Matching folds ASCII case. The entries are
// matched by the same matcher the gate uses (internal/fspath).
type Protection struct {
	// ReadWrite are the secrets: never read or written by an agent.
	ReadWrite []string
	// Write are the paths an agent may read but never write: what makes
	// other programs run code or changes an agent's permissions.
	Write []string
}

// clone returns a deep copy of p.
func (p Protection) clone() Protection {
	return Protection{ReadWrite: slices.Clone(p.ReadWrite), Write: slices.Clone(p.Write)}
}

// protector matches workspace-relative paths against both protection
// classes. A path in either is never stored in a checkpoint and never
// written or deleted by a restore: a secret must not reach the object
// store, and a rewind must not change what runs code or what an agent may
// do (restoring an older .reins/project-profile.json would loosen the
// agent's permissions).
type protector struct {
	m   *fspath.RootMatcher
	sig string // what the matcher was built from, for purgeProtected
}

// homeDir is the home directory that ~ and $HOME in entries stand for: $HOME
// as os.UserHomeDir reads it, or the account's home directory when that is
// unset. "" when neither is known.
func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// newProtector compiles the lists for paths inside root: the host's lists
// with the seeds (the gate's form), or, for nil, the default lists, whose
// entries under the home directory are dropped when the home directory is
// unknown (they cannot be inside a workspace this process can locate
// either). A host entry that cannot be honoured is an error naming it.
func newProtector(host *Protection, root, home string) (protector, error) {
	var lists fspath.Lists
	if host != nil {
		lists = fspath.Lists{ReadWrite: host.ReadWrite, Write: host.Write}.WithSeeds()
	} else {
		def := fspath.Defaults().WithSeeds()
		keep := func(e string) bool {
			_, err := fspath.Expand(e, home)
			return !errors.Is(err, fspath.ErrNoHome)
		}
		for _, e := range def.ReadWrite {
			if keep(e) {
				lists.ReadWrite = append(lists.ReadWrite, e)
			}
		}
		for _, e := range def.Write {
			if keep(e) {
				lists.Write = append(lists.Write, e)
			}
		}
	}
	m, err := fspath.NewMatcher(lists, home)
	if err != nil {
		return protector{}, fmt.Errorf("checkpoint: Options.Protected: %w", err)
	}
	var sig strings.Builder
	sig.WriteString("v2\n")
	for _, l := range [...][]string{lists.ReadWrite, lists.Write} {
		names := make([]string, len(l))
		for i, e := range l {
			names[i] = lowerASCII(e)
		}
		slices.Sort(names)
		sig.WriteString(strings.Join(names, "\n"))
		sig.WriteString("\n--\n")
	}
	sig.WriteString(home + "\n" + root + "\n")
	return protector{m: m.ForRoot(root), sig: sig.String()}, nil
}

// validProtection checks the host's entries with the gate's own rule.
func validProtection(p Protection) error {
	for _, l := range [...]struct {
		field string
		list  []string
	}{{"ReadWrite", p.ReadWrite}, {"Write", p.Write}} {
		for i, e := range l.list {
			if why := fspath.CheckEntry(e); why != "" {
				return fmt.Errorf("checkpoint: Options.Protected.%s[%d]: %q: %s", l.field, i, truncate(e, 200), why)
			}
		}
	}
	return nil
}

// match reports whether the slash-separated workspace-relative path p is
// protected: a component or run of components matches a name entry, or an
// absolute entry holds it.
func (m *protector) match(p string) bool {
	return m.m.In(p).Class != fspath.Unprotected
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
