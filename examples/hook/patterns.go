package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reins-go/reins/internal/fspath"
)

// Bounds of a pattern's expansion.
const (
	// maxVisit bounds the directory entries one call's patterns walk.
	maxVisit = 20000
	// maxPlainMatches bounds the matches named to the gate besides the protected ones and the
	// symbolic links (which are always named, up to maxTargets in all).
	maxPlainMatches = 64
)

// errTooMany stops a walk at its bound.
var errTooMany = errors.New("too many entries")

// expandPatterns decides a read through a pattern (a search's file filter, a glob) as a read of
// the files the pattern matches now: it walks the pattern's directory (bounded, not following
// symbolic links, not into .git, whose content is readable anyway) and adds to m's targets every
// match the protection lists name and every symbolic link it matches (the gate resolves links),
// plus the first few other matches; the gate then decides them like any read. The tool reads what
// the pattern matches, so a pattern that matches a secret (a search over ".env*") is refused by
// the gate, whatever the pattern looks like.
//
// When the tree is too large to walk, it returns why the call must be asked about if the pattern
// could match a protected name (fspath.Matcher.GlobReaches), and "" when it cannot.
func expandPatterns(m *mapped, rw, wr []string, home string) (string, error) {
	if len(m.patterns) == 0 {
		return "", nil
	}
	match, err := fspath.NewMatcher(fspath.Lists{ReadWrite: rw, Write: wr}, home)
	if err != nil {
		return "", err
	}
	visited := 0
	for _, pr := range m.patterns {
		base, rel := splitPattern(pr.dir, pr.pattern)
		if !doublestar.ValidatePattern(rel) {
			return "", errors.New("the file pattern " + quoteShort(pr.pattern) + " is not a valid glob")
		}
		plain := 0
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: the tool cannot read it either
			}
			if visited++; visited > maxVisit {
				return errTooMany
			}
			if d.IsDir() && d.Name() == ".git" && p != base {
				return filepath.SkipDir
			}
			r, rerr := filepath.Rel(base, p)
			if rerr != nil || r == "." {
				return nil
			}
			if ok, _ := doublestar.Match(rel, filepath.ToSlash(r)); !ok {
				return nil
			}
			named := match.Abs(p).Class != fspath.Unprotected || d.Type()&fs.ModeSymlink != 0
			if !named {
				if plain >= maxPlainMatches {
					return nil
				}
				plain++
			}
			if len(m.a.Targets) >= maxTargets {
				return errTooMany
			}
			m.a.Targets = append(m.a.Targets, p)
			return nil
		})
		if errors.Is(err, errTooMany) {
			full := filepath.ToSlash(base) + "/" + rel
			if match.GlobReaches(full).Denies(false) || match.GlobReaches(strings.ReplaceAll(full, "**/", "")).Denies(false) {
				return "the file pattern " + quoteShort(pr.pattern) + " could match protected files and the tree under " +
					base + " is too large to check them all", nil
			}
			continue
		}
		if err != nil {
			return "", err
		}
	}
	return "", nil
}

// splitPattern returns the directory a pattern is walked from (its literal leading components,
// below dir) and the rest, slash-separated. A pattern without a slash matches a name at any depth.
func splitPattern(dir, pattern string) (string, string) {
	pattern = filepath.ToSlash(pattern)
	if filepath.IsAbs(pattern) {
		dir, pattern = "/", strings.TrimPrefix(pattern, "/")
	}
	if !strings.Contains(pattern, "/") {
		return filepath.Clean(dir), "**/" + pattern
	}
	comps := strings.Split(pattern, "/")
	i := 0
	for i < len(comps)-1 && !strings.ContainsAny(comps[i], "*?[{\\") {
		i++
	}
	base := filepath.Join(append([]string{dir}, comps[:i]...)...)
	return base, strings.Join(comps[i:], "/")
}

func quoteShort(s string) string { return "\"" + cut(s, 100) + "\"" }

// homeDir is the user's home directory, "" when unknown.
func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}
