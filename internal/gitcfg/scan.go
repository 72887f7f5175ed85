// Package gitcfg decides whether a git repository's own configuration makes git run programs.
//
// Its place in the decision flow: the shell analysis (risk/shell) calls `git status`, `git log`
// and the like read-only by their options alone, but git also runs whatever the repository's
// configuration names: core.fsmonitor runs on every status, core.pager and pager.<cmd> on every
// paged command, diff.<driver>.textconv and filter.<driver>.clean on diffs and status, and so on.
// A cloned repository, or an agent that managed to write .git/config once, controls those files.
// The gate (gate/repotrust.go) calls Scan once per repository, caches the Report keyed by the
// identity of every file it read or looked for (FileID), and treats git commands in a repository
// whose configuration runs programs as exec rather than read-only.
//
// What is read: the repository found from a directory the way git finds it (a .git directory, a
// .git file with "gitdir:", a bare repository), its commondir, its config, its config.worktree
// (whether or not extensions.worktreeConfig is set: reading one git may ignore only makes the
// answer stricter), and every include.path and includeIf.<condition>.path, assuming every
// condition may hold. The user's global and system configuration are the user's own and are not
// read. Everything is bounded: file size, number of files, include depth.
//
// What is flagged: every variable git-config(1) documents as naming a command, a program, a
// driver, a helper, a hook or a pager; core.hooksPath (it moves hooks out of the protected .git
// directory, so a workspace file becomes a hook); core.worktree (it moves the working tree
// anywhere); aliases that start with "!"; URL rewriting (url.<base>.insteadOf) and proxies;
// protocol.<name>.allow; and, by suffix, any variable whose name ends in "command", "cmd",
// "program", "helper" or "hook", so a key nobody listed still counts. A file that cannot be read,
// does not parse, or is over a bound is a finding too: an answer the scan cannot give is
// "untrusted".
package gitcfg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FileID identifies a version of a file: a change to the file (or its creation or removal)
// changes its FileID. The zero FileID means the file does not exist.
type FileID struct {
	Exists bool
	Dir    bool
	Dev    uint64
	Ino    uint64
	Size   int64
	Mtime  int64 // nanoseconds since the epoch
}

// CPath returns path as a NUL-terminated byte slice for StatID.
func CPath(path string) []byte {
	b := make([]byte, len(path)+1)
	copy(b, path)
	return b
}

// Watch is a file the scan read or looked for, with its identity when it did.
type Watch struct {
	Path  string
	CPath []byte // Path, NUL-terminated, for StatID
	ID    FileID
}

// Changed reports whether the file is no longer the one the scan saw. It allocates nothing.
func (w *Watch) Changed() bool { return StatID(w.CPath) != w.ID }

// Finding is a reason not to trust the repository's configuration.
type Finding struct {
	File string // the configuration file, or the path that could not be read
	Line int    // 0 when not about a line
	Key  string // the variable, as section[.subsection].name; "" for a file problem
	Why  string
}

func (f Finding) String() string {
	if f.Key == "" {
		return f.File + ": " + f.Why
	}
	return fmt.Sprintf("%s:%d: %s %s", f.File, f.Line, f.Key, f.Why)
}

// Report is what Scan found.
type Report struct {
	// GitDir is the repository's git directory and CommonDir the directory holding its shared
	// configuration (they differ in a linked worktree); both "" when there is no repository.
	GitDir, CommonDir string
	// Files lists every file the scan read or looked for, missing ones included: if none of
	// them changed, a new scan would give the same report.
	Files []Watch
	// Findings lists why the configuration is not trusted; none means git, run in this
	// repository, runs no program its configuration names.
	Findings []Finding
}

// Trusted reports whether the scan found nothing that makes git run a program.
func (r *Report) Trusted() bool { return len(r.Findings) == 0 }

