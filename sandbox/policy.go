package sandbox

import (
	"strings"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
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
func DefaultDeniedPaths() []string { return pathmatch.DefaultDenied() }

// DefaultEnvAllowlist returns the variables the hardened backend forwards
// when the policy's EnvAllowlist is empty.
func DefaultEnvAllowlist() []string {
	return []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"}
}

// pathMatcher matches paths against denied entries on their components,
// case-insensitively (see internal/pathmatch, which the backend
// sub-packages share).
type pathMatcher struct{ pathmatch.Matcher }

// newPathMatcher compiles the default denied paths plus extra (see
// [pathmatch.New]).
func newPathMatcher(extra []string) (pathMatcher, error) {
	m, err := pathmatch.New(extra)
	return pathMatcher{m}, err
}

// splitComponents splits a clean path into its non-empty, non-"."
// components.
func splitComponents(p string) []string { return pathmatch.SplitComponents(p) }

// match reports the denied entry that the absolute, clean path p matches.
func (m pathMatcher) match(p string) (entry string, ok bool) { return m.Match(p) }

// matchClass is match with the matched entry's protection class.
func (m pathMatcher) matchClass(p string) (string, fspath.Class) { return m.MatchClass(p) }

// pathCheck is the outcome of checking one path.
type pathCheck = pathmatch.Checked

// check matches unsafePath, made absolute against base, as written and
// with every symlink followed (see [pathmatch.Matcher.Check]).
func (m pathMatcher) check(base, unsafePath string) (pathCheck, error) {
	return m.Check(base, unsafePath)
}

// resolvePath follows every symlink in the absolute path p (see
// [pathmatch.ResolvePath]).
func resolvePath(p string, visit func(string)) (string, error) {
	return pathmatch.ResolvePath(p, visit)
}

// findProtected walks dirs and returns, resolved, the existing paths
// that match a denied entry of m: masks to hide and write-protected
// paths to keep read-only (see [pathmatch.FindProtected]).
func findProtected(m pathMatcher, dirs []string) (masks, readOnly []string, err error) {
	return pathmatch.FindProtected(m.Matcher, dirs)
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
