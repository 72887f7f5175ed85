// Package shell analyses a shell command line: what each simple command in it runs, reads,
// writes, deletes and reaches, and how risky it is. The gate analyses every action's command
// with it, so that rules, protected paths and the workspace boundary see through the line
// instead of matching its text.
//
// # What it parses
//
// [Analyze] parses the line with mvdan.cc/sh/v3/syntax in the bash dialect (POSIX syntax is a
// subset) and walks the whole tree: lists (;, &&, ||, &, newlines), pipelines, subshells, { }
// groups, command substitutions ($( ) and backquotes), process substitutions, if/for/while/case
// bodies, function bodies (analysed where they are defined, since a function may shadow any
// command name), heredocs and herestrings, and the scripts given to bash -c, sh -c, zsh -c,
// eval, env -S, watch, trap, su -c, flock -c, git rebase --exec and git submodule foreach, which
// are parsed recursively. Wrappers (env, sudo, doas, timeout, nice, nohup, stdbuf, time, command,
// exec, xargs, find -exec, busybox, strace) are looked through: the command they run is what the
// entry describes, and sudo and doas raise its severity to high.
//
// Scripts handed to sh, dash and ash are parsed as POSIX (no brace expansion); zsh, ksh, mksh
// and yash read words their own way (zsh runs code from a glob qualifier) and their scripts are
// opaque.
//
// Words are evaluated as the shell would, as far as the line itself says: quotes, ANSI-C $'...'
// strings, backslash escapes, brace expansion, tilde, variables the line assigns literally
// before use, $HOME and $PWD, and every literal cd. Paths are joined to the working directory
// they are used in, uncleaned, so that ".." is applied after symbolic links when the gate
// resolves them.
//
// # What it reports
//
// For every simple command ([Command]): the program and its literal arguments, the paths it
// reads and writes (redirection targets included; /dev/null and descriptor duplications are not
// writes), the hosts it reaches when they are literal, whether it runs code it was handed, and
// its risk levels, argument-aware for the programs an agent runs most (rm, find, sed, git and its
// subcommands and flags, chmod/chown -R, dd, tar, unzip, cp, mv, ln, tee, package managers,
// build and test runners, interpreters, curl, wget, ssh, scp, rsync, docker, cloud CLIs).
// Unknown programs are exec. [Analysis] is the union: risk levels, the strictest severity, every
// path and host.
//
// Every program's options are parsed by one parser from its table (options.go and the *tables.go
// files, one entry per program citing its manual), with GNU getopt_long's rules: unique prefixes
// of long options where the program accepts them (an ambiguous prefix is unknown), clusters
// ("-abc", "-ofile"), "--", optional values attached only, "=" values, the program's own order
// (options after operands, or not), old-style bundles (tar xfC a.tar dir), "+x" for the shells,
// "@FILE" response files. Each option that takes a file says whether the program reads it,
// writes it or runs it, and each handler says what its operands are (read, written, a
// directory, a pattern, a command). An option a table does not list makes the command exec and
// opaque.
//
// Operands only known at run time, the words xargs reads from its input, the files find -exec
// is handed, are reads of the directory they are looked up from (Path.Unknown) when the program
// only reads whatever it is given (cat, grep, wc ...), and opaque otherwise; the sandbox holds
// such a command to what it may read. ls and du read what a glob matches from its directory.
// A for loop over words the line spells out runs its body once per word.
//
// Shell builtins and shell options are judged by allowlist: set -k, set -a, set -f, set +B,
// shopt -u interactive_comments, trap handlers, enable and the like change how the rest of the
// line is read, so the command is opaque. cd is bash's logical cd: a ".." after a directory the
// line named leaves the directory unknown.
//
// Configuration a program reads from its directory tree that decides what it runs (git's
// repository configuration, cargo's .cargo/config.toml and rust-toolchain files) is named in
// Command.Config; the analysis reads no files, and the gate judges it.
//
// # Opaque
//
// Whatever the analysis cannot see through is marked opaque, with the reason in Command.Why: a
// program or path argument that is not literal (a variable the line does not set, a command
// substitution, $IFS tricks), code handed to an interpreter (python -c, node -e), eval of a
// non-literal string, a shell reading code from a pipe or a file, unknown wrapper flags, git
// configuration that can run commands. The gate never auto-approves an opaque command: at best
// it asks. A line that does not parse is an error and fails closed: one opaque command with every
// risk level but read-only, at high severity (the gate denies it, with the parser's message: it
// cannot run as written).
//
// Expansions that bash evaluates a second time are opaque, and may run anything: prompt and
// other transformations (${v@P}, @E, @A ...), indirection (${!x}, ${!prefix*}), $"..."
// translations, and arithmetic (in $(( )), (( )), let, for (( )), [[ -eq ]], array subscripts,
// substring offsets, declare -i, and the variable-name arguments of unset, read, printf -v,
// test -v ...) over anything but literal numbers and variables the line set to literal numbers:
// bash evaluates a variable's value as an expression, and a subscript in it ("a[$(cmd)]") runs
// the command. A glob in option position that could expand to a name starting with "-" ("sort
// *.txt" with a file named "-ofoo") is opaque, unless the program's options cannot write, run or
// reach anything (ls, cat, wc, head ...); "./*.txt", "src/*.go" and globs after "--" are not.
//
// # Environment
//
// An assignment prefix (VAR=x cmd), env VAR=x cmd and an export are inert only for the short
// allowlist of variables that change formatting, never what runs (locale, TZ, terminal and
// colour, a few runtime switches, PAGER=cat); any other variable makes the command opaque and
// exec. A plain assignment to a variable known to change what programs run once exported (PATH,
// IFS, PS4, LD_*, GIT_*, PYTHON* ...) is opaque too.
//
// # Cost
//
// Analysis is bounded before anything is expanded: a line over [MaxLine] bytes is not parsed
// ([ErrTooLong]); brackets nested too deeply or too many operators are not parsed either;
// statements are parsed one at a time up to a budget; words, brace expansions (counted before
// they are expanded), nested scripts and expression sizes have budgets. Past one, the rest of the
// line is not read and the analysis ends with an opaque command that may do anything.
//
// # Security model and limitations
//
// The analysis sees what the command line says, not what programs do when they run. It cannot
// know what a script file contains (bash deploy.sh is exec, reading deploy.sh), what a build or
// test runner executes (go test runs the package's tests), whether a build fetches dependencies
// (only explicit install and fetch subcommands count as network), what hosts a remote name such
// as "origin" stands for, or which files a glob will match (the gate treats a glob that could
// match a protected path as opaque). Aliases are not expanded (non-interactive shells do not
// expand them). Package installs reach the hosts configured for their ecosystem in
// Options.Registries; reins ships none. Enforcement belongs to the sandbox: the hardened sandbox
// stops what the analysis cannot see.
//
// # Proofs
//
// The tables are proven against the real programs. TestProof (proof_test.go) generates lines
// from every table: each option in its spellings (every name, "--opt=V" and "--opt V", "-oV" and
// "-o V", the shortest unique abbreviation, a short option clustered behind a flag), with a
// probe value (a secret outside the workspace, executable), and each context's operands, an extra
// operand and an "@file" operand; every program the analysis knows with generic operands; every
// line of internal/shelltables. Each line whose analysis is bounded (not opaque, exec, network or
// destructive) runs as "bash -c LINE" under strace in a throwaway fixture (a workspace, a home
// and a temporary directory, with canary secrets) inside namespaces where only the fixture is
// writable and there is no network, and must stay inside its claim: nothing written but the
// claimed writes and its temporary directory, no program run that the line does not name, no
// socket reached, no secret opened that the analysis does not report (proof_check_test.go gives
// the exact rules). FuzzProof does the same for combinations of several options and for what the
// fuzzer makes of them. proofKnown (proof_known_test.go) lists the programs whose lines fail
// today, each with what it did and why: the to-do of the table fixes, which the test keeps from
// going stale. TestProofCatchesAMisclassifiedRow makes a table row lie and shows its proof fail.
//
// To add a program: write its table, one entry per option with its effect, and register it;
// add its Debian package to the need list of .ci/run (CI runs the proofs strictly: a missing
// program fails); if it does not read one file operand, give it operands in proofContexts
// (proof_gen_test.go); run "go test -run 'TestProof$' ./risk/shell" (REINS_PROOF_FULL=1 runs
// every spelling with every value in every context) and correct the table until its rows pass.
// A program Debian does not package (or CI does not install) cannot be proven: it goes in
// proofUnpackaged (or proofNotInCI) with the reason, and its rows are counted as unproven; only
// the sandbox then holds them to their claim. REINS_PROOF_ONLY=FILE runs only the lines FILE
// lists, and REINS_PROOF_KNOWN_OUT=FILE writes an entry for every failing line. The proofs need
// Linux, strace, bash and mount, network and PID namespaces; without them they skip with the
// reason (and fail under REINS_TEST_STRICT=1); -short skips them with the reason.
package shell
