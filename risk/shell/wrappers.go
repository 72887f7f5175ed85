package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// Wrappers run another command after their own options, which are in these tables (posix: the
// first operand is the command). Build and test runners and formatters run the project's code.

var (
	// exec, bash(1) SHELL BUILTIN COMMANDS.
	execSpec = &spec{man: "bash(1) exec", posix: true, opts: `
	-a =
	-c
	-l`}
	// command, bash(1): -v and -V only describe the command.
	commandSpec = &spec{man: "bash(1) command", posix: true, opts: `
	-p
	-v -V !M`}
	// sudo(8), sudo 1.9, OPTIONS: -h with a value runs the command on another host; -e edits
	// files; -i and -s run a shell; -R chroots; -D changes the directory.
	sudoSpec = &spec{man: "sudo(8)", abbrev: true, posix: true, opts: `
	-A --askpass
	-B --bell
	-b --background
	-C --close-from =
	-D --chdir =M
	-E --preserve-env ?
	-e --edit !M
	-g --group =
	-H --set-home
	-h --host ?N
	--help
	-i --login !M
	-K --remove-timestamp
	-k --reset-timestamp
	-l --list
	-N --no-update
	-n --non-interactive
	-P --preserve-groups
	-p --prompt =
	-R --chroot =X
	-r --role =
	-S --stdin
	-s --shell !M
	-T --command-timeout =
	-t --type =
	-U --other-user =
	-u --user =
	-V --version
	-v --validate`}
	// doas(1), OpenDoas 6.8: -C checks a configuration file.
	doasSpec = &spec{man: "doas(1)", posix: true, opts: `
	-C =R
	-L
	-n
	-s !M
	-u =`}
	// pkexec(1), polkit 122.
	pkexecSpec = &spec{man: "pkexec(1)", abbrev: true, posix: true, opts: `
	-u --user =
	--disable-internal-agent
	--keep-cwd
	--help
	--version`}
	// run0(1), systemd 256: the options the analysis follows; -M runs in a container.
	run0Spec = &spec{man: "run0(1)", abbrev: true, posix: true, opts: `
	-u --user =
	-g --group =
	-D --chdir =M
	--nice =
	--setenv =X
	--description =
	--slice --slice-inherit --unit =
	-p --property =X
	-M --machine =X
	--background =
	--no-ask-password
	-h --help
	-V --version`}
	// su(1), util-linux 2.38, OPTIONS: -s names the shell run.
	suSpec = &spec{man: "su(1)", abbrev: true, opts: `
	-c --command --session-command =M
	-f --fast
	-g --group =
	-G --supp-group =
	-l --login
	-m -p --preserve-environment
	-P --pty
	-s --shell =X
	-w --whitelist-environment =
	-h --help
	-V --version`}
	// time(1), GNU time 1.9, OPTIONS: -o writes the report.
	timeSpec = &spec{man: "time(1)", abbrev: true, posix: true, opts: `
	-o --output =W
	-a --append
	-f --format =
	--help
	-p --portability
	-v --verbose
	-q --quiet
	-V --version`}
	// flock(1), util-linux 2.38, OPTIONS: -c runs a shell command.
	flockSpec = &spec{man: "flock(1)", abbrev: true, posix: true, opts: `
	-c --command =M
	-E --conflict-exit-code =
	-F --no-fork
	-e -x --exclusive
	-n --nb --nonblock
	-o --close
	-s --shared
	-u --unlock
	-w --wait --timeout =
	--verbose
	-h --help
	-V --version`}
	// watch(1), procps-ng 4.0, OPTIONS: without -x the command is run by sh -c.
	watchSpec = &spec{man: "watch(1)", abbrev: true, posix: true, opts: `
	-d --differences ?
	-n --interval =
	-p --precise
	-t --no-title
	-b --beep
	-e --errexit
	-g --chgexit
	-q --equexit =
	-c --color
	-C --no-color
	-r --no-rerun
	-x --exec !M
	-w --no-wrap
	-h --help
	-v --version`}
	// chrt(1), util-linux 2.38: the priority is the first operand; -p changes a running process.
	chrtSpec = &spec{man: "chrt(1)", abbrev: true, posix: true, opts: `
	-a --all-tasks
	-b --batch
	-d --deadline
	-f --fifo
	-i --idle
	-o --other
	-r --rr
	-R --reset-on-fork
	-T --sched-runtime -P --sched-period -D --sched-deadline =
	-m --max
	-p --pid !M
	-v --verbose
	-h --help
	-V --version`}
	// numactl(8), numactl 2.0.
	numactlSpec = &spec{man: "numactl(8)", abbrev: true, posix: true, opts: `
	-a --all
	-i --interleave =
	-w --weighted-interleave =
	-p --preferred --preferred-many =
	-b --balancing
	-m --membind =
	-N --cpunodebind =
	-C --physcpubind =
	-l --localalloc
	-s --show
	-H --hardware
	--huge
	--touch
	-V --verify
	-h --help`}
	// ltrace(1), ltrace 0.7: -o writes the trace; -p attaches to another process; -F reads a
	// configuration file.
	ltraceSpec = &spec{man: "ltrace(1)", posix: true, opts: `
	-a --align =
	-A =
	-b --no-signals
	-c
	-C --demangle
	-D --debug =
	-e =
	-f
	-F --config =R
	-h --help
	-i
	-l --library =
	-L
	-n --indent =
	-o --output =W
	-p =X
	-r
	-s =
	-S
	-t
	-T
	-u =X
	-V --version
	-w --where =
	-x =`}
	// valgrind(1), valgrind 3.19: the options the analysis follows (tool options included);
	// --log-file and friends write, --db-command runs a program.
	valgrindSpec = &spec{man: "valgrind(1)", posix: true, opts: `
	-h --help --help-debug --help-dyn-options
	--version
	-q --quiet
	-v --verbose
	--tool =
	--trace-children --trace-children-skip --child-silent-after-fork --vgdb --vgdb-error =
	--track-fds --time-stamp --error-limit --error-exitcode --exit-on-first-error --num-callers =
	--show-error-list --show-below-main --max-stackframe --main-stacksize --smc-check =
	--leak-check --show-leak-kinds --errors-for-leak-kinds --leak-resolution --show-reachable =
	--show-possibly-lost --track-origins --undef-value-errors --keep-stacktraces --freelist-vol =
	--partial-loads-ok --expensive-definedness-checks --malloc-fill --free-fill --redzone-size =
	--read-var-info --read-inline-info --fair-sched --demangle --sim-hints =
	-s
	--log-file --xml-file --vgdb-prefix --xtree-memory-file --massif-out-file --callgrind-out-file --cachegrind-out-file =W
	--xml --log-fd --xml-fd --input-fd =
	--log-socket --xml-socket =N
	--suppressions =R
	--gen-suppressions =
	--extra-debuginfo-path =D
	--db-command =X
	--db-attach =X`}
	// unbuffer(1), expect 5.45.
	unbufferSpec = &spec{man: "unbuffer(1)", posix: true, opts: `
	-p`}
	// chronic(1), moreutils 0.67.
	chronicSpec = &spec{man: "chronic(1)", posix: true, opts: `
	-e
	-v`}
	// caffeinate(8), macOS.
	caffeinateSpec = &spec{man: "caffeinate(8)", posix: true, opts: `
	-d
	-i
	-m
	-s
	-u
	-t =
	-w =`}
	// xvfb-run(1), xvfb 21: -e and -f write files.
	xvfbSpec = &spec{man: "xvfb-run(1)", posix: true, abbrev: true, opts: `
	-a --auto-servernum
	-d --auto-display
	-e --error-file =W
	-f --auth-file =W
	-h --help
	-l --listen-tcp
	-n --server-num =
	-p --xauth-protocol =
	-s --server-args =
	-w --wait =`}
	// dbus-run-session(1), dbus 1.14: the daemon and its configuration name programs.
	dbusRunSpec = &spec{man: "dbus-run-session(1)", posix: true, opts: `
	--config-file =X
	--dbus-daemon =X
	--help
	--version`}
	// entr(1), entr 5.3: -s runs its operand as a shell command; the file list is read from
	// standard input.
	entrSpec = &spec{man: "entr(1)", posix: true, opts: `
	-a
	-c
	-d
	-n
	-p
	-r
	-s !M
	-z`}
	// catchsegv and with-contenv take no options.
	noOptsSpec = &spec{man: "no options", posix: true, opts: ``}
)

