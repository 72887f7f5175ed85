package shell

// The option tables of the programs the analysis may call read-only. Each is read-only only
// with the options listed here; an option that writes, runs a program or reaches the network
// says so, and an option that is not listed makes the command exec and opaque. When a manual
// leaves doubt about an option, it is left out. Where BSD and GNU disagree on whether an option
// takes a value, the table takes the reading that records more paths.

// cat(1), GNU coreutils 9.4 and BSD, OPTIONS.
var catSpec = &spec{man: "cat(1)", abbrev: true, opts: `
	-A --show-all
	-b --number-nonblank
	-e
	-E --show-ends
	-n --number
	-s --squeeze-blank
	-t
	-T --show-tabs
	-u
	-v --show-nonprinting
	-l
	--help
	--version`}

// tac(1), GNU coreutils 9.4, OPTIONS.
var tacSpec = &spec{man: "tac(1)", abbrev: true, opts: `
	-b --before
	-r --regex
	-s --separator =
	--help
	--version`}

// head(1), GNU coreutils 9.4, OPTIONS (and the obsolete -NUM).
var headSpec = &spec{man: "head(1)", abbrev: true, num: true, opts: `
	-c --bytes =
	-n --lines =
	-q --quiet --silent
	-v --verbose
	-z --zero-terminated
	--help
	--version`}

// tail(1), GNU coreutils 9.4, OPTIONS (and the obsolete -NUM).
var tailSpec = &spec{man: "tail(1)", abbrev: true, num: true, opts: `
	-c --bytes =
	-f
	--follow ?
	-F
	-n --lines =
	--max-unchanged-stats =
	--pid =
	-q --quiet --silent
	--retry
	-s --sleep-interval =
	-v --verbose
	-z --zero-terminated
	-r
	--help
	--version`}

// wc(1), GNU coreutils 9.4, OPTIONS.
var wcSpec = &spec{man: "wc(1)", abbrev: true, opts: `
	-c --bytes
	-m --chars
	-l --lines
	--files0-from =R
	-L --max-line-length
	-w --words
	--total =
	--help
	--version`}

// nl(1), GNU coreutils 9.4, OPTIONS.
var nlSpec = &spec{man: "nl(1)", abbrev: true, opts: `
	-b --body-numbering =
	-d --section-delimiter =
	-f --footer-numbering =
	-h --header-numbering =
	-i --line-increment =
	-l --join-blank-lines =
	-n --number-format =
	-p --no-renumber
	-s --number-separator =
	-v --starting-line-number =
	-w --number-width =
	--help
	--version`}

// ls(1), GNU coreutils 9.4 and BSD; options whose meaning differs between them (-D, -I, -T,
// -w) are left out.
var lsSpec = &spec{man: "ls(1)", abbrev: true, opts: `
	-a --all
	-A --almost-all
	--author
	-b --escape
	--block-size =
	-B --ignore-backups
	-c
	-C
	--color --colour ?
	-d --directory
	-f
	-F --classify ?
	--file-type
	--format =
	--full-time
	-g
	--group-directories-first
	-G --no-group
	-h --human-readable
	--si
	-H --dereference-command-line
	--dereference-command-line-symlink-to-dir
	--hide =
	--hyperlink ?
	--indicator-style =
	-i --inode
	--ignore =
	-k --kibibytes
	-l
	-L --dereference
	-m
	-n --numeric-uid-gid
	-N --literal
	-o
	-p
	-q --hide-control-chars
	--show-control-chars
	-Q --quote-name
	--quoting-style =
	-r --reverse
	-R --recursive
	-s --size
	-S
	--sort =
	--time =
	--time-style =
	--tabsize =
	--width =
	-t
	-u
	-U
	-v
	-x
	-X
	-Z --context
	--zero
	-1
	-@
	-e
	-O
	-P
	-y
	--help
	--version`}

// tree(1), tree 2.1, OPTIONS; -o writes the listing to a file, -R (with -H) an HTML page
// (00Tree.html) into every directory it lists.
var treeSpec = &spec{man: "tree(1)", opts: `
	-a
	-d
	-l
	-f
	-x
	-L =
	-R !O
	-P =
	-I =
	--gitignore
	--ignore-case
	--matchdirs
	--metafirst
	--prune
	--info
	--infofile =R
	--noreport
	--charset =
	--filelimit =
	--timefmt =
	-o =W
	-q
	-N
	-Q
	-p
	-u
	-g
	-s
	-h
	--si
	--du
	-D
	-F
	--inodes
	--device
	-v
	-t
	-c
	-U
	-r
	--dirsfirst
	--filesfirst
	--sort =
	-i
	-A
	-S
	-n
	-C
	-X
	-J
	-H =
	-T =
	--nolinks
	--hintro =R
	--houtro =R
	--fromfile !M
	--help
	--version`}

