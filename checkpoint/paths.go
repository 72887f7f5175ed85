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

// normalizePaths turns caller-supplied paths (workspace-relative or
// absolute inside the workspace, OS separators) into sorted, unique,
// validated workspace-relative slash paths.
func normalizePaths(root string, unsafePaths []string) ([]string, error) {
	if len(unsafePaths) == 0 {
		return nil, fmt.Errorf("%w: CreateOptions.Paths is empty (use nil for a full snapshot)", ErrInvalidPath)
	}
	if len(unsafePaths) > maxScopedPaths {
		return nil, fmt.Errorf("%w: CreateOptions.Paths has %d entries, at most %d allowed", ErrInvalidPath, len(unsafePaths), maxScopedPaths)
	}
	out := make([]string, 0, len(unsafePaths))
	for i, p := range unsafePaths {
		if strings.ContainsRune(p, 0) {
			return nil, fmt.Errorf("%w: CreateOptions.Paths[%d]: contains NUL", ErrInvalidPath, i)
		}
		q := p
		if filepath.IsAbs(q) {
			rel, err := filepath.Rel(root, filepath.Clean(q))
			if err != nil || !within(root, filepath.Clean(q)) {
				return nil, fmt.Errorf("%w: CreateOptions.Paths[%d]: %q is outside the workspace %s", ErrInvalidPath, i, truncate(p, 200), root)
			}
			q = rel
		}
		q = filepath.ToSlash(filepath.Clean(q))
		if err := checkRelPath(q); err != nil {
			return nil, fmt.Errorf("CreateOptions.Paths[%d]: %w", i, err)
		}
		out = append(out, q)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	// A path and one below it cannot both be files.
	set := make(map[string]bool, len(out))
	for _, p := range out {
		set[p] = true
	}
	for _, p := range out {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if set[d] {
				return nil, fmt.Errorf("%w: CreateOptions.Paths: %q is inside %q; paths must name files", ErrInvalidPath, p, d)
			}
		}
	}
	return out, nil
}
