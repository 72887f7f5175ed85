package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// gitCmd classifies git: its global options by gitGlobalSpec, then the subcommand by its
// table (gittable.go) and a small handler.
func gitCmd(c *call) {
	c.config(ConfigRepository, false)
	o, idx := gitGlobalSpec.parse(c.args)
	c.applyOpts(&o)
	for _, f := range o.flags {
		switch {
		case f.is([]string{"-C"}) && f.has:
			c.read(f.val) // git works on the repository there
			c.sc = c.sc.clone()
			cd(c.sc, f.val.val, f.val.lit, c.w.opts.Home)
		case f.is([]string{"--exec-path"}) && f.has:
			gitExec(c, "git --exec-path makes git run its helpers from another directory")
		case f.is([]string{"--git-dir", "--work-tree"}):
			c.read(f.val)
			gitExec(c, "git "+f.name+" uses a repository whose configuration the analysis did not check")
		}
	}
	if idx >= len(c.args) {
		c.risk(risk.ReadOnly) // --version, --help, the paths
		return
	}
	if !c.args[idx].lit {
		c.opaque("the git subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	sub, rest := c.args[idx].val, c.args[idx+1:]
	if sp := gitSubSpecs[sub]; sp != nil {
		so, _ := sp.parse(rest)
		c.applyOpts(&so)
		gitReading(c, sub, so)
		return
	}
	if sp := gitWriteSpecs[sub]; sp != nil {
		so, _ := sp.parse(rest)
		c.applyOpts(&so)
		gitWriting(c, sub, so)
		return
	}
	gitOther(c, sub, rest)
}

// gitPaths records the operands of a reading subcommand that name files: everything after
// "--", "rev:path" blobs, and words that look like paths (a slash, or a leading "." or "~").
func gitPaths(c *call, o opts, all bool) {
	after := len(o.pos) - len(o.rest)
	for i, p := range o.pos {
		switch {
		case !p.lit:
			c.read(p)
		case all || i >= after:
			c.read(p)
		case strings.HasPrefix(p.val, ":/"):
			// A commit message search.
		case strings.Contains(p.val, ":"):
			if _, file, _ := strings.Cut(p.val, ":"); file != "" {
				c.read(arg{val: strings.TrimPrefix(file, "./"), lit: true, word: p.word})
			}
		case strings.ContainsAny(p.val[:min(1, len(p.val))], ".~/") && !strings.Contains(p.val, ".."),
			strings.Contains(p.val, "/") && !strings.Contains(p.val, ".."):
			c.read(p)
		}
	}
}

// gitReading handles the subcommands whose table is in gitSubSpecs: read-only ones, and the
// ones that read or change depending on their operands and options.
func gitReading(c *call, sub string, o opts) {
	for _, f := range o.values("--format", "--pretty") {
		// %G?, %GS, %GK ... and %(signature) verify signatures: git runs the signing program.
		if !f.lit || strings.Contains(f.val, "%G") || strings.Contains(f.val, "%(signature") {
			gitExec(c, "git "+sub+" shows signatures, which runs the signing program")
		}
	}
	mode := false
	for _, f := range o.flags {
		if f.opt != nil && f.opt.eff == effMode {
			mode = true
		}
	}
	if gitReadOnly[sub] {
		c.risk(risk.ReadOnly)
		switch sub {
		case "diff":
			gitPaths(c, o, o.has("--no-index"))
		case "grep":
			pos := o
			if !o.has("-e", "-f") && len(pos.pos) > 0 {
				pos.pos = pos.pos[1:]
			}
			if len(pos.pos) == 0 {
				// No pathspec: git grep reads every file of the working directory's tree it
				// searches (tracked ones; with --no-index or --untracked, every one), as
				// grep -r does.
				c.cwd(false)
			}
			// Every operand after the pattern is a revision or a pathspec git grep reads:
			// all are reported (a revision read as a path names nothing).
			gitPaths(c, pos, true)
		case "log", "show", "whatchanged", "cat-file", "blame", "annotate", "diff-tree", "range-diff":
			gitPaths(c, o, false)
		}
		return
	}
	first := ""
	if len(o.pos) > 0 && o.pos[0].lit {
		first = o.pos[0].val
	}
	switch sub {
	case "branch":
		switch {
		case o.has("-D") || o.has("-d") && o.has("-f"):
			c.risk(risk.Destructive)
		case mode || len(o.pos) > 0 && !o.has("-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"):
			c.risk(risk.Mutating)
			if o.has("-f", "-M", "-C") {
				c.risk(risk.Destructive)
			}
		default:
			c.risk(risk.ReadOnly)
		}
	case "tag":
		switch {
		case o.has("-d"):
			c.risk(risk.Destructive)
		case mode || len(o.pos) > 0 && !o.has("-l", "-v", "--contains", "--no-contains", "--points-at", "--merged", "--no-merged"):
			c.risk(risk.Mutating)
			if o.has("-f") {
				c.risk(risk.Destructive)
			}
		default:
			c.risk(risk.ReadOnly)
		}
	case "remote":
		switch {
		case first == "" || first == "get-url":
			c.risk(risk.ReadOnly)
		case first == "show":
			c.risk(risk.ReadOnly)
			if !o.has("-n") {
				c.net()
			}
		case first == "update" || first == "prune":
			c.risk(risk.Mutating)
			c.net()
		case first == "add" || first == "set-url" || first == "remove" || first == "rm" || first == "rename" ||
			first == "set-head" || first == "set-branches":
			c.risk(risk.Mutating)
		default:
			c.risk(risk.Exec)
			c.opaque("git remote " + first + " is not known")
		}
	case "config":
		gitConfig(c, o, first)
	case "fsck":
		c.risk(risk.ReadOnly)
		if o.has("--lost-found") {
			c.risk(risk.Mutating)
			c.write(arg{val: ".git/lost-found", lit: true}) // under the repository, wherever it is
		}
	case "ls-remote":
		c.risk(risk.Network, risk.ReadOnly)
		c.net(gitRemoteHost(o.pos)...)
	case "stash":
		switch {
		case first == "list" || first == "show":
			c.risk(risk.ReadOnly)
		case first == "drop" || first == "clear":
			c.risk(risk.Destructive)
		default:
			c.risk(risk.Mutating)
		}
	case "reflog":
		switch {
		case first == "" || first == "show" || first == "exists" || !mode && first != "expire" && first != "delete":
			c.risk(risk.ReadOnly)
		default:
			c.risk(risk.Destructive)
		}
	case "worktree":
		switch first {
		case "list":
			c.risk(risk.ReadOnly)
		case "remove", "prune":
			c.risk(risk.Destructive)
			c.writeAll(o.pos[1:])
		case "add", "move":
			c.risk(risk.Mutating)
			if len(o.pos) > 1 {
				c.write(o.pos[1])
			}
			if first == "move" && len(o.pos) > 2 {
				c.write(o.pos[2])
			}
		default:
			c.risk(risk.Mutating)
		}
	case "submodule":
		switch {
		case first == "foreach":
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
		case first == "" || first == "status" || first == "summary":
			c.risk(risk.ReadOnly)
		default:
			c.risk(risk.Network, risk.Mutating, risk.Exec)
			c.net()
		}
	}
}

// gitConfig: reading is read-only; any write can make git run programs (aliases, hooks,
// fsmonitor, pagers).
func gitConfig(c *call, o opts, first string) {
	writes := o.has("--add", "--replace-all", "--unset", "--unset-all", "--rename-section", "--remove-section")
	reads := o.has("--get", "-l") || first == "get" || first == "list" ||
		len(o.pos) == 1 && first != "edit" && first != "set" && first != "unset"
	if reads && !writes {
		c.risk(risk.ReadOnly)
		if f, ok := o.value("-f"); ok {
			c.read(f)
		}
		return
	}
	gitExec(c, "git config can make git run commands (aliases, hooks, fsmonitor, pagers)")
	c.risk(risk.Mutating)
	switch {
	case o.has("-f"):
		f, _ := o.value("-f")
		c.write(f)
	case o.has("--global"):
		c.write(arg{val: "~/.gitconfig", lit: c.w.opts.Home != ""})
		if c.w.opts.Home != "" {
			c.cmd.Writes[len(c.cmd.Writes)-1].Path = c.w.opts.Home + "/.gitconfig"
		}
	case o.has("--system"):
		c.write(arg{val: "/etc/gitconfig", lit: true})
	default:
		c.write(arg{val: ".git/config", lit: true})
	}
}

// gitWriting handles the subcommands of gitWriteSpecs.
func gitWriting(c *call, sub string, o opts) {
	switch sub {
	case "add", "commit", "merge":
		c.risk(risk.Mutating)
	case "mv":
		c.risk(risk.Mutating)
		c.writeAll(o.pos)
	case "rm":
		if o.has("--cached") {
			c.risk(risk.Mutating)
			return
		}
		c.risk(risk.Destructive)
		c.writeAll(o.pos)
	case "switch":
		c.risk(risk.Mutating)
		if o.has("-f", "-C") {
			c.risk(risk.Destructive)
		}
	case "checkout":
		c.risk(risk.Mutating)
		discard := o.rest != nil || o.has("-f", "-B", "--overwrite-ignore", "--ours", "--theirs")
		for _, p := range o.pos {
			if p.is(".", "..") || p.glob || p.lit && (strings.HasPrefix(p.val, "./") || strings.HasPrefix(p.val, "../")) {
				discard = true
			}
		}
		if discard {
			c.risk(risk.Destructive)
			c.note("git checkout of paths discards their uncommitted changes")
		}
	case "restore":
		if o.has("-S") && !o.has("-W") {
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
		if o.has("-n") {
			c.risk(risk.ReadOnly)
			return
		}
		c.risk(risk.Destructive)
		c.cwd(true)
	case "rebase":
		c.risk(risk.Mutating)
		if cmd, ok := o.value("-x"); ok {
			if cmd.lit {
				c.code(cmd.val, true, "git rebase --exec")
			} else {
				gitExec(c, "git rebase --exec runs a command the line does not spell out")
			}
		}
		if o.has("-i") {
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
	case "archive":
		c.risk(risk.ReadOnly)
	case "push":
		c.risk(risk.Network)
		c.net(gitRemoteHost(o.pos)...)
		force := o.has("-f", "--force-with-lease", "--force-if-includes", "--mirror", "-d", "--prune")
		for _, p := range o.pos {
			if p.lit && (strings.HasPrefix(p.val, "+") || strings.HasPrefix(p.val, ":")) {
				force = true
			}
		}
		if force {
			c.risk(risk.Destructive)
			c.note("a forced push or deletion rewrites the remote")
		}
	case "fetch":
		c.risk(risk.Network, risk.Mutating)
		c.net(gitRemoteHost(o.pos)...)
	case "pull":
		c.risk(risk.Network, risk.Mutating)
		c.net(gitRemoteHost(o.pos)...)
		if o.has("-f") {
			c.risk(risk.Destructive)
		}
	case "clone":
		c.risk(risk.Network, risk.Mutating)
		if len(o.pos) > 0 {
			src := o.pos[0]
			switch {
			case src.lit && isLocalRepo(src.val):
				c.read(src)
			case src.lit:
				c.net(gitHost(src.val))
			default:
				c.opaque("the clone source is not literal")
			}
		}
		if len(o.pos) > 1 {
			c.write(o.pos[1])
		} else {
			c.cwd(true)
		}
	}
}

// gitOther handles the subcommands without a table by what they are known to do; their options
// are not checked (they are never read-only).
func gitOther(c *call, sub string, rest []arg) {
	o, _ := gitOtherSpec.parse(rest)
	c.applyOpts(&o)
	if s, ok := o.value("-s"); ok && (!s.lit || !gitStrategies[s.val]) {
		gitExec(c, "git "+sub+" -s runs the merge strategy program git-merge-"+s.val)
	}
	if sub == "maintenance" && len(o.pos) > 0 && o.pos[0].is("start", "register", "unregister", "stop") {
		gitExec(c, "git maintenance "+o.pos[0].val+" schedules jobs and changes the global configuration")
	}
	switch sub {
	case "notes", "apply", "am", "cherry-pick", "revert", "update-index", "commit-tree", "write-tree", "hash-object",
		"replace", "sparse-checkout", "repack", "maintenance", "read-tree", "symbolic-ref", "update-ref", "mktag",
		"mktree", "pack-refs", "rerere", "fast-import", "bisect", "format-patch", "gc", "prune", "filter-branch",
		"filter-repo", "lfs", "send-email", "imap-send", "request-pull", "verify-commit", "verify-tag":
		gitLegacy(c, sub, o)
	case "difftool", "mergetool", "instaweb", "web--browse", "daemon", "http-backend", "shell", "upload-pack", "receive-pack":
		gitExec(c, "git "+sub+" runs external programs")
	default:
		// An alias or a git-<name> program on PATH: it runs code.
		c.risk(risk.Exec)
		c.note("git " + sub + " is an alias or an external git command")
	}
}

// gitOtherSpec lists the options of git's rarer subcommands whose effects matter: they are
// never read-only, so an option it does not list is taken as a flag (see spec.open).
var gitOtherSpec = &spec{man: "git-am(1), git-apply(1), git-cherry-pick(1), git-format-patch(1), git-notes(1) and the like", abbrev: true, open: true, opts: `
	--exec --upload-pack --receive-pack =X
	--ext-diff --textconv !X
	--template =X
	-F --file =R
	--output =W
	-o --output-directory =W
	--signature-file --import-marks --import-marks-if-exists =R
	--export-marks =W
	-S --gpg-sign ?X
	-e --edit !X
	-i --interactive !X
	-s --strategy =M`}

// gitStrategies are the merge strategies built into git; any other runs git-merge-<name>.
var gitStrategies = map[string]bool{"ort": true, "recursive": true, "resolve": true, "octopus": true, "ours": true, "subtree": true}

// gitLegacy classifies the less common subcommands by their operands.
func gitLegacy(c *call, sub string, o opts) {
	switch sub {
	case "request-pull":
		c.risk(risk.ReadOnly)
		if len(o.pos) > 1 {
			c.net(gitRemoteHost(o.pos[1:])...) // it looks the end commit up on the remote
		} else {
			c.net()
		}
	case "verify-commit", "verify-tag":
		gitExec(c, "git "+sub+" runs the configured signature program")
	case "update-ref":
		c.risk(risk.Mutating)
		if o.has("-d") {
			c.risk(risk.Destructive)
		}
	case "apply", "am":
		c.risk(risk.Mutating)
		c.readAll(o.pos)
	case "gc", "prune", "filter-branch", "filter-repo":
		switch {
		case sub == "gc" && !o.has("--prune", "--aggressive"):
			c.risk(risk.Mutating)
		default:
			c.risk(risk.Destructive)
			if strings.HasPrefix(sub, "filter") {
				c.risk(risk.Exec)
				c.opaque("git " + sub + " rewrites history with commands it is given")
			}
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
		case len(o.pos) > 0 && o.pos[0].is("locks"):
			c.risk(risk.Network, risk.ReadOnly)
			c.net() // the lock list is the LFS server's
		case len(o.pos) > 0 && o.pos[0].is("ls-files", "status", "env", "version"):
			c.risk(risk.ReadOnly)
		default:
			c.risk(risk.Mutating)
		}
	case "send-email", "imap-send":
		c.risk(risk.Network)
		c.net()
	default:
		c.risk(risk.Mutating)
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
