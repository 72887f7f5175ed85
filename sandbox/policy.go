package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/reins-go/reins/internal/fspath"
)

// FsNetPolicy is the file-system, network and environment policy of a
// backend. The zero value is usable: the default denied paths, no extra
// writable paths, no network for the backends that can enforce that, and
// the backend's own environment rule.
type FsNetPolicy struct {
	// AllowedPaths are directories, besides the root, that the command
	// may write. The hardened backend binds them writable; local ignores
	// them because it does not confine writes.
	AllowedPaths []string
	// AllowNetwork lets the command use sockets other than AF_UNIX.
	// Local cannot deny the network and ignores it.
	AllowNetwork bool
	// DeniedPaths are added to [DefaultDeniedPaths], which always apply.
	// A relative entry ("secrets/prod.json") matches wherever its
	// components appear as consecutive components of a path; an absolute
	// entry matches that path and everything beneath it. Matching is
	// case-insensitive and applies both to the path as written and to the
	// path with every symlink followed.
	DeniedPaths []string
	// EnvAllowlist, when non-empty, clears the environment and forwards
	// only the host variables named here (exact, case-sensitive names).
	// When empty, local passes the host environment through and the
	// hardened backend uses [DefaultEnvAllowlist]. Command.Env is not
	// filtered: what the host puts there always reaches the command.
	EnvAllowlist []string
}