// du(1), GNU coreutils 9.4 and BSD, OPTIONS.
var duSpec = &spec{man: "du(1)", abbrev: true, opts: `
	-0 --null
	-a --all
	--apparent-size
	-B --block-size =
	-b --bytes
	-c --total
	-D --dereference-args
	-d --max-depth =
	--files0-from =R
	-H
	-h --human-readable
	--inodes
	-k
	-L --dereference
	-l --count-links
	-m
	-P --no-dereference
	-S --separate-dirs
	--si
	-s --summarize
	-t --threshold =
	--time ?
	--time-style =
	-X --exclude-from =R
	--exclude =
	-x --one-file-system
	-A
	-g
	-I =
	-n
	-r
	--help
	--version`}

// df(1), GNU coreutils 9.4, OPTIONS.
var dfSpec = &spec{man: "df(1)", abbrev: true, opts: `
	-a --all
	-B --block-size =
	-h --human-readable
	-H --si
	-i --inodes
	-k
	-l --local
	--no-sync
	--output ?
	-P --portability
	--sync
	--total
	-t --type =
	-T --print-type
	-x --exclude-type =
	-v
	-g
	-m
	--help
	--version`}

// stat(1), GNU coreutils 9.4 and BSD: GNU's -f and -t take no value, BSD's do; as flags the
// next word is recorded as a path.
var statSpec = &spec{man: "stat(1)", abbrev: true, opts: `
	-L --dereference
	-f --file-system
	--cached =
	-c --format =
	--printf =
	-t --terse
	-F
	-l
	-n
	-q
	-r
	-s
	-x
	--help
	--version`}

// file(1), file 5.45, OPTIONS; -z and -Z run decompressors, -C and -p write.
var fileSpec = &spec{man: "file(1)", abbrev: true, opts: `
	-b --brief
	-c --checking-printout
	-d
	-E
	-e --exclude =
	--exclude-quiet =
	--extension
	-F --separator =
	-f --files-from =R
	-h --no-dereference
	-i --mime
	--mime-type
	--mime-encoding
	-k --keep-going
	-l --list
	-L --dereference
	-m --magic-file =R
	-N --no-pad
	-n --no-buffer
	-0 --print0
	-P --parameter =
	-r --raw
	-s --special-files
	-z --uncompress !X
	-Z --uncompress-noreport !X
	-v --version
	--help`}

// sort(1), GNU coreutils 9.4, OPTIONS; -o writes, -T writes temporary files, a compress program
// runs.
var sortSpec = &spec{man: "sort(1)", abbrev: true, opts: `
	-b --ignore-leading-blanks
	-d --dictionary-order
	-f --ignore-case
	-g --general-numeric-sort
	-i --ignore-nonprinting
	-M --month-sort
	-h --human-numeric-sort
	-n --numeric-sort
	-R --random-sort
	--random-source =R
	-r --reverse
	--sort =
	-V --version-sort
	--batch-size =
	-c
	--check ?
	-C
	--compress-program =X
	--debug
	--files0-from =R
	-k --key =
	-m --merge
	-o --output =W
	-s --stable
	-S --buffer-size =
	-t --field-separator =
	-T --temporary-directory =W
	--parallel =
	-u --unique
	-z --zero-terminated
	--help
	--version`}

// uniq(1), GNU coreutils 9.4, OPTIONS; a second operand is written.
var uniqSpec = &spec{man: "uniq(1)", abbrev: true, opts: `
	-c --count
	-d --repeated
	-D
	--all-repeated ?
	-f --skip-fields =
	--group ?
	-i --ignore-case
	-s --skip-chars =
	-u --unique
	-z --zero-terminated
	-w --check-chars =
	--help
	--version`}

// cut(1), GNU coreutils 9.4, OPTIONS.
var cutSpec = &spec{man: "cut(1)", abbrev: true, opts: `
	-b --bytes =
	-c --characters =
	-d --delimiter =
	-f --fields =
	-n
	--complement
	-s --only-delimited
	--output-delimiter =
	-z --zero-terminated
	-w
	--help
	--version`}

// paste(1), GNU coreutils 9.4, OPTIONS.
var pasteSpec = &spec{man: "paste(1)", abbrev: true, opts: `
	-d --delimiters =
	-s --serial
	-z --zero-terminated
	--help
	--version`}

// join(1), GNU coreutils 9.4, OPTIONS.
var joinSpec = &spec{man: "join(1)", abbrev: true, opts: `
	-a =
	-e =
	-i --ignore-case
	-j =
	-o =
	-t =
	-v =
	-1 =
	-2 =
	--check-order
	--nocheck-order
	--header
	-z --zero-terminated
	--help
	--version`}

