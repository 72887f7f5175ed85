package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// Operand handlers of the table-driven programs: what the operands are once the options are
// parsed and their effects recorded.

// lister reads its operands, or the working directory when it names none (ls, du). A glob
// operand is the listing of its directory: ls and du read names and sizes, not contents, and
// whatever the glob matches is under the directory that "ls -R" or "du" of it would list.
func lister(c *call, o opts) {
	if len(o.pos) == 0 {
		c.cwd(false)
	}
	for _, p := range o.pos {
		if p.lit && p.glob {
			c.unknownRead(globDir(p.val))
			continue
		}
		c.read(p)
	}
}

// globDir is the directory a glob's matches are listed from: its components before the first
// one with a pattern ("src/*.go" is in "src", "*/x" in ".").
func globDir(g string) string {
	i := strings.IndexAny(g, "*?[")
	if i < 0 {
		return g
	}
	j := strings.LastIndexByte(g[:i], '/')
	switch {
	case j < 0:
		return "."
	case j == 0:
		return "/"
	}
	return g[:j]
}

// noOperands: the operands are not paths (names, numbers, formats, character sets).
func noOperands(*call, opts) {}

func treeOperands(c *call, o opts) {
	if o.has("--fromfile") {
		c.readAll(o.pos)
		c.opaque("tree --fromfile lists the paths a file names")
		return
	}
	lister(c, o)
}

// uniqOperands: uniq [INPUT [OUTPUT]] writes its second operand.
func uniqOperands(c *call, o opts) {
	if len(o.pos) > 0 {
		c.read(o.pos[0])
	}
	if len(o.pos) > 1 {
		c.risk(risk.Mutating)
		c.writeAll(o.pos[1:])
	}
}

// xxdOperands: xxd [INFILE [OUTFILE]] writes its second operand.
func xxdOperands(c *call, o opts) {
	uniqOperands(c, o)
}

// lsattrOperands: lsattr with no operand lists the working directory, opening every file in it.
func lsattrOperands(c *call, o opts) {
	if len(o.pos) == 0 {
		c.cwd(false)
	}
	c.readAll(o.pos)
}

// grepOperands: the first operand is the pattern unless -e or -f gave one.
func grepOperands(c *call, o opts) {
	pos := o.pos
	if !o.has("-e", "-f") && len(pos) > 0 {
		pos = pos[1:]
	}
	if len(pos) == 0 && o.has("-r", "-R") {
		c.cwd(false) // a recursive search with no file searches the working directory
	}
	c.readAll(pos)
}

func rgOperands(c *call, o opts) {
	pos := o.pos
	if !o.has("-e", "-f", "--files", "--type-list") && len(pos) > 0 {
		pos = pos[1:]
	}
	if len(pos) == 0 && !o.has("--type-list") {
		c.cwd(false) // rg searches the working directory when it names no path
	}
	c.readAll(pos)
}

