package gate

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// protector matches targets against protected paths (the boundary layer). Entries are path
// component names or runs of names, matched anywhere in a path, or absolute paths denied with
// everything under them. Matching is ASCII case-insensitive everywhere: on a case-sensitive
// filesystem that only denies more (".GIT" is refused too), and on a case-insensitive one it is
// what keeps ".Git/config" from reaching ".git".
type protector struct {
	names []nameSeq
	abs   []absEntry
}

type nameSeq struct {
	comps []string
	entry string
}

type absEntry struct {
	path  string // clean, absolute, symlinks resolved where the path exists
	entry string
}

func newProtector(entries []string) (*protector, error) {
	p := &protector{}
	for _, e := range entries {
		if strings.ContainsAny(e, "*?[{\\") {
			return nil, fmt.Errorf("protected path %q: entries are literal paths, not patterns", e)
		}
		if e == "~" || strings.HasPrefix(e, "~/") || strings.HasPrefix(e, "/") {
			x, err := expandHome(e)
			if err != nil {
				return nil, fmt.Errorf("protected path %q: %w", e, err)
			}
			x = path.Clean(filepath.ToSlash(x))
			p.abs = append(p.abs, absEntry{path: x, entry: e})
			if real, err := filepath.EvalSymlinks(x); err == nil && filepath.ToSlash(real) != x {
				p.abs = append(p.abs, absEntry{path: filepath.ToSlash(real), entry: e})
			}
			continue
		}
		var comps []string
		for _, c := range strings.Split(e, "/") {
			switch c {
			case "", ".":
				continue
			case "..":
				return nil, fmt.Errorf("protected path %q: \"..\" is not allowed in a relative entry", e)
			}
			comps = append(comps, c)
		}
		if len(comps) == 0 {
			return nil, errors.New("protected path entry is empty")
		}
		p.names = append(p.names, nameSeq{comps: comps, entry: e})
	}
	return p, nil
}

// withinFold is within, ignoring ASCII case.
func withinFold(abs, r string) bool {
	if r == "/" {
		return strings.HasPrefix(abs, "/")
	}
	return len(abs) >= len(r) && strings.EqualFold(abs[:len(r)], r) && (len(abs) == len(r) || abs[len(r)] == '/')
}

// hitInside returns the protected entry covering a target inside root at rel, or "".
func (p *protector) hitInside(root, rel string) string {
	for _, a := range p.abs {
		if withinFold(root, a.path) {
			return a.entry // the whole root is protected
		}
		if withinFold(a.path, root) && a.path != root {
			sub := a.path[len(root)+1:]
			if root == "/" {
				sub = a.path[1:]
			}
			if rel != "." && withinFold(rel, sub) {
				return a.entry
			}
		}
	}
	if rel == "." {
		return ""
	}
	return p.hitNames(rel)
}

// hitOutside returns the protected entry covering an absolute target outside every root, or "".
func (p *protector) hitOutside(abs string) string {
	for _, a := range p.abs {
		if withinFold(abs, a.path) {
			return a.entry
		}
	}
	return p.hitNames(abs)
}

// hitNames looks for a protected run of component names anywhere in p.
func (p *protector) hitNames(pth string) string {
	var fixed [64]string
	comps := fixed[:0]
	for rest := pth; rest != ""; {
		i := strings.IndexByte(rest, '/')
		c := rest
		if i >= 0 {
			c, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if c != "" {
			comps = append(comps, c)
		}
	}
	for _, s := range p.names {
		for k := 0; k+len(s.comps) <= len(comps); k++ {
			match := true
			for m, want := range s.comps {
				if !strings.EqualFold(comps[k+m], want) {
					match = false
					break
				}
			}
			if match {
				return s.entry
			}
		}
	}
	return ""
}

// globReaches reports whether a path with pattern characters could expand to a protected path:
// some wildcard component matches a protected name. Like the shell, "*" and "?" do not match a
// leading dot; "**" (what find -exec stands for) matches anything.
func (p *protector) globReaches(pth string) bool {
	var names []string
	for _, s := range p.names {
		names = append(names, s.comps...)
	}
	for _, a := range p.abs {
		names = append(names, strings.Split(strings.Trim(a.path, "/"), "/")...)
	}
	for _, comp := range strings.Split(pth, "/") {
		if !strings.ContainsAny(comp, "*?[") {
			continue
		}
		if comp == "**" {
			return true
		}
		lc := strings.ToLower(comp)
		for _, name := range names {
			if strings.HasPrefix(name, ".") && !strings.HasPrefix(comp, ".") {
				continue
			}
			if ok, err := path.Match(lc, strings.ToLower(name)); ok || err != nil {
				return true
			}
		}
	}
	return false
}
