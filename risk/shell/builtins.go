package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// Shell builtins and shell options, by allowlist.
//
// A builtin can change how the shell reads the rest of the line: set -k makes every later
// NAME=value word an environment assignment, set -a exports every later assignment, set -f and
// set +B stop glob and brace expansion, shopt -u interactive_comments makes "#" a word, trap
// runs its handler later in whatever state the shell is then in, enable -f loads a builtin from
// a shared object. The analysis reads the line as bash does by default, so a builtin or an option
// not known to leave that reading unchanged makes the command opaque (and exec): the line's
// later commands are not what the analysis saw.

// inertSetFlags are the set(1) option letters whose setting (-x) and unsetting (+x) leave the
// line's reading unchanged: they stop the line earlier (e, u, n, t), print (v, x), refuse to
// clobber (C), or concern job control and hashing. B is inert only when set (the default).
var inertSetFlags = map[byte]bool{
	'e': true, 'u': true, 'x': true, 'v': true, 'n': true, 't': true, 'C': true, 'b': true, 'h': true,
	'm': true, 'E': true, 'T': true,
}

// inertSetOptions are the set -o names that are inert when set; inertUnsetOptions when unset.
var (
	inertSetOptions = map[string]bool{
		"errexit": true, "nounset": true, "xtrace": true, "verbose": true, "noexec": true, "onecmd": true,
		"noclobber": true, "notify": true, "hashall": true, "monitor": true, "errtrace": true, "functrace": true,
		"pipefail": true, "braceexpand": true, "interactive-comments": true, "ignoreeof": true, "emacs": true,
		"vi": true, "nolog": true,
	}
	inertUnsetOptions = map[string]bool{
		"errexit": true, "nounset": true, "xtrace": true, "verbose": true, "noexec": true, "onecmd": true,
		"noclobber": true, "notify": true, "hashall": true, "monitor": true, "errtrace": true, "functrace": true,
		"pipefail": true, "ignoreeof": true, "emacs": true, "vi": true, "nolog": true, "allexport": true,
		"keyword": true, "noglob": true, "histexpand": true, "history": true, "physical": true, "posix": true,
	}
)

// setFlagName maps set's letters to their -o names.
var setFlagName = map[byte]string{
	'a': "allexport", 'b': "notify", 'e': "errexit", 'f': "noglob", 'h': "hashall", 'k': "keyword",
	'm': "monitor", 'n': "noexec", 'p': "privileged", 't': "onecmd", 'u': "nounset", 'v': "verbose",
	'x': "xtrace", 'B': "braceexpand", 'C': "noclobber", 'E': "errtrace", 'H': "histexpand",
	'P': "physical", 'T': "functrace",
}

// setOption judges one shell option being set (on) or unset: "" when inert, else why not.
func setOption(name string, on bool) string {
	if on && inertSetOptions[name] || !on && inertUnsetOptions[name] {
		return ""
	}
	what := "set -o "
	if !on {
		what = "set +o "
	}
	return what + name + " changes how the shell reads the rest of the line"
}

// setBuiltin: set alone prints every variable; "set -- args" and "set args" set the positional
// parameters; options must be inert.
func setBuiltin(c *call) {
	if len(c.args) == 0 {
		envReader(c)
		return
	}
	c.risk(risk.ReadOnly)
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			c.shellState("set with an argument the line does not spell out")
			return
		}
		if a.val == "--" || a.val == "-" || a.val == "+" || a.val == "" || a.val[0] != '-' && a.val[0] != '+' {
			return // the rest are positional parameters
		}
		on := a.val[0] == '-'
		letters := a.val[1:]
		for j := 0; j < len(letters); j++ {
			l := letters[j]
			if l == 'o' {
				if i+1 >= len(args) {
					return // "set -o" prints the options
				}
				i++
				if !args[i].lit {
					c.shellState("set -o with a name the line does not spell out")
					return
				}
				if why := setOption(args[i].val, on); why != "" {
					c.shellState(why)
				}
				continue
			}
			name, known := setFlagName[l]
			switch {
			case !known:
				c.shellState("set " + a.val + ": an option the analysis does not know")
			case l == 'B' && on, inertSetFlags[l]:
			case !on && inertUnsetOptions[name]:
			default:
				c.shellState(setOption(name, on))
			}
		}
	}
}

