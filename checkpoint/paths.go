package checkpoint

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// checkRelPath validates a workspace-relative, slash-separated path given
// by a caller or stored in metadata: valid UTF-8 (it travels in JSON) and
// a safe tree path.
func checkRelPath(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w: %q: not valid UTF-8", ErrInvalidPath, truncate(p, 80))
	}
	return checkTreePath(p)
}

// checkTreePath validates a path read from a snapshot tree: any bytes but
// NUL (file names need not be UTF-8), clean, relative, no "..", no .git
// component.
func checkTreePath(p string) error {
	switch {
	case p == "" || p == ".":
		return fmt.Errorf("%w: empty path", ErrInvalidPath)
	case len(p) > 4096:
		return fmt.Errorf("%w: %q: longer than 4096 bytes", ErrInvalidPath, truncate(p, 80))
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%w: %q: contains NUL", ErrInvalidPath, truncate(p, 80))
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: %q: absolute", ErrInvalidPath, truncate(p, 80))
	case path.Clean(p) != p:
		return fmt.Errorf("%w: %q: not clean (want %q)", ErrInvalidPath, truncate(p, 80), path.Clean(p))
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return fmt.Errorf("%w: %q: escapes the workspace", ErrInvalidPath, truncate(p, 80))
		}
		if strings.EqualFold(el, ".git") {
			return fmt.Errorf("%w: %q: inside a .git directory", ErrInvalidPath, truncate(p, 80))
		}
	}
	return nil
}

// normalizePaths turns caller-supplied paths (workspace-relative, or
// absolute inside the workspace as given to New or as resolved; OS
// separators; files or directories, existing or not) into sorted, unique,
// validated workspace-relative slash paths, none inside another (a path
// below a listed directory is covered by it). full is true when a path is
// the workspace itself: the snapshot is then a full one. field names the
// argument in errors.
func (c *Checkpointer) normalizePaths(field string, unsafePaths []string) (paths []string, full bool, err error) {
	if len(unsafePaths) == 0 {
		return nil, false, fmt.Errorf("%w: %s is empty (a full snapshot takes no paths)", ErrInvalidPath, field)
	}
	if len(unsafePaths) > maxScopedPaths {
		return nil, false, fmt.Errorf("%w: %s has %d entries, at most %d allowed", ErrInvalidPath, field, len(unsafePaths), maxScopedPaths)
	}
	out := make([]string, 0, len(unsafePaths))
	for i, p := range unsafePaths {
		if p == "" || strings.ContainsRune(p, 0) {
			return nil, false, fmt.Errorf("%w: %s[%d]: %q is not a path", ErrInvalidPath, field, i, truncate(p, 200))
		}
		q := filepath.Clean(p)
		if filepath.IsAbs(q) {
			var base string
			switch {
			case within(c.root, q):
				base = c.root
			case within(c.given, q):
				base = c.given
			default:
				return nil, false, fmt.Errorf("%w: %s[%d]: %q is outside the workspace %s", ErrInvalidPath, field, i, truncate(p, 200), c.root)
			}
			rel, err := filepath.Rel(base, q)
			if err != nil {
				return nil, false, fmt.Errorf("%w: %s[%d]: %q: %v", ErrInvalidPath, field, i, truncate(p, 200), err)
			}
			q = rel
		}
		q = filepath.ToSlash(q)
		if q == "." {
			return nil, true, nil
		}
		if q == ".." || strings.HasPrefix(q, "../") {
			return nil, false, fmt.Errorf("%w: %s[%d]: %q is outside the workspace %s", ErrInvalidPath, field, i, truncate(p, 200), c.root)
		}
		if err := checkRelPath(q); err != nil {
			return nil, false, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, q)
	}
	return collapse(out), false, nil
}

// collapse sorts workspace-relative paths and drops duplicates and every
// path below another one (covered by it).
func collapse(paths []string) []string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	return slices.DeleteFunc(paths, func(p string) bool { return coveredBy(path.Dir(p), set) })
}

// coveredBy reports whether the workspace-relative p is in scope (a set of
// scoped paths) or below one of them.
func coveredBy(p string, scope map[string]bool) bool {
	for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if scope[p] {
			return true
		}
	}
	return false
}
