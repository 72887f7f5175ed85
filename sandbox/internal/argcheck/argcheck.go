// Package argcheck checks the arguments of a command, and the paths of a
// static "sh -c" script, against the denied paths before the command
// runs: [Host] for a command on this host (symbolic links followed,
// globs expanded against the file system), as package sandbox's local
// backend does, and [Lexical] for a command that runs on the far side of
// a CLI (paths as written, globs by pattern), as the remote backends do.
// Refusals are [pathmatch.Refusal] values, which the public packages turn
// into their Violation type.
package argcheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
	"github.com/reins-go/reins/sandbox/script"
)

// Scripts says how a check reads the script of an "sh -c SCRIPT"
// command.
type Scripts struct {
	// Read reads the script; nil means [script.Builtin].
	Read script.Reader
	// Lenient checks the literal words and paths of every command but
	// refuses none for being unreadable: for a backend whose kernel
	// confines what the reader cannot see (local-hardened). A script the
	// reader cannot read at all is still refused.
	Lenient bool
}

func (s Scripts) read() script.Reader {
	if s.Read == nil {
		return script.Builtin
	}
	return s.Read
}

// Host checks every argument that may name a path (each argument and
// the value of --opt=value), and the paths and words of a static "sh -c"
// script, against the denied entries of m, with every symbolic link
// followed. dir is the resolved working directory; env the command's
// environment (~ and $HOME in a script stand for its HOME).
func Host(m pathmatch.Matcher, dir string, args, env []string, scripts Scripts) []pathmatch.Refusal {
	var vs []pathmatch.Refusal
	memo := &pathmatch.Memo{}
	checkOne := func(subject, p string) {
		if p == "" {
			return
		}
		if v, bad := pathViolation(m, dir, subject, p, memo); bad {
			vs = append(vs, v)
		}
	}
	for _, a := range args {
		checkOne(a, a)
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				checkOne(a, v)
			}
		}
	}
	text, ok := ShellScript(args)
	if !ok {
		return vs
	}
	home, _ := envlist.Lookup(env, "HOME")
	sc := &scriptCheck{
		match: m, dir: dir, expand: true, lenient: scripts.Lenient,
		pathViolation: func(subject, p string) (pathmatch.Refusal, bool) { return pathViolation(m, dir, subject, p, memo) },
	}
	return append(vs, sc.check(scripts.read(), text, home)...)
}

// shells are the interpreters whose -c script is analysed.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// ShellScript returns the script of an "sh -c SCRIPT" argument vector
// (or bash, dash, zsh, ksh, mksh, ash), including combined flags such as
// "-ec".
func ShellScript(args []string) (string, bool) {
	if len(args) < 3 || !shells[filepath.Base(args[0])] {
		return "", false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return "", false
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'c') {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		}
		if a == "-o" || a == "+o" {
			i++ // skip the option name
		}
	}
	return "", false
}

// PathViolation checks one path of this host like an argument: made
// absolute against dir, as written and with every symbolic link
// followed; bad reports whether v is a refusal.
func PathViolation(m pathmatch.Matcher, dir, subject, p string) (v pathmatch.Refusal, bad bool) {
	return pathViolation(m, dir, subject, p, nil)
}

func pathViolation(m pathmatch.Matcher, dir, subject, p string, memo *pathmatch.Memo) (v pathmatch.Refusal, bad bool) {
	pc, err := m.CheckMemo(dir, p, memo)
	switch {
	case err != nil:
		return pathmatch.Refusal{Kind: pathmatch.KindUncheckable, Subject: subject, Detail: err.Error()}, true
	case pc.Denied:
		detail := fmt.Sprintf("names denied path %q", pc.Entry)
		if pc.Resolved != pc.Abs {
			detail += " (resolves to " + pc.Resolved + ")"
		}
		return pathmatch.Refusal{Kind: pathmatch.KindDeniedPath, Subject: subject, Detail: detail}, true
	}
	return pathmatch.Refusal{}, false
}

// maxScriptDirs bounds the working directories a script's words are
// checked against (the start directory and every literal cd); a script
// that changes directory more often is refused as uncheckable.
const maxScriptDirs = 32

