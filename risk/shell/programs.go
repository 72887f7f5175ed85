package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// handler classifies one program's arguments.
type handler func(c *call)

var programs map[string]handler

func register(h handler, names ...string) {
	for _, n := range names {
		programs[n] = h
	}
}

// sedRisky reports whether a sed script has a command that writes a file (w, W, the s///w flag),
// reads one into the output (r, R) or runs a command (e, the s///e flag).
func sedRisky(s string) bool {
	skipDelimited := func(i int, delim byte) int { // returns the index after the closing delimiter
		for i < len(s) && s[i] != delim {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		return i + 1
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!' || c == ',' || c == '$' || c == '~' || c == '+' || (c >= '0' && c <= '9'):
			i++
		case c == '/':
			i = skipDelimited(i+1, '/')
		case c == '\\' && i+1 < len(s):
			i = skipDelimited(i+2, s[i+1])
		case c == 's' || c == 'y':
			if i+1 >= len(s) {
				return false
			}
			d := s[i+1]
			i = skipDelimited(i+2, d)
			i = skipDelimited(i, d)
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				if c == 's' && (s[i] == 'w' || s[i] == 'e') {
					return true
				}
				i++
			}
		case c == 'e' || c == 'w' || c == 'W' || c == 'r' || c == 'R':
			return true
		case c == 'a' || c == 'i' || c == 'c' || c == 'b' || c == 't' || c == 'T' || c == ':' || c == '#':
			for i < len(s) && s[i] != '\n' && (s[i] != ';' || c == 'a' || c == 'i' || c == 'c' || c == '#') {
				i++
			}
		default:
			i++
		}
	}
	return false
}

func init() {
	programs = map[string]handler{}
	registerReaders()
	registerWriters()
	registerRunners()
	registerInterpreters()
	registerWrappers()
	registerSystem()
	register(gitCmd, "git")
	registerNetwork()
	for name := range versionFlags {
		if h, ok := programs[name]; ok {
			programs[name] = withVersion(name, h)
		}
	}
}

// registerReaders registers the read-only programs: option tables and directory changes.
func registerReaders() {
	// Read only, by option table (tables.go).
	for name, t := range readOnlyTools {
		programs[name] = t.run
	}
	programs["echo"] = echo
	register(quietNoArgs, "true", "false", ":", "test", "[", "[[")
	registerBuiltins()
	programs["ps"] = ps
	programs["lsof"] = lsof
}

// registerRunners registers build and test runners and package managers: they run the project's code.
func registerRunners() {
	// Build and test runners: they run the project's code.
	register(func(c *call) {
		c.risk(risk.Exec)
		o, _ := parseOpts(c.args, "CfIjlo", false, "directory", "file", "makefile", "include-dir", "jobs", "load-average")
		c.readAll(o.values("-f", "--file", "--makefile"))
		if d, ok := o.value("-C", "--directory"); ok {
			c.read(d)
		}
	}, "make", "gmake", "bmake", "ninja", "cmake", "meson", "scons", "bazel", "bazelisk", "buck", "buck2",
		"gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "just", "task", "rake", "pytest", "py.test", "tox", "nox",
		"jest", "vitest", "mocha", "ava", "karma", "playwright", "cypress", "tsc", "eslint", "tslint", "stylelint",
		"ruff", "mypy", "pyright", "flake8", "pylint", "golangci-lint", "staticcheck", "govulncheck", "clippy-driver",
		"rustc", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "javac", "java", "kotlinc", "dotnet", "swift",
		"swiftc", "xcodebuild", "zig", "nim", "ghc", "cabal", "stack", "elixir", "mix", "erl", "rebar3", "dart",
		"flutter", "hugo", "jekyll", "webpack", "vite", "rollup", "esbuild", "parcel", "turbo", "nx", "lerna")
	register(func(c *call) {
		c.risk(risk.Exec)
		o, _ := parseOpts(c.args, "", false)
		if o.has("-w", "--write", "-i", "--fix", "--in-place", "-l") || c.name == "rustfmt" {
			c.risk(risk.Mutating)
			c.writeAll(o.pos)
			return
		}
		c.readAll(o.pos)
	}, "gofmt", "goimports", "prettier", "black", "isort", "rustfmt", "clang-format", "shfmt", "yapf", "autopep8", "standard")
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
	programs["composer"] = func(c *call) {
		simplePM(c, "composer", []string{"install", "require", "update", "upgrade", "create-project"}, []string{"remove"})
	}
	register(systemPM, "apt", "apt-get", "aptitude", "dnf", "yum", "apk", "pacman", "zypper", "brew", "port",
		"snap", "flatpak", "nix-env", "emerge", "pkg", "choco", "winget", "scoop")
}