// comm(1), GNU coreutils 9.4, OPTIONS.
var commSpec = &spec{man: "comm(1)", abbrev: true, opts: `
	-1
	-2
	-3
	--check-order
	--nocheck-order
	--output-delimiter =
	--total
	-z --zero-terminated
	--help
	--version`}

// tr(1), GNU coreutils 9.4, OPTIONS; the operands are character sets.
var trSpec = &spec{man: "tr(1)", abbrev: true, opts: `
	-c -C --complement
	-d --delete
	-s --squeeze-repeats
	-t --truncate-set1
	--help
	--version`}

// fold(1), GNU coreutils 9.4, OPTIONS.
var foldSpec = &spec{man: "fold(1)", abbrev: true, num: true, opts: `
	-b --bytes
	-s --spaces
	-w --width =
	--help
	--version`}

// fmt(1), GNU coreutils 9.4, OPTIONS.
var fmtSpec = &spec{man: "fmt(1)", abbrev: true, num: true, opts: `
	-c --crown-margin
	-p --prefix =
	-s --split-only
	-t --tagged-paragraph
	-u --uniform-spacing
	-w --width =
	-g --goal =
	--help
	--version`}

// column(1), util-linux 2.39, OPTIONS.
var columnSpec = &spec{man: "column(1)", abbrev: true, opts: `
	-c --output-width --columns =
	-d --table-noheadings
	-e --table-header-repeat
	-E --table-noextreme =
	-H --table-hide =
	-J --json
	-l --table-columns-limit =
	-L --keep-empty-lines
	-N --table-columns =
	-n --table-name =
	-O --table-order =
	-o --output-separator =
	-R --table-right =
	-r --tree =
	-s --separator =
	-T --table-truncate =
	-t --table
	-W --table-wrap =
	-x --fillrows
	--help
	--version`}

// expand(1) and unexpand(1), GNU coreutils 9.4, OPTIONS.
var expandSpec = &spec{man: "expand(1)", abbrev: true, num: true, opts: `
	-i --initial
	-t --tabs =
	-a --all
	--first-only
	--help
	--version`}

// rev(1), util-linux 2.39, OPTIONS.
var revSpec = &spec{man: "rev(1)", opts: `
	-0 --zero
	--help
	--version`}

// strings(1), GNU binutils 2.41, OPTIONS: "@FILE" reads more options from FILE.
var stringsSpec = &spec{man: "strings(1)", abbrev: true, num: true, atFiles: true, opts: `
	-a --all
	-d --data
	-f --print-file-name
	-n --bytes =
	-t --radix =
	-o
	-e --encoding =
	-T --target =
	-w --include-all-whitespace
	-s --output-separator =
	-U --unicode =
	--help
	-v -V --version`}

// od(1), GNU coreutils 9.4, OPTIONS.
var odSpec = &spec{man: "od(1)", abbrev: true, opts: `
	-A --address-radix =
	--endian =
	-j --skip-bytes =
	-N --read-bytes =
	-S --strings ?
	-t --format =
	-v --output-duplicates
	-w --width ?
	--traditional
	-a
	-b
	-c
	-d
	-f
	-i
	-l
	-o
	-s
	-x
	--help
	--version`}

// hexdump(1), util-linux 2.39, OPTIONS.
var hexdumpSpec = &spec{man: "hexdump(1)", abbrev: true, opts: `
	-b --one-byte-octal
	-X --one-byte-hex
	-c --one-byte-char
	-C --canonical
	-d --two-bytes-decimal
	-o --two-bytes-octal
	-x --two-bytes-hex
	-e --format =
	-f --format-file =R
	-L --color ?
	-n --length =
	-s --skip =
	-v --no-squeezing
	--help
	-V --version`}

// xxd(1), vim 9.1: options take one dash and end at the first operand (xxd reads its arguments
// in order: "xxd a.bin -i" writes the file -i); a second operand is written (see xxdOperands).
var xxdSpec = &spec{man: "xxd(1)", oneDash: true, posix: true, opts: `
	-a -autoskip
	-b -bits
	-C -capitalize
	-c -cols =
	-E -EBCDIC
	-e
	-g -groupsize =
	-h -help
	-i -include
	-l -len =
	-n -name =
	-o -offset =
	-p -ps -postscript -plain
	-r -revert
	-R =
	-d
	-s -seek =
	-u
	-v -version`}

