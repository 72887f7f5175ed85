package shell

// The option tables of the programs that create, change or destroy files: every option that
// names a file says whether the program reads it (R), writes it (W) or runs it (X); the
// handlers in programs.go say what the operands are.

// touch(1), GNU coreutils 9.1, OPTIONS: the operands are created or their times changed.
var touchSpec = &spec{man: "touch(1)", abbrev: true, opts: `
	-a
	-c --no-create
	-d --date =
	-f
	-h --no-dereference
	-m
	-r --reference =R
	-t =
	--time =
	--help
	--version`}

// mkdir(1), GNU coreutils 9.1, OPTIONS.
var mkdirSpec = &spec{man: "mkdir(1)", abbrev: true, opts: `
	-m --mode =
	-p --parents
	-v --verbose
	-Z
	--context ?
	--help
	--version`}

// tee(1), GNU coreutils 9.1, OPTIONS: the operands are written.
var teeSpec = &spec{man: "tee(1)", abbrev: true, opts: `
	-a --append
	-i --ignore-interrupts
	-p
	--output-error ?
	--help
	--version`}

// cp(1), GNU coreutils 9.1, OPTIONS (and mv(1), install(1) below): the last operand, or -t, is
// written.
var cpSpec = &spec{man: "cp(1)", abbrev: true, opts: `
	-a --archive
	--attributes-only
	--backup ?
	-b
	--copy-contents
	-d
	-f --force
	-i --interactive
	-H
	-l --link
	-L --dereference
	-n --no-clobber
	-P --no-dereference
	-p
	--preserve ?
	--no-preserve =
	--parents
	-R -r --recursive
	--reflink ?
	--remove-destination
	--sparse =
	--strip-trailing-slashes
	-s --symbolic-link
	-S --suffix =
	-t --target-directory =W
	-T --no-target-directory
	-u --update ?
	-v --verbose
	-x --one-file-system
	-Z
	--context ?
	--help
	--version`}

// mv(1), GNU coreutils 9.1, OPTIONS: the sources are removed, the last operand (or -t) written.
var mvSpec = &spec{man: "mv(1)", abbrev: true, opts: `
	--backup ?
	-b
	-f --force
	-i --interactive
	-n --no-clobber
	--strip-trailing-slashes
	-S --suffix =
	-t --target-directory =W
	-T --no-target-directory
	-u --update ?
	-v --verbose
	-Z --context
	--help
	--version`}

// install(1), GNU coreutils 9.1, OPTIONS: --strip-program runs a program.
var installSpec = &spec{man: "install(1)", abbrev: true, opts: `
	--backup ?
	-b
	-c
	-C --compare
	-d --directory !M
	-D
	-g --group =
	-m --mode =
	-o --owner =
	-p --preserve-timestamps
	-s --strip
	--strip-program =X
	-S --suffix =
	-t --target-directory =W
	-T --no-target-directory
	-v --verbose
	--preserve-context
	-Z
	--context ?
	--help
	--version`}

// ln(1), GNU coreutils 9.1, OPTIONS.
var lnSpec = &spec{man: "ln(1)", abbrev: true, opts: `
	--backup ?
	-b
	-d -F --directory
	-f --force
	-i --interactive
	-L --logical
	-n --no-dereference
	-P --physical
	-r --relative
	-s --symbolic
	-S --suffix =
	-t --target-directory =W
	-T --no-target-directory
	-v --verbose
	--help
	--version`}

// truncate(1), GNU coreutils 9.1, OPTIONS.
var truncateSpec = &spec{man: "truncate(1)", abbrev: true, opts: `
	-c --no-create
	-o --io-blocks
	-r --reference =R
	-s --size =
	--help
	--version`}

// shred(1), GNU coreutils 9.1, OPTIONS.
var shredSpec = &spec{man: "shred(1)", abbrev: true, opts: `
	-f --force
	-n --iterations =
	--random-source =R
	-s --size =
	-u
	--remove ?
	-v --verbose
	-x --exact
	-z --zero
	--help
	--version`}