// wrap is a wrapper whose options are in a table: it runs the command after them (after skip
// operands such as timeout's duration).
func wrap(sp *spec, skip int) handler {
	return func(c *call) {
		o, idx := sp.parse(c.args)
		c.applyOpts(&o)
		rest := c.args[idx:]
		if len(rest) <= skip {
			c.risk(risk.ReadOnly)
			return
		}
		c.rewrap(rest[skip:], c.name)
	}
}

// wrapStarting is wrap for the wrappers that start programs of their own besides the command
// they run, whatever the command: the line starts programs (and they touch files) it does not
// name (starts says which).
func wrapStarting(sp *spec, starts string) handler {
	w := wrap(sp, 0)
	return func(c *call) {
		c.cmd.ExecutesCode = true
		c.risk(risk.Exec)
		c.opaque(c.name + " starts " + starts)
		w(c)
	}
}

func execBuiltin(c *call) {
	o, idx := execSpec.parse(c.args)
	c.applyOpts(&o)
	if idx >= len(c.args) {
		c.risk(risk.ReadOnly) // exec with redirections only
		return
	}
	c.rewrap(c.args[idx:], "exec")
}

func commandBuiltin(c *call) {
	o, idx := commandSpec.parse(c.args)
	c.applyOpts(&o)
	if o.has("-v") {
		c.risk(risk.ReadOnly)
		return
	}
	c.rewrap(c.args[idx:], "command")
}