// DefaultDeniedPaths returns the paths every policy denies: the seeds' .git, .env, .env.local,
// .ssh, id_rsa and id_ed25519 first, then the rest of reins' two protection classes, the same
// lists the gate and the built-in profiles use (secrets such as .env.* and ~/.aws, and
// write-protected files such as .envrc, shell rc files and .vscode). It returns a new slice on
// each call.
func DefaultDeniedPaths() []string {
	out := fspath.Seeds()
	d := fspath.Defaults()
	for _, e := range append(d.ReadWrite, d.Write...) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// DefaultEnvAllowlist returns the variables the hardened backend forwards
// when the policy's EnvAllowlist is empty.
func DefaultEnvAllowlist() []string {
	return []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"}
}

// pathMatcher matches paths against denied entries on their components,
// case-insensitively.
type pathMatcher struct {
	rel [][]string     // relative entries, split into components
	abs [][]string     // absolute entries, split into components
	raw []string       // entries as configured, parallel to rel then abs
	cls []fspath.Class // each entry's protection class, parallel to raw
}

// newPathMatcher compiles the default denied paths plus extra. Entries starting with ~ or
// $HOME are expanded against the user's home directory; an entry that cannot be honoured (no
// home directory, a pattern other than * and ? in a name, "..") is an error, never dropped.
func newPathMatcher(extra []string) (pathMatcher, error) {
	var m pathMatcher
	var relRaw, absRaw []string
	var relCls, absCls []fspath.Class
	defaults := DefaultDeniedPaths()
	write := fspath.Defaults().Write
	home, _ := os.UserHomeDir()
	for i, e := range append(defaults, extra...) {
		name := fmt.Sprintf("FsNetPolicy.DeniedPaths[%d] %q", i-len(defaults), e)
		if i < len(defaults) {
			name = fmt.Sprintf("default denied path %q", e)
		}
		if e == "" || strings.IndexByte(e, 0) >= 0 {
			return pathMatcher{}, fmt.Errorf("sandbox: %s is not a path", name)
		}
		x := e
		if fspath.IsAbsEntry(filepath.ToSlash(e)) {
			var err error
			if x, err = fspath.Expand(e, home); err != nil {
				return pathMatcher{}, fmt.Errorf("sandbox: %s cannot be honoured: %w", name, err)
			}
		}
		comps := splitComponents(filepath.Clean(x))
		for _, c := range comps {
			if c == ".." {
				return pathMatcher{}, fmt.Errorf(`sandbox: %s has a ".." component`, name)
			}
		}
		if len(comps) == 0 {
			return pathMatcher{}, fmt.Errorf("sandbox: %s names the root or the current directory", name)
		}
		if why := fspath.CheckEntry(filepath.ToSlash(x)); why != "" {
			return pathMatcher{}, fmt.Errorf("sandbox: %s: %s", name, why)
		}
		cls := fspath.ReadWriteProtected
		if i < len(defaults) && slices.Contains(write, e) {
			cls = fspath.WriteProtected
		}
		if filepath.IsAbs(x) {
			m.abs = append(m.abs, comps)
			absRaw = append(absRaw, e)
			absCls = append(absCls, cls)
		} else {
			m.rel = append(m.rel, comps)
			relRaw = append(relRaw, e)
			relCls = append(relCls, cls)
		}
	}
	m.raw = append(relRaw, absRaw...)
	m.cls = append(relCls, absCls...)
	return m, nil
}

// splitComponents splits a clean path into its non-empty, non-"."
// components.
func splitComponents(p string) []string {
	var out []string
	for _, c := range strings.Split(p, string(filepath.Separator)) {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// match reports the denied entry that the absolute, clean path p matches, comparing components
// case-insensitively: a read-and-write protected entry when one matches, else the first
// write-protected one.
func (m pathMatcher) match(p string) (entry string, ok bool) {
	entry, cls := m.matchClass(p)
	return entry, cls != fspath.Unprotected
}

// matchClass is match with the matched entry's protection class (fspath.Unprotected when none
// matches).
func (m pathMatcher) matchClass(p string) (string, fspath.Class) {
	comps := splitComponents(p)
	best, bestCls := "", fspath.Unprotected
	consider := func(k int) bool {
		c := fspath.ReadWriteProtected
		if k < len(m.cls) {
			c = m.cls[k]
		}
		if c > bestCls {
			best, bestCls = m.raw[k], c
		}
		return bestCls == fspath.ReadWriteProtected
	}
	for i, e := range m.rel {
		for start := 0; start+len(e) <= len(comps); start++ {
			if equalFoldRun(comps[start:start+len(e)], e) {
				if consider(i) {
					return best, bestCls
				}
				break
			}
		}
	}
	for i, e := range m.abs {
		if len(e) <= len(comps) && equalFoldRun(comps[:len(e)], e) {
			if consider(len(m.rel) + i) {
				return best, bestCls
			}
		}
	}
	return best, bestCls
}

// equalFoldRun reports whether the path components a match the entry components b: ASCII case
// folded, * and ? in an entry's names as wildcards (".env.*").
func equalFoldRun(a, b []string) bool {
	for i := range b {
		if !fspath.MatchName(b[i], a[i]) {
			return false
		}
	}
	return true
}

// maxSymlinkHops bounds symlink resolution, as the kernel does (40).
const maxSymlinkHops = 40

// errTooManyLinks reports a symlink loop or an over-long chain.
var errTooManyLinks = errors.New("too many levels of symbolic links")

// resolvePath returns the absolute path that p names once every symlink
// in it has been followed. Components that do not exist are appended as
// written (a file about to be created). A dangling symlink is followed to
// its target, because creating a file through it creates the target.
// visit, if not nil, is called with the location of every symlink target
// on the way, so a caller can check intermediate hops too.
func resolvePath(p string, visit func(string)) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("sandbox: resolve %q: not absolute", p)
	}
	// ".." is applied to the resolved path, as the kernel does: it goes
	// to the parent of where the symlinks so far led, not lexically.
	pending := splitComponents(p)
	resolved := string(filepath.Separator)
	hops := 0
	missing := false
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		if c == ".." {
			resolved = filepath.Dir(resolved)
			if missing {
				if _, err := os.Lstat(resolved); err == nil {
					missing = false
				}
			}
			continue
		}
		next := filepath.Join(resolved, c)
		if missing {
			resolved = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			missing = true
			resolved = next
			continue
		case err != nil:
			return "", fmt.Errorf("sandbox: resolve %q: %w", p, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("sandbox: resolve %q: %w", p, errTooManyLinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("sandbox: resolve %q: %w", p, err)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		if visit != nil {
			if filepath.IsAbs(target) {
				visit(filepath.Clean(target))
			} else {
				visit(filepath.Join(resolved, target))
			}
		}
		pending = append(splitComponents(target), pending...)
	}
	return resolved, nil
}

// pathCheck is the outcome of checking one path.
type pathCheck struct {
	Abs      string // the path as written, made absolute and clean
	Resolved string // the path with every symlink followed
	Entry    string // the denied entry it matched, if any
	Denied   bool
}

// check makes unsafePath absolute against base and matches it against
// the denied entries, first as written (cleaned, and before cleaning)
// and then with every symlink (including intermediate hops) followed
// and ".." applied to where the links led. A path that cannot be resolved
// is an error, which callers treat as a denial.
func (m pathMatcher) check(base, unsafePath string) (pathCheck, error) {
	abs := unsafePath
	if !filepath.IsAbs(abs) {
		abs = base + string(filepath.Separator) + abs
	}
	pc := pathCheck{Abs: filepath.Clean(abs)}
	if e, ok := m.match(pc.Abs); ok {
		pc.Entry, pc.Denied = e, true
	} else if e, ok := m.match(abs); ok {
		// As written, before ".." is applied: ".git/../x" mentions .git.
		pc.Entry, pc.Denied = e, true
	}
	var hopEntry string
	resolved, err := resolvePath(abs, func(hop string) {
		if e, ok := m.match(hop); ok && hopEntry == "" {
			hopEntry = e
		}
	})
	if err != nil {
		return pc, err
	}
	pc.Resolved = resolved
	if !pc.Denied {
		if e, ok := m.match(resolved); ok {
			pc.Entry, pc.Denied = e, true
		} else if hopEntry != "" {
			pc.Entry, pc.Denied = hopEntry, true
		}
	}
	return pc, nil
}

// within reports whether the clean absolute path p is dir or beneath it (the one definition in
// internal/fspath).
func within(p, dir string) bool { return fspath.Within(p, dir) }

// buildEnv keeps the variables of base that allow names (all of them
// when allow is empty) and overlays overrides, which are always kept:
// the allowlist filters what a command inherits from the host, while
// Command.Env is what the host chose to give it. Later entries win.
func buildEnv(base, overrides, allow []string) []string {
	allowed := func(string) bool { return true }
	if len(allow) > 0 {
		set := make(map[string]bool, len(allow))
		for _, k := range allow {
			set[k] = true
		}
		allowed = func(k string) bool { return set[k] }
	}
	idx := map[string]int{}
	var out []string
	for i, kv := range append(append([]string(nil), base...), overrides...) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || (i < len(base) && !allowed(k)) {
			continue
		}
		if i, seen := idx[k]; seen {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// lookupEnv returns the value of key in env.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}
