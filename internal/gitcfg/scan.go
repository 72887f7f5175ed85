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
// What is read: the repository found from a directory the way git finds it (setup.c: GIT_DIR,
// else at each level a ".git" file with "gitdir: ", a ".git" directory that is a git directory,
// or the directory itself as a bare repository, judged as is_git_directory judges them: a valid
// HEAD, objects and refs that may be searched; GIT_CEILING_DIRECTORIES stops the walk), its
// commondir, its config, its config.worktree (whether or not extensions.worktreeConfig is set:
// reading one git may ignore only makes the answer stricter), every include.path and
// includeIf.<condition>.path, assuming every condition may hold, the hooks a reading command
// may fire (post-index-change, on the index write of status and diff), and the configuration
// of every submodule repository under modules/ (status runs git in each). The user's global and
// system configuration are the user's own and are not read. Everything is bounded: file size,
// number of files, include depth; nothing that is not a regular file (a FIFO) is opened.
//
// What is flagged: every variable git-config(1) documents as naming a command, a program, a
// driver, a helper, a hook or a pager; core.hooksPath (it moves hooks out of the protected .git
// directory, so a workspace file becomes a hook); core.worktree (it moves the working tree
// anywhere; a submodule's pointing into its superproject excepted); core.fsmonitor set at all
// (true starts git's own monitor daemon); aliases that start with "!"; URL rewriting
// (url.<base>.insteadOf) and proxies; protocol.<name>.allow; settings that make a read start a
// program or reach the network (log.showSignature, a format showing signatures, a partial clone
// or promisor remote, whose missing objects a read fetches); and, by suffix, any variable whose
// name ends in "command", "cmd", "program", "helper" or "hook", so a key nobody listed still
// counts. A file that cannot be read, does not parse, or is over a bound is a finding too: an
// answer the scan cannot give is "untrusted".
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
	Mtime  int64  // nanoseconds since the epoch
	Mode   uint32 // the file's type and permission bits (a hook made executable changes it)
}

// Regular reports whether the file exists and is a regular file (a FIFO or a device is neither
// read nor trusted: opening one could block).
func (id FileID) Regular() bool { return id.Exists && !id.Dir && id.Mode&modeTypeMask == modeRegular }

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
// absolute; a relative dir is a finding. Discovery honours GIT_DIR, GIT_COMMON_DIR,
// GIT_OBJECT_DIRECTORY and GIT_CEILING_DIRECTORIES from this process's environment, which the
// commands the gate lets run inherit (see ScanEnv).
func Scan(dir, home string, lim *Limits) *Report { return ScanEnv(dir, home, os.Getenv, lim) }

// ScanEnv is Scan with the environment git will run with given by getenv.
func ScanEnv(dir, home string, getenv func(string) string, lim *Limits) *Report {
	s := &scanner{r: &Report{}, home: home, lim: lim.withDefaults(), getenv: getenv}
	if !filepath.IsAbs(dir) {
		s.find(dir, 0, "", "the directory is not absolute, so the repository is unknown")
		return s.r
	}
	dir = filepath.Clean(dir)
	var gitDir string
	if env := getenv("GIT_DIR"); env != "" {
		// No discovery: git uses GIT_DIR (relative to the directory it runs in).
		if !filepath.IsAbs(env) {
			env = filepath.Join(dir, env)
		}
		gitDir = filepath.Clean(env)
	} else {
		gitDir = s.discover(dir)
	}
	if gitDir == "" {
		return s.r
	}
	s.r.GitDir = gitDir
	common := s.commonDir(gitDir)
	s.r.CommonDir = common
	s.file(filepath.Join(common, "config"), 0, false)
	s.file(filepath.Join(gitDir, "config.worktree"), 0, false)
	if common != gitDir {
		s.file(filepath.Join(common, "config.worktree"), 0, false)
	}
	s.hooks(common)
	s.modules(common, 0)
	return s.r
}

// ScanFiles looks for the configuration files a program other than git reads if they exist (the
// shell analysis names them: risk/shell.Config of kind ConfigFiles): each of names relative to
// dir and, with up, to every directory above it. Each file found is a finding: what it says
// decides what the program runs, and the scan does not judge its content. The report watches
// every path it looked at, so Changed reports one appearing, changing or going. dir must be
// absolute.
func ScanFiles(dir string, names []string, up bool, lim *Limits) *Report {
	s := &scanner{r: &Report{}, lim: lim.withDefaults()}
	if !filepath.IsAbs(dir) {
		s.find(dir, 0, "", "the directory is not absolute, so its configuration is unknown")
		return s.r
	}
	dir = filepath.Clean(dir)
	for level := 0; ; level++ {
		if level >= s.lim.MaxLevels {
			s.find(dir, 0, "", "too many directories above the working directory")
			return s.r
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if id := s.watch(p); id.Exists {
				s.find(p, 0, "", "is configuration that decides what the program runs")
			}
		}
		parent := filepath.Dir(dir)
		if !up || parent == dir {
			return s.r
		}
		dir = parent
	}
}