// maxGlobEntries bounds the directory entries a glob expansion visits
// before the glob is refused as uncheckable.
const maxGlobEntries = 20000

// globOptionWords are the words that let a shell's globs match names
// starting with "." or ignore case; a script that mentions one is
// expanded with both.
var globOptionWords = []string{"dotglob", "globdots", "globignore", "fignore", "nocaseglob", "no_case_glob", "nocase_glob"}

// scriptCheck holds what checking one script needs.
type scriptCheck struct {
	match pathmatch.Matcher
	dir   string // working directory the script starts in
	// pathViolation checks one path (absolute, or relative to dir).
	pathViolation func(subject, p string) (pathmatch.Refusal, bool)
	// expand expands globs against this host's file system; without it
	// only their patterns are checked (a remote host's files are not
	// here).
	expand bool
	// lenient: see Scripts.Lenient.
	lenient bool
	vs      []pathmatch.Refusal
	checked map[string]bool
}

// lexicalPathViolation checks a path of another host as written:
// cleaned and before cleaning, no links followed.
func lexicalPathViolation(m pathmatch.Matcher, dir, subject, p string) (pathmatch.Refusal, bool) {
	raw := p
	if !path.IsAbs(raw) {
		raw = dir + "/" + raw
	}
	for _, cand := range []string{path.Clean(raw), raw} {
		if e, ok := m.Match(cand); ok {
			return pathmatch.Refusal{Kind: pathmatch.KindDeniedPath, Subject: subject, Detail: fmt.Sprintf("names denied path %q (checked as written: the far side's links are not followed)", e)}, true
		}
	}
	return pathmatch.Refusal{}, false
}

// Lexical is the argument check of the remote and vendor
// backends: local's check without the far side's file system (no
// symbolic links followed, globs checked by pattern only).
func Lexical(m pathmatch.Matcher, dir string, args []string, scripts Scripts) []pathmatch.Refusal {
	var vs []pathmatch.Refusal
	checkOne := func(subject, p string) {
		if p == "" {
			return
		}
		if v, bad := lexicalPathViolation(m, dir, subject, p); bad {
			vs = append(vs, v)
		}
	}
	for _, a := range args {
		checkOne(a, a)
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				checkOne(a, v)
			}
		}
	}
	if text, ok := ShellScript(args); ok {
		sc := &scriptCheck{
			match: m, dir: dir, lenient: scripts.Lenient,
			pathViolation: func(subject, p string) (pathmatch.Refusal, bool) { return lexicalPathViolation(m, dir, subject, p) },
		}
		vs = append(vs, sc.check(scripts.read(), text, "")...)
	}
	return vs
}

// check reads the script with read and checks it; home is what ~ and
// $HOME stand for ("" makes them unreadable).
func (sc *scriptCheck) check(read script.Reader, text, home string) []pathmatch.Refusal {
	cmds, err := read(text, sc.dir, home)
	if err != nil {
		return []pathmatch.Refusal{{Kind: pathmatch.KindUncheckable, Subject: text, Detail: "the shell script cannot be read: " + err.Error()}}
	}
	sc.checked = map[string]bool{}
	for i := range cmds {
		c := &cmds[i]
		if c.Unreadable != "" && !sc.lenient {
			sc.vs = append(sc.vs, pathmatch.Refusal{Kind: pathmatch.KindUncheckable, Subject: c.Text, Detail: c.Unreadable})
		}
		for _, p := range c.Paths {
			if p.Glob {
				sc.checkGlob(p, loosePatterns(text))
				continue
			}
			sc.checkPath(p.Raw, p.Path)
		}
	}
	dirs, ok := scriptDirs(sc.dir, cmds)
	if !ok {
		sc.vs = append(sc.vs, pathmatch.Refusal{Kind: pathmatch.KindUncheckable, Subject: text, Detail: fmt.Sprintf("the script changes directory more than %d ways; its words cannot be checked", maxScriptDirs)})
		return sc.vs
	}
	for i := range cmds {
		for _, w := range cmds[i].Argv {
			sc.checkWord(w, dirs)
		}
		for _, w := range cmds[i].Words {
			sc.checkWord(w, dirs)
		}
	}
	return sc.vs
}