// Reason describes the first finding ("" when trusted).
func (r *Report) Reason() string {
	if len(r.Findings) == 0 {
		return ""
	}
	s := "the repository configuration makes git run programs: " + r.Findings[0].String()
	if n := len(r.Findings) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// Changed reports whether any file the report depends on changed since the scan. It allocates
// nothing.
func (r *Report) Changed() bool {
	for i := range r.Files {
		if r.Files[i].Changed() {
			return true
		}
	}
	return false
}

// Limits bound a scan. Zero fields take the defaults.
type Limits struct {
	// MaxFileSize is the largest configuration file read (default 1 MiB); a larger one is a
	// finding.
	MaxFileSize int64
	// MaxFiles is how many configuration files are read, includes included (default 32).
	MaxFiles int
	// MaxIncludeDepth is how deeply includes nest (default 10, git's own limit).
	MaxIncludeDepth int
	// MaxLevels is how many directories discovery walks up (default 128).
	MaxLevels int
}

func (l *Limits) withDefaults() Limits {
	var o Limits
	if l != nil {
		o = *l
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = 1 << 20
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = 32
	}
	if o.MaxIncludeDepth <= 0 {
		o.MaxIncludeDepth = 10
	}
	if o.MaxLevels <= 0 {
		o.MaxLevels = 128
	}
	return o
}

// Scan finds the repository git would use when run in dir and reads its configuration. home
// is what "~/" in an include path means ("" makes such an include a finding). dir must be
// absolute; a relative dir is a finding.
func Scan(dir, home string, lim *Limits) *Report {
	s := &scanner{r: &Report{}, home: home, lim: lim.withDefaults()}
	if !filepath.IsAbs(dir) {
		s.find(dir, 0, "", "the directory is not absolute, so the repository is unknown")
		return s.r
	}
	gitDir := s.discover(filepath.Clean(dir))
	if gitDir == "" {
		return s.r
	}
	s.r.GitDir = gitDir
	common := gitDir
	if data, ok := s.readSmall(filepath.Join(gitDir, "commondir"), false); ok {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	s.r.CommonDir = common
	s.file(filepath.Join(common, "config"), 0, false)
	s.file(filepath.Join(gitDir, "config.worktree"), 0, false)
	if common != gitDir {
		s.file(filepath.Join(common, "config.worktree"), 0, false)
	}
	return s.r
}

type scanner struct {
	r     *Report
	home  string
	lim   Limits
	files int
}

func (s *scanner) find(file string, line int, key, why string) {
	s.r.Findings = append(s.r.Findings, Finding{File: file, Line: line, Key: key, Why: why})
}

// watch records a file's identity now, before it is read.
func (s *scanner) watch(path string) FileID {
	c := CPath(path)
	id := StatID(c)
	s.r.Files = append(s.r.Files, Watch{Path: path, CPath: c, ID: id})
	return id
}

// discover walks up from dir the way git does: dir/.git (a directory, or a file naming the git
// directory), then dir itself as a bare repository.
func (s *scanner) discover(dir string) string {
	for level := 0; ; level++ {
		if level >= s.lim.MaxLevels {
			s.find(dir, 0, "", "too many directories above the working directory")
			return ""
		}
		dotgit := filepath.Join(dir, ".git")
		id := s.watch(dotgit)
		switch {
		case id.Exists && id.Dir:
			return dotgit
		case id.Exists:
			data, ok := s.readSmall(dotgit, true)
			if !ok {
				return ""
			}
			line, _, _ := strings.Cut(string(data), "\n")
			target, found := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
			target = strings.TrimSpace(target)
			if !found || target == "" {
				s.find(dotgit, 0, "", "a .git file without a gitdir: line")
				return ""
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(dir, target)
			}
			return filepath.Clean(target)
		}
		// A bare repository: HEAD, objects and refs in dir itself.
		if head := s.watch(filepath.Join(dir, "HEAD")); head.Exists && !head.Dir {
			objects, refs := s.watch(filepath.Join(dir, "objects")), s.watch(filepath.Join(dir, "refs"))
			if objects.Dir && refs.Dir {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// readSmall reads a small file (a .git file, commondir). must says whether a missing file is a
// finding.
func (s *scanner) readSmall(path string, must bool) ([]byte, bool) {
	id := s.watch(path)
	if !id.Exists {
		if must {
			s.find(path, 0, "", "cannot be read")
		}
		return nil, false
	}
	data, err := readCapped(path, 4096)
	if err != nil {
		s.find(path, 0, "", err.Error())
		return nil, false
	}
	return data, true
}

var errTooLarge = errors.New("larger than the scan reads")

func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooLarge
	}
	return data, nil
}

// file reads one configuration file and the files it includes. must says whether a missing file
// is a finding (an include is; the repository's own config and config.worktree are not).
func (s *scanner) file(path string, depth int, must bool) {
	id := s.watch(path)
	if !id.Exists {
		if must {
			s.find(path, 0, "", "an included file that cannot be read")
		}
		return
	}
	s.files++
	if s.files > s.lim.MaxFiles {
		s.find(path, 0, "", "more configuration files than the scan reads")
		return
	}
	if id.Dir {
		s.find(path, 0, "", "a directory where a configuration file should be")
		return
	}
	data, err := readCapped(path, s.lim.MaxFileSize)
	if err != nil {
		s.find(path, 0, "", err.Error())
		return
	}
	var includes []string
	err = Parse(data, func(e Entry) error {
		if why := RunsProgram(e); why != "" {
			s.find(path, e.Line, e.Key(), why)
		}
		if e.Name == "path" && (e.Section == "include" && !e.HasSub || e.Section == "includeif" && e.HasSub) {
			if e.NoValue || e.Value == "" {
				return nil
			}
			inc, ok := s.includePath(path, e)
			if ok {
				includes = append(includes, inc)
			}
		}
		return nil
	})
	if err != nil {
		s.find(path, 0, "", "does not parse: "+err.Error())
	}
	for _, inc := range includes {
		if depth+1 > s.lim.MaxIncludeDepth {
			s.find(inc, 0, "", "includes nested deeper than the scan follows")
			return
		}
		s.file(inc, depth+1, true)
	}
}

// includePath resolves an include path as git does: "~/" is the home directory, a relative path
// is relative to the including file's directory.
func (s *scanner) includePath(from string, e Entry) (string, bool) {
	p := e.Value
	switch {
	case strings.HasPrefix(p, "~/") || p == "~":
		if s.home == "" {
			s.find(from, e.Line, e.Key(), "includes a path under an unknown home directory")
			return "", false
		}
		p = filepath.Join(s.home, strings.TrimPrefix(p, "~"))
	case strings.HasPrefix(p, "~") || strings.HasPrefix(p, "%(prefix)"):
		s.find(from, e.Line, e.Key(), "includes a path the scan cannot resolve")
		return "", false
	case !filepath.IsAbs(p):
		p = filepath.Join(filepath.Dir(from), p)
	}
	return filepath.Clean(p), true
}