// base64(1) and base32(1), GNU coreutils 9.4 and BSD: BSD's -i and -o name the input and the
// output file; GNU's -i takes no value (the next word is then recorded as a path).
var base64Spec = &spec{man: "base64(1)", abbrev: true, opts: `
	-d -D --decode
	-i --ignore-garbage
	--input =R
	-o --output =W
	-w --wrap =
	-b --break =
	--help
	--version`}

// md5sum(1), sha1sum(1), sha256sum(1) and the like, GNU coreutils 9.4: --check reads the files
// named inside the checksum file.
var sumSpec = &spec{man: "sha256sum(1)", abbrev: true, opts: `
	-b --binary
	-c --check !O
	--tag
	-t --text
	-z --zero
	--ignore-missing
	--quiet
	--status
	--strict
	-w --warn
	-l --length =
	--help
	--version`}

// cksum(1), GNU coreutils 9.4, OPTIONS; sum(1) for -r and -s.
var cksumSpec = &spec{man: "cksum(1)", abbrev: true, opts: `
	-a --algorithm =
	--base64
	-c --check !O
	-l --length =
	--raw
	--tag
	--untagged
	-z --zero
	-r
	-s --sysv
	--help
	--version`}

// diff(1), GNU diffutils 3.10, OPTIONS (the -l pagination through pr is left out).
var diffSpec = &spec{man: "diff(1)", abbrev: true, num: true, opts: `
	--normal
	-q --brief
	-s --report-identical-files
	-c
	-C =
	--context ?
	-u
	-U =
	--unified ?
	-e --ed
	-n --rcs
	-y --side-by-side
	-W --width =
	--left-column
	--suppress-common-lines
	-p --show-c-function
	-F --show-function-line =
	--label =
	-L =
	-t --expand-tabs
	-T --initial-tab
	--tabsize =
	--suppress-blank-empty
	-r --recursive
	--no-dereference
	-N --new-file
	--unidirectional-new-file
	--ignore-file-name-case
	--no-ignore-file-name-case
	-x --exclude =
	-X --exclude-from =R
	-S --starting-file =
	--from-file =R
	--to-file =R
	-i --ignore-case
	-E --ignore-tab-expansion
	-Z --ignore-trailing-space
	-b --ignore-space-change
	-w --ignore-all-space
	-B --ignore-blank-lines
	-I --ignore-matching-lines =
	-a --text
	--strip-trailing-cr
	-D --ifdef =
	--old-group-format --new-group-format --unchanged-group-format --changed-group-format =
	--line-format --old-line-format --new-line-format --unchanged-line-format =
	-d --minimal
	--horizon-lines =
	--speed-large-files
	--color ?
	--palette =
	--binary
	--help
	-v --version`}

// cmp(1), GNU diffutils 3.10, OPTIONS.
var cmpSpec = &spec{man: "cmp(1)", abbrev: true, opts: `
	-b --print-bytes
	-i --ignore-initial =
	-l --verbose
	-n --bytes =
	-s --quiet --silent
	--help
	-v --version`}

// grep(1), GNU grep 3.11, OPTIONS; egrep, fgrep and zgrep take the same options.
var grepSpec = &spec{man: "grep(1)", abbrev: true, num: true, opts: `
	-E --extended-regexp
	-F --fixed-strings
	-G --basic-regexp
	-P --perl-regexp
	-e --regexp =
	-f --file =R
	-i -y --ignore-case
	--no-ignore-case
	-v --invert-match
	-w --word-regexp
	-x --line-regexp
	-c --count
	--color --colour ?
	-L --files-without-match
	-l --files-with-matches
	-m --max-count =
	-o --only-matching
	-q --quiet --silent
	-s --no-messages
	-b --byte-offset
	-H --with-filename
	-h --no-filename
	--label =
	-n --line-number
	-T --initial-tab
	-Z --null
	-A --after-context =
	-B --before-context =
	-C --context =
	--group-separator =
	--no-group-separator
	-a --text
	--binary-files =
	-D --devices =
	-d --directories =
	--exclude =
	--exclude-from =R
	--exclude-dir =
	-I
	--include =
	-r --recursive
	-R --dereference-recursive
	--line-buffered
	-U --binary
	-z --null-data
	--help
	-V --version`}