// jqFilterRisky reports a jq or yq program that reads what the line does not name: the
// environment (env, $ENV, strenv), files (load, yq's load_str), modules (import, include).
func jqFilterRisky(s string) bool {
	for _, w := range []string{"env", "ENV", "load", "import", "include", "input_filename", "$__"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func jqOperands(c *call, o opts) {
	pos := o.pos
	if !o.has("-f", "--from-file") && len(pos) > 0 {
		f := pos[0]
		if !f.lit || jqFilterRisky(f.val) {
			c.opaque(c.name + " filter reads the environment or files the line does not name")
		}
		pos = pos[1:]
	}
	if o.has("-L") {
		c.opaque(c.name + " -L loads modules the line does not name")
	}
	if o.has("--args", "--jsonargs") {
		return // the operands are values
	}
	c.readAll(pos)
}

func yqOperands(c *call, o opts) {
	pos := o.pos
	if len(pos) > 0 && pos[0].is("eval", "e", "eval-all", "ea") {
		pos = pos[1:]
	}
	if !o.has("--from-file") && len(pos) > 0 {
		f := pos[0]
		if !f.lit || jqFilterRisky(f.val) || strings.HasPrefix(f.val, "./") || strings.HasPrefix(f.val, "/") {
			if !f.lit || jqFilterRisky(f.val) {
				c.opaque("yq expression reads the environment or files the line does not name")
			}
		}
		pos = pos[1:]
	}
	if o.has("-i") {
		c.writeAll(pos)
		return
	}
	c.readAll(pos)
}

// dateOperands: "+FORMAT" prints; any other operand sets the system clock.
func dateOperands(c *call, o opts) {
	for _, p := range o.pos {
		if !p.lit || !strings.HasPrefix(p.val, "+") {
			c.risk(risk.Destructive)
			c.note("date with a time operand sets the system clock")
			return
		}
	}
}

// pagerOperands: files read; "+cmd" runs pager commands at start (less's "!" runs a shell).
func pagerOperands(c *call, o opts) {
	for _, p := range o.pos {
		if p.lit && strings.HasPrefix(p.val, "+") {
			// less runs a +command at startup, "!" shell escapes included; on many systems more
			// is less, so more's +command is treated the same.
			c.cmd.ExecutesCode = true
			c.risk(risk.Exec)
			c.opaque(c.name + " " + p.val + " runs pager commands, which can run a shell")
			continue
		}
		c.read(p)
	}
}

// manOperands: page names, or files with -l or a slash.
func manOperands(c *call, o opts) {
	for _, p := range o.pos {
		if o.has("-l") || !p.lit || strings.Contains(p.val, "/") {
			c.read(p)
		}
	}
}

func shufOperands(c *call, o opts) {
	if o.has("-e", "-i") {
		return
	}
	c.readAll(o.pos)
}

// sed(1), GNU sed 4.9, OPTIONS: -i writes the operands; --sandbox refuses w, e and r.
var sedSpec = &spec{man: "sed(1)", abbrev: true, opts: `
	-n --quiet --silent
	--debug
	-e --expression =
	-f --file =R
	--follow-symlinks
	-i --in-place ?M
	-I =M
	-l --line-length =
	--posix
	-E -r --regexp-extended
	-s --separate
	--sandbox
	-u --unbuffered
	-z --null-data
	-a
	--help
	--version`}

func sed(c *call) {
	c.risk(risk.ReadOnly)
	o, _ := sedSpec.parse(c.args)
	c.applyOpts(&o)
	scripts := o.values("-e")
	pos := o.pos
	if len(scripts) == 0 && !o.has("-f") && len(pos) > 0 {
		scripts, pos = pos[:1], pos[1:]
	}
	if o.has("-f") && !o.has("--sandbox") {
		c.opaque("the sed script is in a file the analysis does not read")
		c.risk(risk.Exec)
	}
	inPlace := o.has("-i", "-I")
	if inPlace {
		// BSD's "-i SUFFIX" takes the next word: any operand may be the script.
		for _, f := range o.flags {
			if f.is([]string{"-i"}) && !f.has {
				scripts = append(scripts, pos...)
			}
		}
	}
	for _, s := range scripts {
		if (!s.lit || sedRisky(s.val)) && !o.has("--sandbox") {
			c.opaque("the sed script may write files or run commands (w, e, r)")
			c.risk(risk.Exec)
			break
		}
	}
	if inPlace {
		c.risk(risk.Mutating)
		c.writeAll(pos)
		return
	}
	c.readAll(pos)
}

// awk(1): POSIX awk, gawk 5.3 and mawk OPTIONS. A program file, an extension, a debugger
// script or a profile is opaque or written.
var awkSpec = &spec{man: "awk(1) gawk 5.3", abbrev: true, opts: `
	-f --file =R
	-v --assign =
	-F --field-separator =
	-b --characters-as-bytes
	-c --traditional
	-C --copyright
	-e --source =
	-E --exec =R
	-g --gen-pot
	-h --usage --help
	-i --include =R
	-l --load =X
	-L --lint ?
	-M --bignum
	-N --use-lc-numeric
	-n --non-decimal-data
	-o --pretty-print ?W
	-O --optimize
	-p --profile ?W
	-d --dump-variables ?W
	-D --debug ?X
	-P --posix
	-r --re-interval
	-s --no-optimize
	-S --sandbox
	-t --lint-old
	-V --version
	-W =X`}

func awkRisky(s string) bool {
	for _, w := range []string{"system", "|", ">", "getline", "@", "ENVIRON", "PROCINFO"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func awk(c *call) {
	c.risk(risk.ReadOnly)
	o, _ := awkSpec.parse(c.args)
	c.applyOpts(&o)
	pos := o.pos
	scripts := o.values("-e")
	if !o.has("-f", "-E", "-e") && len(pos) > 0 {
		scripts, pos = append(scripts, pos[0]), pos[1:]
	}
	for _, s := range scripts {
		if !s.lit || awkRisky(s.val) {
			c.cmd.ExecutesCode = true
			c.risk(risk.Exec)
			c.opaque("the awk program may run commands or write files")
			break
		}
	}
	if o.has("-f", "-E", "-i") {
		c.cmd.ExecutesCode = true
		c.risk(risk.Exec)
		c.opaque("the awk program is in a file")
	}
	for _, a := range pos {
		if a.lit && strings.Contains(a.val, "=") && !strings.Contains(a.val, "/") {
			continue // a var=value assignment operand
		}
		c.read(a)
	}
}

// echo(1), the bash builtin: every word is printed; there is nothing to run or write.
func echo(c *call) { c.risk(risk.ReadOnly) }

// quietNoArgs is a program that reads nothing and changes nothing, whatever its operands (true,
// false, ":", test, "[").
func quietNoArgs(c *call) { c.risk(risk.ReadOnly) }

// environment readers print the environment, which may hold secrets: opaque.
func envReader(c *call) {
	c.risk(risk.ReadOnly)
	c.opaque(c.name + " prints the environment, which may hold secrets")
}

// ps reports on processes. Its syntax mixes UNIX options (-ef), BSD letters without a dash (aux)
// and GNU long options; none of them reads or writes a file or runs a program, and the operands
// select processes. BSD's "e" (and a format naming the environment) prints other processes'
// environment, which may hold secrets: opaque.
func ps(c *call) {
	c.risk(risk.ReadOnly)
	for _, a := range c.args {
		if !a.lit || !strings.HasPrefix(a.val, "-") && strings.ContainsRune(a.val, 'e') || strings.Contains(strings.ToLower(a.val), "env") {
			c.opaque("ps e prints the environment of processes, which may hold secrets")
			return
		}
	}
}

// lsof lists open files. Its options start with "-" or "+" and take values in several ways;
// none writes or runs anything. A word with a "/" (a file, +D DIR, -k FILE) is read.
func lsof(c *call) {
	c.risk(risk.ReadOnly)
	for _, a := range c.args {
		if !a.lit {
			c.opaque("an lsof argument the line does not spell out")
			continue
		}
		if i := strings.IndexByte(a.val, '/'); i >= 0 {
			c.read(arg{val: a.val[strings.LastIndexAny(a.val[:i+1], "-+=")+1:], lit: true, word: a.word})
		}
	}
}

// extraSpecs lists the tables used by handlers outside readOnlyTools, sedSpec, awkSpec and the
// git tables (for the option sweep).
func extraSpecs() map[string]*spec {
	out := map[string]*spec{}
	for sub, s := range goSpecs {
		out["go "+sub] = s
	}
	for name, s := range statusSpecs {
		out[name] = s
	}
	for name, s := range lookupSpecs {
		out[name] = s
	}
	for name, k := range compressors {
		out[name] = k.spec
	}
	for name, s := range map[string]*spec{
		"timeout": timeoutSpec, "nice": niceSpec, "ionice": ioniceSpec, "nohup": nohupSpec, "setsid": setsidSpec,
		"stdbuf": stdbufSpec, "taskset": tasksetSpec, "strace": straceSpec, "xargs": xargsSpec,
		"npm": npmSpec, "pnpm": pnpmSpec, "pip": pipSpec, "cargo": cargoSpec, "curl": curlSpec, "wget": wgetSpec,
		"docker": dockerGlobalSpec, "docker ps": dockerReadSpec, "docker run": dockerRunSpec, "docker build": dockerBuildSpec,
		"docker compose": dockerComposeSpec, "docker cp": dockerFileSpec,
		"touch": touchSpec, "mkdir": mkdirSpec, "tee": teeSpec, "cp": cpSpec, "mv": mvSpec, "install": installSpec,
		"ln": lnSpec, "truncate": truncateSpec, "shred": shredSpec, "rm": rmSpec, "rmdir": rmdirSpec, "chmod": chmodSpec,
		"chown": chownSpec, "chattr": chattrSpec, "setfacl": setfaclSpec, "mktemp": mktempSpec, "split": splitSpec,
		"csplit": csplitSpec, "patch": patchSpec, "tar": tarSpec, "unzip": unzipSpec, "zip": zipSpec,
		"shopt": shoptSpec, "trap": trapSpec, "dirs": dirsSpec, "disown": disownSpec, "caller": callerSpec,
		"suspend": suspendSpec, "read": readSpec, "mapfile": mapfileSpec, "cd": cdSpec, "pushd": pushdSpec,
		"umask": umaskSpec, "ulimit": ulimitSpec, "hostname": hostnameSpec, "top": topSpec, "unset": unsetSpec,
		"printenv": printenvSpec, "exec": execSpec, "command": commandSpec, "sudo": sudoSpec, "doas": doasSpec,
		"pkexec": pkexecSpec, "run0": run0Spec, "su": suSpec, "time": timeSpec, "flock": flockSpec, "watch": watchSpec,
		"chrt": chrtSpec, "numactl": numactlSpec, "ltrace": ltraceSpec, "valgrind": valgrindSpec,
		"unbuffer": unbufferSpec, "chronic": chronicSpec, "caffeinate": caffeinateSpec, "xvfb-run": xvfbSpec,
		"dbus-run-session": dbusRunSpec, "entr": entrSpec, "catchsegv": noOptsSpec, "env": envSpec, "make": makeSpec,
		"gofmt": gofmtSpec, "uv": uvSpec, "poetry": poetrySpec, "pipenv": pmPlainSpec, "apt-get": aptSpec,
		"systemctl": systemctlSpec, "crontab": crontabSpec, "ssh-keygen": sshKeygenSpec, "openssl": opensslSpec,
		"ssh": sshSpec, "scp": scpSpec, "sftp": sftpSpec, "rsync": rsyncSpec, "nc": ncSpec, "http": httpieSpec,
		"aria2c": aria2Spec, "axel": axelSpec, "git (other subcommands)": gitOtherSpec,
	} {
		out[name] = s
	}
	return out
}

// versionFlags are the spellings, besides "--version", with which a program given nothing else
// prints its version and exits.
var versionFlags = map[string][]string{
	"python": {"-V", "-VV"}, "python3": {"-V", "-VV"}, "python2": {"-V"}, "pypy": {"-V"}, "pypy3": {"-V"},
	"node": {"-v"}, "nodejs": {"-v"}, "deno": {"-V"}, "bun": {"-v"}, "perl": {"-v"}, "ruby": {"-v"}, "php": {"-v"},
	"java": {"-version"}, "javac": {"-version"}, "go": {"version"}, "cargo": {"-V", "version"}, "rustc": {"-V"},
	"npm": {"-v"}, "pnpm": {"-v"}, "yarn": {"-v"}, "npx": {"-v"}, "make": {"-v"}, "pip": {"-V"}, "pip3": {"-V"},
	"uv": {"-V", "version"}, "gem": {"-v"}, "bundle": {"-v", "version"}, "composer": {"-V"}, "lua": {"-v"},
	"git": {"version"}, "docker": {"-v"}, "kubectl": {"version"}, "helm": {"version"}, "terraform": {"version", "-v"},
	"gh": {"version"}, "tsc": {"-v"}, "dotnet": {"--info"}, "swift": {}, "zig": {"version"}, "gcc": {}, "g++": {},
	"clang": {}, "clang++": {}, "cc": {}, "cmake": {}, "ninja": {}, "bazel": {"version"}, "mvn": {"-v"},
	"gradle": {"-v"}, "ruff": {"-V"}, "mypy": {"-V"}, "pytest": {"-V"}, "eslint": {"-v"}, "prettier": {"-v"},
	"jest": {"-v"}, "vite": {"-v"}, "black": {}, "flake8": {}, "pylint": {}, "golangci-lint": {"version"},
	"rustup": {"-V"}, "nvm": {}, "poetry": {"-V"}, "conda": {"-V"}, "elixir": {"-v"}, "mix": {"-v"},
	"ghc": {"-V"}, "kotlin": {"-version"}, "scala": {"-version"}, "dart": {}, "flutter": {},
}

// withVersion makes "prog --version" (and the program's own version spelling) read-only before
// the program's handler runs.
func withVersion(name string, h handler) handler {
	flags := append([]string{"--version"}, versionFlags[name]...)
	return func(c *call) {
		if len(c.args) == 1 && c.args[0].is(flags...) {
			c.risk(risk.ReadOnly)
			if name == "cargo" {
				c.config(ConfigFiles, true, cargoConfig...) // rustup picks the toolchain first
			}
			return
		}
		h(c)
	}
}