// shellState records that the command changes how the shell reads the line after it.
func (c *call) shellState(why string) {
	c.risk(risk.Exec)
	c.opaque(why)
}

// inertShoptSet and inertShoptUnset are the shopt(1) options that leave the line's reading
// unchanged when set (-s) or unset (-u). Expansion (nullglob, dotglob, globskipdots,
// cdable_vars, lastpipe, expand_aliases, extdebug, the compat levels, ...) is not.
var (
	inertShoptSet = map[string]bool{
		"autocd": true, "cdspell": true, "checkhash": true, "checkjobs": true, "checkwinsize": true,
		"cmdhist": true, "complete_fullquote": true, "direxpand": true, "dirspell": true, "execfail": true,
		"extglob": true, "extquote": true, "failglob": true, "force_fignore": true, "globasciiranges": true,
		"globstar": true, "gnu_errfmt": true, "histappend": true, "histreedit": true, "histverify": true,
		"hostcomplete": true, "huponexit": true, "inherit_errexit": true, "interactive_comments": true,
		"lithist": true, "mailwarn": true, "no_empty_cmd_completion": true, "nocaseglob": true,
		"nocasematch": true, "progcomp": true, "progcomp_alias": true, "promptvars": true, "shift_verbose": true,
		"sourcepath": true, "xpg_echo": true, "globskipdots": true, "varredir_close": true, "noexpand_translation": true,
		"bash_source_fullpath": true, "patsub_replacement": true,
	}
	inertShoptUnset = map[string]bool{
		"autocd": true, "cdspell": true, "checkhash": true, "checkjobs": true, "checkwinsize": true,
		"cmdhist": true, "complete_fullquote": true, "direxpand": true, "dirspell": true, "execfail": true,
		"extglob": true, "extquote": true, "failglob": true, "force_fignore": true, "globasciiranges": true,
		"globstar": true, "gnu_errfmt": true, "histappend": true, "histreedit": true, "histverify": true,
		"hostcomplete": true, "huponexit": true, "inherit_errexit": true, "lithist": true, "mailwarn": true,
		"no_empty_cmd_completion": true, "nocaseglob": true, "nocasematch": true, "progcomp": true,
		"progcomp_alias": true, "promptvars": true, "shift_verbose": true, "sourcepath": true, "xpg_echo": true,
		"varredir_close": true, "noexpand_translation": true, "bash_source_fullpath": true, "patsub_replacement": true,
		"nullglob": true, "dotglob": true, "cdable_vars": true, "lastpipe": true, "expand_aliases": true,
		"extdebug": true,
	}
)

// shoptSpec: shopt, bash(1) SHELL BUILTIN COMMANDS.
var shoptSpec = &spec{man: "bash(1) shopt", opts: `
	-p
	-q
	-s !M
	-u !M
	-o !M`}

// shoptBuiltin: querying is read-only; setting or unsetting must be inert.
func shoptBuiltin(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(shoptSpec)
	set, unset := o.has("-s"), o.has("-u")
	if !set && !unset {
		return // prints or tests the options
	}
	for _, a := range o.pos {
		if !a.lit {
			c.shellState("shopt of an option the line does not spell out")
			return
		}
		switch {
		case o.has("-o"):
			if why := setOption(a.val, set); why != "" {
				c.shellState(why)
			}
		case set && !inertShoptSet[a.val], unset && !inertShoptUnset[a.val]:
			c.shellState("shopt " + map[bool]string{true: "-s ", false: "-u "}[set] + a.val + " changes how the shell reads the rest of the line")
		}
	}
}