// privileged is sudo, doas, pkexec and run0: the command runs with raised privileges.
func privileged(c *call) {
	c.cmd.Elevated = true
	c.risk(risk.Exec, risk.Destructive)
	c.severity(risk.High)
	c.note(c.name + " runs the command with raised privileges")
	sp := map[string]*spec{"sudo": sudoSpec, "doas": doasSpec, "pkexec": pkexecSpec, "run0": run0Spec}[c.name]
	o, idx := sp.parse(c.args)
	c.applyOpts(&o)
	rest := c.args[idx:]
	if o.has("-s", "-i") && len(rest) == 0 {
		c.opaque(c.name + " starts an interactive root shell")
		return
	}
	if o.has("-e") {
		c.risk(risk.Mutating)
		c.writeAll(rest)
		return
	}
	if d, ok := o.value("-D"); ok {
		c.sc = c.sc.clone()
		cd(c.sc, d.val, d.lit, c.w.opts.Home)
	}
	if o.has("-s", "-i") {
		// "sudo -s cmd args" runs the command through a shell.
		var parts []string
		for _, a := range rest {
			if !a.lit {
				c.opaque("a root shell command the line does not spell out")
				return
			}
			parts = append(parts, a.val)
		}
		c.code(strings.Join(parts, " "), true, c.name+" -s")
		return
	}
	c.rewrap(rest, c.name)
}

// su runs a shell (or -c's command) as another user.
func su(c *call) {
	c.cmd.Elevated = true
	c.risk(risk.Exec, risk.Destructive)
	c.severity(risk.High)
	o := c.parsed(suSpec)
	if code, ok := o.value("-c"); ok {
		if code.lit {
			c.code(code.val, true, "su -c")
		} else {
			c.opaque("su -c runs a command the line does not spell out")
		}
		if len(o.pos) > 1 {
			c.opaque("su passes more arguments to the shell")
		}
		return
	}
	c.opaque("su without a command starts an interactive root shell")
}

// timeCmd is time(1) (the keyword is the shell's): -o writes its report.
func timeCmd(c *call) {
	o, idx := timeSpec.parse(c.args)
	c.applyOpts(&o)
	c.rewrap(c.args[idx:], "time")
}