// rg(1), ripgrep 14.1, OPTIONS: --pre and --hostname-bin run programs, --search-zip runs
// decompressors; no abbreviations.
var rgSpec = &spec{man: "rg(1)", opts: `
	-e --regexp =
	-f --file =R
	-i --ignore-case
	-S --smart-case
	-s --case-sensitive
	-F --fixed-strings
	-w --word-regexp
	-x --line-regexp
	-v --invert-match
	-n --line-number
	-N --no-line-number
	-l --files-with-matches
	--files-without-match
	-c --count
	--count-matches
	-o --only-matching
	-A --after-context =
	-B --before-context =
	-C --context =
	-m --max-count =
	-d --max-depth --maxdepth =
	-g --glob =
	--iglob =
	--glob-case-insensitive
	-t --type =
	-T --type-not =
	--type-list
	--type-add =
	--type-clear =
	-u --unrestricted
	-. --hidden
	--no-hidden
	--no-ignore
	--no-ignore-vcs
	--no-ignore-dot
	--no-ignore-parent
	--no-ignore-global
	--no-ignore-exclude
	--no-ignore-files
	--no-require-git
	--ignore-file =R
	--ignore-file-case-insensitive
	-L --follow
	-j --threads =
	--files
	--json
	--color =
	--colors =
	-p --pretty
	--heading
	--no-heading
	-H --with-filename
	-I --no-filename
	--vimgrep
	--column
	--no-column
	-0 --null
	--trim
	-M --max-columns =
	--max-columns-preview
	--max-filesize =
	--sort =
	--sortr =
	--sort-files
	-U --multiline
	--multiline-dotall
	-P --pcre2
	--engine =
	-r --replace =
	-a --text
	--binary
	-q --quiet
	--stats
	--debug
	--trace
	--no-messages
	--no-config
	--passthru
	--line-buffered
	--block-buffered
	-b --byte-offset
	--crlf
	--null-data
	--one-file-system
	--field-match-separator =
	--field-context-separator =
	--context-separator =
	--no-context-separator
	--path-separator =
	-E --encoding =
	--no-encoding
	--mmap
	--no-mmap
	--no-unicode
	--include-zero
	--regex-size-limit =
	--dfa-size-limit =
	--no-search-zip
	--no-pre
	--pre-glob =
	-z --search-zip !X
	--pre =X
	--hostname-bin =X
	-h --help
	-V --version`}

// jq(1), jq 1.7, INVOKING JQ: --rawfile and --slurpfile read their second value; after --args
// and --jsonargs the operands are values, not files.
var jqSpec = &spec{man: "jq(1)", opts: `
	--seq
	--stream
	--stream-errors
	-s --slurp
	-R --raw-input
	-n --null-input
	-c --compact-output
	--tab
	--indent =
	-C --color-output
	-M --monochrome-output
	-b --binary
	-a --ascii-output
	--unbuffered
	-S --sort-keys
	-r --raw-output
	--raw-output0
	-j --join-output
	-f --from-file =R
	-L =R
	-e --exit-status
	--arg 2
	--argjson 2
	--slurpfile 2R
	--rawfile 2R
	--args !M
	--jsonargs !M
	-h --help
	-V --version
	--build-configuration`}

// yq(1), mikefarah yq 4: -i writes the files it reads.
var yqSpec = &spec{man: "yq(1)", opts: `
	-i --inplace !W
	-o --output-format =
	-p --input-format =
	-e --exit-status
	-P --prettyPrint
	-I --indent =
	-n --null-input
	-N --no-doc
	-C --colors
	-M --no-colors
	-r --unwrapScalar
	-0 --nul-output
	-s --split-exp =W
	--from-file =R
	--header-preprocess
	--no-header-preprocess
	-h --help
	-V --version`}

// which(1), GNU which 2.21 and debianutils.
var whichSpec = &spec{man: "which(1)", abbrev: true, opts: `
	-a --all
	-s
	-i --read-alias
	--skip-alias
	--read-functions
	--skip-functions
	--skip-dot
	--skip-tilde
	--show-dot
	--show-tilde
	--tty-only
	-v -V --version
	--help`}

// basename(1) and dirname(1), GNU coreutils 9.4, OPTIONS.
var basenameSpec = &spec{man: "basename(1)", abbrev: true, opts: `
	-a --multiple
	-s --suffix =
	-z --zero
	--help
	--version`}

// realpath(1) and readlink(1), GNU coreutils 9.4, OPTIONS.
var realpathSpec = &spec{man: "realpath(1)", abbrev: true, opts: `
	-e --canonicalize-existing
	-f --canonicalize
	-m --canonicalize-missing
	-L --logical
	-P --physical
	-q --quiet
	-s --strip --no-symlinks
	-n --no-newline
	-v --verbose
	--relative-to =R
	--relative-base =R
	-z --zero
	--help
	--version`}

// pwd(1), POSIX.
var pwdSpec = &spec{man: "pwd(1)", opts: `
	-L
	-P
	--help
	--version`}

