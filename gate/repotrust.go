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
	return e.repos.store(dir, rep)
}

// store caches the answer rep gives under key and returns its reason ("" when trusted).
func (t *repoTrust) store(key string, rep *gitcfg.Report) string {
	ent := &repoEntry{rep: rep}
	if !rep.Trusted() {
		ent.reason = rep.Reason()
	}
	for {
		old := t.p.Load()
		var n map[string]*repoEntry
		if old == nil || len(*old) >= maxRepoEntries {
			n = make(map[string]*repoEntry, 1)
		} else {
			n = make(map[string]*repoEntry, len(*old)+1)
			for k, v := range *old {
				n[k] = v
			}
		}
		n[key] = ent
		if t.p.CompareAndSwap(old, &n) {
			return ent.reason
		}
	}
}

// filesDistrust reports why a program that reads the configuration files cfg names may run
// what they say (one of them exists), or "" when none exists. An unknown directory is not
// trusted. The answer is cached with the identity of every path looked at, like git's.
func (e *env) filesDistrust(cfg *shell.Config) string {
	if cfg.Dir == "" {
		return "the program runs in a directory the line makes unknown, so its configuration is unknown"
	}
	key := "files\x00" + cfg.Dir + "\x00" + strings.Join(cfg.Names, "\x00")
	if cfg.Up {
		key += "\x00up"
	}
	if m := e.repos.p.Load(); m != nil {
		if ent, ok := (*m)[key]; ok && !ent.rep.Changed() {
			return ent.reason
		}
	}
	return e.repos.store(key, gitcfg.ScanFiles(filepath.FromSlash(cfg.Dir), cfg.Names, cfg.Up, nil))
}

// isGit reports whether a command of the analysis runs git.
func isGit(c *shell.Command) bool {
	return c.Program == "git" || strings.HasSuffix(c.Program, "/git") || len(c.Argv) > 0 && c.Argv[0] == "git"
}

// gitLevels returns the levels of a command after configuration trust: exec is added when git's
// repository configuration runs programs, or when a configuration file the program reads from
// the workspace exists (shell.Command.Config). why says so ("" when nothing changed).
func (e *env) gitLevels(c *shell.Command, levels risk.Set) (risk.Set, string) {
	if levels.Has(risk.Exec) {
		return levels, ""
	}
	repo := false
	for i := range c.Config {
		cfg := &c.Config[i]
		var why string
		switch cfg.Kind {
		case shell.ConfigRepository:
			repo = true
			why = e.repoDistrust(cfg.Dir)
		case shell.ConfigFiles:
			why = e.filesDistrust(cfg)
		default:
			why = "the program reads configuration of a kind the gate does not know"
		}
		if why != "" {
			return levels.With(risk.Exec), why
		}
	}
	if !repo && isGit(c) {
		if why := e.repoDistrust(c.Dir); why != "" {
			return levels.With(risk.Exec), why
		}
	}
	return levels, ""
}
