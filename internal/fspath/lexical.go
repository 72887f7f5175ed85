package fspath

import (
	"path"
	"runtime"
)

// Platform holds the lexical path rules of one operating system, so the rules can be tested with
// synthetic paths on every platform: [Host] is the running system's, and [Linux], [Darwin] and
// [Windows] can be used anywhere.
type Platform struct {
	// Name is the GOOS value the rules are those of.
	Name string
	// Backslash: '\' separates components as well as '/' (Windows).
	Backslash bool
	// Volumes: a path may start with a drive letter ("C:") or a UNC prefix ("//server/share").
	Volumes bool
	// FoldCase: the platform's default filesystems compare names case-insensitively (Windows,
	// macOS). Protection matching folds ASCII case on every platform; confinement ([Platform.Within])
	// never does, because a case-sensitive volume can exist on either.
	FoldCase bool
}

// The platforms reins builds for.
var (
	Linux   = Platform{Name: "linux"}
	Darwin  = Platform{Name: "darwin", FoldCase: true}
	Windows = Platform{Name: "windows", Backslash: true, Volumes: true, FoldCase: true}
)

// Host returns the rules of the running system (Linux's for every Unix but macOS).
func Host() Platform {
	switch runtime.GOOS {
	case "windows":
		return Windows
	case "darwin", "ios":
		return Darwin
	}
	return Linux
}

// IsSep reports whether c separates path components on pl.
func (pl Platform) IsSep(c byte) bool { return c == '/' || pl.Backslash && c == '\\' }

// VolumeLen returns the length of p's volume name: "C:" or "//server/share" on Windows, 0
// elsewhere.
func (pl Platform) VolumeLen(p string) int {
	if !pl.Volumes {
		return 0
	}
	if len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		return 2
	}
	// UNC: two separators, a server, a separator, a share.
	if len(p) >= 5 && pl.IsSep(p[0]) && pl.IsSep(p[1]) && !pl.IsSep(p[2]) && p[2] != '.' && p[2] != '?' {
		n := 3
		for n < len(p) && !pl.IsSep(p[n]) {
			n++
		}
		if n >= len(p)-1 {
			return 0
		}
		n++
		start := n
		for n < len(p) && !pl.IsSep(p[n]) {
			n++
		}
		if n == start {
			return 0
		}
		return n
	}
	return 0
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// IsAbs reports whether p is absolute on pl: it starts with a separator on Unix, with a volume
// and a separator (or a UNC volume) on Windows.
func (pl Platform) IsAbs(p string) bool {
	if !pl.Volumes {
		return p != "" && p[0] == '/'
	}
	v := pl.VolumeLen(p)
	if v == 0 {
		return false
	}
	if v > 2 { // UNC
		return true
	}
	return len(p) > v && pl.IsSep(p[v])
}

// ToSlash returns p with pl's separators replaced by '/'. It allocates only when p holds a
// backslash on a platform where that is a separator.
func (pl Platform) ToSlash(p string) string {
	if !pl.Backslash {
		return p
	}
	i := indexByte(p, '\\')
	if i < 0 {
		return p
	}
	b := []byte(p)
	for ; i < len(b); i++ {
		if b[i] == '\\' {
			b[i] = '/'
		}
	}
	return string(b)
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Clean returns the shortest lexical equivalent of p in slash form, as filepath.Clean does on pl
// (and as filepath.Join applies it): repeated separators and "." are removed, ".." removes the
// component before it, ".." at the root of an absolute path is dropped, and a drive letter is
// upper-cased. It never looks at the filesystem, so it can disagree with the kernel after a
// symbolic link (see [Workspace.Resolve]).
func (pl Platform) Clean(p string) string {
	p = pl.ToSlash(p)
	v := pl.VolumeLen(p)
	vol, rest := p[:v], p[v:]
	if v == 2 && 'a' <= vol[0] && vol[0] <= 'z' {
		vol = string(vol[0]-'a'+'A') + ":"
	}
	switch {
	case v > 2 && rest == "": // a UNC share is a root
		return vol + "/"
	case rest == "":
		return vol + "."
	}
	out := path.Clean(rest)
	if v == 0 && pl.VolumeLen(out) > 0 {
		// Cleaning must not turn a relative path into a drive ("./C:" into "C:"), which is
		// somewhere else entirely: keep the "./", as Go's filepath.Clean does.
		out = "./" + out
	}
	return vol + out
}

// Within reports whether p is dir or lies under it: both absolute and clean, in pl's slash or
// native form. Names compare exactly: a differently-cased spelling of dir counts as outside,
// which for confinement denies more, never less. It does not allocate.
func (pl Platform) Within(p, dir string) bool { return pl.within(p, dir, false) }

// WithinFold is [Platform.Within] ignoring ASCII case, for protection matching, where a
// case-insensitive match denies more.
func (pl Platform) WithinFold(p, dir string) bool { return pl.within(p, dir, true) }

func (pl Platform) within(p, dir string, fold bool) bool {
	if len(p) < len(dir) {
		return false
	}
	for i := 0; i < len(dir); i++ {
		a, b := p[i], dir[i]
		if a == b || pl.IsSep(a) && pl.IsSep(b) || (fold || pl.Volumes && i < pl.VolumeLen(dir)) && lower(a) == lower(b) {
			continue
		}
		return false
	}
	if len(p) == len(dir) {
		return true
	}
	// dir is a root ("/", "C:/"): everything on it is within.
	if len(dir) > 0 && pl.IsSep(dir[len(dir)-1]) {
		return true
	}
	return pl.IsSep(p[len(dir)])
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Within is [Platform.Within] with the running system's rules: the one definition gate, sandbox
// and checkpoint use.
func Within(p, dir string) bool { return Host().Within(p, dir) }

// WithinFold is [Platform.WithinFold] with the running system's rules.
func WithinFold(p, dir string) bool { return Host().WithinFold(p, dir) }

// Components returns the non-empty, non-"." components of p after its volume, split on pl's
// separators.
func (pl Platform) Components(p string) []string {
	p = p[pl.VolumeLen(p):]
	var out []string
	for i := 0; i < len(p); {
		j := i
		for j < len(p) && !pl.IsSep(p[j]) {
			j++
		}
		if c := p[i:j]; c != "" && c != "." {
			out = append(out, c)
		}
		i = j + 1
	}
	return out
}