// trapSpec: trap, bash(1) SHELL BUILTIN COMMANDS.
var trapSpec = &spec{man: "bash(1) trap", opts: `
	-l !M
	-p !M
	-P !M`}

// trapBuiltin: listing and resetting are read-only; a handler runs later (on exit, on a signal,
// before every command with DEBUG), in whatever state the shell is then in (its directory, its
// variables): it is analysed as a script for what it names, and the command is opaque.
func trapBuiltin(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(trapSpec)
	if o.has("-l", "-p", "-P") || len(o.pos) == 0 {
		return
	}
	h := o.pos[0]
	switch {
	case !h.lit:
		c.shellState("a trap handler the line does not spell out")
	case len(o.pos) == 1 || h.val == "-" || h.val == "":
		// Resets a signal (trap SIG, trap - SIG) or ignores it (trap '' SIG).
	default:
		c.code(h.val, true, "trap")
		c.opaque("a trap handler runs later, in a state of the shell the analysis does not follow")
	}
}

// Builtins that only report, or whose effect the analysis does not depend on.
var (
	// dirs, bash(1): prints or clears the directory stack.
	dirsSpec = &spec{man: "bash(1) dirs", num: true, opts: `
	-c
	-l
	-p
	-v`}
	// disown, bash(1).
	disownSpec = &spec{man: "bash(1) disown", opts: `
	-a
	-h
	-r`}
	// caller, bg, fg, suspend, logout, bash(1).
	callerSpec = &spec{man: "bash(1) caller", opts: ``}
	// suspend, bash(1).
	suspendSpec = &spec{man: "bash(1) suspend", opts: `
	-f`}
)

// quietBuiltin is a builtin whose options are in a table and whose operands are not files.
func quietBuiltin(sp *spec) handler {
	return func(c *call) {
		c.risk(risk.ReadOnly)
		c.parsed(sp)
	}
}

// stateBuiltin is a builtin that changes what later words run or how they are read (enable,
// bind, complete, compgen, compopt, fc): exec and opaque, unless it only lists.
func stateBuiltin(c *call) {
	if c.name == "enable" {
		listing := true
		for _, a := range c.args {
			if !a.is("-a", "-p", "-s") {
				listing = false
			}
		}
		if listing {
			c.risk(risk.ReadOnly)
			return
		}
	}
	c.cmd.ExecutesCode = c.name == "fc" || c.name == "compgen" || c.name == "enable"
	c.shellState(c.name + " changes what later commands run or how the shell reads them")
}

// readSpec: read, bash(1): -a names an array; -u reads another descriptor.
var readSpec = &spec{man: "bash(1) read", opts: `
	-a =
	-d =
	-e
	-E
	-i =
	-n =
	-N =
	-p =
	-r
	-s
	-t =
	-u =`}

// mapfileSpec: mapfile and readarray, bash(1): -C evaluates its callback as a command.
var mapfileSpec = &spec{man: "bash(1) mapfile", opts: `
	-d =
	-n =
	-O =
	-s =
	-t
	-u =
	-C =X
	-c =`}

// readBuiltin: read and mapfile set the variables they name to values the analysis does not
// know.
func readBuiltin(c *call) {
	c.risk(risk.ReadOnly)
	sp := readSpec
	if c.name != "read" {
		sp = mapfileSpec
	}
	o := c.parsed(sp)
	for _, a := range append(o.pos, o.values("-a")...) {
		if a.lit {
			c.sc.set(a.val, "", false)
		}
	}
}

// cdSpec: cd, bash(1): -P resolves symbolic links; pushd and popd take -n and +N/-N.
var cdSpec = &spec{man: "bash(1) cd", opts: `
	-L
	-P
	-e
	-@`}

var pushdSpec = &spec{man: "bash(1) pushd", num: true, opts: `
	-n`}