// registerInterpreters registers interpreters and shells.
func registerInterpreters() {
	// Interpreters and shells.
	register(shellProg, "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "busybox")
	register(foreignShell, "fish", "csh", "tcsh", "nu", "elvish", "xonsh", "pwsh", "powershell", "cmd")
	register(interpreter("c", "m"), "python", "python3", "python2", "pypy", "pypy3")
	register(interpreter("ep", "r"), "node", "nodejs", "deno")
	register(interpreter("eE", "Ir"), "perl", "ruby")
	register(interpreter("rB", "dfc"), "php")
	register(interpreter("e", "l"), "lua", "luajit", "Rscript", "julia", "tclsh", "wish", "osascript", "guile", "racket", "sbcl", "clisp", "groovy", "scala", "kotlin", "jshell")
	programs["eval"] = func(c *call) {
		c.cmd.ExecutesCode = true
		c.risk(risk.Exec)
		var parts []string
		for _, a := range c.args {
			if !a.lit {
				c.opaque("eval of a value the line does not spell out")
				return
			}
			parts = append(parts, a.val)
		}
		c.code(strings.Join(parts, " "), true, "eval")
	}
	register(func(c *call) {
		c.cmd.ExecutesCode = true
		c.risk(risk.Exec)
		c.opaque(c.name + " runs a script in this shell")
		if len(c.args) > 0 {
			c.read(c.args[0])
		}
	}, "source", ".")
	programs["trap"] = func(c *call) {
		c.risk(risk.ReadOnly)
		if len(c.args) > 0 && c.args[0].lit && !strings.HasPrefix(c.args[0].val, "-") {
			c.code(c.args[0].val, true, "trap")
		} else if len(c.args) > 0 && !c.args[0].lit {
			c.opaque("a trap handler the line does not spell out")
		}
	}
}

// registerWrappers registers wrappers that run another command.
func registerWrappers() {
	// Wrappers that run another command.
	programs["exec"] = func(c *call) {
		o, idx := parseOpts(c.args, "a", true)
		_ = o
		if idx >= len(c.args) {
			c.risk(risk.ReadOnly)
			return
		}
		c.rewrap(c.args[idx:], "exec")
	}
	programs["command"] = func(c *call) {
		o, idx := parseOpts(c.args, "", true)
		if o.has("-v", "-V") {
			c.risk(risk.ReadOnly)
			return
		}
		c.rewrap(c.args[idx:], "command")
	}
	programs["builtin"] = func(c *call) { c.rewrap(c.args, "builtin") }
	register(privileged, "sudo", "doas", "pkexec", "run0")
	programs["su"] = func(c *call) {
		c.cmd.Elevated = true
		c.risk(risk.Exec, risk.Destructive)
		c.severity(risk.High)
		o, _ := parseOpts(c.args, "cgGs", false, "command", "group", "shell", "session-command")
		if code, ok := o.value("-c", "--command", "--session-command"); ok && code.lit {
			c.code(code.val, true, "su -c")
			return
		}
		c.opaque("su without a command starts an interactive root shell")
	}
	programs["env"] = envProg
	programs["timeout"] = wrapSpec(timeoutSpec, 1)
	programs["nice"] = wrapSpec(niceSpec, 0)
	programs["ionice"] = wrapSpec(ioniceSpec, 0)
	programs["nohup"] = wrapSpec(nohupSpec, 0)
	programs["setsid"] = wrapSpec(setsidSpec, 0)
	programs["stdbuf"] = wrapSpec(stdbufSpec, 0)
	programs["time"] = func(c *call) {
		o, idx := parseOpts(c.args, "fo", true, "format", "output")
		if out, ok := o.value("-o", "--output"); ok {
			c.risk(risk.Mutating)
			c.write(out)
		}
		c.rewrap(c.args[idx:], "time")
	}
	programs["taskset"] = wrapSpec(tasksetSpec, 1)
	programs["chrt"] = wrapper("", nil, 1)
	programs["numactl"] = wrapper("CNmpi", []string{"cpunodebind", "membind", "physcpubind", "interleave", "preferred"}, 0)
	register(wrapper("", nil, 0), "unbuffer", "caffeinate", "chronic", "catchsegv", "xvfb-run", "dbus-run-session", "proxychains", "proxychains4", "torsocks", "tsocks", "rlwrap", "entr", "with-contenv")
	register(wrapSpec(straceSpec, 0), "strace", "ltrace")
	programs["valgrind"] = wrapper("", nil, 0)
	programs["flock"] = func(c *call) {
		o, idx := parseOpts(c.args, "cEw", true, "command", "conflict-exit-code", "timeout")
		if code, ok := o.value("-c", "--command"); ok {
			if code.lit {
				c.code(code.val, true, "flock -c")
			} else {
				c.opaque("flock -c runs a command the line does not spell out")
			}
			return
		}
		if idx < len(c.args) {
			c.risk(risk.Mutating)
			c.write(c.args[idx]) // the lock file
			c.rewrap(c.args[idx+1:], "flock")
			return
		}
		c.risk(risk.ReadOnly)
	}
	register(func(c *call) {
		c.risk(risk.Exec)
		c.severity(risk.High)
		c.opaque(c.name + " sets up its own isolation and runs a command under options the analysis does not follow")
	}, "chroot", "unshare", "nsenter", "firejail", "bwrap", "systemd-run", "runuser", "setpriv", "capsh", "sg", "newgrp", "script", "expect", "tmux", "screen", "gdb", "lldb", "parallel", "ssh-agent")
	programs["xargs"] = xargs
	programs["watch"] = func(c *call) {
		o, idx := parseOpts(c.args, "nqd", true, "interval", "differences")
		if o.has("-x", "--exec") {
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
	programs["find"] = find
}

// registerSystem registers processes and the system.
func registerSystem() {
	// Processes and the system.
	register(func(c *call) { c.risk(risk.Destructive) }, "kill", "pkill", "killall", "killall5", "xkill", "skill")
	register(func(c *call) { c.risk(risk.Destructive); c.severity(risk.High) },
		"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "mount", "umount", "losetup", "swapon", "swapoff",
		"modprobe", "insmod", "rmmod", "iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "useradd", "userdel",
		"usermod", "groupadd", "groupdel", "passwd", "chpasswd", "visudo", "sysctl", "hwclock", "timedatectl", "hostnamectl")
	register(func(c *call) {
		if len(c.args) > 0 && c.args[0].is("status", "show", "list-units", "list-unit-files", "is-active", "is-enabled", "cat", "list-timers", "--version") {
			c.risk(risk.ReadOnly)
			return
		}
		c.risk(risk.Destructive, risk.Exec)
	}, "systemctl", "service", "launchctl", "rc-service", "sv")
	programs["crontab"] = func(c *call) {
		o, _ := parseOpts(c.args, "u", false)
		switch {
		case o.has("-l"):
			c.risk(risk.ReadOnly)
		case o.has("-r"):
			c.risk(risk.Destructive)
		default:
			c.risk(risk.Mutating, risk.Exec)
			c.readAll(o.pos)
		}
	}
	programs["ssh-keygen"] = func(c *call) {
		c.risk(risk.Mutating)
		o, _ := parseOpts(c.args, "bCfNtZaEIjmnOrsuVzDFgKPQRSwY", false)
		if f, ok := o.value("-f"); ok {
			c.write(f)
		}
	}
	programs["openssl"] = func(c *call) {
		c.risk(risk.ReadOnly)
		for i := 0; i+1 < len(c.args); i++ {
			switch {
			case c.args[i].is("-in", "-key", "-CAfile", "-inkey", "-signkey", "-certfile"):
				c.read(c.args[i+1])
			case c.args[i].is("-out", "-keyout"):
				c.risk(risk.Mutating)
				c.write(c.args[i+1])
			case c.args[i].is("-connect"):
				c.net(hostOf(c.args[i+1].val))
			}
		}
	}
}

func wrapper(shortVal string, longVal []string, skip int) handler {
	return func(c *call) {
		_, idx := parseOpts(c.args, shortVal, true, longVal...)
		rest := c.args[idx:]
		if len(rest) < skip {
			c.risk(risk.ReadOnly)
			return
		}
		rest = rest[skip:]
		if len(rest) == 0 {
			c.risk(risk.ReadOnly)
			return
		}
		c.rewrap(rest, c.name)
	}
}

func privileged(c *call) {
	c.cmd.Elevated = true
	c.risk(risk.Exec, risk.Destructive)
	c.severity(risk.High)
	c.note(c.name + " runs the command with raised privileges")
	o, idx := parseOpts(c.args, "uUgpCDhrtTRc", true, "user", "group", "prompt", "close-from", "chdir", "host", "role", "type", "command-timeout", "other-user", "chroot")
	if o.has("-i", "--login", "-s", "--shell") && idx >= len(c.args) {
		c.opaque(c.name + " starts an interactive root shell")
		return
	}
	if o.has("-e", "--edit") {
		c.risk(risk.Mutating)
		c.writeAll(c.args[idx:])
		return
	}
	if d, ok := o.value("-D", "--chdir"); ok {
		cd(c.sc, d.val, d.lit, c.w.opts.Home)
	}
	if o.has("-i", "--login", "-s", "--shell") {
		// "sudo -s cmd args" runs the command through a shell.
		var parts []string
		for _, a := range c.args[idx:] {
			if !a.lit {
				c.opaque("a root shell command the line does not spell out")
				return
			}
			parts = append(parts, a.val)
		}
		c.code(strings.Join(parts, " "), true, c.name+" -s")
		return
	}
	c.rewrap(c.args[idx:], c.name)
}

func envProg(c *call) {
	args := c.args
	for len(args) > 0 {
		a := args[0]
		if !a.lit {
			c.opaque("env with an argument the line does not spell out")
			c.risk(risk.Exec)
			return
		}
		switch {
		case a.val == "--":
			args = args[1:]
			goto command
		case a.val == "-i" || a.val == "-" || a.val == "--ignore-environment" || a.val == "-0" || a.val == "--null" || a.val == "-v" || a.val == "--debug":
			args = args[1:]
		case a.val == "-u" || a.val == "--unset" || a.val == "-P":
			if len(args) < 2 {
				return
			}
			args = args[2:]
		case strings.HasPrefix(a.val, "--unset=") || strings.HasPrefix(a.val, "-u"):
			args = args[1:]
		case a.val == "-C" || a.val == "--chdir" || strings.HasPrefix(a.val, "--chdir="):
			dir := strings.TrimPrefix(a.val, "--chdir=")
			if a.val == "-C" || a.val == "--chdir" {
				if len(args) < 2 {
					return
				}
				dir, args = args[1].val, args[2:]
			} else {
				args = args[1:]
			}
			cd(c.sc, dir, true, c.w.opts.Home)
		case a.val == "-S" || a.val == "--split-string" || strings.HasPrefix(a.val, "--split-string=") || strings.HasPrefix(a.val, "-S"):
			// env -S splits one string into a command line.
			s := strings.TrimPrefix(strings.TrimPrefix(a.val, "--split-string="), "-S")
			rest := args[1:]
			if a.val == "-S" || a.val == "--split-string" {
				if len(args) < 2 {
					return
				}
				s, rest = args[1].val, args[2:]
			}
			for _, r := range rest {
				if !r.lit {
					c.opaque("env -S with an argument the line does not spell out")
					return
				}
				s += " " + r.val
			}
			c.risk(risk.Exec)
			c.code(s, true, "env -S")
			return
		case strings.HasPrefix(a.val, "-"):
			c.opaque("env flag " + a.val + " is not understood")
			c.risk(risk.Exec)
			return
		case strings.Contains(a.val, "="):
			name := a.val[:strings.IndexByte(a.val, '=')]
			if !inertAssign(name, a.val[len(name)+1:], true) { // env.go: by allowlist
				c.opaque("sets " + name + ", which changes what runs")
				c.risk(risk.Exec)
			}
			args = args[1:]
		default:
			goto command
		}
	}
command:
	if len(args) == 0 {
		envReader(c) // env alone prints the environment
		return
	}
	c.rewrap(args, "env")
}
