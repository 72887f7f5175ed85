package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Environment variables, by allowlist.
//
// A variable in a command's environment can change what the command runs: PAGER, EDITOR,
// LESSOPEN, GIT_SSH_COMMAND, BASH_ENV, LD_PRELOAD, PYTHONSTARTUP, NODE_OPTIONS and hundreds of
// others, most of which nobody has listed. So an assignment prefix (VAR=x cmd), an `env VAR=x`,
// or an export is inert only when the variable is on the short list below; any other variable
// makes the command opaque and exec.

// inertNames are variables that only change how a program formats its output, never what it
// runs, loads or reads.
var inertNames = map[string]bool{
	// Locale (glibc categories; a value with "/" names a locale directory and is not inert).
	"LANG": true, "LANGUAGE": true, "LC_ALL": true, "LC_CTYPE": true, "LC_NUMERIC": true, "LC_TIME": true,
	"LC_COLLATE": true, "LC_MONETARY": true, "LC_MESSAGES": true, "LC_PAPER": true, "LC_NAME": true,
	"LC_ADDRESS": true, "LC_TELEPHONE": true, "LC_MEASUREMENT": true, "LC_IDENTIFICATION": true,
	"TZ": true,
	// Terminal and colour (TERM names a terminfo entry; a value with "/" is not inert).
	"TERM": true, "COLUMNS": true, "LINES": true, "NO_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true,
	"FORCE_COLOR": true, "COLORTERM": true,
	// Flags that runtimes read as plain switches.
	"CI": true, "DEBIAN_FRONTEND": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
	"PYTHONHASHSEED": true, "RUST_BACKTRACE": true, "RUST_LOG": true, "NODE_ENV": true,
	// Go's target platform (a name, never a path).
	"GOOS": true, "GOARCH": true,
}