func cdBuiltin(c *call) {
	c.risk(risk.ReadOnly)
	sp := cdSpec
	if c.name == "pushd" || c.name == "popd" {
		sp = pushdSpec
	}
	o := c.parsed(sp)
	target, known := "", true
	if len(o.pos) > 0 {
		target, known = o.pos[0].val, o.pos[0].lit
	}
	if c.name == "popd" || o.has("-NUM") || len(o.pos) > 0 && strings.HasPrefix(target, "+") && c.name == "pushd" {
		known = false
	}
	if o.has("-n") {
		return // only the stack changes
	}
	if c.name == "pushd" && len(o.pos) == 0 {
		known = false // swaps the top two directories
	}
	cd(c.sc, target, known, c.w.opts.Home)
}

// umaskSpec: umask, bash(1).
var umaskSpec = &spec{man: "bash(1) umask", opts: `
	-p
	-S`}

// ulimitSpec: ulimit, bash(1): the operand is the new limit.
var ulimitSpec = &spec{man: "bash(1) ulimit", opts: `
	-S -H -a -b -c -d -e -f -i -k -l -m -n -p -q -r -s -t -u -v -x -P -R -T`}

// hostnameSpec: hostname(1), net-tools 2.10: a name operand, -F or -b sets the host name.
var hostnameSpec = &spec{man: "hostname(1)", abbrev: true, opts: `
	-a --alias
	-A --all-fqdns
	-b --boot !M
	-d --domain
	-f --fqdn --long
	-F --file =M
	-i --ip-address
	-I --all-ip-addresses
	-s --short
	-y --yp --nis
	-V --version
	-h --help`}

// setting handles umask, ulimit and hostname: with no operand they print their setting, with one
// they change it.
func setting(c *call) {
	c.risk(risk.ReadOnly)
	sp := map[string]*spec{"umask": umaskSpec, "ulimit": ulimitSpec, "hostname": hostnameSpec}[c.name]
	o := c.parsed(sp)
	if c.name == "hostname" && (len(o.pos) > 0 || o.has("-F", "-b")) {
		c.risk(risk.Mutating, risk.Destructive)
		c.readAll(o.values("-F"))
		c.note("hostname sets the system's host name")
		return
	}
	if len(o.pos) > 0 {
		c.risk(risk.Mutating)
		c.note(c.name + " changes a setting of the shell")
	}
}

// stty prints the terminal's settings with -a, -g, "size" or "speed", and changes them with any
// other operand (settings such as "-echo" look like options).
func stty(c *call) {
	c.risk(risk.ReadOnly)
	for _, a := range c.args {
		switch {
		case a.is("-a", "--all", "-g", "--save", "size", "speed", "--help", "--version"):
		default:
			c.risk(risk.Mutating)
			if !a.lit || strings.HasPrefix(a.val, "-F") || strings.HasPrefix(a.val, "--file") {
				c.opaque("stty on another device or with a setting the line does not spell out")
			}
			c.note("stty changes the terminal's settings")
			return
		}
	}
}

// topSpec: top(1), procps-ng 4.0: only batch mode (-b) is read-only; interactively top kills
// and renices processes and writes its configuration.
var topSpec = &spec{man: "top(1)", opts: `
	-b !M
	-c
	-d =
	-E =
	-e =
	-H
	-i
	-n =
	-O
	-o =
	-p =
	-S
	-s
	-U -u =
	-w ?
	-1
	-h
	-v`}

func top(c *call) {
	c.risk(risk.ReadOnly)
	if c.name == "top" {
		if o := c.parsed(topSpec); o.has("-b") {
			return
		}
	}
	c.risk(risk.Exec, risk.Destructive)
	c.opaque(c.name + " is interactive: it can kill processes and write its configuration")
}

