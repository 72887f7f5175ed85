package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// Shells and interpreters.
//
// bash reads its -c script (or a heredoc) as bash, the analysis' own dialect; sh, dash and ash
// as POSIX shells (parsed as POSIX, without brace expansion). zsh, ksh and the other shells read
// words their own way (zsh runs code from a glob qualifier, *(e:cmd:)), so their scripts are not
// analysed: opaque. A shell's options are those of set (see builtins.go) plus its invocation
// options; one that changes how the script is read makes the command opaque.

// shellSpec: bash(1) OPTIONS and INVOCATION, with the options of set; dash(1) takes a subset.
// "+x" words unset what "-x" sets.
var shellSpec = &spec{man: "bash(1) OPTIONS, dash(1)", posix: true, plus: true, abbrev: true, opts: `
	-c !M
	-s !M
	-i
	-l --login
	-r --restricted
	-D --dump-strings --dump-po-strings
	-O =M
	-o =M
	--noediting
	--noprofile
	--norc
	--verbose
	--version
	--help
	--debugger
	--posix !M
	--rcfile --init-file =X
	-q
	-I
	-V
	-a -b -e -f -h -k -m -n -p -t -u -v -x -B -C -E -H -P -T !M`}

// posixShells read the POSIX dialect; bashShells bash's.
var (
	posixShells = map[string]bool{"sh": true, "dash": true, "ash": true, "posh": true}
	bashShells  = map[string]bool{"bash": true}
)

// shellProg is sh, bash and dash: a -c script is parsed in the shell's dialect; a script file
// runs code from a file; no script means code from standard input. zsh, ksh, mksh and yash are
// foreign shells (see foreignShell).
func shellProg(c *call) {
	if c.name == "busybox" {
		if len(c.args) == 0 || !c.args[0].lit {
			c.opaque("busybox applet not known")
			c.risk(risk.Exec)
			return
		}
		if !c.args[0].is("sh", "ash") {
			c.rewrap(c.args, "busybox")
			return
		}
		c.name = "sh"
		c.args = c.args[1:]
	}
	if !bashShells[c.name] && !posixShells[c.name] {
		foreignShell(c)
		return
	}
	posix := posixShells[c.name]
	c.risk(risk.Exec)
	o, idx := shellSpec.parse(c.args)
	c.applyOpts(&o)
	for _, f := range o.flags {
		on := f.name[0] == '-'
		switch {
		case f.opt == nil:
		case f.is([]string{"-o"}) && f.has:
			if !f.val.lit {
				c.shellState(c.name + " -o with a name the line does not spell out")
			} else if why := setOption(f.val.val, on); why != "" {
				c.shellState(why)
			}
		case f.is([]string{"-O"}) && f.has:
			if !f.val.lit || on && !inertShoptSet[f.val.val] || !on && !inertShoptUnset[f.val.val] {
				c.shellState(c.name + " " + f.name + " " + f.val.val + " changes how the shell reads the script")
			}
		case f.is([]string{"--posix"}):
			c.shellState(c.name + " --posix reads the script in another dialect")
		case f.is([]string{"-a"}):
			l := f.name[1]
			if name := setFlagName[l]; !(inertSetFlags[l] || l == 'B' && on || !on && inertUnsetOptions[name]) {
				c.shellState(c.name + " " + f.name + " changes how the shell reads the script")
			}
		}
	}
	rest := c.args[idx:]
	if o.has("-c") {
		switch {
		case len(rest) == 0:
			c.opaque(c.name + " -c without a script")
		case !rest[0].lit:
			c.cmd.ExecutesCode = true
			c.opaque(c.name + " -c runs a script the line does not spell out")
		default:
			c.codeIn(rest[0].val, true, posix, c.name+" -c")
		}
		return
	}
	if o.has("-s") || len(rest) == 0 {
		c.stdinCodeIn(true, posix)
		return
	}
	c.read(rest[0]) // a script file: it runs whatever the file holds
	c.note(c.name + " runs the script file " + rest[0].val)
}

