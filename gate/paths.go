package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

type fileKind uint8

const (
	kindMissing fileKind = iota
	kindOther
	kindSymlink
)

const (
	maxPathLen = 4096 // PATH_MAX: longer targets are refused
	maxLinks   = 40   // symbolic links followed per target, as the kernel's ELOOP limit
)

var (
	errEmptyTarget = errors.New("empty target path")
	errNULTarget   = errors.New("target path contains a NUL byte")
	errLongTarget  = fmt.Errorf("target path longer than %d bytes", maxPathLen)
	errLinkLoop    = fmt.Errorf("more than %d symbolic links", maxLinks)
)

// workspace resolves targets against the workspace roots, symlink-safely: the deepest existing
// ancestor of a target is resolved through the filesystem (every symbolic link followed, as the
// kernel would when the action runs), and the rest, which does not exist yet, lexically.
type workspace struct {
	primary string   // the first root: relative targets are relative to it
	roots   []string // every root (workspace and trusted paths), resolved, deepest first
}

func newWorkspace(dirs []string, trusted []string) (*workspace, error) {
	if len(dirs) == 0 {
		return nil, errors.New("gate: no workspace root")
	}
	w := &workspace{}
	for i, d := range dirs {
		r, err := resolveRoot(d)
		if err != nil {
			return nil, fmt.Errorf("gate: workspace root %q: %w", d, err)
		}
		if i == 0 {
			w.primary = r
		}
		w.roots = append(w.roots, r)
	}
	for _, t := range trusted {
		r, err := resolveRoot(t)
		if err != nil {
			// A trusted path grants; one that does not exist grants nothing.
			continue
		}
		w.roots = append(w.roots, r)
	}
	slices.SortStableFunc(w.roots, func(a, b string) int { return len(b) - len(a) })
	w.roots = slices.Compact(w.roots)
	return w, nil
}

func resolveRoot(dir string) (string, error) {
	dir, err := expandHome(dir)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return filepath.ToSlash(real), nil
}

func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand %q: %w", p, err)
	}
	return home + p[1:], nil
}

// within reports whether abs is r or lies under it.
func within(abs, r string) bool {
	if r == "/" {
		return strings.HasPrefix(abs, "/")
	}
	return abs == r || len(abs) > len(r) && abs[len(r)] == '/' && abs[:len(r)] == r
}

// rootOf returns the deepest root holding abs, or "".
func (w *workspace) rootOf(abs string) string {
	for _, r := range w.roots {
		if within(abs, r) {
			return r
		}
	}
	return ""
}

// relTo returns abs relative to root r (which holds it): "." for r itself.
func relTo(abs, r string) string {
	switch {
	case abs == r:
		return "."
	case r == "/":
		return abs[1:]
	}
	return abs[len(r)+1:]
}

// resolve returns the root holding target ("" when it lies outside every root) and the target's
// path: relative to that root when inside, absolute when outside. Relative targets are relative to
// the primary root. It allocates only when the target is not already clean or passes through a
// symbolic link.
func (w *workspace) resolve(target string) (root, p string, err error) {
	switch {
	case target == "":
		return "", "", errEmptyTarget
	case strings.IndexByte(target, 0) >= 0:
		return "", "", errNULTarget
	case len(target) > maxPathLen:
		return "", "", errLongTarget
	}
	var base, rest string
	switch {
	case !strings.HasPrefix(target, "/"):
		base, rest = w.primary, target
	default:
		base, rest = "/", target[1:]
		for _, r := range w.roots {
			if within(target, r) {
				base, rest = r, strings.TrimPrefix(target[len(r):], "/")
				break
			}
		}
	}

	var buf [maxPathLen + 2]byte
	n := copy(buf[:], base)
	changed, links, missing := false, 0, false
	for i := 0; i <= len(rest); {
		j := strings.IndexByte(rest[i:], '/')
		if j < 0 {
			j = len(rest)
		} else {
			j += i
		}
		comp := rest[i:j]
		i = j + 1
		switch comp {
		case "":
			if len(rest) > 0 {
				changed = true // "a//b", a trailing slash
			}
			continue
		case ".":
			changed = true
			continue
		case "..":
			changed = true
			for n > 1 && buf[n-1] != '/' {
				n--
			}
			if n > 1 {
				n-- // drop the slash, keep "/" itself
			}
			continue
		}
		if n > 1 {
			buf[n] = '/'
			n++
		}
		if n+len(comp)+1 > len(buf) {
			return "", "", errLongTarget
		}
		dirN := n
		n += copy(buf[n:], comp)
		if missing {
			continue // below a missing component everything is lexical
		}
		buf[n] = 0
		kind, err := lstatKind(buf[:n+1])
		switch {
		case err == nil && kind == kindSymlink:
			links++
			if links > maxLinks {
				return "", "", errLinkLoop
			}
			link, err := os.Readlink(string(buf[:n]))
			if err != nil {
				return "", "", err
			}
			changed = true
			remaining := ""
			if i <= len(rest) {
				remaining = rest[i:]
			}
			if strings.HasPrefix(link, "/") {
				n = 1
				buf[0] = '/'
				rest = link[1:] + "/" + remaining
			} else {
				n = dirN
				if n > 1 {
					n-- // drop the slash we added before the link's name
				}
				rest = link + "/" + remaining
			}
			i = 0
		case err == nil:
			// An existing directory or file: keep walking.
		case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR):
			missing = true
		default:
			return "", "", fmt.Errorf("cannot resolve %q: %w", string(buf[:n]), err)
		}
	}

	if !changed {
		// The resolved path is exactly base + "/" + rest: answer with substrings of target.
		if strings.HasPrefix(target, "/") {
			if r := w.rootOf(target); r != "" {
				return r, relTo(target, r), nil
			}
			return "", target, nil
		}
		// Relative: the path is primary + "/" + target; the holding root is primary or deeper.
		for _, r := range w.roots {
			if len(r) > len(w.primary) && within(r, w.primary) {
				sub := r[len(w.primary)+1:] // r relative to primary
				if target == sub {
					return r, ".", nil
				}
				if len(target) > len(sub) && target[len(sub)] == '/' && target[:len(sub)] == sub {
					return r, target[len(sub)+1:], nil
				}
			}
		}
		return w.primary, target, nil
	}
	abs := string(buf[:n])
	if r := w.rootOf(abs); r != "" {
		return r, relTo(abs, r), nil
	}
	return "", abs, nil
}
