// Package argcheck checks the arguments of a command, and the paths of a
// static "sh -c" script, against the denied paths before the command
// runs: [Host] for a command on this host (symbolic links followed,
// globs expanded against the file system), as package sandbox's local
// backend does, and [Lexical] for a command that runs on the far side of
// a CLI (paths as written, globs by pattern), as the remote backends do.
// Refusals are [pathmatch.Refusal] values, which the public packages turn
// into their Violation type.
//
// A glob of a script is judged by what the shell will expand it to when
// bash's default glob options are proven for the whole script (see
// globs.go), else by everything it could match with dot names and any
// case; a match that is a denied path is refused unless the caller says
// the kernel masks it ([Scripts].Masked). The check sees what a line
// spells out: a path or a shell option computed at run time, a nested
// "bash -c" or eval string, and what a program reads on its own
// (grep -r, find) are left to the kernel.
package argcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

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
	// Masked reports whether the kernel hides the resolved path p from
	// the command (a masked file reads as empty, a masked directory is
	// an empty one): a glob's match that is a denied path the run masks
	// is then not refused, since the glob cannot show what it holds. It
	// applies to what globs match on this host ([Host]), never to a
	// word that names a denied path. nil: nothing is masked.
	Masked func(p string) bool
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
		globs:         readGlobWords(filepath.Base(args[0]), text, env, home),
		masked:        scripts.Masked,
	}
	sc.matchViolation = func(subject, p string) (pathmatch.Refusal, bool) {
		return matchViolation(m, dir, subject, p, memo, scripts.Masked)
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

// matchViolation checks a path a glob matched: like pathViolation, but
// a denied path that masked reports hidden by the kernel is no refusal.
func matchViolation(m pathmatch.Matcher, dir, subject, p string, memo *pathmatch.Memo, masked func(string) bool) (pathmatch.Refusal, bool) {
	pc, err := m.CheckMemo(dir, p, memo)
	switch {
	case err != nil:
		return pathmatch.Refusal{Kind: pathmatch.KindUncheckable, Subject: subject, Detail: err.Error()}, true
	case !pc.Denied:
		return pathmatch.Refusal{}, false
	case masked != nil && masked(pc.Resolved):
		return pathmatch.Refusal{}, false // the command sees it empty
	}
	detail := fmt.Sprintf("matches %s, which names denied path %q", pc.Abs, pc.Entry)
	if pc.Resolved != pc.Abs {
		detail += " (resolves to " + pc.Resolved + ")"
	}
	return pathmatch.Refusal{Kind: pathmatch.KindDeniedPath, Subject: subject, Detail: detail}, true
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
	// matchViolation checks a path a glob matched (see Scripts.Masked);
	// set when expand is.
	matchViolation func(subject, p string) (pathmatch.Refusal, bool)
	// masked is Scripts.Masked.
	masked func(p string) bool
	// globs says which words the shell expands, and how.
	globs globWords
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
				sc.checkGlob(p, sc.globs.shellGlob(p.Raw))
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
	for i, v := range vals {
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
				// Only a whole word is expanded by the shell; the value
				// of --opt=* reaches the program as written.
				sc.checkGlob(script.Path{Path: p, Raw: v, Glob: true}, i == 0 && sc.globs.shellGlob(v))
			}
		}
	}
}

// checkGlob checks a glob: its pattern against the denied entries (so
// that ".e*" is refused even where .env does not exist yet), then what it
// matches now. A shell glob (the shell expands it with its default
// options, see globWords) is judged by what the shell expands it to, as
// long as that is something the command will see; any other is judged
// by everything it could match with dot names and any case (dotglob and
// nocaseglob, or a program that matches the pattern itself). A match
// that is a denied path is refused unless the kernel masks it
// (Scripts.Masked).
func (sc *scriptCheck) checkGlob(p script.Path, shell bool) {
	// The same pattern may be a shell glob in one word and reach a
	// program as written in another: each is checked.
	key := fmt.Sprintf("glob\x00%v\x00%s", shell, p.Path)
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
	var matches []string
	var err error
	if shell {
		matches, err = expandGlob(p.Path, globMode{dirsOnly: dirsOnly(p.Raw)}, maxGlobEntries)
		if err == nil && !sc.anyVisible(matches) {
			// Nothing the command sees matches: bash passes the pattern
			// on as written, to a program that may match it its own way.
			matches = nil
			shell = false
		}
	}
	if !shell && err == nil {
		matches, err = expandGlob(p.Path, globMode{dotAll: true, fold: true}, maxGlobEntries)
	}
	if err != nil {
		sc.vs = append(sc.vs, pathmatch.Refusal{Kind: pathmatch.KindUncheckable, Subject: p.Raw, Detail: "the glob cannot be expanded to check it: " + err.Error()})
		return
	}
	for _, m := range matches {
		key := "match\x00" + m
		if sc.checked[key] {
			continue
		}
		sc.checked[key] = true
		if v, bad := sc.matchViolation(p.Raw, m); bad {
			sc.vs = append(sc.vs, v)
		}
	}
}

// anyVisible reports whether one of the matches is there for the
// command: its directory is not inside a masked one (an entry of a
// masked directory is not; a masked file is, reading as empty).
func (sc *scriptCheck) anyVisible(matches []string) bool {
	if sc.masked == nil {
		return len(matches) > 0
	}
	for _, m := range matches {
		d, err := pathmatch.ResolvePath(filepath.Dir(m), nil)
		if err == nil && !sc.masked(d) {
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

// globMode says how expandGlob matches.
type globMode struct {
	// dotAll lets wildcards match a leading "." (dotglob).
	dotAll bool
	// fold ignores case (nocaseglob).
	fold bool
	// dirsOnly keeps directories and links to them only (a pattern
	// written with a trailing "/").
	dirsOnly bool
}

// expandGlob returns the existing paths the absolute pattern p matches,
// as a shell would expand it: wildcards do not match a leading "."
// unless the component starts with one or mode.dotAll is set, and never
// match "." or ".."; mode.fold ignores case. "**" matches any number of
// directories. It fails when more than limit directory entries would
// have to be read, or when a directory cannot be read for a reason other
// than its absence or a permission the command lacks too.
func expandGlob(p string, mode globMode, limit int) ([]string, error) {
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("glob %q is not absolute", p)
	}
	comps := pathmatch.SplitComponents(p)
	budget := limit
	var out []string
	var walk func(base string, rest []string) error
	walk = func(base string, rest []string) error {
		if len(rest) == 0 {
			if mode.dirsOnly {
				if fi, err := os.Stat(base); err == nil && fi.IsDir() {
					out = append(out, base)
				}
			} else if _, err := os.Lstat(base); err == nil {
				out = append(out, base)
			}
			return nil
		}
		pc := rest[0]
		if pc == ".." || !strings.ContainsAny(pc, "*?[") {
			return walk(filepath.Join(base, pc), rest[1:])
		}
		entries, err := os.ReadDir(base)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, fs.ErrPermission):
			return nil // the shell, as this user or one with fewer rights, finds nothing there either
		default:
			return fmt.Errorf("reading %s: %w", base, err)
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
				if !e.IsDir() || (!mode.dotAll && strings.HasPrefix(e.Name(), ".")) {
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
			if strings.HasPrefix(name, ".") && !strings.HasPrefix(pc, ".") && !mode.dotAll {
				continue
			}
			pat, n := gp, name
			if mode.fold {
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