// foreignShell is a shell whose syntax the analysis does not read.
func foreignShell(c *call) {
	c.risk(risk.Exec)
	c.cmd.ExecutesCode = true
	c.opaque(c.name + " scripts are not analysed")
}

// Interpreter tables: the flags that hand code on the line (M: the handler reads them), load a
// module or a library (the path is read, when it is one), or name a file that configures what
// runs (X).
var (
	// python(1), Python 3.11, COMMAND LINE OPTIONS.
	pythonSpec = &spec{man: "python(1)", posix: true, last: []string{"-c", "-m"}, opts: `
	-b -B -d -E -h -? --help --help-env --help-xoptions --help-all -i -I -O -OO -P -q -s -S -u -v -V --version -x
	-c =M
	-m =M
	-W =
	-X =
	--check-hash-based-pycs =`}
	// node(1), Node.js 20: -r, --require, --import and --loader preload modules; --env-file
	// reads a file; the report and profile directories are written; --openssl-config names a
	// configuration that loads code.
	nodeSpec = &spec{man: "node(1)", posix: true, opts: `
	-e --eval -p --print =M
	-c --check
	-i --interactive
	-r --require --import --loader --experimental-loader =R
	--env-file =R
	--input-type --conditions -C --title --max-old-space-size --stack-size --unhandled-rejections =
	--inspect --inspect-brk --inspect-port --inspect-publish-uid ?N
	--no-warnings --no-deprecation --trace-warnings --trace-deprecation --trace-uncaught --enable-source-maps
	--experimental-modules --experimental-vm-modules --experimental-specifier-resolution --experimental-json-modules
	--preserve-symlinks --preserve-symlinks-main --pending-deprecation --throw-deprecation --no-experimental-fetch
	--test --watch --abort-on-uncaught-exception --expose-gc --jitless --no-addons --frozen-intrinsics
	--redirect-warnings --report-dir --report-directory --cpu-prof-dir --heap-prof-dir --diagnostic-dir --tls-keylog =W
	--openssl-config --icu-data-dir =X
	-v --version
	-h --help`}
	// perl(1), perlrun(1): -M and -m load modules, -I adds a library directory, -S searches the
	// PATH for the script, -d runs a debugger module.
	perlSpec = &spec{man: "perlrun(1)", posix: true, opts: `
	-e -E =M
	-0 -C -D -i -l -V -x ?
	-a -c -f -n -p -s -t -T -u -U -v -w -W -X -h
	-F =
	-I =D
	-M -m =M
	-S !X
	-d ?X`}
	// ruby(1), Ruby 3.1: -r loads a library, -I adds a directory, -C changes the directory.
	rubySpec = &spec{man: "ruby(1)", posix: true, opts: `
	-e =M
	-0 -i -W -x ?
	-a -c -d -l -n -p -s -S -v -w -y -h --copyright --verbose --version --help --debug --jit --yjit
	-E --encoding --external-encoding --internal-encoding --disable --enable --dump =
	-F =
	-I =D
	-r =M
	-C =M`}
	// php(1), PHP 8.2: -c names the php.ini and -d sets ini entries (either can load extensions
	// and prepend files); -z loads a Zend extension; -S runs a web server; -r, -B, -R and -E
	// take code.
	phpSpec = &spec{man: "php(1)", posix: true, opts: `
	-r -B -R -E =M
	-f =R
	-F =R
	-c -d -z =X
	-S =N
	-t =D
	-a -n -h -i -l -m -H -s -v -w --ini --help --version
	--rf --rc --re --rz --ri =`}
	// The other interpreters (lua, Rscript, julia, tclsh ...): -e takes code; any other option
	// is not analysed.
	interpSpec = &spec{man: "lua(1), Rscript(1), julia(1) and the like", posix: true, opts: `
	-e =M
	-v --version
	-h --help`}
)

