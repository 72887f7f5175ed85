package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// gitCmd classifies git by subcommand and flags.
func gitCmd(c *call) {
	args := c.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			c.opaque("a git option is not literal")
			c.risk(risk.Exec)
			return
		}
		switch {
		case a.val == "-C":
			if i+1 < len(args) {
				i++
				c.read(args[i])     // git works on the repository there
				c.sc = c.sc.clone() // -C applies to this command only
				cd(c.sc, args[i].val, args[i].lit, c.w.opts.Home)
			}
		case a.val == "-c" || a.val == "--config-env" || strings.HasPrefix(a.val, "--config-env=") || strings.HasPrefix(a.val, "-c"):
			if a.val == "-c" || a.val == "--config-env" {
				i++
			}
			gitExec(c, "git -c sets configuration that can make git run commands (aliases, pagers, hooks, ssh)")
		case strings.HasPrefix(a.val, "--exec-path"):
			if a.val == "--exec-path" {
				// Without a value it only prints the path.
				continue
			}
			gitExec(c, "git --exec-path makes git run its helpers from another directory")
		case a.val == "--git-dir" || a.val == "--work-tree":
			if i+1 < len(args) {
				i++
				c.write(args[i])
			}
		case strings.HasPrefix(a.val, "--git-dir=") || strings.HasPrefix(a.val, "--work-tree="):
			c.write(arg{val: a.val[strings.IndexByte(a.val, '=')+1:], lit: true})
		case a.val == "--namespace" || a.val == "--super-prefix" || a.val == "--list-cmds":
			i++
		case strings.HasPrefix(a.val, "-"):
			// --no-pager, -p, -P, --bare, --literal-pathspecs, --version, --help...
			if a.is("--version", "--help", "-h", "--html-path", "--man-path", "--info-path") {
				c.risk(risk.ReadOnly)
				return
			}
		default:
			goto sub
		}
	}
	c.risk(risk.ReadOnly)
	return