// flock takes a lock file (created: a write), then runs a command or -c's shell command.
func flock(c *call) {
	o, idx := flockSpec.parse(c.args)
	c.applyOpts(&o)
	if idx >= len(c.args) {
		c.risk(risk.ReadOnly)
		return
	}
	c.risk(risk.Mutating)
	lock := c.args[idx]
	if !lock.lit || !isDigits(lock.val) {
		c.write(lock) // "flock 9" locks a descriptor
	}
	rest := c.args[idx+1:]
	if len(rest) > 0 && rest[0].is("-c", "--command") {
		// "flock FILE -c COMMAND": flock reads -c after the file itself.
		if len(rest) > 1 && rest[1].lit {
			c.code(rest[1].val, true, "flock -c")
		} else {
			c.opaque("flock -c runs a command the line does not spell out")
		}
		return
	}
	c.rewrap(rest, "flock")
}

// watch runs its command again and again: with -x as words, else through sh -c.
func watch(c *call) {
	o, idx := watchSpec.parse(c.args)
	c.applyOpts(&o)
	if o.has("-x") {
		c.rewrap(c.args[idx:], "watch")
		return
	}
	var parts []string
	for _, a := range c.args[idx:] {
		if !a.lit {
			c.opaque("watch runs a command the line does not spell out")
			c.risk(risk.Exec)
			return
		}
		parts = append(parts, a.val)
	}
	c.risk(risk.Exec)
	c.code(strings.Join(parts, " "), true, "watch")
}

// chrt runs a command at a priority (its first operand), or with -p changes a running process.
func chrt(c *call) {
	o, idx := chrtSpec.parse(c.args)
	c.applyOpts(&o)
	if o.has("-p") {
		c.risk(risk.Mutating)
		c.note("chrt -p changes a running process's scheduling")
		return
	}
	rest := c.args[idx:]
	if len(rest) <= 1 {
		c.risk(risk.ReadOnly)
		return
	}
	c.rewrap(rest[1:], "chrt")
}

// entr runs its command whenever a file read from its input changes; -s runs it through a shell.
func entr(c *call) {
	o, idx := entrSpec.parse(c.args)
	c.applyOpts(&o)
	rest := c.args[idx:]
	if o.has("-s") {
		if len(rest) == 1 && rest[0].lit {
			c.code(rest[0].val, true, "entr -s")
			return
		}
		c.opaque("entr -s runs a command the line does not spell out")
		c.risk(risk.Exec)
		return
	}
	c.rewrap(rest, "entr")
}

// proxied runs its command with its connections sent through proxies its configuration names:
// network, hosts unknown.
func proxied(c *call) {
	c.net()
	c.opaque(c.name + " sends the command's connections through proxies its configuration names")
	c.risk(risk.Exec)
	rest := c.args
	for len(rest) > 0 && rest[0].lit && strings.HasPrefix(rest[0].val, "-") {
		rest = rest[1:] // the options only choose the proxy
	}
	c.rewrap(rest, c.name)
}

// envSpec: env(1), GNU coreutils 9.1, OPTIONS: "-" is -i; NAME=VALUE operands follow the
// options.
var envSpec = &spec{man: "env(1)", abbrev: true, posix: true, opts: `
	-i --ignore-environment
	-0 --null
	-u --unset =
	-C --chdir =M
	-S --split-string =M
	--block-signal --default-signal --ignore-signal ?
	--list-signal-handling
	-v --debug
	--help
	--version`}