// rm(1), GNU coreutils 9.1, OPTIONS.
var rmSpec = &spec{man: "rm(1)", abbrev: true, opts: `
	-f --force
	-i
	-I
	--interactive ?
	--one-file-system
	--no-preserve-root
	--preserve-root ?
	-r -R --recursive
	-d --dir
	-v --verbose
	--help
	--version`}

// rmdir(1), GNU coreutils 9.1, OPTIONS; unlink(1) takes --help and --version only.
var rmdirSpec = &spec{man: "rmdir(1)", abbrev: true, opts: `
	--ignore-fail-on-non-empty
	-p --parents
	-v --verbose
	--help
	--version`}

// chmod(1), GNU coreutils 9.1: besides its options, a word such as "-x" or "-rw" is a mode
// (chmod reads an argument made of mode characters as the mode, not as options).
var chmodSpec = &spec{man: "chmod(1)", abbrev: true, opts: `
	-c --changes
	-f --silent --quiet
	-v --verbose
	--no-preserve-root
	--preserve-root
	--reference =R
	-R --recursive
	--help
	--version
	-r -w -x -X -s -t -u -g -o -a -0 -1 -2 -3 -4 -5 -6 -7 -+ -= -, ?M`}

// chown(1) and chgrp(1), GNU coreutils 9.1, OPTIONS.
var chownSpec = &spec{man: "chown(1)", abbrev: true, opts: `
	-c --changes
	-f --silent --quiet
	-v --verbose
	--dereference
	-h --no-dereference
	--from =
	--no-preserve-root
	--preserve-root
	--reference =R
	-R --recursive
	-H
	-L
	-P
	--help
	--version`}

// chattr(1), e2fsprogs 1.47: "-i" and the like are modes (attributes removed), not options.
var chattrSpec = &spec{man: "chattr(1)", opts: `
	-R
	-V
	-f
	-v =
	-p =
	-a -A -c -C -d -D -e -E -F -i -I -j -m -N -P -s -S -t -T -u -x !M`}

// setfacl(1), acl 2.3, OPTIONS: -M, -X and --set-file read ACLs from files; --restore sets the
// ACLs a file lists on the files it names.
var setfaclSpec = &spec{man: "setfacl(1)", abbrev: true, opts: `
	-b --remove-all
	-k --remove-default
	-n --no-mask
	--mask
	-d --default
	--restore =O
	--test
	-R --recursive
	-L --logical
	-P --physical
	-v --version
	-h --help
	-m --modify =
	-M --modify-file =R
	-x --remove =
	-X --remove-file =R
	--set =
	--set-file =R`}

// mktemp(1), GNU coreutils 9.1, OPTIONS: --tmpdir takes its value attached only.
var mktempSpec = &spec{man: "mktemp(1)", abbrev: true, opts: `
	-d --directory
	-u --dry-run !M
	-q --quiet
	--suffix =
	-p =M
	--tmpdir ?M
	-t
	--help
	--version`}

// split(1), GNU coreutils 9.1, OPTIONS: --filter runs a shell command on every piece.
var splitSpec = &spec{man: "split(1)", abbrev: true, opts: `
	-a --suffix-length =
	--additional-suffix =
	-b --bytes =
	-C --line-bytes =
	-d
	--numeric-suffixes ?
	-x
	--hex-suffixes ?
	-e --elide-empty-files
	--filter =X
	-l --lines =
	-n --number =
	-t --separator =
	-u --unbuffered
	--verbose
	--help
	--version`}

// csplit(1), GNU coreutils 9.1, OPTIONS: -f names the prefix of the pieces written.
var csplitSpec = &spec{man: "csplit(1)", abbrev: true, opts: `
	-b --suffix-format =
	-f --prefix =M
	-k --keep-files
	--suppress-matched
	-n --digits =
	-s --quiet --silent
	-z --elide-empty-files
	--help
	--version`}

