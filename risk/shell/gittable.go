package shell

// The git tables: global options and, per subcommand, its options. A subcommand is read-only
// only with the options listed for it; --output and friends write, --ext-diff, --textconv,
// --open-files-in-pager and the like run programs.

// git(1) 2.43, OPTIONS (before the subcommand). -c and --config-env set configuration that can
// run programs; --git-dir and --work-tree point git at a repository the gate did not check.
var gitGlobalSpec = &spec{man: "git(1) OPTIONS", posix: true, opts: `
	-v --version
	-h --help
	-C =M
	-c =X
	--config-env =X
	--exec-path ?M
	--html-path
	--man-path
	--info-path
	-p --paginate
	-P --no-pager
	--git-dir =M
	--work-tree =M
	--namespace =
	--bare
	--no-replace-objects
	--no-lazy-fetch
	--no-optional-locks
	--no-advice
	--literal-pathspecs
	--glob-pathspecs
	--noglob-pathspecs
	--icase-pathspecs
	--list-cmds =
	--attr-source =`}

// diff-options (git-diff(1), git-log(1), git-show(1) "OPTIONS" shared part).
const gitDiffOpts = `
	-p -u --patch
	-s --no-patch
	-U --unified =
	--output =W
	--output-indicator-new --output-indicator-old --output-indicator-context =
	--raw
	--patch-with-raw
	--indent-heuristic
	--no-indent-heuristic
	--minimal
	--patience
	--histogram
	--anchored =
	--diff-algorithm =
	--stat ?
	--stat-width --stat-name-width --stat-count --stat-graph-width =
	--compact-summary
	--numstat
	--shortstat
	-X --dirstat ?
	--cumulative
	--dirstat-by-file ?
	--summary
	--patch-with-stat
	-z
	--name-only
	--name-status
	--submodule ?
	--color ?
	--no-color
	--color-moved ?
	--no-color-moved
	--color-moved-ws =
	--no-color-moved-ws
	--word-diff ?
	--word-diff-regex =
	--color-words ?
	--no-renames
	--rename-empty
	--no-rename-empty
	--check
	--ws-error-highlight =
	--full-index
	--binary
	--abbrev ?
	-B --break-rewrites ?
	-M --find-renames ?
	-C --find-copies ?
	--find-copies-harder
	-D --irreversible-delete
	-l ?
	--diff-filter =
	-S =
	-G =
	--find-object =
	--pickaxe-all
	--pickaxe-regex
	-O =R
	--skip-to --rotate-to =
	-R
	--relative ?
	--no-relative
	-a --text
	--ignore-cr-at-eol
	--ignore-space-at-eol
	-b --ignore-space-change
	-w --ignore-all-space
	--ignore-blank-lines
	-I --ignore-matching-lines =
	--inter-hunk-context =
	-W --function-context
	--exit-code
	--quiet
	--no-ext-diff
	--no-textconv
	--ignore-submodules ?
	--src-prefix --dst-prefix =
	--no-prefix
	--default-prefix
	--line-prefix =
	--ita-invisible-in-index
	--ita-visible-in-index
	--ext-diff !X
	--textconv !X`