// envProg: env's options, then NAME=VALUE assignments (by allowlist, env.go), then the command.
// -S splits a string into arguments; a string of plain words is read as more arguments, any
// other is opaque (env's splitting, escapes and ${VAR} expansion are its own).
func envProg(c *call) {
	args := c.args
	if len(args) > 0 && args[0].is("-") {
		args = args[1:]
	}
	o, idx := envSpec.parse(args)
	c.applyOpts(&o)
	if d, ok := o.value("-C"); ok {
		c.sc = c.sc.clone()
		cd(c.sc, d.val, d.lit, c.w.opts.Home)
	}
	rest := args[idx:]
	if s, ok := o.value("-S"); ok {
		if !s.lit || strings.Trim(s.val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._/=:,@%+-") != "" {
			c.opaque("env -S splits a string the analysis does not read as env does")
			c.risk(risk.Exec)
			return
		}
		var split []arg
		for _, f := range strings.Fields(s.val) {
			split = append(split, arg{val: f, lit: true, word: s.word})
		}
		c.hops++
		if c.hops > 16 {
			c.opaque("too many nested wrappers")
			c.risk(risk.Exec)
			return
		}
		c.args = append(split, rest...)
		envProg(c)
		return
	}
	for len(rest) > 0 {
		a := rest[0]
		if !a.lit {
			c.opaque("env with an argument the line does not spell out")
			c.risk(risk.Exec)
			return
		}
		name, val, ok := strings.Cut(a.val, "=")
		if !ok {
			break
		}
		if !inertAssign(name, val, true) { // env.go: by allowlist
			c.opaque("sets " + name + ", which changes what runs")
			c.risk(risk.Exec)
		}
		rest = rest[1:]
	}
	if len(rest) == 0 {
		envReader(c) // env alone prints the environment
		return
	}
	c.rewrap(rest, "env")
}

// makeSpec: make(1), GNU make 4.3, OPTIONS: -f reads a makefile, -C changes the directory.
var makeSpec = &spec{man: "make(1)", abbrev: true, opts: `
	-b -m
	-B --always-make
	-C --directory =M
	-d
	--debug ?
	-e --environment-overrides
	-E --eval =
	-f --file --makefile =R
	-h --help
	-i --ignore-errors
	-I --include-dir =D
	-j --jobs ?
	--jobserver-style =
	-k --keep-going
	-l --load-average --max-load ?
	-L --check-symlink-times
	-n --just-print --dry-run --recon
	-o --old-file --assume-old =
	-O --output-sync ?
	-p --print-data-base
	-q --question
	-r --no-builtin-rules
	-R --no-builtin-variables
	--shuffle ?
	-s --silent --quiet
	--no-silent
	-S --no-keep-going --stop
	-t --touch
	--trace
	-v --version
	-w --print-directory
	--no-print-directory
	-W --what-if --new-file --assume-new =
	--warn-undefined-variables`}

// makeCmd runs the recipes of the makefile: exec; -C's directory and -f's makefile are read.
func makeCmd(c *call) {
	c.risk(risk.Exec)
	o := c.parsed(makeSpec)
	if d, ok := o.value("-C"); ok {
		c.read(d)
	}
}

// runner is a build or test tool other than make: it runs the project's code, and its options
// are not analysed (nothing it is told changes that).
func runner(c *call) { c.risk(risk.Exec) }

// gofmtSpec: gofmt(1), Go 1.22, "go doc cmd/gofmt": -w rewrites the files.
var gofmtSpec = &spec{man: "go doc cmd/gofmt", oneDash: true, opts: `
	-cpuprofile =W
	-d
	-e
	-l
	-r =
	-s
	-w !M`}

// gofmt reads its operands (the working directory when none); -w rewrites them.
func gofmt(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(gofmtSpec)
	if o.has("-w") {
		c.risk(risk.Mutating)
		c.writeAll(o.pos)
		return
	}
	c.readAll(o.pos)
}

// formatter is a code formatter whose options are not tabled: it runs (it loads plugins and
// configuration) and may rewrite its operands.
func formatter(c *call) {
	c.risk(risk.Exec, risk.Mutating)
	for _, a := range c.args {
		if !a.lit || !strings.HasPrefix(a.val, "-") {
			c.write(a)
		}
	}
}

