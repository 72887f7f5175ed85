package gate

import (
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/reins-go/reins/internal/gitcfg"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// Repository trust for git.
//
// The shell analysis calls `git status` or `git log` read-only by its options, but git also runs
// whatever the repository's configuration names (core.fsmonitor on every status, core.pager,
// diff textconv drivers, filters...), and a cloned repository controls that configuration. So
// every git command the analysis reports is checked against the configuration of the repository
// it runs in (internal/gitcfg): if that configuration makes git run a program, the command is
// exec and opaque, whatever the analysis said (the program is named in a file, not on the line),
// so it is never auto-approved. A git command in a directory the line makes unknown is treated
// the same way.
//
// The answer is computed once per directory and cached with the identity (device, inode, size,
// modification time; size and time where the platform has no inode) of every file the scan read
// or looked for: .git and HEAD at each level of discovery, config, config.worktree, commondir,
// includes. A repeated Check re-stats those few files, which allocates nothing on Linux, and
// scans again only when one of them changed. This is the only I/O of Check besides the audit
// sink and the lstat of target paths, and it happens only for git commands.

// maxRepoEntries bounds the cache of repository answers (then it starts afresh).
const maxRepoEntries = 64

type repoEntry struct {
	rep    *gitcfg.Report
	reason string // why git is not trusted there; "" when it is
}

// repoTrust maps the directory a git command runs in to the answer for its repository. Reads are
// a lock-free lookup in an immutable map; a store copies it.
type repoTrust struct {
	p atomic.Pointer[map[string]*repoEntry]
}

// repoDistrust reports why git run in dir may run programs its repository configuration names, or ""
// when it may not. An unknown directory ("") is not trusted.
func (e *env) repoDistrust(dir string) string {
	if dir == "" {
		return "git runs in a directory the line makes unknown, so its repository configuration is unknown"
	}
	if m := e.repos.p.Load(); m != nil {
		if e, ok := (*m)[dir]; ok && !e.rep.Changed() {
			return e.reason
		}
	}
	start := dir
	if real, err := filepath.EvalSymlinks(filepath.FromSlash(dir)); err == nil {
		start = real
	} else {
		start = filepath.Clean(filepath.FromSlash(dir))
	}
	rep := gitcfg.Scan(start, e.home, nil)
	// The directory as the command names it: if a symbolic link on the way now leads elsewhere,
	// its identity changes and the repository is found again.
	c := gitcfg.CPath(filepath.FromSlash(dir))
	rep.Files = append(rep.Files, gitcfg.Watch{Path: dir, CPath: c, ID: gitcfg.StatID(c)})
	ent := &repoEntry{rep: rep}
	if !rep.Trusted() {
		ent.reason = rep.Reason()
	}
	for {
		old := e.repos.p.Load()
		var n map[string]*repoEntry
		if old == nil || len(*old) >= maxRepoEntries {
			n = make(map[string]*repoEntry, 1)
		} else {
			n = make(map[string]*repoEntry, len(*old)+1)
			for k, v := range *old {
				n[k] = v
			}
		}
		n[dir] = ent
		if e.repos.p.CompareAndSwap(old, &n) {
			break
		}
	}
	return ent.reason
}

// isGit reports whether a command of the analysis runs git.
func isGit(c *shell.Command) bool {
	return c.Program == "git" || strings.HasSuffix(c.Program, "/git") || len(c.Argv) > 0 && c.Argv[0] == "git"
}

// gitLevels returns the levels of a git command after repository trust: exec is added when the
// repository's configuration runs programs. why says so ("" when nothing changed).
func (e *env) gitLevels(c *shell.Command, levels risk.Set) (risk.Set, string) {
	if !isGit(c) || levels.Has(risk.Exec) {
		return levels, ""
	}
	if why := e.repoDistrust(c.Dir); why != "" {
		return levels.With(risk.Exec), why
	}
	return levels, ""
}