// rev-list-options (git-log(1) "Commit Limiting", "History Simplification", "Commit
// Ordering", "Commit Formatting").
const gitRevOpts = `
	-n --max-count =
	--skip =
	--since --after --since-as-filter --until --before --max-age --min-age =
	--author --committer --grep-reflog --grep =
	--all-match
	--invert-grep
	-i --regexp-ignore-case
	--basic-regexp
	-E --extended-regexp
	-F --fixed-strings
	-P --perl-regexp
	--remove-empty
	--merges
	--no-merges
	--min-parents --max-parents =
	--no-min-parents
	--no-max-parents
	--first-parent
	--exclude-first-parent-only
	--not
	--all
	--branches --tags --remotes ?
	--glob --exclude --exclude-hidden =
	--reflog
	--alternate-refs
	--single-worktree
	--ignore-missing
	--bisect
	--stdin
	--cherry-mark
	--cherry-pick
	--left-only
	--right-only
	--cherry
	-g --walk-reflogs
	--merge
	--boundary
	--simplify-by-decoration
	--show-pulls
	--full-history
	--dense
	--sparse
	--simplify-merges
	--ancestry-path ?
	--date-order
	--author-date-order
	--topo-order
	--reverse
	--no-walk ?
	--do-walk
	--pretty ?
	--format =
	--abbrev-commit
	--no-abbrev-commit
	--oneline
	--encoding =
	--expand-tabs ?
	--no-expand-tabs
	--notes --show-notes ?
	--no-notes
	--show-notes-by-default
	--standard-notes
	--no-standard-notes
	--relative-date
	--date =
	--parents
	--children
	--left-right
	--graph
	--show-linear-break ?
	-c
	--cc
	--dd
	--remerge-diff
	--no-diff-merges
	--diff-merges =
	--combined-all-paths
	-m
	-r
	-t
	--root
	--decorate ?
	--no-decorate
	--decorate-refs --decorate-refs-exclude =
	--clear-decorations
	--source
	--mailmap --use-mailmap
	--no-mailmap --no-use-mailmap
	--full-diff
	--log-size
	-L =
	--follow
	--no-follow`

// git-diff(1), the options git diff adds to diff-options.
const gitDiffCmdOpts = `
	--cached --staged
	--merge-base
	--no-index !M
	-1 --base
	-2 --ours
	-3 --theirs
	-0`