type scanner struct {
	r      *Report
	home   string
	lim    Limits
	files  int
	getenv func(string) string
	// submodule is the superproject's working tree while a submodule's configuration is read.
	submodule string
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

// commonDir is the directory holding a git directory's shared configuration: GIT_COMMON_DIR,
// else what its commondir file names, else itself.
func (s *scanner) commonDir(gitDir string) string {
	if env := s.getenv("GIT_COMMON_DIR"); env != "" {
		return filepath.Clean(env)
	}
	if data, ok := s.readSmall(filepath.Join(gitDir, "commondir"), false); ok {
		c := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		return filepath.Clean(c)
	}
	return gitDir
}

// discover walks up from dir the way git does (setup.c, setup_git_directory_gently_1): at each
// level, dir/.git as a "gitdir:" file, or as a git directory; then dir itself as a bare
// repository; then the parent, stopping below the ceiling directories. A .git that is a
// directory but not a git directory is passed over, as git passes it over; a .git file git would
// refuse is a finding (git stops there with an error, and the scan cannot say what runs).
func (s *scanner) discover(dir string) string {
	ceiling := s.ceiling(dir)
	for level := 0; ; level++ {
		if level >= s.lim.MaxLevels {
			s.find(dir, 0, "", "too many directories above the working directory")
			return ""
		}
		dotgit := filepath.Join(dir, ".git")
		id := s.watch(dotgit)
		switch {
		case id.Regular():
			return s.gitFile(dir, dotgit)
		case id.Exists && id.Dir:
			if s.isGitDirectory(dotgit) {
				return dotgit
			}
		}
		if s.isGitDirectory(dir) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir || len(parent) < ceiling {
			return ""
		}
		dir = parent
	}
}

// ceiling returns the length of the longest GIT_CEILING_DIRECTORIES entry that is a proper
// ancestor of dir (discovery does not look at it or above), or 0. Entries must be absolute;
// git resolves their symbolic links (until an empty entry), which the scan does by asking the
// file system.
func (s *scanner) ceiling(dir string) int {
	env := s.getenv("GIT_CEILING_DIRECTORIES")
	if env == "" {
		return 0
	}
	best := 0
	resolve := true
	for _, c := range filepath.SplitList(env) {
		if c == "" {
			resolve = false
			continue
		}
		if !filepath.IsAbs(c) {
			continue
		}
		c = filepath.Clean(c)
		if resolve {
			if r, err := filepath.EvalSymlinks(c); err == nil {
				c = r
			}
		}
		if c == "/" {
			if dir != "/" && best < 1 {
				best = 1
			}
			continue
		}
		if strings.HasPrefix(dir, c+"/") && len(c)+1 > best {
			best = len(c) + 1
		}
	}
	return best
}

// gitFile reads a .git file as git does (read_gitfile_gently): "gitdir: PATH", relative to the
// file's directory. A file git refuses is a finding.
func (s *scanner) gitFile(dir, dotgit string) string {
	data, ok := s.readSmall(dotgit, true)
	if !ok {
		return ""
	}
	content := strings.TrimRight(string(data), "\r\n")
	target, found := strings.CutPrefix(content, "gitdir: ")
	if !found || target == "" || strings.ContainsAny(target, "\n") {
		s.find(dotgit, 0, "", "a .git file git does not read (no \"gitdir: \" line)")
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return filepath.Clean(target)
}

// isGitDirectory is git's is_git_directory: a valid HEAD, and objects and refs that may be
// searched (in the common directory, or GIT_OBJECT_DIRECTORY for objects).
func (s *scanner) isGitDirectory(dir string) bool {
	if !s.validHead(filepath.Join(dir, "HEAD")) {
		return false
	}
	common := dir
	if data, ok := s.readSmall(filepath.Join(dir, "commondir"), false); ok {
		c := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		common = filepath.Clean(c)
	}
	objects := filepath.Join(common, "objects")
	if env := s.getenv("GIT_OBJECT_DIRECTORY"); env != "" {
		objects = env
	}
	s.watch(objects)
	refs := filepath.Join(common, "refs")
	s.watch(refs)
	return searchable(objects) && searchable(refs)
}

// validHead is git's validate_headref: a symbolic link into "refs/", or a file that says
// "ref: refs/..." or holds an object name.
func (s *scanner) validHead(head string) bool {
	s.watch(head)
	fi, err := os.Lstat(head)
	if err != nil {
		return false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(head)
		return err == nil && strings.HasPrefix(target, "refs/")
	}
	if !fi.Mode().IsRegular() {
		return false // git would open it; a FIFO or a device is not read here
	}
	data, err := readCapped(head, 255)
	if err != nil && err != errTooLarge {
		return false
	}
	if err == errTooLarge {
		f, ferr := os.Open(head)
		if ferr != nil {
			return false
		}
		data = make([]byte, 255)
		n, _ := io.ReadFull(f, data)
		f.Close()
		data = data[:n]
	}
	str := string(data)
	if ref, ok := strings.CutPrefix(str, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(ref, " \t\n\r\v\f"), "refs/")
	}
	return isHex(str, 40) || isHex(str, 64)
}

// isHex reports whether s starts with n hexadecimal digits (git's get_oid_hex reads the first
// n and ignores what follows).
func isHex(s string, n int) bool {
	if len(s) < n {
		return false
	}
	for i := 0; i < n; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// readOnlyHooks are the hooks git runs during commands the shell analysis calls read-only:
// post-index-change fires when status or diff refreshes and writes the index.
var readOnlyHooks = []string{"post-index-change"}

// hooks records a finding for each hook in the repository's hooks directory that a reading
// command may run (an executable file; git ignores one that is not).
func (s *scanner) hooks(common string) {
	for _, h := range readOnlyHooks {
		p := filepath.Join(common, "hooks", h)
		id := s.watch(p)
		if id.Exists && !id.Dir && id.Mode&0o111 != 0 {
			s.find(p, 0, "", "is a hook git runs when status or diff writes the index")
		}
	}
}

// modules scans the repositories of the submodules (under the common directory's modules/): git
// status and git diff look into submodules, running git there with their configuration.
func (s *scanner) modules(common string, depth int) {
	s.moduleDir(filepath.Join(common, "modules"), filepath.Dir(common), depth)
}

// moduleDir scans the git directories under dir (a submodule's name may hold slashes, so its
// git directory may be deeper). worktree is the superproject's working tree: a submodule's
// core.worktree points into it, which is how git arranges submodules, not a finding.
func (s *scanner) moduleDir(dir, worktree string, depth int) {
	id := s.watch(dir)
	if !id.Exists || !id.Dir {
		return
	}
	if depth >= 8 {
		s.find(dir, 0, "", "submodules nested deeper than the scan reads")
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		s.find(dir, 0, "", err.Error())
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if s.files > s.lim.MaxFiles {
			s.find(dir, 0, "", "more configuration files than the scan reads")
			return
		}
		sub := filepath.Join(dir, e.Name())
		if !s.isGitDirectory(sub) {
			s.moduleDir(sub, worktree, depth+1)
			continue
		}
		s.submodule = worktree
		s.file(filepath.Join(sub, "config"), 0, false)
		s.submodule = ""
		s.hooks(sub)
		s.moduleDir(filepath.Join(sub, "modules"), worktree, depth+1)
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
	if !id.Regular() {
		s.find(path, 0, "", "is not a regular file")
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
	if !id.Regular() {
		s.find(path, 0, "", "not a regular file where a configuration file should be")
		return
	}
	data, err := readCapped(path, s.lim.MaxFileSize)
	if err != nil {
		s.find(path, 0, "", err.Error())
		return
	}
	var includes []string
	err = Parse(data, func(e Entry) error {
		if why := RunsProgram(e); why != "" && !s.ownWorktree(path, e) {
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

// ownWorktree reports a submodule's core.worktree that points into the superproject's working
// tree, as git writes it when it absorbs a submodule.
func (s *scanner) ownWorktree(file string, e Entry) bool {
	if s.submodule == "" || e.Section != "core" || e.HasSub || e.Name != "worktree" || filepath.IsAbs(e.Value) {
		return false
	}
	wt := filepath.Clean(filepath.Join(filepath.Dir(file), e.Value))
	return strings.HasPrefix(wt, s.submodule+string(filepath.Separator))
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