// interpCodeFlags names, per table, the option that hands the interpreter code on the line (its
// aliases included).
var interpCodeFlags = map[*spec]string{pythonSpec: "-c", nodeSpec: "-e", perlSpec: "-e", rubySpec: "-e", phpSpec: "-r", interpSpec: "-e"}

// interpreter handles python, node, perl, ruby, php and the like by their tables: code on the
// line is opaque, a module run by name (python -m) is classified by the module, otherwise the
// first operand is a script file (read) and no operand means code from standard input.
func interpreter(sp *spec) handler {
	return func(c *call) {
		c.risk(risk.Exec)
		o, idx := sp.parse(c.args)
		c.applyOpts(&o)
		rest := c.args[idx:]
		if o.has(interpCodeFlags[sp]) {
			flag := interpCodeFlags[sp]
			for _, f := range o.flags {
				if f.is([]string{flag}) {
					flag = f.name
				}
			}
			c.code("", false, c.name+" "+flag)
			if (c.name == "perl" || c.name == "ruby") && o.has("-i") {
				// perl -pi -e CODE files: edits the files in place.
				c.risk(risk.Mutating)
				c.writeAll(rest)
			}
			return
		}
		if mod, ok := o.value("-m"); ok && sp == pythonSpec {
			if !mod.lit {
				c.opaque("python -m runs a module the line does not spell out")
				return
			}
			pythonModule(c, mod.val, rest)
			return
		}
		if sp == perlSpec && o.has("-M", "-m") || sp == rubySpec && o.has("-r") {
			c.note(c.name + " loads a module, which runs its code")
		}
		if len(rest) == 0 || rest[0].is("-") {
			c.stdinCode(false)
			return
		}
		c.read(rest[0])
		c.note(c.name + " runs the script file " + rest[0].val)
	}
}

func pythonModule(c *call, mod string, rest []arg) {
	switch mod {
	case "pip":
		c.args = rest
		c.name = "pip"
		pip(c)
	case "pytest", "unittest", "doctest", "mypy", "pylint", "black", "ruff", "tox", "nox", "build", "compileall", "py_compile", "timeit", "cProfile", "pdb":
		c.risk(risk.Exec)
		if mod == "black" || mod == "ruff" {
			c.risk(risk.Mutating)
			c.cwd(true)
		}
	case "venv", "virtualenv":
		c.risk(risk.Mutating)
		c.writeAll(rest)
	case "http.server", "SimpleHTTPServer":
		c.risk(risk.Network)
		c.cmd.Network = true
		c.note("serves the working directory over HTTP")
	case "json.tool", "tabnanny", "site", "this":
		c.risk(risk.ReadOnly)
		c.readAll(rest)
	default:
		c.risk(risk.Exec)
	}
}

func registerInterpreters() {
	register(shellProg, "sh", "bash", "dash", "ash", "posh", "busybox")
	register(foreignShell, "zsh", "ksh", "mksh", "yash", "fish", "csh", "tcsh", "nu", "elvish", "xonsh", "pwsh", "powershell", "cmd")
	register(interpreter(pythonSpec), "python", "python3", "python2", "pypy", "pypy3")
	register(interpreter(nodeSpec), "node", "nodejs")
	register(interpreter(perlSpec), "perl")
	register(interpreter(rubySpec), "ruby")
	register(interpreter(phpSpec), "php")
	programs["deno"] = func(c *call) {
		c.risk(risk.Exec)
		c.net() // deno fetches the remote modules a script imports
		c.opaque("deno's subcommands and permission flags are not analysed")
	}
	register(interpreter(interpSpec), "lua", "luajit", "Rscript", "julia", "tclsh", "wish", "osascript", "guile", "racket", "sbcl", "clisp", "groovy", "scala", "kotlin", "jshell")
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
}