var gitSubSpecs = map[string]*spec{
	// git-status(1).
	"status": {man: "git-status(1)", abbrev: true, opts: `
	-s --short
	-b --branch
	--show-stash
	--porcelain ?
	--long
	-v --verbose
	-u --untracked-files ?
	--ignore-submodules ?
	--ignored ?
	-z
	--column ?
	--no-column
	--ahead-behind
	--no-ahead-behind
	--renames
	--no-renames
	--find-renames ?`},
	// git-log(1); git whatchanged(1) and git shortlog(1) read the same way.
	"log": {man: "git-log(1)", abbrev: true, num: true, opts: gitRevOpts + gitDiffOpts},
	// git-show(1).
	"show": {man: "git-show(1)", abbrev: true, num: true, opts: gitRevOpts + gitDiffOpts},
	// git-diff(1).
	"diff": {man: "git-diff(1)", abbrev: true, opts: gitDiffOpts + gitDiffCmdOpts},
	// git-diff-tree(1), git-diff-files(1), git-diff-index(1).
	"diff-tree": {man: "git-diff-tree(1)", abbrev: true, opts: gitDiffOpts + `
	-r
	-t
	--root
	--stdin
	--no-commit-id
	-m
	-c
	--cc
	--combined-all-paths
	--always
	-v
	--pretty ?
	--format =
	--merge-base
	--cached
	-0
	-1 --base
	-2 --ours
	-3 --theirs`},
	// git-blame(1).
	"blame": {man: "git-blame(1)", abbrev: true, opts: `
	-b
	--root
	--show-stats
	-L =
	-l
	-t
	-S =R
	--reverse
	--first-parent
	-p --porcelain
	--line-porcelain
	--incremental
	--encoding =
	--contents =R
	--date =
	--progress
	--no-progress
	-M ?
	-C ?
	--ignore-rev =
	--ignore-revs-file =R
	--color-lines
	--color-by-age
	-c
	--score-debug
	-f --show-name
	-n --show-number
	-s
	-e --show-email
	-w
	--abbrev ?`},
	// git-rev-parse(1).
	"rev-parse": {man: "git-rev-parse(1)", opts: `
	--sq-quote
	--keep-dashdash
	--stop-at-non-option
	--stuck-long
	--revs-only
	--no-revs
	--flags
	--no-flags
	--default =
	--prefix =
	--verify
	-q --quiet
	--sq
	--short ?
	--not
	--abbrev-ref ?
	--symbolic
	--symbolic-full-name
	--output-object-format =
	--all
	--branches --tags --remotes ?
	--glob --exclude --exclude-hidden --disambiguate =
	--local-env-vars
	--path-format =
	--git-dir
	--git-common-dir
	--resolve-git-dir =R
	--git-path =
	--show-toplevel
	--show-superproject-working-tree
	--shared-index-path
	--absolute-git-dir
	--is-inside-git-dir
	--is-inside-work-tree
	--is-bare-repository
	--is-shallow-repository
	--show-cdup
	--show-prefix
	--show-object-format ?
	--show-ref-format
	--since --after --until --before =`},
	// git-rev-list(1).
	"rev-list": {man: "git-rev-list(1)", abbrev: true, num: true, opts: gitRevOpts + `
	--count
	--objects
	--objects-edge
	--in-commit-order
	--unpacked
	--object-names
	--no-object-names
	--timestamp
	--header
	--no-commit-header
	--commit-header
	--disk-usage ?
	--quiet
	--filter =
	--missing =
	--bisect-vars
	--bisect-all`},
	// git-ls-files(1).
	"ls-files": {man: "git-ls-files(1)", abbrev: true, opts: `
	-c --cached
	-d --deleted
	-m --modified
	-o --others
	-i --ignored
	-s --stage
	-u --unmerged
	-k --killed
	--directory
	--no-empty-directory
	--eol
	--deduplicate
	-x --exclude =
	-X --exclude-from =R
	--exclude-per-directory =
	--exclude-standard
	--error-unmatch
	--with-tree =
	-t
	-v
	-f
	--full-name
	--recurse-submodules
	--abbrev ?
	--debug
	--format =
	-z
	--sparse`},
	// git-ls-tree(1).
	"ls-tree": {man: "git-ls-tree(1)", abbrev: true, opts: `
	-d
	-r
	-t
	-l --long
	-z
	--name-only --name-status
	--object-only
	--full-name
	--full-tree
	--abbrev ?
	--format =`},
	// git-cat-file(1); --textconv and --filters run configured programs.
	"cat-file": {man: "git-cat-file(1)", abbrev: true, opts: `
	-t
	-s
	-e
	-p
	--mailmap --use-mailmap
	--no-mailmap --no-use-mailmap
	--path =
	--batch --batch-check --batch-command ?
	--batch-all-objects
	--buffer
	--unordered
	--follow-symlinks
	-Z
	-z
	--allow-unknown-type
	--textconv !X
	--filters !X`},
	// git-grep(1); -O runs a pager on the matching files; --untracked and --no-index search
	// files git does not track.
	"grep": {man: "git-grep(1)", abbrev: true, num: true, opts: `
	--cached
	--untracked
	--no-index
	--no-exclude-standard
	--exclude-standard
	--recurse-submodules
	-a --text
	--no-textconv
	-i --ignore-case
	-I
	--max-depth =
	-r --recursive
	--no-recursive
	-w --word-regexp
	-v --invert-match
	-h
	-H
	--full-name
	-E --extended-regexp
	-G --basic-regexp
	-P --perl-regexp
	-F --fixed-strings
	-n --line-number
	--column
	-l --files-with-matches --name-only
	-L --files-without-match
	-z --null
	-o --only-matching
	-c --count
	--color ?
	--no-color
	--break
	--heading
	-p --show-function
	-C --context =
	-A --after-context =
	-B --before-context =
	-W --function-context
	-m --max-count =
	--threads =
	-f =R
	-e =
	--and --or --not
	--all-match
	-q --quiet
	--textconv !X
	-O --open-files-in-pager ?X`},
	// git-show-ref(1).
	"show-ref": {man: "git-show-ref(1)", abbrev: true, opts: `
	--head
	--heads --branches
	--tags
	-d --dereference
	-s --hash ?
	--abbrev ?
	--verify
	--exists
	-q --quiet
	--exclude-existing ?`},
	// git-for-each-ref(1).
	"for-each-ref": {man: "git-for-each-ref(1)", abbrev: true, opts: `
	--count =
	-s --shell
	-p --perl
	--python
	--tcl
	--sort =
	--format =
	--color ?
	--points-at =
	--merged --no-merged --contains --no-contains ?
	--ignore-case
	--omit-empty
	--exclude =
	--include-root-refs
	--stdin`},
	// git-describe(1).
	"describe": {man: "git-describe(1)", abbrev: true, opts: `
	--dirty --broken ?
	--all
	--tags
	--contains
	--abbrev ?
	--candidates =
	--exact-match
	--debug
	--long
	--match --exclude =
	--always
	--first-parent`},
	// git-shortlog(1).
	"shortlog": {man: "git-shortlog(1)", abbrev: true, opts: `
	-n --numbered
	-s --summary
	-e --email
	-c --committer
	--format ?
	--group =
	--date =
	-w ?
	--all
	--no-merges
	--merges
	--first-parent
	--since --after --until --before --author --grep =`},
	// git-merge-base(1).
	"merge-base": {man: "git-merge-base(1)", abbrev: true, opts: `
	-a --all
	--octopus
	--independent
	--is-ancestor
	--fork-point`},
	// git-name-rev(1).
	"name-rev": {man: "git-name-rev(1)", abbrev: true, opts: `
	--tags
	--refs --exclude =
	--all
	--annotate-stdin
	--name-only
	--no-undefined
	--always`},
	// git-check-ignore(1).
	"check-ignore": {man: "git-check-ignore(1)", abbrev: true, opts: `
	-q --quiet
	-v --verbose
	--stdin
	-z
	-n --non-matching
	--no-index`},
	// git-check-attr(1).
	"check-attr": {man: "git-check-attr(1)", abbrev: true, opts: `
	-a --all
	--cached
	--stdin
	-z
	--source =`},
	// git-count-objects(1).
	"count-objects": {man: "git-count-objects(1)", abbrev: true, opts: `
	-v --verbose
	-H --human-readable`},
	// git-version(1).
	"version": {man: "git-version(1)", opts: `
	--build-options`},
	// git-var(1).
	"var": {man: "git-var(1)", opts: `
	-l`},
	// git-cherry(1).
	"cherry": {man: "git-cherry(1)", abbrev: true, opts: `
	-v
	--abbrev ?`},
	// git-show-branch(1).
	"show-branch": {man: "git-show-branch(1)", abbrev: true, opts: `
	-r --remotes
	-a --all
	--current
	--topo-order
	--date-order
	--sparse
	--more =
	--list
	--merge-base
	--independent
	--no-name
	--sha1-name
	--topics
	-g --reflog ?
	--color ?
	--no-color`},
	// git-range-diff(1).
	"range-diff": {man: "git-range-diff(1)", abbrev: true, opts: gitDiffOpts + `
	--creation-factor =
	--no-dual-color
	--left-only
	--right-only
	--no-notes
	--notes ?`},
	// git-help(1): -w opens a browser, -i and -m run info and man.
	"help": {man: "git-help(1)", abbrev: true, opts: `
	-a --all
	--verbose
	-g --guides
	-c --config
	--no-external-commands
	--no-aliases
	-i --info !X
	-m --man !X
	-w --web !X`},
	// git-branch(1): listing is read-only; the mode options change branches.
	"branch": {man: "git-branch(1)", abbrev: true, opts: `
	-a --all
	-r --remotes
	-l --list
	-v --verbose
	-q --quiet
	--color ?
	--no-color
	--column ?
	--no-column
	--sort =
	--contains --no-contains --merged --no-merged ?
	--points-at =
	--format =
	--show-current
	--abbrev ?
	--no-abbrev
	-i --ignore-case
	--omit-empty
	-d --delete !M
	-D !M
	-m --move !M
	-M !M
	-c --copy !M
	-C !M
	-f --force !M
	-t --track ?M
	--no-track !M
	-u --set-upstream-to =M
	--unset-upstream !M
	--create-reflog !M
	--recurse-submodules !M
	--edit-description !X`},
	// git-tag(1): listing and verifying are read-only.
	"tag": {man: "git-tag(1)", abbrev: true, num: false, opts: `
	-l --list
	-n ?
	--sort =
	--color ?
	-i --ignore-case
	--omit-empty
	--column ?
	--no-column
	--contains --no-contains --merged --no-merged ?
	--points-at =
	--format =
	-v --verify !X
	-d --delete !M
	-f --force !M
	-a --annotate !M
	-s --sign !X
	-u --local-user =X
	-m --message =M
	-F --file =R
	-e --edit !X
	--no-sign !M
	--cleanup =M
	--create-reflog !M`},
	// git-remote(1): the subcommand decides.
	"remote": {man: "git-remote(1)", abbrev: true, opts: `
	-v --verbose
	-t =M
	-m =M
	-f !M
	--tags --no-tags !M
	--mirror ?M
	--push !M
	--add !M
	--delete !M
	--all !M
	-n !M
	--dry-run !M
	--prune !M`},
	// git-config(1): reading is read-only; any write can make git run programs.
	"config": {man: "git-config(1)", abbrev: true, opts: `
	--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool !M
	-l --list !M
	--show-origin
	--show-scope
	--name-only
	-z --null
	--includes
	--no-includes
	--default =
	--type =
	--bool --int --bool-or-int --path --expiry-date
	--fixed-value
	--global !M
	--system !M
	--local !M
	--worktree !M
	-f --file =M
	--blob =
	--add --replace-all --unset --unset-all --rename-section --remove-section !M
	-e --edit !X`},
	// git-stash(1): list and show read; the rest change the stash and the working tree.
	"stash": {man: "git-stash(1)", abbrev: true, opts: `
	-p --patch !M
	--stat ?
	--name-only
	--name-status
	--numstat
	--shortstat
	--color ?
	--no-color
	-m --message =M
	-k --keep-index --no-keep-index !M
	-u --include-untracked --no-include-untracked !M
	-a --all !M
	-q --quiet
	--index !M
	-S --staged !M
	--pathspec-from-file =R
	--pathspec-file-nul
	--only-untracked`},
	// git-reflog(1).
	"reflog": {man: "git-reflog(1)", abbrev: true, num: true, opts: gitRevOpts + `
	--expire --expire-unreachable ?M
	--rewrite --updateref --stale-fix --verbose --dry-run !M`},
	// git-worktree(1).
	"worktree": {man: "git-worktree(1)", abbrev: true, opts: `
	--porcelain
	-v --verbose
	-z
	--expire =
	-f --force !M
	-b -B =M
	-d --detach !M
	--checkout --no-checkout !M
	--lock !M
	--reason =M
	--orphan !M
	-q --quiet
	--track --no-track !M
	--guess-remote --no-guess-remote !M
	-n --dry-run`},
	// git-fsck(1): --lost-found writes dangling objects into .git/lost-found (see gitReading).
	"fsck": {man: "git-fsck(1)", abbrev: true, opts: `
	--unreachable
	--dangling --no-dangling
	--root
	--tags
	--cache
	--no-reflogs
	--full --no-full
	--connectivity-only
	--strict
	-v --verbose
	--lost-found !M
	--name-objects
	--progress --no-progress`},
	// git-check-ref-format(1).
	"check-ref-format": {man: "git-check-ref-format(1)", abbrev: true, opts: `
	--normalize
	--allow-onelevel --no-allow-onelevel
	--refspec-pattern
	--branch`},
	// git-get-tar-commit-id(1): no options.
	"get-tar-commit-id": {man: "git-get-tar-commit-id(1)", opts: ``},
	// git-ls-remote(1): it reaches the remote; --upload-pack runs a program.
	"ls-remote": {man: "git-ls-remote(1)", abbrev: true, opts: `
	-h --heads -b --branches
	-t --tags
	--refs
	-q --quiet
	--exit-code
	--get-url
	--sort =
	--symref
	-o --server-option =
	--upload-pack --exec =X`},
	// git-submodule(1).
	"submodule": {man: "git-submodule(1)", abbrev: true, opts: `
	-q --quiet
	--cached
	--recursive
	-n --summary-limit =
	--files`},
}