// patch(1), GNU patch 2.7, OPTIONS: -o, -r and -B write; -g gets files from version control
// (it runs its commands); an ed script (-e, or one patch calls for) runs ed.
var patchSpec = &spec{man: "patch(1)", abbrev: true, opts: `
	-b --backup
	--backup-if-mismatch
	--no-backup-if-mismatch
	-B --prefix =M
	-c --context
	-d --directory =M
	-D --ifdef =
	--dry-run
	-e --ed !X
	-E --remove-empty-files
	-f --force
	-F --fuzz =
	-g --get =X
	--help
	-i --input =R
	-l --ignore-whitespace
	--merge ?
	-n --normal
	-N --forward
	-o --output =W
	-p --strip =
	--posix
	--quoting-style =
	-r --reject-file =W
	--reject-format =
	-R --reverse
	--read-only =
	-s --silent --quiet
	-t --batch
	-T --set-time
	-u --unified
	-v --version
	-V --version-control =
	--verbose
	-x --debug =
	-Y --basename-prefix =M
	-z --suffix =
	-Z --set-utc
	--follow-symlinks`}

// gzip(1), gzip 1.12, OPTIONS; gunzip and zcat take the same. Without -c, -l or -t each operand is
// replaced by its (de)compressed file.
var gzipSpec = &spec{man: "gzip(1)", abbrev: true, opts: `
	-a --ascii
	-c --stdout --to-stdout !M
	-d --decompress --uncompress
	-f --force
	-h --help
	-k --keep
	-l --list !M
	-L --license
	-n --no-name
	-N --name
	-q --quiet
	-r --recursive
	-S --suffix =
	--synchronous
	-t --test !M
	-v --verbose
	-V --version
	-1 -2 -3 -4 -5 -6 -7 -8 -9 --fast --best
	--rsyncable`}

// bzip2(1), bzip2 1.0.8, OPTIONS; bunzip2 and bzcat take the same.
var bzip2Spec = &spec{man: "bzip2(1)", abbrev: true, opts: `
	-c --stdout !M
	-d --decompress
	-z --compress
	-t --test !M
	-f --force
	-k --keep
	-s --small
	-q --quiet
	-v --verbose
	-h --help
	-L --license -V --version
	-1 -2 -3 -4 -5 -6 -7 -8 -9 --fast --best
	--repetitive-fast --repetitive-best`}

// xz(1), XZ Utils 5.4, OPTIONS; unxz, xzcat, lzma and unlzma take the same. --files reads the
// names to work on from a file.
var xzSpec = &spec{man: "xz(1)", abbrev: true, opts: `
	-z --compress
	-d --decompress --uncompress
	-t --test !M
	-l --list !M
	-k --keep
	-f --force
	-c --stdout --to-stdout !M
	--single-stream
	--no-sparse
	-S --suffix =
	--files --files0 ?O
	-F --format =
	-C --check =
	--ignore-check
	-0 -1 -2 -3 -4 -5 -6 -7 -8 -9 --fast --best
	-e --extreme
	--block-size --block-list --flush-timeout =
	--memlimit-compress --memlimit-decompress --memlimit-mt-decompress =
	-M --memlimit --memory =
	--no-adjust
	-T --threads =
	--lzma1 --lzma2 --x86 --arm --armthumb --arm64 --powerpc --ia64 --sparc --delta ?
	-q --quiet
	-v --verbose
	-Q --no-warn
	--robot
	--info-memory
	-h --help
	-H --long-help
	-V --version`}