// pagerNames are variables that name a program, inert only when they name none or "cat";
// editorNames likewise, with "true" or ":" (an editor that leaves the file as it is).
var (
	pagerNames  = map[string]bool{"PAGER": true, "GIT_PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true}
	editorNames = map[string]bool{"EDITOR": true, "VISUAL": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true}
)

// inertEnv reports whether setting the environment variable name (to a value it checks
// with inertValue) cannot change what a command runs, loads or reads. It is the predicate for
// assignment prefixes, `env NAME=value cmd` and exports.
func inertEnv(name string) bool { return inertNames[name] }

// inertAssign reports whether NAME=value in a command's environment is inert: the name is on
// the allowlist and the value is one it accepts. lit says whether the value is known.
func inertAssign(name, value string, lit bool) bool {
	switch {
	case pagerNames[name]:
		return lit && (value == "" || value == "cat")
	case editorNames[name]:
		return lit && (value == "true" || value == ":")
	case name == "IFS":
		// In a command's environment IFS is inert: bash does not import it, and a builtin
		// (IFS= read -r line) only splits its input by it.
		return lit
	case name == "GIT_TERMINAL_PROMPT":
		return lit && (value == "0" || value == "1")
	}
	if !inertEnv(name) {
		return false
	}
	if !lit {
		return false
	}
	switch {
	case name == "GOOS" || name == "GOARCH":
		for i := 0; i < len(value); i++ {
			if c := value[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				return false
			}
		}
	case strings.HasPrefix(name, "LC_") || name == "LANG" || name == "LANGUAGE" || name == "TERM" || name == "TZ":
		return !strings.Contains(value, "/")
	}
	return true
}

// runEnvNames and runEnvPrefixes are variables known to change what later commands run when
// they are exported. A plain assignment (X=1; cmd) changes a later command's environment only
// if X was already exported, which the analysis cannot know, so assigning one of these (as
// opposed to any variable) is a hazard.
var runEnvNames = map[string]bool{
	"PATH": true, "IFS": true, "ENV": true, "CDPATH": true, "SHELLOPTS": true, "BASHOPTS": true, "PS4": true,
	"PROMPT_COMMAND": true, "GLOBIGNORE": true, "HOME": true, "TMPDIR": true, "EDITOR": true, "VISUAL": true,
	"PAGER": true, "MANPAGER": true, "MANOPT": true, "BROWSER": true, "SHELL": true, "TERMINFO": true,
	"LESSOPEN": true, "LESSCLOSE": true, "LESS": true, "LESSKEY": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true,
	"GCONV_PATH": true, "HOSTALIASES": true, "LOCPATH": true, "NLSPATH": true, "TEXTDOMAINDIR": true,
	"XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CONFIG_DIRS": true, "ZDOTDIR": true, "INPUTRC": true,
	"HISTFILE": true, "TAR_OPTIONS": true, "GZIP": true, "BZIP2": true, "XZ_OPT": true, "ZSTD_CLEVEL": true,
	"RSYNC_RSH": true, "CVS_RSH": true, "GREP_OPTIONS": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true,
	"JDK_JAVA_OPTIONS": true, "CLASSPATH": true, "MAVEN_OPTS": true, "GRADLE_OPTS": true, "RUSTC_WRAPPER": true,
	"RUSTFLAGS": true, "CC": true, "CXX": true, "LD": true, "CFLAGS": true, "LDFLAGS": true, "MAKEFLAGS": true,
	"OPENSSL_CONF": true, "SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "CURL_CA_BUNDLE": true, "CURL_HOME": true,
	"WGETRC": true, "NETRC": true, "http_proxy": true, "https_proxy": true, "all_proxy": true, "no_proxy": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "ALL_PROXY": true, "NO_PROXY": true, "PROMPT_DIRTRIM": true,
	// Configuration a program reads from the file or the options a variable names.
	"RIPGREP_CONFIG_PATH": true, "XZ_DEFAULTS": true, "BZIP": true, "AWKPATH": true, "AWKLIBPATH": true,
	"MAGIC": true, "TERMINFO_DIRS": true, "POSIXLY_CORRECT": true, "EXECIGNORE": true, "SYSTEMD_EDITOR": true,
	"SYSTEMD_LESS": true, "JQ_LIBRARY_PATH": true, "FZF_DEFAULT_OPTS": true, "FZF_DEFAULT_COMMAND": true,
	"GITHUB_TOKEN": true, "SUDO_EDITOR": true, "BAT_CONFIG_PATH": true, "BAT_PAGER": true, "DELTA_PAGER": true,
}

var runEnvPrefixes = []string{
	"LD_", "DYLD_", "BASH_", "GIT_", "PYTHON", "NODE_", "NPM_", "npm_", "YARN_", "PERL", "RUBY", "GEM_",
	"BUNDLE_", "GO", "CARGO_", "RUSTUP_", "PIP_", "UV_", "POETRY_", "PS", "LESS", "DOCKER_", "KUBE", "SSH_",
	"GNUPG", "GPG_", "LUA_", "PHP", "COMPOSER_", "JAVA", "DOTNET_", "MALLOC", "GLIBC_", "CONDA", "VIRTUAL_ENV",
}

// runEnv reports whether assigning the shell variable name is known to change what later
// commands run once it is exported (PATH, IFS, LD_*, GIT_* ...).
func runEnv(name string) bool {
	if inertEnv(name) {
		return false
	}
	if runEnvNames[name] {
		return true
	}
	for _, p := range runEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// prefixEnv judges the assignment prefixes of a simple command (VAR=x cmd): a variable that is
// not inert makes the command opaque.
func (w *walker) prefixEnv(assigns []*syntax.Assign, sc *scope, cx ctx) (subst bool) {
	for _, as := range assigns {
		lit, val := false, ""
		if as.Value != nil {
			v := w.word(as.Value, sc, cx, true)
			subst = subst || v.subst
			if v.lit && len(v.vals) == 1 {
				lit, val = true, v.vals[0]
			}
		} else {
			w.substitutionsIn(as, sc, cx)
			lit = as.Array == nil && as.Index == nil && !as.Append
		}
		if as.Name == nil {
			continue
		}
		if as.Array != nil || as.Index != nil || as.Append || !inertAssign(as.Name.Value, val, lit) {
			w.hazard("sets " + as.Name.Value + " in the environment, which can change what runs")
		}
	}
	return subst
}

// decl walks declare, typeset, local, export, readonly and nameref.
func (w *walker) decl(c *syntax.DeclClause, sc *scope, cx ctx) {
	variant := c.Variant.Value
	export := variant == "export"
	if variant == "nameref" {
		w.hazard("a name reference makes later expansions of it indirect")
	}
	for _, as := range c.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			v := w.word(as.Value, sc, cx, true)
			if !v.lit || len(v.vals) != 1 {
				w.hazard(variant + " of a word the line does not spell out")
				continue
			}
			s := v.vals[0]
			if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
				// Attributes. -x exports; -i evaluates every later assignment as arithmetic;
				// -n makes the name a reference to whatever it is set to.
				if strings.ContainsAny(s[1:], "x") && s[0] == '-' {
					export = true
				}
				if strings.ContainsAny(s[1:], "in") {
					w.hazard(variant + " " + s + " makes later assignments or expansions evaluate their value again")
				}
				continue
			}
			// A quoted assignment ("a[i]=x") is parsed again when the builtin runs.
			name, _, _ := strings.Cut(s, "=")
			if !safeVarName(name) {
				w.hazard(variant + " of " + name + " evaluates its subscript as arithmetic")
				continue
			}
			if i := strings.IndexByte(name, '['); i >= 0 {
				name = name[:i]
			}
			if runEnv(name) {
				w.hazard("assigns " + name + ", which changes what later commands run")
			}
			sc.set(name, "", false)
			if export && !inertEnv(name) {
				w.hazard("exports " + name + ", which can change what later commands run")
			}
			continue
		}
		w.assign(as, sc, cx)
		if as.Name == nil || !export {
			continue
		}
		name := as.Name.Value
		switch {
		case as.Naked:
			// export NAME: the value the line gave it, or gives it later, reaches later
			// commands.
			if !inertEnv(name) {
				w.hazard("exports " + name + ", which can change what later commands run")
			}
		case as.Value != nil:
			v := sc.vars[name]
			if v == nil || !inertAssign(name, *v, true) {
				w.hazard("exports " + name + ", which can change what later commands run")
			}
		default:
			if !inertEnv(name) {
				w.hazard("exports " + name + ", which can change what later commands run")
			}
		}
	}
}
