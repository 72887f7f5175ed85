package fspath

import (
	"errors"
	"fmt"
	"strings"
)

// maxEntryLen bounds one configured entry, as PATH_MAX bounds a path.
const maxEntryLen = 4096

// ErrNoHome is returned when an entry starts with ~ or $HOME and the home directory is unknown.
var ErrNoHome = errors.New("the home directory is unknown")

// CheckEntry returns why e cannot be a protection list entry, or "" when it can. Profile files
// report the reason at the entry's JSON pointer; [NewMatcher] refuses the same entries.
func CheckEntry(e string) string {
	e = Host().ToSlash(e) // on Windows a backslash separates, elsewhere it is refused below
	switch {
	case strings.TrimSpace(e) == "":
		return "names no path"
	case len(e) > maxEntryLen:
		return fmt.Sprintf("longer than %d bytes", maxEntryLen)
	case strings.IndexByte(e, 0) >= 0:
		return "contains a NUL byte"
	}
	if home, rest, ok := splitHome(e); ok {
		if !home {
			return "only ~/ is expanded (not ~user)"
		}
		e = "/" + rest
	}
	if strings.ContainsAny(e, "[]{}\\") {
		return "protected paths are literal paths (a name may hold * and ?), not patterns"
	}
	abs := strings.HasPrefix(e, "/") || Host().IsAbs(e)
	n := 0
	for _, c := range strings.Split(e, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if abs {
				return `".." is not allowed in a protected path`
			}
			return `".." is not allowed in a relative entry`
		case "**":
			return `"**" is not allowed: a name is matched anywhere in a path already`
		}
		if abs && strings.ContainsAny(c, "*?") {
			return "wildcards are allowed in names matched anywhere, not in absolute paths"
		}
		n++
	}
	if n == 0 && !abs {
		return "names no path"
	}
	return ""
}

// splitHome recognises an entry that starts at the home directory: "~", "~/x", "$HOME",
// "$HOME/x", "${HOME}", "${HOME}/x". ok is true for those and for "~user" (home is false then).
func splitHome(e string) (home bool, rest string, ok bool) {
	for _, p := range [...]string{"~", "$HOME", "${HOME}"} {
		if e == p {
			return true, "", true
		}
		if strings.HasPrefix(e, p+"/") {
			return true, e[len(p)+1:], true
		}
	}
	if strings.HasPrefix(e, "~") {
		return false, "", true
	}
	return false, "", false
}

// IsAbsEntry reports whether e names an absolute path (after ~ or $HOME expansion) rather than
// names matched anywhere.
func IsAbsEntry(e string) bool {
	if _, _, ok := splitHome(e); ok {
		return true
	}
	return strings.HasPrefix(e, "/") || Host().IsAbs(e)
}

// Expand returns e with a leading "~", "$HOME" or "${HOME}" replaced by home, in home's
// separators. Other entries are returned unchanged. An entry that needs home when home is empty
// or relative is an error wrapping [ErrNoHome]: it cannot be honoured, and dropping it silently
// would protect nothing.
func Expand(e, home string) (string, error) {
	isHome, rest, ok := splitHome(e)
	switch {
	case !ok:
		return e, nil
	case !isHome:
		return "", fmt.Errorf("cannot expand %q: only ~/ is expanded (not ~user)", e)
	case home == "" || !Host().IsAbs(home) && !strings.HasPrefix(home, "/"):
		return "", fmt.Errorf("cannot expand %q: %w", e, ErrNoHome)
	case rest == "":
		return home, nil
	}
	sep := "/"
	if Host().Backslash && strings.Contains(home, "\\") {
		sep = "\\"
		rest = strings.ReplaceAll(rest, "/", "\\")
	}
	return strings.TrimRight(home, "/\\") + sep + rest, nil
}