// date(1), GNU coreutils 9.4 and BSD: -s, --set and a time operand set the clock (left out);
// GNU's -f reads a file (BSD's takes a format, recorded as a path all the same).
var dateSpec = &spec{man: "date(1)", abbrev: true, opts: `
	-d --date =
	--debug
	-f --file =R
	-I --iso-8601 ?
	--resolution
	-R --rfc-email
	--rfc-3339 =
	-r --reference =R
	-u --utc --universal
	-j
	-n
	-v =
	--help
	--version`}

// uname(1), GNU coreutils 9.4, OPTIONS.
var unameSpec = &spec{man: "uname(1)", abbrev: true, opts: `
	-a --all
	-s --kernel-name
	-n --nodename
	-r --kernel-release
	-v --kernel-version
	-m --machine
	-p --processor
	-i --hardware-platform
	-o --operating-system
	--help
	--version`}

// seq(1), GNU coreutils 9.4, OPTIONS (a negative operand looks like -NUM).
var seqSpec = &spec{man: "seq(1)", abbrev: true, num: true, opts: `
	-f --format =
	-s --separator =
	-w --equal-width
	--help
	--version`}

// id(1), whoami(1), groups(1), nproc(1), logname(1), tty(1), arch(1), GNU coreutils 9.4.
var idSpec = &spec{man: "id(1)", abbrev: true, opts: `
	-a
	-Z --context
	-g --group
	-G --groups
	-n --name
	-r --real
	-u --user
	-z --zero
	--all
	--ignore =
	-s --silent --quiet
	--help
	--version`}

// less(1), less 643, OPTIONS: -o and -O write a log file; a lesskey file can set LESSOPEN; a
// "+" command runs less commands, "!" among them.
var lessSpec = &spec{man: "less(1)", abbrev: true, opts: `
	-? --help
	-a --search-skip-screen
	-A --SEARCH-SKIP-SCREEN
	-b --buffers =
	-B --auto-buffers
	-c --clear-screen
	-C --CLEAR-SCREEN
	-d --dumb
	-D --color =
	-e --quit-at-eof
	-E --QUIT-AT-EOF
	-f --force
	-F --quit-if-one-screen
	-g --hilite-search
	-G --HILITE-SEARCH
	-h --max-back-scroll =
	-i --ignore-case
	-I --IGNORE-CASE
	-j --jump-target =
	-J --status-column
	-K --quit-on-intr
	-L --no-lessopen
	-m --long-prompt
	-M --LONG-PROMPT
	-n --line-numbers
	-N --LINE-NUMBERS
	-p --pattern =
	-P --prompt =
	-q --quiet --silent
	-Q --QUIET --SILENT
	-r --raw-control-chars
	-R --RAW-CONTROL-CHARS
	-s --squeeze-blank-lines
	-S --chop-long-lines
	-t --tag =
	-T --tag-file =R
	-u --underline-special
	-U --UNDERLINE-SPECIAL
	-V --version
	-w --hilite-unread
	-W --HILITE-UNREAD
	-x --tabs =
	-X --no-init
	-y --max-forw-scroll =
	-z --window =
	-~ --tilde
	-# --shift =
	--follow-name
	--incsearch
	--line-num-width =
	--mouse
	--no-keypad
	--no-histdups
	--no-number-headers
	--redraw-on-quit
	--rscroll =
	--save-marks
	--status-col-width =
	--use-backslash
	--use-color
	--wheel-lines =
	--exit-follow-on-close
	-o --log-file =W
	-O --LOG-FILE =W
	-k --lesskey-file =X
	--lesskey-src =X`}

// more(1), util-linux 2.39, OPTIONS.
var moreSpec = &spec{man: "more(1)", abbrev: true, num: true, opts: `
	-d --silent
	-l --logical
	-f --no-pause
	-p --print-over
	-c --clean-print
	-s --squeeze
	-u --plain
	-n --lines =
	--help
	-V --version`}

// man(1), man-db 2.12, OPTIONS: a pager, a browser or a configuration file runs programs.
var manSpec = &spec{man: "man(1)", abbrev: true, opts: `
	-d --debug
	-D --default
	--warnings ?
	-f --whatis
	-k --apropos
	-K --global-apropos
	-l --local-file !M
	-w --where --path --location
	-W --where-cat --location-cat
	-c --catman
	-R --recode =
	-L --locale =
	-m --systems =
	-M --manpath =R
	-S -s --sections =
	-e --extension =
	-i --ignore-case
	-I --match-case
	--regex
	--wildcard
	--names-only
	-a --all
	--no-subpages
	-r --prompt =
	-7 --ascii
	-E --encoding =
	--no-hyphenation --nh
	--no-justification --nj
	-p --preprocessor =
	-T --troff-device ?
	-Z --ditroff
	-? --help
	--usage
	-V --version
	-P --pager =X
	-H --html ?X
	-X --gxditview ?X
	-C --config-file =X`}