// historyBuiltin: printing is read-only; -c, -d, -w, -r, -a, -n, -s change the history or its file.
func historyBuiltin(c *call) {
	c.risk(risk.ReadOnly)
	for _, a := range c.args {
		if !a.lit || !isDigits(a.val) {
			c.risk(risk.Exec)
			c.opaque("history with options changes the history or reads or writes a history file")
			return
		}
	}
}

// aliasBuiltin: listing is read-only; a definition changes what a later word runs where the
// shell expands aliases.
func aliasBuiltin(c *call) {
	c.risk(risk.ReadOnly)
	for _, a := range c.args {
		if !a.lit || strings.Contains(a.val, "=") {
			c.risk(risk.Exec)
			c.opaque("alias defines what a command name runs")
			return
		}
	}
}

// unsetBuiltin: the variables (or functions) named become unknown.
func unsetBuiltin(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(unsetSpec)
	for _, a := range o.pos {
		if a.lit {
			c.sc.set(a.val, "", false)
		}
	}
}

// unsetSpec: unset, bash(1).
var unsetSpec = &spec{man: "bash(1) unset", opts: `
	-f
	-v
	-n`}

// publicVars are environment variables that hold no secret: printenv may print them.
var publicVars = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true, "OLDPWD": true,
	"LANG": true, "LANGUAGE": true, "LC_ALL": true, "LC_CTYPE": true, "TERM": true, "TZ": true,
	"HOSTNAME": true, "HOSTTYPE": true, "OSTYPE": true, "MACHTYPE": true, "SHLVL": true, "TMPDIR": true,
	"EDITOR": true, "VISUAL": true, "PAGER": true, "COLUMNS": true, "LINES": true, "DISPLAY": true,
	"XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CACHE_HOME": true, "XDG_RUNTIME_DIR": true,
	"GOPATH": true, "GOROOT": true, "GOBIN": true, "GOOS": true, "GOARCH": true, "GOFLAGS": true,
	"GOPROXY": true, "GOCACHE": true, "GOMODCACHE": true, "CARGO_HOME": true, "RUSTUP_HOME": true,
	"JAVA_HOME": true, "NODE_ENV": true, "VIRTUAL_ENV": true, "CONDA_PREFIX": true, "PYTHONPATH": true,
	"CI": true, "NO_COLOR": true,
}

// printenv prints the whole environment, which may hold secrets (opaque), or the variables it
// names: read-only when every one of them is known to hold no secret.
func printenv(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(printenvSpec)
	if len(o.pos) == 0 {
		envReader(c)
		return
	}
	for _, a := range o.pos {
		if !a.lit || !publicVars[a.val] {
			c.opaque(c.name + " prints a variable that may hold a secret")
			return
		}
	}
}

// printenvSpec: printenv(1), GNU coreutils 9.1.
var printenvSpec = &spec{man: "printenv(1)", abbrev: true, opts: `
	-0 --null
	--help
	--version`}

func registerBuiltins() {
	for name := range statusSpecs {
		programs[name] = status
	}
	programs["printenv"] = printenv
	programs["history"] = historyBuiltin
	programs["set"] = setBuiltin
	programs["shopt"] = shoptBuiltin
	programs["trap"] = trapBuiltin
	programs["alias"] = aliasBuiltin
	register(setting, "umask", "ulimit", "hostname")
	programs["stty"] = stty
	register(top, "top", "htop", "btop")
	programs["unset"] = unsetBuiltin
	register(readBuiltin, "read", "mapfile", "readarray")
	register(cdBuiltin, "cd", "pushd", "popd", "chdir")
	programs["dirs"] = quietBuiltin(dirsSpec)
	programs["disown"] = quietBuiltin(disownSpec)
	register(quietBuiltin(callerSpec), "caller", "bg", "fg", "logout")
	programs["suspend"] = quietBuiltin(suspendSpec)
	register(stateBuiltin, "enable", "bind", "complete", "compgen", "compopt", "fc")
}