// zstd(1), zstd 1.5, OPTIONS: -o and the output directories write, -D and --patch-from read a
// reference file, --filelist reads the names to work on, --train writes a dictionary (named by
// -o, else "dictionary"). Numeric settings are attached (-T4), as zstd reads them.
var zstdSpec = &spec{man: "zstd(1)", num: true, opts: `
	-z --compress
	-d --decompress --uncompress
	-t --test !M
	-l --list !M
	-b -e -i -B ?
	--train !M
	--train-cover --train-fastcover --train-legacy ?M
	--maxdict --dictID =
	-n --no-name
	--ultra
	--fast ?
	-T ?
	--threads =
	--single-thread
	--auto-threads =
	--adapt ?
	--long ?
	-D =R
	--patch-from =R
	--rsyncable
	-C --check --no-check
	--content-size --no-content-size
	--no-dictID
	-M ?
	--memory --stream-size --size-hint --block-size --target-compressed-block-size =
	-o =W
	-f --force
	-c --stdout !M
	--sparse --no-sparse
	--pass-through --no-pass-through
	--rm
	-k --keep
	-r
	--filelist =O
	--output-dir-flat --output-dir-mirror =W
	--format =
	--zstd ?
	--exclude-compressed
	--no-progress
	--show-default-cparams
	--best
	-h -H --help
	-V --version
	-v --verbose
	-q --quiet`}

// lz4(1), lz4 1.9, OPTIONS: "lz4 IN OUT" writes OUT unless -m or -r; -D reads a dictionary.
var lz4Spec = &spec{man: "lz4(1)", num: true, opts: `
	-z --compress
	-d --decompress --uncompress
	-t --test !M
	--list !M
	-b -e -i -B ?
	--fast ?
	--best
	--favor-decSpeed
	-D =R
	-f --force --no-force
	-c --stdout --to-stdout !M
	-m --multiple !M
	-r !M
	--frame-crc --no-frame-crc --no-crc
	--content-size --no-content-size
	--sparse --no-sparse
	-l
	-v --verbose
	-q --quiet
	-h -H --help
	-V --version
	-k --keep
	--rm`}

// compress(1) and uncompress(1), ncompress 5.0.
var compressSpec = &spec{man: "compress(1)", opts: `
	-c !M
	-d
	-f
	-r
	-v
	-V
	-b =
	-C`}

// tar(1), GNU tar 1.34, OPTIONS: the archive (-f) is read or written by the mode; -C changes
// the directory members are read from or written to; -T, -X, --add-file and the maps read
// files; -g, --index-file and --volno-file write them; -I, --to-command, --checkpoint-action,
// -F, --rsh-command and --rmt-command run programs; -P extracts to the paths the archive
// names. The first argument may be an old-style bundle ("xzf a.tgz").
var tarSpec = &spec{man: "tar(1)", abbrev: true, bundle: true, opts: `
	-A --catenate --concatenate !M
	-c --create !M
	-d --diff --compare !M
	--delete !M
	-r --append !M
	-t --list !M
	--test-label !M
	-u --update !M
	-x --extract --get !M
	--show-defaults
	-? --help
	--usage
	--version
	--check-device
	--no-check-device
	-g --listed-incremental =W
	--hole-detection =
	-G --incremental
	--ignore-failed-read
	--level =
	-n --seek
	--no-seek
	--occurrence ?
	--restrict
	--sparse-version =
	-S --sparse
	-k --keep-old-files
	--keep-newer-files
	--keep-directory-symlink
	--no-overwrite-dir
	--one-top-level ?M
	--overwrite
	--overwrite-dir
	--recursive-unlink
	--remove-files !M
	--skip-old-files
	-U --unlink-first
	-W --verify
	--ignore-command-error
	--no-ignore-command-error
	-O --to-stdout !M
	--to-command =X
	--atime-preserve ?
	--delay-directory-restore
	--no-delay-directory-restore
	--group =
	--group-map --owner-map =R
	--mode =
	--mtime =M
	-m --touch
	--no-same-owner
	--no-same-permissions
	--numeric-owner
	--owner =
	-p --preserve-permissions --same-permissions
	--same-owner
	-s --preserve-order --same-order
	--sort =
	--acls --no-acls
	--selinux --no-selinux
	--xattrs --no-xattrs
	--xattrs-exclude --xattrs-include =
	-f --file =M
	--force-local
	-F --info-script --new-volume-script =X
	-L --tape-length =
	-M --multi-volume
	--rmt-command --rsh-command =X
	--volno-file =W
	-b --blocking-factor =
	-B --read-full-records
	-i --ignore-zeros
	--record-size =
	-H --format =
	--old-archive --portability
	--pax-option =
	--posix
	-V --label =
	-a --auto-compress
	-I --use-compress-program =X
	-j --bzip2
	-J --xz
	--lzip
	--lzma
	--lzop
	--no-auto-compress
	-z --gzip --gunzip --ungzip
	-Z --compress --uncompress
	--zstd
	--add-file =R
	--backup ?
	-C --directory =M
	--exclude =
	--exclude-backups
	--exclude-caches --exclude-caches-all --exclude-caches-under
	--exclude-ignore --exclude-ignore-recursive =
	--exclude-tag --exclude-tag-all --exclude-tag-under =
	--exclude-vcs
	--exclude-vcs-ignores
	-h --dereference
	--hard-dereference
	-K --starting-file =
	--newer-mtime =
	--no-null
	--no-recursion
	--no-unquote
	--no-verbatim-files-from
	--null
	-N --newer --after-date =M
	--one-file-system
	-P --absolute-names !M
	--recursion
	--suffix =
	-T --files-from =R
	--unquote
	--verbatim-files-from
	-X --exclude-from =R
	--strip-components =
	--transform --xform =
	--anchored --no-anchored
	--ignore-case --no-ignore-case
	--wildcards --no-wildcards
	--wildcards-match-slash --no-wildcards-match-slash
	--checkpoint ?
	--checkpoint-action =X
	--clamp-mtime
	--full-time
	--index-file =W
	-l --check-links
	--no-quote-chars --quote-chars --quoting-style =
	-R --block-number
	--show-omitted-dirs
	--show-transformed-names --show-stored-names
	--totals ?
	--utc
	-v --verbose
	--warning =
	-w --interactive --confirmation !X
	-o`}