// dmesg(1), util-linux 2.39: clearing the buffer or changing the console level is left out.
var dmesgSpec = &spec{man: "dmesg(1)", abbrev: true, opts: `
	-d --show-delta
	-e --reltime
	-f --facility =
	-H --human
	-J --json
	-k --kernel
	-L --color ?
	-l --level =
	-P --nopager
	-p --force-prefix
	-r --raw
	-S --syslog
	-T --ctime
	-t --notime
	--time-format =
	-u --userspace
	-w --follow
	-W --follow-new
	-x --decode
	-h --help
	-V --version`}

// hash(1), the bash builtin: -p makes a name run the given file.
var hashSpec = &spec{man: "bash(1) hash", posix: true, opts: `
	-r
	-d
	-t
	-l
	-p =X`}

// type(1), the bash builtin.
var typeSpec = &spec{man: "bash(1) type", opts: `
	-a
	-f
	-p
	-P
	-t`}

// printf(1), the bash builtin: -v assigns a variable.
var printfSpec = &spec{man: "bash(1) printf", posix: true, opts: `
	-v =`}

// shuf(1), GNU coreutils 9.4, OPTIONS; -o writes.
var shufSpec = &spec{man: "shuf(1)", abbrev: true, opts: `
	-e --echo !M
	-i --input-range =
	-n --head-count =
	-o --output =W
	--random-source =R
	-r --repeat
	-z --zero-terminated
	--help
	--version`}

// lsattr(1), e2fsprogs 1.47.
var lsattrSpec = &spec{man: "lsattr(1)", opts: `
	-R
	-V
	-a
	-d
	-l
	-p
	-v`}

// nproc(1), GNU coreutils 9.4.
var nprocSpec = &spec{man: "nproc(1)", abbrev: true, opts: `
	--all
	--ignore =
	--help
	--version`}

// bc(1), GNU bc 1.07: the operands are bc programs (read), which cannot run commands.
var bcSpec = &spec{man: "bc(1)", abbrev: true, opts: `
	-h --help
	-i --interactive
	-l --mathlib
	-w --warn
	-s --standard
	-q --quiet
	-v --version`}

// numfmt(1), GNU coreutils 9.4; tsort(1) and factor(1) take no options besides these.
var numfmtSpec = &spec{man: "numfmt(1)", abbrev: true, opts: `
	-d --delimiter =
	--field =
	--format =
	--from =
	--from-unit =
	--grouping
	--header ?
	--invalid =
	--padding =
	--round =
	--suffix =
	--to =
	--to-unit =
	-z --zero-terminated
	--debug
	--help
	--version`}

// Programs that take no options at all besides --help and --version.
var plainSpec = &spec{man: "--help and --version only", opts: `
	--help
	--version`}