// checkPath checks one path (absolute, or relative to the start
// directory) and records a violation when it is denied.
func (sc *scriptCheck) checkPath(subject, p string) {
	if p == "" || sc.checked[p] {
		return
	}
	sc.checked[p] = true
	if v, bad := sc.pathViolation(subject, p); bad {
		sc.vs = append(sc.vs, v)
	}
}

// checkWord checks a literal word as a possible path relative to each
// directory the script may be in, and glob-checks it when it has
// pattern characters (an argument the analysis does not know may be
// an unquoted glob).
func (sc *scriptCheck) checkWord(w string, dirs []string) {
	vals := []string{w}
	if strings.HasPrefix(w, "-") {
		if _, v, ok := strings.Cut(w, "="); ok {
			vals = append(vals, v)
		}
	}
	for _, v := range vals {
		if v == "" {
			continue
		}
		if path.IsAbs(v) {
			sc.checkPath(w, v)
		} else {
			for _, d := range dirs {
				// Not Join: the check must see ".." before cleaning.
				sc.checkPath(w, d+"/"+v)
			}
		}
		if strings.ContainsAny(v, "*?[") {
			for _, d := range dirs {
				p := v
				if !path.IsAbs(p) {
					p = path.Join(d, v)
				}
				sc.checkGlob(script.Path{Path: p, Raw: v, Glob: true}, true)
			}
		}
	}
}

// checkGlob checks a glob two ways: its pattern against the denied
// entries (so that ".e*" is refused even where .env does not exist yet)
// and every file it matches now. loose expands as with dotglob and
// nocaseglob set.
func (sc *scriptCheck) checkGlob(p script.Path, loose bool) {
	key := "glob\x00" + p.Path
	if sc.checked[key] {
		return
	}
	sc.checked[key] = true
	if entry, ok := couldMatchPattern(sc.match, p.Path); ok {
		sc.vs = append(sc.vs, pathmatch.Refusal{Kind: pathmatch.KindDeniedPath, Subject: p.Raw, Detail: fmt.Sprintf("the glob can match denied path %q", entry)})
		return
	}
	if !sc.expand {
		return
	}
	matches, err := expandGlob(p.Path, loose, loose, maxGlobEntries)
	if err != nil {
		sc.vs = append(sc.vs, pathmatch.Refusal{Kind: pathmatch.KindUncheckable, Subject: p.Raw, Detail: "the glob cannot be expanded to check it: " + err.Error()})
		return
	}
	for _, m := range matches {
		sc.checkPath(p.Raw, m)
	}
}