// gitReadOnly are the subcommands that only read (with the options of their table).
var gitReadOnly = map[string]bool{
	"status": true, "log": true, "show": true, "diff": true, "diff-tree": true, "diff-files": true, "diff-index": true,
	"blame": true, "annotate": true, "rev-parse": true, "rev-list": true, "ls-files": true, "ls-tree": true,
	"cat-file": true, "grep": true, "show-ref": true, "for-each-ref": true, "describe": true, "shortlog": true,
	"merge-base": true, "name-rev": true, "check-ignore": true, "check-attr": true, "count-objects": true,
	"version": true, "var": true, "cherry": true, "show-branch": true, "range-diff": true, "whatchanged": true,
	"help": true, "check-ref-format": true, "get-tar-commit-id": true,
}

func init() {
	// Subcommands that read the same way as another.
	for alias, to := range map[string]string{"whatchanged": "log", "annotate": "blame", "diff-files": "diff-tree", "diff-index": "diff-tree"} {
		gitSubSpecs[alias] = gitSubSpecs[to]
	}
}

// The options of the subcommands that change the repository. They are never read-only; the
// tables still say which options write elsewhere, read files or run programs, and an unknown
// option makes the command opaque.
var gitWriteSpecs = map[string]*spec{
	// git-add(1).
	"add": {man: "git-add(1)", abbrev: true, opts: `
	-n --dry-run
	-v --verbose
	-f --force
	--sparse
	-i --interactive !X
	-p --patch !X
	-e --edit !X
	-u --update
	-A --all --no-ignore-removal
	--no-all --ignore-removal
	-N --intent-to-add
	--refresh
	--ignore-errors
	--ignore-missing
	--no-warn-embedded-repo
	--renormalize
	--chmod =
	--pathspec-from-file =R
	--pathspec-file-nul`},
	// git-commit(1).
	"commit": {man: "git-commit(1)", abbrev: true, opts: `
	-a --all
	-p --patch !X
	-C --reuse-message =
	-c --reedit-message =X
	--fixup --squash =
	--reset-author
	--short
	--branch
	--porcelain
	--long
	-z --null
	-F --file =R
	--author --date =
	-m --message =
	-t --template =R
	-s --signoff --no-signoff
	--trailer =
	-n --no-verify --verify
	--allow-empty
	--allow-empty-message
	--cleanup =
	-e --edit !X
	--no-edit
	--amend
	--no-post-rewrite
	-i --include
	-o --only
	--pathspec-from-file =R
	--pathspec-file-nul
	-u --untracked-files ?
	-v --verbose
	-q --quiet
	--dry-run
	--status
	--no-status
	-S --gpg-sign ?X
	--no-gpg-sign`},
	// git-checkout(1).
	"checkout": {man: "git-checkout(1)", abbrev: true, opts: `
	-q --quiet
	--progress --no-progress
	-f --force !M
	--ours --theirs !M
	-b -B =
	-t --track ?
	--no-track
	--guess --no-guess
	-l
	-d --detach
	--orphan =
	--ignore-skip-worktree-bits
	-m --merge
	--conflict =
	-p --patch !X
	--ignore-other-worktrees
	--overwrite-ignore --no-overwrite-ignore
	--recurse-submodules --no-recurse-submodules
	--overlay --no-overlay
	--pathspec-from-file =R
	--pathspec-file-nul`},
	// git-switch(1).
	"switch": {man: "git-switch(1)", abbrev: true, opts: `
	-c --create =
	-C --force-create =M
	-d --detach
	--guess --no-guess
	-f --force --discard-changes !M
	-m --merge
	--conflict =
	-q --quiet
	--progress --no-progress
	-t --track ?
	--no-track
	--orphan =
	--ignore-other-worktrees
	--recurse-submodules --no-recurse-submodules`},
	// git-restore(1).
	"restore": {man: "git-restore(1)", abbrev: true, opts: `
	-s --source =
	-p --patch !X
	-W --worktree !M
	-S --staged !M
	-q --quiet
	--progress --no-progress
	--ours --theirs
	-m --merge
	--conflict =
	--ignore-unmerged
	--ignore-skip-worktree-bits
	--recurse-submodules --no-recurse-submodules
	--overlay --no-overlay
	--pathspec-from-file =R
	--pathspec-file-nul`},
	// git-reset(1).
	"reset": {man: "git-reset(1)", abbrev: true, opts: `
	--soft
	--mixed
	-N
	--hard !M
	--merge !M
	--keep !M
	--recurse-submodules --no-recurse-submodules
	-p --patch !X
	-q --quiet
	--refresh --no-refresh
	--pathspec-from-file =R
	--pathspec-file-nul`},
	// git-rm(1).
	"rm": {man: "git-rm(1)", abbrev: true, opts: `
	-f --force
	-n --dry-run
	-r
	--cached !M
	--ignore-unmatch
	--sparse
	-q --quiet
	--pathspec-from-file =R
	--pathspec-file-nul`},
	// git-mv(1).
	"mv": {man: "git-mv(1)", abbrev: true, opts: `
	-f --force
	-k
	-n --dry-run
	-v --verbose`},
	// git-clean(1).
	"clean": {man: "git-clean(1)", abbrev: true, opts: `
	-d
	-f --force
	-i --interactive !X
	-n --dry-run !M
	-q --quiet
	-e --exclude =
	-x
	-X`},
	// git-fetch(1); --upload-pack runs a program.
	"fetch": {man: "git-fetch(1)", abbrev: true, opts: gitFetchOpts},
	// git-pull(1).
	"pull": {man: "git-pull(1)", abbrev: true, opts: gitFetchOpts + `
	-r --rebase ?
	--no-rebase
	--ff --no-ff --ff-only
	--commit --no-commit
	--edit --no-edit
	--squash --no-squash
	--stat --no-stat
	--verify --no-verify
	--autostash --no-autostash
	-s --strategy =
	-X --strategy-option =
	-S --gpg-sign ?X
	--no-gpg-sign
	--signoff --no-signoff
	--log ?
	--no-log`},
	// git-push(1); --receive-pack and --exec run a program.
	"push": {man: "git-push(1)", abbrev: true, opts: `
	--all --branches
	--prune !M
	--mirror !M
	-n --dry-run
	--porcelain
	-d --delete !M
	--tags
	--follow-tags --no-follow-tags
	--signed ?
	--no-signed
	--atomic --no-atomic
	-o --push-option =
	-f --force !M
	--force-with-lease ?M
	--no-force-with-lease
	--force-if-includes !M
	--no-force-if-includes
	--repo =
	-u --set-upstream
	--thin --no-thin
	-q --quiet
	-v --verbose
	--progress --no-progress
	--recurse-submodules =
	--no-recurse-submodules
	--verify --no-verify
	-4 --ipv4
	-6 --ipv6
	--receive-pack --exec =X`},
	// git-clone(1); --template and -c can install hooks, --upload-pack runs a program.
	"clone": {man: "git-clone(1)", abbrev: true, opts: `
	-l --local
	--no-hardlinks
	-s --shared
	--reference --reference-if-able =R
	--dissociate
	-q --quiet
	-v --verbose
	--progress --no-progress
	--server-option =
	-n --no-checkout
	--reject-shallow --no-reject-shallow
	--bare
	--sparse
	--filter =
	--also-filter-submodules
	--mirror
	-o --origin =
	-b --branch =
	--revision =
	--depth --shallow-since --shallow-exclude =
	--single-branch --no-single-branch
	--no-tags --tags
	--recurse-submodules --recursive ?
	--shallow-submodules --no-shallow-submodules
	--remote-submodules --no-remote-submodules
	-j --jobs =
	--separate-git-dir =W
	--bundle-uri =N
	--ref-format =
	-u --upload-pack =X
	--template =X
	-c --config =X`},
	// git-merge(1).
	"merge": {man: "git-merge(1)", abbrev: true, opts: `
	--commit --no-commit
	--edit -e --no-edit
	--cleanup =
	--ff --no-ff --ff-only
	-S --gpg-sign ?X
	--no-gpg-sign
	--log ?
	--no-log
	--signoff --no-signoff
	--stat -n --no-stat
	--squash --no-squash
	--verify --no-verify
	-s --strategy =
	-X --strategy-option =
	--verify-signatures --no-verify-signatures
	-q --quiet
	-v --verbose
	--progress --no-progress
	--autostash --no-autostash
	--allow-unrelated-histories
	-m =
	--into-name =
	-F --file =R
	--rerere-autoupdate --no-rerere-autoupdate
	--overwrite-ignore --no-overwrite-ignore
	--abort
	--quit
	--continue`},
	// git-rebase(1); --exec runs a command (analysed), -i runs an editor and the todo list.
	"rebase": {man: "git-rebase(1)", abbrev: true, opts: `
	--onto =
	--keep-base
	--continue
	--abort
	--quit
	--skip
	--edit-todo !X
	--show-current-patch
	-m --merge
	--apply
	--empty =
	--no-keep-empty --keep-empty
	--reapply-cherry-picks --no-reapply-cherry-picks
	--allow-empty-message
	-s --strategy =
	-X --strategy-option =
	--rerere-autoupdate --no-rerere-autoupdate
	-S --gpg-sign ?X
	--no-gpg-sign
	-q --quiet
	-v --verbose
	--stat -n --no-stat
	--no-verify --verify
	-C =
	--ignore-whitespace
	--whitespace =
	--committer-date-is-author-date
	--ignore-date --reset-author-date
	--signoff
	-i --interactive !M
	-r --rebase-merges ?
	--no-rebase-merges
	-x --exec =M
	--root
	--autosquash --no-autosquash
	--autostash --no-autostash
	--reschedule-failed-exec --no-reschedule-failed-exec
	--update-refs --no-update-refs
	--fork-point --no-fork-point`},
	// git-init(1); --template can install hooks.
	"init": {man: "git-init(1)", abbrev: true, opts: `
	-q --quiet
	--bare
	--object-format --ref-format =
	--separate-git-dir =W
	-b --initial-branch =
	--shared ?
	--template =X`},
	// git-archive(1); --remote reaches a host, --exec runs a program there.
	"archive": {man: "git-archive(1)", abbrev: true, opts: `
	--format =
	-l --list
	-v --verbose
	--prefix =
	-o --output =W
	--add-file =R
	--add-virtual-file =
	--worktree-attributes
	--mtime =
	-0 -1 -2 -3 -4 -5 -6 -7 -8 -9
	--remote =N
	--exec =X`},
}

// git-fetch(1) OPTIONS, shared with git-pull(1).
const gitFetchOpts = `
	--all --no-all
	-a --append
	--atomic
	--depth --deepen --shallow-since --shallow-exclude =
	--unshallow
	--update-shallow
	--negotiation-tip =
	--negotiate-only
	--dry-run
	--porcelain
	--write-fetch-head --no-write-fetch-head
	-f --force
	-k --keep
	--multiple
	--auto-maintenance --no-auto-maintenance --auto-gc --no-auto-gc
	--write-commit-graph --no-write-commit-graph
	--prefetch
	-p --prune
	-P --prune-tags
	-n --no-tags
	--refetch
	--refmap =
	-t --tags
	--recurse-submodules ?
	--no-recurse-submodules
	-j --jobs =
	--set-upstream
	--filter =
	-q --quiet
	-v --verbose
	--progress --no-progress
	-o --server-option =
	--show-forced-updates --no-show-forced-updates
	-4 --ipv4
	-6 --ipv6
	--stdin
	--upload-pack =X`