func registerRunners() {
	register(makeCmd, "make", "gmake")
	register(runner, "bmake", "ninja", "cmake", "meson", "scons", "bazel", "bazelisk", "buck", "buck2",
		"gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "just", "task", "rake", "pytest", "py.test", "tox", "nox",
		"jest", "vitest", "mocha", "ava", "karma", "playwright", "cypress", "tsc", "eslint", "tslint", "stylelint",
		"ruff", "mypy", "pyright", "flake8", "pylint", "golangci-lint", "staticcheck", "govulncheck", "clippy-driver",
		"rustc", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "javac", "java", "kotlinc", "dotnet", "swift",
		"swiftc", "xcodebuild", "zig", "nim", "ghc", "cabal", "stack", "elixir", "mix", "erl", "rebar3", "dart",
		"flutter", "hugo", "jekyll", "webpack", "vite", "rollup", "esbuild", "parcel", "turbo", "nx", "lerna")
	programs["gofmt"] = gofmt
	register(formatter, "goimports", "prettier", "black", "isort", "rustfmt", "clang-format", "shfmt", "yapf", "autopep8", "standard")
	register(goTool, "go")
	register(cargo, "cargo")
	register(nodePM, "npm", "pnpm", "yarn", "bun", "cnpm")
	register(func(c *call) {
		c.risk(risk.Exec)
		c.fetch("npm")
		c.note(c.name + " downloads and runs a package")
	}, "npx", "pnpx", "bunx")
	register(pip, "pip", "pip3", "pip2", "pipx")
	register(pyPM, "uv", "poetry", "pipenv", "pdm", "conda", "mamba", "micromamba", "hatch", "rye")
	programs["uvx"] = func(c *call) { c.risk(risk.Exec); c.fetch("pypi") }
	register(rubyPM, "gem", "bundle", "bundler")
	programs["composer"] = composer
	register(systemPM, "apt", "apt-get", "aptitude", "dnf", "yum", "apk", "pacman", "zypper", "brew", "port",
		"snap", "flatpak", "nix-env", "emerge", "pkg", "choco", "winget", "scoop")
}

func registerWrappers() {
	programs["exec"] = execBuiltin
	programs["command"] = commandBuiltin
	programs["builtin"] = func(c *call) { c.rewrap(c.args, "builtin") }
	register(privileged, "sudo", "doas", "pkexec", "run0")
	programs["su"] = su
	programs["env"] = envProg
	programs["timeout"] = wrap(timeoutSpec, 1)
	programs["nice"] = wrap(niceSpec, 0)
	programs["ionice"] = wrap(ioniceSpec, 0)
	programs["nohup"] = wrap(nohupSpec, 0)
	programs["setsid"] = wrap(setsidSpec, 0)
	programs["stdbuf"] = wrap(stdbufSpec, 0)
	programs["time"] = timeCmd
	programs["taskset"] = wrap(tasksetSpec, 1)
	programs["chrt"] = chrt
	programs["numactl"] = wrap(numactlSpec, 0)
	programs["unbuffer"] = wrapStarting(unbufferSpec, "the expect interpreter (tclsh) and stty")
	programs["chronic"] = wrap(chronicSpec, 0)
	programs["caffeinate"] = wrap(caffeinateSpec, 0)
	programs["xvfb-run"] = wrapStarting(xvfbSpec, "an X server (Xvfb) and xauth, which write under the temporary directory, and its script's own tools")
	programs["dbus-run-session"] = wrapStarting(dbusRunSpec, "a session bus daemon (dbus-daemon), whose socket it creates")
	register(wrap(noOptsSpec, 0), "catchsegv", "with-contenv")
	programs["entr"] = entr
	register(proxied, "proxychains", "proxychains4", "torsocks", "tsocks")
	programs["rlwrap"] = func(c *call) {
		c.risk(risk.Exec)
		c.opaque("rlwrap's filters and history files are not analysed")
	}
	programs["strace"] = wrap(straceSpec, 0)
	programs["ltrace"] = wrap(ltraceSpec, 0)
	programs["valgrind"] = wrapStarting(valgrindSpec, "its tool, a program of its own (memcheck by default)")
	programs["flock"] = flock
	register(func(c *call) {
		c.risk(risk.Exec)
		c.severity(risk.High)
		c.opaque(c.name + " sets up its own isolation and runs a command under options the analysis does not follow")
	}, "chroot", "unshare", "nsenter", "firejail", "bwrap", "systemd-run", "runuser", "setpriv", "capsh", "sg", "newgrp", "script", "expect", "tmux", "screen", "gdb", "lldb", "parallel", "ssh-agent")
	programs["xargs"] = xargs
	programs["watch"] = watch
	programs["find"] = find
}
