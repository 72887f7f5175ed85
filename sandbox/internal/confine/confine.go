// Package confine turns a [sandbox.Confine] into the grants the
// enforcing backends of package sandbox make: which existing
// directories and files the command may write, in which directories it
// may create new entries, and which existing entries of those
// directories stay read-only. local-hardened (package sandbox/hardened)
// and the container backends (package sandbox/container) share it, so
// that a Confine means the same thing on each.
//
// What a Confine.Writable entry grants, once resolved (symbolic links
// followed, as the kernel would):
//
//   - an existing directory: the directory, written in place with
//     everything in it (it cannot itself be removed or renamed: it is a
//     mount point);
//   - an existing file (or other non-directory): the file, written in
//     place (it cannot be removed, renamed or replaced by a rename);
//   - a path that does not exist: its nearest existing ancestor
//     directory gets create rights. The command may create new entries
//     there (files, directories, symbolic links) and write, rename and
//     remove what it created; every entry that existed there when the
//     sandbox was set up is pinned read-only (its own read-only mount:
//     it cannot be written, removed or replaced). A create grant is
//     wider than the one path: any new name in that directory may be
//     created.
//
// An entry that lies outside every path the backend would let the
// command write (its root, AllowedPaths), or that matches a denied path,
// grants nothing; the plan says so in a warning.
package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// MaxPins bounds the existing entries a plan pins read-only in its
// create directories: each is a mount of its own.
const MaxPins = 4096

// Plan is what a backend grants for one Confine.
type Plan struct {
	// Network is Confine.Network.
	Network bool
	// Dirs and Files are the existing directories and files granted
	// writable, resolved, sorted.
	Dirs, Files []string
	// Create are the existing directories where new entries may be
	// created, resolved, sorted.
	Create []string
	// Pins are the existing entries of the Create directories (but the
	// granted ones) that stay read-only, sorted.
	Pins []string
	// Warnings name the entries that granted nothing, and why.
	Warnings []string
}

// ErrTooManyPins is returned when the create directories hold more than
// [MaxPins] entries: the Confine cannot be enforced.
var ErrTooManyPins = errors.New("too many existing entries to keep read-only")

// Make plans c for a backend whose writable paths are roots (resolved;
// the workspace first) and whose denied paths m matches.
func Make(c sandbox.Confine, roots []string, m pathmatch.Matcher) (Plan, error) {
	p := Plan{Network: c.Network}
	within := func(r string) bool {
		for _, root := range roots {
			if fspath.Within(r, root) {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for i, w := range c.Writable {
		warn := func(why string) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("Confine.Writable[%d] %s: %s: nothing was granted for it", i, w, why))
		}
		if !filepath.IsAbs(w) {
			warn("not absolute")
			continue
		}
		r, err := pathmatch.ResolvePath(filepath.Clean(w), nil)
		if err != nil {
			warn("cannot be resolved (" + err.Error() + ")")
			continue
		}
		if e, ok := m.Match(r); ok {
			warn(fmt.Sprintf("matches the denied path %q", e))
			continue
		}
		if e, ok := m.Match(filepath.Clean(w)); ok {
			warn(fmt.Sprintf("matches the denied path %q", e))
			continue
		}
		if !within(r) {
			warn("it lies outside every path this sandbox lets a command write")
			continue
		}
		fi, err := os.Lstat(r)
		switch {
		case err == nil && fi.IsDir():
			add(&p.Dirs, seen, r)
		case err == nil:
			add(&p.Files, seen, r)
		case errors.Is(err, os.ErrNotExist):
			a := r
			for {
				a = filepath.Dir(a)
				if fi, err := os.Stat(a); err == nil && fi.IsDir() {
					break
				}
				if a == string(filepath.Separator) {
					break
				}
			}
			if !within(a) {
				warn("its nearest existing directory lies outside every path this sandbox lets a command write")
				continue
			}
			add(&p.Create, seen, a)
		default:
			warn("cannot be read (" + err.Error() + ")")
		}
	}
	// A create directory that is a root, or lies in a granted directory,
	// is written anyway; a directory granted whole needs no create grant.
	p.Create = slices.DeleteFunc(p.Create, func(a string) bool {
		for _, d := range p.Dirs {
			if fspath.Within(a, d) {
				return true
			}
		}
		return false
	})
	if len(p.Create) == 0 {
		p.Create = nil
	}
	granted := map[string]bool{}
	for _, l := range [][]string{p.Dirs, p.Files, p.Create} {
		for _, g := range l {
			granted[g] = true
		}
	}
	for _, a := range p.Create {
		names, err := readNames(a)
		if err != nil {
			return Plan{}, fmt.Errorf("listing %s: %w", a, err)
		}
		for _, n := range names {
			e := filepath.Join(a, n)
			if granted[e] {
				continue
			}
			p.Pins = append(p.Pins, e)
			if len(p.Pins) > MaxPins {
				return Plan{}, fmt.Errorf("%w: the directories where Confine lets the command create files hold more than %d entries", ErrTooManyPins, MaxPins)
			}
		}
	}
	sort.Strings(p.Dirs)
	sort.Strings(p.Files)
	sort.Strings(p.Create)
	sort.Strings(p.Pins)
	return p, nil
}

func add(list *[]string, seen map[string]bool, r string) {
	if !seen[r] {
		seen[r] = true
		*list = append(*list, r)
	}
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(MaxPins + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return names, nil
}
