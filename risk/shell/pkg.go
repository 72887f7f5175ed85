package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// subcommand returns the first positional argument (the subcommand) and the arguments after it.
func subcommand(c *call, shortVal string, longVal ...string) (string, bool, []arg) {
	_, idx := parseOpts(c.args, shortVal, true, longVal...)
	if idx >= len(c.args) {
		return "", true, nil
	}
	a := c.args[idx]
	return a.val, a.lit, c.args[idx+1:]
}

func install(c *call, ecosystem string) {
	c.risk(risk.Network, risk.Exec, risk.Mutating)
	c.registry(ecosystem)
	c.cwd(true)
	c.note("installs packages: downloads and runs their install scripts")
}

func goTool(c *call) {
	sub, lit, rest := subcommand(c, "C", "C")
	if !lit {
		c.opaque("the go subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	o, _ := parseOpts(rest, "o", false, "o", "C", "tags", "ldflags", "gcflags", "run", "bench", "count", "timeout", "coverprofile", "exec", "toolexec", "mod", "modfile", "overlay", "pgo", "p")
	for _, a := range rest {
		// The go command's long flags take one dash.
		name := strings.TrimLeft(a.val, "-")
		name, _, _ = strings.Cut(name, "=")
		if a.lit && strings.HasPrefix(a.val, "-") && (name == "exec" || name == "toolexec" || name == "vettool") {
			c.opaque("go runs the program named by -" + name)
			c.cmd.ExecutesCode = true
		}
	}
	switch sub {
	case "version", "env", "list", "doc", "help":
		if sub == "env" && o.has("-w", "-u") {
			c.risk(risk.Mutating)
			c.write(arg{val: c.w.opts.Home + "/.config/go/env", lit: c.w.opts.Home != ""})
			return
		}
		c.risk(risk.ReadOnly)
	case "build", "test", "vet", "run", "generate", "tool", "fix":
		c.risk(risk.Exec)
		if out, ok := o.value("-o"); ok {
			c.risk(risk.Mutating)
			c.write(out)
		}
		if sub == "fix" {
			c.risk(risk.Mutating)
		}
	case "fmt":
		c.risk(risk.Mutating)
		c.cwd(true)
	case "get", "install":
		install(c, "go")
		if sub == "install" {
			c.note("go install writes to GOBIN")
		}
	case "mod":
		if len(rest) > 0 && rest[0].is("download", "tidy", "vendor", "graph", "why", "verify") {
			if rest[0].is("graph", "why", "verify") {
				c.risk(risk.ReadOnly)
				return
			}
			install(c, "go")
			return
		}
		c.risk(risk.Mutating)
		c.cwd(true)
	case "clean":
		c.risk(risk.Destructive)
		c.cwd(true)
	case "work":
		c.risk(risk.Mutating)
		c.cwd(true)
	default:
		c.risk(risk.Exec)
	}
}

func cargo(c *call) {
	sub, lit, _ := subcommand(c, "Z", "manifest-path", "config", "color")
	switch {
	case !lit:
		c.opaque("the cargo subcommand is not literal")
		c.risk(risk.Exec)
	case sub == "version" || sub == "help" || sub == "tree" || sub == "metadata" || sub == "search":
		c.risk(risk.ReadOnly)
		if sub == "search" {
			c.registry("cargo")
		}
	case sub == "fmt" || sub == "fix":
		c.risk(risk.Mutating, risk.Exec)
		c.cwd(true)
	case sub == "add" || sub == "install" || sub == "update" || sub == "fetch" || sub == "generate-lockfile":
		install(c, "cargo")
	case sub == "publish" || sub == "yank" || sub == "owner":
		c.risk(risk.Destructive)
		c.registry("cargo")
	case sub == "clean":
		c.risk(risk.Destructive)
		c.cwd(true)
	default: // build, check, test, run, bench, clippy, doc
		c.risk(risk.Exec)
	}
}

func nodePM(c *call) {
	sub, lit, rest := subcommand(c, "C", "prefix", "registry", "filter", "cwd")
	o, _ := parseOpts(c.args, "C", false, "prefix", "registry", "filter", "cwd")
	for _, r := range o.values("--registry") {
		c.net(hostOf(r.val))
	}
	if o.has("-g", "--global", "--location=global") {
		c.opaque(c.name + " --global writes outside the workspace")
	}
	if !lit {
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	switch sub {
	case "", "install", "i", "ci", "add", "update", "up", "upgrade", "remove", "rm", "uninstall", "un", "dedupe", "prune", "link", "rebuild":
		if sub == "" && c.name != "yarn" && c.name != "bun" {
			c.risk(risk.ReadOnly)
			return
		}
		install(c, "npm")
	case "publish", "unpublish", "deprecate", "dist-tag":
		c.risk(risk.Destructive)
		c.registry("npm")
	case "audit", "outdated", "view", "info", "show", "search", "ping", "whoami":
		c.risk(risk.ReadOnly)
		c.registry("npm")
	case "ls", "list", "why", "explain", "config", "get", "root", "bin", "prefix", "help", "version", "--version", "-v", "pack":
		c.risk(risk.ReadOnly)
	case "init", "create":
		c.risk(risk.Mutating, risk.Exec)
		c.registry("npm")
		c.cwd(true)
	case "dlx", "exec", "x":
		c.risk(risk.Exec)
		c.registry("npm")
	default: // run, test, start, build, and yarn/bun scripts
		c.risk(risk.Exec)
		if c.name == "bun" && len(rest) == 0 && sub != "run" && sub != "test" {
			c.read(c.args[len(c.args)-1])
		}
	}
}

func pip(c *call) {
	sub, lit, rest := subcommand(c, "", "python", "log", "cache-dir")
	if !lit {
		c.opaque("the pip subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	o, _ := parseOpts(rest, "ricte", false, "requirement", "index-url", "extra-index-url", "constraint", "target", "editable", "find-links", "trusted-host")
	c.readAll(o.values("-r", "--requirement", "-c", "--constraint"))
	for _, u := range o.values("-i", "--index-url", "--extra-index-url", "--find-links") {
		c.net(hostOf(u.val))
	}
	switch sub {
	case "install", "download", "wheel", "uninstall", "inject", "run", "upgrade":
		if c.name == "pipx" && sub == "run" {
			c.risk(risk.Exec)
			c.registry("pypi")
			return
		}
		install(c, "pypi")
		if o.has("--user") || c.name == "pipx" {
			c.opaque(c.name + " writes outside the workspace")
		}
		if sub == "uninstall" {
			c.risk(risk.Destructive)
		}
	case "list", "show", "freeze", "check", "help", "--version", "config", "debug", "inspect", "hash":
		c.risk(risk.ReadOnly)
	case "search", "index":
		c.risk(risk.ReadOnly)
		c.registry("pypi")
	default:
		c.risk(risk.Exec)
	}
}

func pyPM(c *call) {
	sub, lit, rest := subcommand(c, "", "directory", "project", "python")
	if !lit {
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	if c.name == "uv" && sub == "pip" && len(rest) > 0 {
		c.args = rest
		c.name = "pip"
		pip(c)
		return
	}
	switch sub {
	case "install", "add", "sync", "lock", "update", "upgrade", "remove", "uninstall", "create", "env", "venv", "init", "new", "tool", "self":
		install(c, "pypi")
		if sub == "remove" || sub == "uninstall" {
			c.risk(risk.Destructive)
		}
	case "run", "exec", "shell":
		c.risk(risk.Exec)
		if c.name == "uv" || c.name == "pipenv" {
			c.registry("pypi") // uv run and pipenv run may sync first
		}
	case "list", "show", "info", "search", "--version", "version", "help", "tree", "check":
		c.risk(risk.ReadOnly)
	default:
		c.risk(risk.Exec)
	}
}

func rubyPM(c *call) {
	simplePM(c, "rubygems", []string{"install", "update", "add", "lock", "outdated", "fetch", "cache", "package"}, []string{"uninstall", "remove", "clean", "cleanup", "pristine"})
}

// simplePM classifies a package manager by its subcommand: installs, removals, the rest exec.
func simplePM(c *call, ecosystem string, installs, removals []string) {
	sub, lit, _ := subcommand(c, "")
	switch {
	case !lit:
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
	case contains(installs, sub):
		install(c, ecosystem)
	case contains(removals, sub):
		c.risk(risk.Destructive, risk.Exec)
		c.cwd(true)
	case sub == "list" || sub == "show" || sub == "info" || sub == "search" || sub == "help" || sub == "version" || sub == "--version" || sub == "check":
		c.risk(risk.ReadOnly)
	default:
		c.risk(risk.Exec)
	}
}

// systemPM is a system package manager: installs and removals write system locations.
func systemPM(c *call) {
	sub, lit, _ := subcommand(c, "oct", "option", "config", "target-release", "root")
	eco := c.name
	switch eco {
	case "apt-get", "aptitude":
		eco = "apt"
	case "yum":
		eco = "dnf"
	}
	system := arg{val: "/usr", lit: true}
	if eco == "brew" {
		system = arg{val: "/opt/homebrew", lit: true}
	}
	switch {
	case !lit:
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
	case strings.HasPrefix(sub, "-S") || sub == "install" || sub == "add" || sub == "upgrade" || sub == "update" || sub == "reinstall" || sub == "dist-upgrade" || sub == "full-upgrade" || sub == "build-dep" || sub == "tap" || sub == "refresh" || sub == "sync" || sub == "-i":
		c.risk(risk.Network, risk.Exec, risk.Mutating)
		c.registry(eco)
		c.write(system)
	case strings.HasPrefix(sub, "-R") || sub == "remove" || sub == "purge" || sub == "uninstall" || sub == "del" || sub == "autoremove" || sub == "erase" || sub == "-e":
		c.risk(risk.Destructive, risk.Exec)
		c.write(system)
	case sub == "search" || sub == "info" || sub == "show" || sub == "list" || sub == "policy" || sub == "depends" || sub == "rdepends" || strings.HasPrefix(sub, "-Q") || sub == "--version" || sub == "help" || sub == "doctor" || sub == "outdated":
		c.risk(risk.ReadOnly)
	default:
		c.risk(risk.Exec)
	}
}