// unzip(1), Info-ZIP UnZip 6.0: -d names the directory extracted to; -: extracts to the paths
// the archive names ("../" included); -x starts a list of members to leave out.
var unzipSpec = &spec{man: "unzip(1)", opts: `
	-Z !M
	-c !M
	-f
	-l !M
	-p !M
	-t !M
	-T
	-u
	-v !M
	-z !M
	-a
	-b
	-B
	-C
	-D
	-e
	-j
	-K
	-L
	-M
	-n
	-o
	-P =
	-q
	-s
	-U
	-V
	-W
	-X
	-Y
	-$
	-/ =
	-: !M
	-^
	-x !M
	-d =M
	-h --help`}

// zip(1), Info-ZIP Zip 3.0, OPTIONS: the first operand is the archive written. -TT and -T run a
// test command, -O writes another archive, -b a temporary file, -la and -lf a log file; -m
// deletes the files it adds; -@ reads the names to add from standard input, -i@ and -x@ from
// files.
var zipSpec = &spec{man: "zip(1)", opts: `
	-0 -1 -2 -3 -4 -5 -6 -7 -8 -9
	-a --ascii
	-A --adjust-sfx
	-b --temp-path =W
	-c --entry-comments
	-C --preserve-case
	-d --delete !M
	-D --no-dir-entries
	-e --encrypt
	-f --freshen
	-F --fix
	-FF --fixfix
	-FS --filesync
	-g --grow
	-h --help
	-j --junk-paths
	-J --junk-sfx
	-k --DOS-names
	-l --to-crlf
	-ll --from-crlf
	-L --license
	-m --move !M
	-n --suffixes =
	-nw --no-wild
	-o --latest-time
	-O --output-file =W
	-P --password =
	-q --quiet
	-r --recurse-paths
	-R --recurse-patterns
	-s --split-size =
	-sp --split-pause
	-sv --split-verbose
	-t --from-date -tt --before-date =
	-T --test !X
	-TT --unzip-command =X
	-u --update
	-v --verbose
	-V --VMS-portable
	-w --VMS-versions
	-X --no-extra
	-y --symlinks
	-z --archive-comment
	-la --log-append
	-lf --logfile-path =W
	-li --log-info
	-@ --names-stdin
	-x --exclude -i --include !M`}