sub:
	sub := args[i].val
	rest := args[i+1:]
	o, _ := parseOpts(rest, "mFCcobBtSuxsXnjp", false, "message", "file", "reuse-message", "template", "author", "date",
		"upload-pack", "receive-pack", "exec", "output", "depth", "branch", "origin", "config", "reference", "separate-git-dir",
		"shallow-since", "shallow-exclude", "filter", "strategy", "strategy-option", "onto", "pathspec-from-file", "format", "remote", "prefix")
	for _, f := range []string{"--upload-pack", "--receive-pack", "-u"} {
		if _, ok := o.value(f); ok && (f != "-u" || sub == "clone" || sub == "fetch" || sub == "ls-remote" || sub == "pull") {
			gitExec(c, "git "+f+" names a program to run")
		}
	}
	if o.has("--config", "--template") || (sub == "clone" && o.has("-c")) {
		gitExec(c, "git "+sub+" with configuration or templates that can install hooks")
	}
	if o.has("--ext-diff", "--textconv") {
		gitExec(c, "git runs external diff or textconv programs")
	}
	c.readAll(o.values("-F", "--file", "--pathspec-from-file"))
	switch sub {
	case "status", "log", "show", "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list", "ls-files",
		"ls-tree", "cat-file", "grep", "whatchanged", "count-objects", "help", "version", "check-ignore", "check-attr",
		"name-rev", "merge-base", "for-each-ref", "show-ref", "var", "diff-tree", "diff-files", "diff-index", "range-diff",
		"cherry", "verify-commit", "verify-tag", "fsck", "show-branch", "request-pull", "check-ref-format", "get-tar-commit-id":
		c.risk(risk.ReadOnly)
	case "diff":
		c.risk(risk.ReadOnly)
		if out, ok := o.value("--output"); ok {
			c.risk(risk.Mutating)
			c.write(out)
		}
	case "archive":
		c.risk(risk.ReadOnly)
		if out, ok := o.value("-o", "--output"); ok {
			c.risk(risk.Mutating)
			c.write(out)
		}
		if r, ok := o.value("--remote"); ok {
			c.net(gitHost(r.val))
		}
	case "branch":
		switch {
		case o.has("-D"):
			c.risk(risk.Destructive)
		case o.has("-d", "--delete", "-m", "-M", "-c", "-C", "--move", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "-f", "--force", "--edit-description"):
			c.risk(risk.Mutating)
			if o.has("-f", "--force") {
				c.risk(risk.Destructive)
			}
		case len(o.pos) > 0 && !o.has("-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"):
			c.risk(risk.Mutating)
		default:
			c.risk(risk.ReadOnly)
		}
	case "tag":
		switch {
		case o.has("-d", "--delete"):
			c.risk(risk.Destructive)
		case len(o.pos) > 0 && !o.has("-l", "--list", "-v", "--verify", "--contains", "--points-at", "--merged"):
			c.risk(risk.Mutating)
			if o.has("-f", "--force") {
				c.risk(risk.Destructive)
			}
		default:
			c.risk(risk.ReadOnly)
		}
	case "remote":
		switch {
		case len(o.pos) == 0 || o.pos[0].is("show", "get-url", "-v"):
			c.risk(risk.ReadOnly)
		case o.pos[0].is("update", "prune"):
			c.risk(risk.Mutating)
			c.net()
		default: // add, set-url, remove, rename
			c.risk(risk.Mutating)
		}
	case "config":
		if o.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--show-origin", "--show-scope") ||
			(len(o.pos) == 1 && !o.has("--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit")) ||
			(len(o.pos) > 0 && o.pos[0].is("get", "list")) {
			c.risk(risk.ReadOnly)
			return
		}
		gitExec(c, "git config can make git run commands (aliases, hooks, fsmonitor, pagers)")
		c.risk(risk.Mutating)
		switch {
		case o.has("--global"):
			c.write(arg{val: "~/.gitconfig", lit: c.w.opts.Home != "", glob: false})
			if c.w.opts.Home != "" {
				c.cmd.Writes[len(c.cmd.Writes)-1].Path = c.w.opts.Home + "/.gitconfig"
			}
		case o.has("--system"):
			c.write(arg{val: "/etc/gitconfig", lit: true})
		default:
			c.write(arg{val: ".git/config", lit: true})
		}
	case "stash":
		switch {
		case len(o.pos) > 0 && o.pos[0].is("list", "show"):
			c.risk(risk.ReadOnly)
		case len(o.pos) > 0 && o.pos[0].is("drop", "clear"):
			c.risk(risk.Destructive)
		default:
			c.risk(risk.Mutating)
		}
	case "add", "commit", "mv", "notes", "apply", "am", "merge", "cherry-pick", "revert", "update-index", "commit-tree",
		"write-tree", "hash-object", "replace", "sparse-checkout", "repack", "maintenance", "read-tree", "symbolic-ref",
		"update-ref", "mktag", "mktree", "pack-refs", "rerere", "fast-import":
		c.risk(risk.Mutating)
		if sub == "update-ref" && o.has("-d") {
			c.risk(risk.Destructive)
		}
		if sub == "apply" || sub == "am" {
			c.readAll(o.pos)
		}
		if sub == "mv" {
			c.writeAll(o.pos)
		}
	case "switch":
		c.risk(risk.Mutating)
		if o.has("-f", "--force", "--discard-changes", "-C", "--force-create") {
			c.risk(risk.Destructive)
		}
	case "checkout":
		c.risk(risk.Mutating)
		if o.rest != nil || o.has("-f", "--force", "-B", "--overwrite-ignore", "--ours", "--theirs", "-p", "--patch") {
			c.risk(risk.Destructive)
			c.note("git checkout of paths discards their uncommitted changes")
		}
		for _, p := range o.pos {
			if p.is(".", "..") || p.glob || (p.lit && (strings.HasPrefix(p.val, "./") || strings.HasPrefix(p.val, "../"))) {
				c.risk(risk.Destructive)
				c.note("git checkout of paths discards their uncommitted changes")
				break
			}
		}
	case "restore":
		if o.has("-S", "--staged") && !o.has("-W", "--worktree") {
			c.risk(risk.Mutating)
			return
		}
		c.risk(risk.Destructive)
		c.note("git restore discards uncommitted changes")
	case "reset":
		c.risk(risk.Mutating)
		if o.has("--hard", "--keep", "--merge") {
			c.risk(risk.Destructive)
		}
	case "clean":
		switch {
		case o.has("-n", "--dry-run"):
			c.risk(risk.ReadOnly)
		default:
			c.risk(risk.Destructive)
			c.cwd(true)
		}
	case "rm":
		if o.has("--cached") {
			c.risk(risk.Mutating)
			return
		}
		c.risk(risk.Destructive)
		c.writeAll(o.pos)
	case "rebase":
		c.risk(risk.Mutating)
		if cmd, ok := o.value("-x", "--exec"); ok {
			if cmd.lit {
				c.code(cmd.val, true, "git rebase --exec")
			} else {
				gitExec(c, "git rebase --exec runs a command the line does not spell out")
			}
		}
		if o.has("-i", "--interactive") {
			c.opaque("an interactive rebase runs an editor and whatever the todo list says")
			c.risk(risk.Exec)
		}
	case "init":
		c.risk(risk.Mutating)
		if len(o.pos) > 0 {
			c.write(o.pos[0])
		} else {
			c.cwd(true)
		}
	case "worktree":
		switch {
		case len(o.pos) > 0 && o.pos[0].is("list"):
			c.risk(risk.ReadOnly)
		case len(o.pos) > 0 && o.pos[0].is("remove", "prune"):
			c.risk(risk.Destructive)
			c.writeAll(o.pos[1:])
		default:
			c.risk(risk.Mutating)
			if len(o.pos) > 1 {
				c.write(o.pos[1])
			}
		}
	case "gc", "prune", "reflog", "filter-branch", "filter-repo":
		switch {
		case sub == "reflog" && (len(o.pos) == 0 || o.pos[0].is("show", "exists")):
			c.risk(risk.ReadOnly)
		case sub == "gc" && !o.has("--prune", "--aggressive"):
			c.risk(risk.Mutating)
		default:
			c.risk(risk.Destructive)
			if strings.HasPrefix(sub, "filter") {
				c.risk(risk.Exec)
				c.opaque("git " + sub + " rewrites history with commands it is given")
			}
		}
	case "push":
		c.risk(risk.Network)
		c.net(gitRemoteHost(o.pos)...)
		force := o.has("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "-d", "--delete", "--prune")
		for _, p := range o.pos {
			if p.lit && (strings.HasPrefix(p.val, "+") || strings.HasPrefix(p.val, ":")) {
				force = true
			}
		}
		if force {
			c.risk(risk.Destructive)
			c.note("a forced push or deletion rewrites the remote")
		}
	case "fetch", "ls-remote":
		c.risk(risk.Network)
		c.net(gitRemoteHost(o.pos)...)
		if sub == "fetch" {
			c.risk(risk.Mutating)
		} else {
			c.risk(risk.ReadOnly)
		}
	case "pull":
		c.risk(risk.Network, risk.Mutating)
		c.net(gitRemoteHost(o.pos)...)
		if o.has("-f", "--force") {
			c.risk(risk.Destructive)
		}
	case "clone":
		c.risk(risk.Network, risk.Mutating)
		if len(o.pos) > 0 {
			src := o.pos[0]
			if src.lit && isLocalRepo(src.val) {
				c.read(src)
			} else if src.lit {
				c.net(gitHost(src.val))
			} else {
				c.opaque("the clone source is not literal")
			}
		}
		if len(o.pos) > 1 {
			c.write(o.pos[1])
		} else {
			c.cwd(true)
		}
	case "submodule":
		switch {
		case len(o.pos) > 0 && o.pos[0].is("foreach"):
			var parts []string
			for _, p := range o.pos[1:] {
				if !p.lit {
					gitExec(c, "git submodule foreach runs a command the line does not spell out")
					return
				}
				parts = append(parts, p.val)
			}
			c.risk(risk.Mutating)
			c.code(strings.Join(parts, " "), true, "git submodule foreach")
		case len(o.pos) == 0 || o.pos[0].is("status", "summary"):
			c.risk(risk.ReadOnly)
		default:
			c.risk(risk.Network, risk.Mutating, risk.Exec)
			c.net()
		}
	case "bisect":
		c.risk(risk.Mutating)
		if len(o.pos) > 0 && o.pos[0].is("run") {
			c.spawn(o.pos[1:], "git bisect run")
		}
	case "format-patch":
		c.risk(risk.Mutating)
		if d, ok := o.value("-o", "--output-directory"); ok {
			c.write(d)
		} else {
			c.cwd(true)
		}
	case "lfs":
		switch {
		case len(o.pos) > 0 && o.pos[0].is("pull", "fetch", "push", "clone"):
			c.risk(risk.Network, risk.Mutating)
			c.net()
		case len(o.pos) > 0 && o.pos[0].is("ls-files", "status", "env", "version", "locks"):
			c.risk(risk.ReadOnly)
		default:
			c.risk(risk.Mutating)
		}
	case "send-email", "imap-send":
		c.risk(risk.Network)
		c.net()
	case "difftool", "mergetool", "instaweb", "web--browse", "daemon", "http-backend", "shell", "upload-pack", "receive-pack":
		gitExec(c, "git "+sub+" runs external programs")
	default:
		// An alias or a git-<name> program on PATH: it runs code.
		c.risk(risk.Exec)
		c.note("git " + sub + " is an alias or an external git command")
	}
}

func gitExec(c *call, why string) {
	c.cmd.ExecutesCode = true
	c.risk(risk.Exec)
	c.opaque(why)
}

// gitRemoteHost returns the host of a remote given as a URL; a remote name ("origin") has no
// host the line can see.
func gitRemoteHost(pos []arg) []string {
	if len(pos) == 0 || !pos[0].lit {
		return nil
	}
	if h := gitHost(pos[0].val); h != "" {
		return []string{h}
	}
	return nil
}

func isLocalRepo(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "file://") || s == "." || s == ".."
}

// gitHost extracts the host of a git URL: scheme URLs, and the scp-like user@host:path.
func gitHost(s string) string {
	if strings.Contains(s, "://") {
		if strings.HasPrefix(s, "file://") {
			return ""
		}
		return hostOf(s)
	}
	if i := strings.IndexByte(s, ':'); i > 0 && !strings.Contains(s[:i], "/") {
		h := s[:i]
		if at := strings.LastIndexByte(h, '@'); at >= 0 {
			h = h[at+1:]
		}
		return h
	}
	return ""
}