// readOnlyTools are the programs classified by their tables alone.
var readOnlyTools = map[string]*tool{
	"cat": {spec: catSpec}, "tac": {spec: tacSpec}, "head": {spec: headSpec}, "tail": {spec: tailSpec},
	"wc": {spec: wcSpec}, "nl": {spec: nlSpec},
	"ls": {spec: lsSpec, operands: lister}, "dir": {spec: lsSpec, operands: lister}, "vdir": {spec: lsSpec, operands: lister},
	"tree": {spec: treeSpec, operands: treeOperands}, "du": {spec: duSpec, operands: lister},
	"df": {spec: dfSpec}, "stat": {spec: statSpec}, "file": {spec: fileSpec},
	"sort": {spec: sortSpec}, "uniq": {spec: uniqSpec, operands: uniqOperands},
	"cut": {spec: cutSpec}, "paste": {spec: pasteSpec}, "join": {spec: joinSpec}, "comm": {spec: commSpec},
	"tr": {spec: trSpec, operands: noOperands}, "fold": {spec: foldSpec}, "fmt": {spec: fmtSpec},
	"column": {spec: columnSpec}, "expand": {spec: expandSpec}, "unexpand": {spec: expandSpec},
	"rev": {spec: revSpec}, "strings": {spec: stringsSpec}, "od": {spec: odSpec}, "hexdump": {spec: hexdumpSpec},
	"hd": {spec: hexdumpSpec}, "xxd": {spec: xxdSpec, operands: xxdOperands},
	"base64": {spec: base64Spec}, "base32": {spec: base64Spec}, "basenc": {spec: base64Spec},
	"md5sum": {spec: sumSpec}, "sha1sum": {spec: sumSpec}, "sha224sum": {spec: sumSpec}, "sha256sum": {spec: sumSpec},
	"sha384sum": {spec: sumSpec}, "sha512sum": {spec: sumSpec}, "b2sum": {spec: sumSpec},
	"cksum": {spec: cksumSpec}, "sum": {spec: cksumSpec},
	"diff": {spec: diffSpec}, "cmp": {spec: cmpSpec},
	"grep": {spec: grepSpec, operands: grepOperands}, "egrep": {spec: grepSpec, operands: grepOperands},
	"fgrep": {spec: grepSpec, operands: grepOperands}, "zgrep": {spec: grepSpec, operands: grepOperands},
	"rg": {spec: rgSpec, operands: rgOperands},
	"jq": {spec: jqSpec, operands: jqOperands}, "gojq": {spec: jqSpec, operands: jqOperands},
	"yq":    {spec: yqSpec, operands: yqOperands},
	"which": {spec: whichSpec, operands: noOperands}, "basename": {spec: basenameSpec, operands: noOperands},
	"dirname": {spec: basenameSpec, operands: noOperands}, "realpath": {spec: realpathSpec}, "readlink": {spec: realpathSpec},
	"pwd": {spec: pwdSpec, operands: noOperands}, "date": {spec: dateSpec, operands: dateOperands},
	"uname": {spec: unameSpec, operands: noOperands}, "seq": {spec: seqSpec, operands: noOperands},
	"id": {spec: idSpec, operands: noOperands}, "whoami": {spec: plainSpec, operands: noOperands},
	"groups": {spec: plainSpec, operands: noOperands}, "logname": {spec: plainSpec, operands: noOperands},
	"tty": {spec: idSpec, operands: noOperands}, "arch": {spec: plainSpec, operands: noOperands},
	"nproc": {spec: nprocSpec, operands: noOperands}, "tsort": {spec: plainSpec}, "factor": {spec: plainSpec, operands: noOperands},
	"numfmt": {spec: numfmtSpec, operands: noOperands},
	"less":   {spec: lessSpec, operands: pagerOperands}, "more": {spec: moreSpec, operands: pagerOperands},
	"man": {spec: manSpec, operands: manOperands}, "dmesg": {spec: dmesgSpec, operands: noOperands},
	"hash": {spec: hashSpec, operands: noOperands}, "type": {spec: typeSpec, operands: noOperands},
	"printf": {spec: printfSpec, operands: noOperands}, "shuf": {spec: shufSpec, operands: shufOperands},
	"lsattr": {spec: lsattrSpec, operands: lsattrOperands}, "bc": {spec: bcSpec},
	"fd": {spec: fdSpec, operands: fdOperands}, "fdfind": {spec: fdSpec, operands: fdOperands},
	"locate": {spec: locateSpec, operands: noOperands}, "plocate": {spec: locateSpec, operands: noOperands},
}

// fd(1), fd 10, OPTIONS: --exec and --exec-batch run a command on every match.
var fdSpec = &spec{man: "fd(1)", opts: `
	-H --hidden
	-I --no-ignore
	--no-ignore-vcs
	--no-ignore-parent
	-u --unrestricted
	-s --case-sensitive
	-i --ignore-case
	-g --glob
	--regex
	-F --fixed-strings
	--and =
	-a --absolute-path
	-l --list-details !X
	-L --follow
	-p --full-path
	-0 --print0
	-d --max-depth =
	--min-depth =
	--exact-depth =
	--prune
	-t --type =
	-e --extension =
	-S --size =
	--changed-within --changed-before =
	-o --owner =
	--format =
	-E --exclude =
	--ignore-file =R
	-c --color =
	--hyperlink ?
	-j --threads =
	--max-results =
	-1
	-q --quiet
	--show-errors
	--base-directory =D
	--path-separator =
	--strip-cwd-prefix ?
	--one-file-system
	-h --help
	-V --version
	-x --exec !X
	-X --exec-batch !X`}

// locate(1), plocate 1.1 and mlocate 0.26, OPTIONS; the operands are patterns.
var locateSpec = &spec{man: "locate(1)", abbrev: true, opts: `
	-A --all
	-b --basename
	-c --count
	-d --database =R
	-e --existing
	-L --follow
	-h --help
	-i --ignore-case
	-l -n --limit =
	-0 --null
	-S --statistics
	-q --quiet
	-r --regex =
	--regextype =
	-w --wholename
	-P -H --nofollow
	-V --version`}

// fdOperands: the first operand is the pattern, the rest are paths (none: the working directory).
func fdOperands(c *call, o opts) {
	pos := o.pos
	if len(pos) > 0 {
		pos = pos[1:]
	}
	if len(pos) == 0 && !o.has("--base-directory") {
		c.cwd(false)
	}
	c.readAll(pos)
}