// loosePatterns reports whether a script may change how its globs match
// (dotglob, nocaseglob and their zsh and ksh relatives).
func loosePatterns(script string) bool {
	s := strings.ToLower(script)
	for _, w := range globOptionWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// scriptDirs returns the directories a script's commands may run in:
// the start directory, the directory of every path the reader joined,
// and every literal cd target applied to the directories known before
// it. ok is false when there are more than maxScriptDirs.
func scriptDirs(start string, cmds []script.Command) (dirs []string, ok bool) {
	seen := map[string]bool{}
	add := func(d string) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	add(start)
	for _, c := range cmds {
		for _, p := range c.Paths {
			if !filepath.IsAbs(p.Raw) && strings.HasSuffix(p.Path, "/"+p.Raw) {
				add(strings.TrimSuffix(p.Path, "/"+p.Raw))
			}
		}
	}
	for _, c := range cmds {
		if len(c.Argv) == 0 {
			continue
		}
		switch path.Base(c.Argv[0]) {
		case "cd", "pushd", "chdir":
		default:
			continue
		}
		for _, t := range c.Argv[1:] {
			if strings.HasPrefix(t, "-") {
				continue
			}
			if filepath.IsAbs(t) {
				add(t)
			} else {
				for _, d := range append([]string(nil), dirs...) {
					add(filepath.Join(d, t))
				}
			}
			break
		}
		if len(dirs) > maxScriptDirs {
			return nil, false
		}
	}
	return dirs, len(dirs) <= maxScriptDirs
}

// couldMatchPattern reports whether the absolute glob pattern p could
// name a denied entry: some run of its components matches the entry's
// components, a "**" standing for any number of them. A run made only
// of wildcards that carry no literal text ("*", "*/*") does not count:
// what they match is found by expanding the glob.
func couldMatchPattern(m pathmatch.Matcher, p string) (string, bool) {
	comps := pathmatch.SplitComponents(p)
	for i, e := range m.Rel {
		for start := 0; start < len(comps); start++ {
			if matchRun(comps[start:], e, false) {
				return m.Raw[i], true
			}
		}
	}
	for i, e := range m.Abs {
		if matchRun(comps, e, false) {
			return m.Raw[len(m.Rel)+i], true
		}
	}
	return "", false
}

// matchRun reports whether the pattern components pat, from their
// first, match all of entry (a prefix of pat suffices). aimed records
// whether a component with literal text took part.
func matchRun(pat, entry []string, aimed bool) bool {
	if len(entry) == 0 {
		return aimed
	}
	if len(pat) == 0 {
		return false
	}
	pc := pat[0]
	if pc == "**" {
		// Zero components, or one more and stay on "**".
		return matchRun(pat[1:], entry, aimed) || matchRun(pat, entry[1:], aimed)
	}
	ok, literal := globComponentMatch(pc, entry[0])
	if !ok {
		return false
	}
	return matchRun(pat[1:], entry[1:], aimed || literal)
}

// globComponentMatch matches one pattern component against one name,
// ignoring case and treating a leading "." like any other character
// (as with dotglob). literal reports whether the component has
// characters besides wildcards.
func globComponentMatch(pc, name string) (ok, literal bool) {
	lp := shellToGoPattern(strings.ToLower(pc))
	ok, err := path.Match(lp, strings.ToLower(name))
	if err != nil {
		// An invalid pattern is taken literally by the shell.
		ok = strings.EqualFold(pc, name)
	}
	return ok, hasLiteralText(pc)
}

// hasLiteralText reports whether a pattern component has characters
// other than * and ?.
func hasLiteralText(pc string) bool {
	return strings.Trim(pc, "*?") != ""
}

// shellToGoPattern converts shell bracket negation ([!...]) to Go's
// ([^...]).
func shellToGoPattern(p string) string {
	return strings.ReplaceAll(p, "[!", "[^")
}

// expandGlob returns the existing paths the absolute pattern p matches,
// as a shell would expand it: wildcards do not match a leading "."
// unless the component starts with one or dotAll is set; fold ignores
// case. "**" matches any number of directories. It fails when more than
// limit directory entries would have to be read.
func expandGlob(p string, dotAll, fold bool, limit int) ([]string, error) {
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("glob %q is not absolute", p)
	}
	comps := pathmatch.SplitComponents(p)
	budget := limit
	var out []string
	var walk func(base string, rest []string) error
	walk = func(base string, rest []string) error {
		if len(rest) == 0 {
			if _, err := os.Lstat(base); err == nil {
				out = append(out, base)
			}
			return nil
		}
		pc := rest[0]
		if pc == ".." || !strings.ContainsAny(pc, "*?[") {
			return walk(filepath.Join(base, pc), rest[1:])
		}
		entries, err := os.ReadDir(base)
		if err != nil {
			return nil // the shell cannot read it either: no matches there
		}
		budget -= len(entries)
		if budget < 0 {
			return fmt.Errorf("more than %d directory entries to visit", limit)
		}
		if pc == "**" {
			if err := walk(base, rest[1:]); err != nil {
				return err
			}
			for _, e := range entries {
				if !e.IsDir() || (!dotAll && strings.HasPrefix(e.Name(), ".")) {
					continue
				}
				if err := walk(filepath.Join(base, e.Name()), rest); err != nil {
					return err
				}
			}
			return nil
		}
		gp := shellToGoPattern(pc)
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") && !strings.HasPrefix(pc, ".") && !dotAll {
				continue
			}
			pat, n := gp, name
			if fold {
				pat, n = strings.ToLower(gp), strings.ToLower(name)
			}
			ok, err := path.Match(pat, n)
			if err != nil {
				ok = pc == name
			}
			if ok {
				if err := walk(filepath.Join(base, name), rest[1:]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(string(filepath.Separator), comps); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}
