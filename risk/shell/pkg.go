package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// subcommand parses a package manager's global options by sp (recording their effects) and
// returns its subcommand (the first operand) and the arguments after it. An option the table does
// not know makes the command opaque, as anywhere.
func subcommand(c *call, sp *spec) (string, bool, []arg) {
	o, idx := sp.parse(c.args)
	c.applyOpts(&o)
	if idx >= len(c.args) {
		return "", true, nil
	}
	a := c.args[idx]
	return a.val, a.lit, c.args[idx+1:]
}

// registrySuffix ends every symbolic registry host: ".invalid" never resolves (RFC 6761).
const registrySuffix = ".registry.invalid"

// RegistryHost returns the symbolic host the analysis reports for a package manager that talks
// to its ecosystem's own configured registry ("npm", "pypi", "go", "cargo", "rubygems",
// "composer") when Options.Registries names no host for the ecosystem: "npm.registry.invalid".
// It is not a host name (".invalid" never resolves); the gate counts it in the package-managers
// host group, so "npm install" reaches the group out of the box while explicit URLs and
// --registry or --index-url overrides are still hosts to check.
func RegistryHost(ecosystem string) string { return ecosystem + registrySuffix }

// RegistryOf reports whether host is a symbolic registry host made by [RegistryHost], and for
// which ecosystem.
func RegistryOf(host string) (ecosystem string, ok bool) {
	eco, ok := strings.CutSuffix(host, registrySuffix)
	if !ok || eco == "" || strings.ContainsAny(eco, "./") {
		return "", false
	}
	return eco, true
}

// fetch records that a package manager talks to its ecosystem's registry: the hosts
// Options.Registries configures for it, else the ecosystem's symbolic registry host.
func (c *call) fetch(ecosystem string) {
	if hs := c.w.opts.Registries[ecosystem]; len(hs) > 0 {
		c.net(hs...)
		return
	}
	c.net(RegistryHost(ecosystem))
}

func install(c *call, ecosystem string) {
	c.risk(risk.Network, risk.Exec, risk.Mutating)
	c.fetch(ecosystem)
	c.cwd(true)
	c.note("installs packages: downloads and runs their install scripts")
}

// goTool classifies the go command by subcommand; the build flags are in goSpecs.
func goTool(c *call) {
	if len(c.args) == 0 || !c.args[0].lit {
		c.opaque("the go subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	sub, rest := c.args[0].val, c.args[1:]
	sp := goSpecs[sub]
	switch {
	case sub == "help":
		c.risk(risk.ReadOnly)
		return
	case sp == nil:
		c.risk(risk.Exec)
		if sub != "tool" && sub != "bug" && sub != "telemetry" && sub != "fix" {
			c.opaque("go " + sub + " is not a known subcommand")
		}
		return
	}
	o, _ := sp.parse(rest)
	c.applyOpts(&o)
	if d, ok := o.value("-C"); ok {
		c.read(d)
	}
	for _, f := range o.values("-ldflags") {
		if !f.lit || strings.Contains(f.val, "extld") || strings.Contains(f.val, "-r ") {
			c.opaque("go -ldflags names an external linker")
			c.risk(risk.Exec)
		}
	}
	first := ""
	if len(o.pos) > 0 && o.pos[0].lit {
		first = o.pos[0].val
	}
	switch sub {
	case "version", "doc", "list":
		c.risk(risk.ReadOnly)
		if sub == "version" && o.has("-m") {
			c.readAll(o.pos)
		}
		if sub == "list" && (o.has("-u", "-versions", "-retracted") || o.has("-m") && len(o.pos) > 0) {
			c.fetch("go") // listing modules other than the main one loads their go.mod files
		}
		if sub == "list" {
			// Listing a main package stamps its version: go runs git in the repository, and
			// git's repository configuration decides what git runs (fsmonitor, hooks).
			c.config(ConfigRepository, false)
		}
	case "env":
		if o.has("-w", "-u") {
			c.risk(risk.Mutating)
			c.write(arg{val: c.w.opts.Home + "/.config/go/env", lit: c.w.opts.Home != ""})
			return
		}
		if goEnvCostly(o.pos) {
			// Reporting the C flags runs the C compiler (CC, which configuration may name) and
			// writes the build cache: go env with no names, or with one of those names.
			c.risk(risk.Exec)
			c.opaque("go env runs the C compiler to report its flags")
			return
		}
		c.risk(risk.ReadOnly)
	case "build", "test", "vet", "run", "generate":
		c.risk(risk.Exec)
	case "fmt":
		c.risk(risk.Mutating)
		c.cwd(true)
	case "get", "install":
		install(c, "go")
		if sub == "install" {
			c.note("go install writes to GOBIN")
		}
	case "mod":
		switch first {
		case "download", "tidy", "vendor":
			install(c, "go")
		case "graph", "why", "verify":
			c.risk(risk.ReadOnly)
			c.fetch("go") // they download what the module cache lacks
		case "edit":
			if o.has("-json", "-print") {
				c.risk(risk.ReadOnly)
				return
			}
			c.risk(risk.Mutating)
			c.cwd(true)
		case "init":
			c.risk(risk.Mutating)
			c.cwd(true)
		default:
			c.risk(risk.Exec)
			c.opaque("go mod " + first + " is not a known subcommand")
		}
	case "clean":
		c.risk(risk.Destructive)
		c.cwd(true)
	case "work":
		c.risk(risk.Mutating)
		c.cwd(true)
	}
}

// cargoConfig are the files cargo (through rustup) reads from the directory it runs in and
// every directory above: a configuration can name a compiler wrapper, a runner, a linker or
// aliases; a toolchain file can name a toolchain by path, which then runs as cargo itself.
var cargoConfig = []string{".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain"}

// cargo classifies cargo by subcommand; its options are in cargoSpec.
func cargo(c *call) {
	c.config(ConfigFiles, true, cargoConfig...)
	o, _ := cargoSpec.parse(c.args)
	c.applyOpts(&o)
	if len(o.pos) == 0 {
		c.risk(risk.ReadOnly) // --version, --list, --help
		return
	}
	if !o.pos[0].lit {
		c.opaque("the cargo subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	for _, r := range o.values("--registry") {
		c.opaque("cargo --registry " + r.val + " names a registry the analysis cannot resolve")
		c.net()
	}
	switch sub := o.pos[0].val; sub {
	case "version", "help", "tree", "metadata", "locate-project", "pkgid", "read-manifest", "verify-project":
		c.risk(risk.ReadOnly)
		// tree and metadata resolve the dependency graph: they update the index and download
		// the manifests the lock file names, unless told to stay offline.
		offline := o.has("--offline", "--frozen") || containsWord(o.pos[1:], "--offline", "--frozen")
		if sub == "tree" && !offline || sub == "metadata" && !offline && !o.has("--no-deps") && !containsWord(o.pos[1:], "--no-deps") {
			c.fetch("cargo")
		}
	case "search", "info":
		c.risk(risk.ReadOnly)
		c.fetch("cargo")
	case "fmt":
		if o.has("--check") {
			c.risk(risk.Exec)
			return
		}
		c.risk(risk.Mutating, risk.Exec)
		c.cwd(true)
	case "fix":
		c.risk(risk.Mutating, risk.Exec)
		c.cwd(true)
	case "add", "install", "update", "fetch", "generate-lockfile", "vendor", "remove", "rm":
		install(c, "cargo")
	case "publish", "yank", "owner", "login", "logout":
		c.risk(risk.Destructive)
		c.fetch("cargo")
	case "clean", "uninstall":
		c.risk(risk.Destructive)
		c.cwd(true)
	case "new", "init", "package":
		c.risk(risk.Mutating, risk.Exec)
		c.cwd(true)
	case "build", "b", "check", "c", "test", "t", "run", "r", "bench", "doc", "d", "clippy", "rustc", "rustdoc":
		c.risk(risk.Exec)
		if o.has("--fix") {
			c.risk(risk.Mutating)
			c.cwd(true)
		}
	default:
		c.risk(risk.Exec)
		c.note("cargo " + sub + " is an alias or an external cargo command")
	}
}

// nodePM classifies npm, pnpm, yarn and bun by subcommand; their options are in npmSpec.
func nodePM(c *call) {
	sp := npmSpec
	if c.name == "pnpm" {
		sp = pnpmSpec
	}
	o, _ := sp.parse(c.args)
	c.applyOpts(&o)
	if c.name == "yarn" {
		// yarn runs the release its configuration names (yarnPath), from the project.
		c.config(ConfigFiles, true, ".yarnrc.yml")
	}
	for _, l := range o.values("--location") {
		if !l.is("project") {
			c.opaque(c.name + " --location=" + l.val + " writes outside the workspace")
		}
	}
	sub, lit := "", true
	var rest []arg
	if len(o.pos) > 0 {
		sub, lit, rest = o.pos[0].val, o.pos[0].lit, o.pos[1:]
	}
	if !lit {
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	switch sub {
	case "", "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "ci",
		"clean-install", "ic", "install-clean", "isntall-clean", "add", "update", "up", "upgrade", "udpate",
		"remove", "rm", "r", "uninstall", "un", "unlink", "dedupe", "ddp", "prune", "link", "ln", "rebuild", "rb",
		"install-test", "it", "install-ci-test", "cit":
		if sub == "" && c.name != "yarn" && c.name != "bun" && c.name != "pnpm" {
			c.risk(risk.ReadOnly)
			return
		}
		install(c, "npm")
		for _, p := range rest {
			npmSpecHost(c, p)
		}
	case "publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "token", "team", "org", "hook",
		"star", "unstar", "login", "logout", "adduser":
		c.risk(risk.Destructive)
		c.fetch("npm")
	case "audit", "outdated", "view", "info", "show", "v", "search", "s", "se", "find", "ping", "whoami", "doctor":
		c.risk(risk.ReadOnly)
		c.fetch("npm")
		if sub == "audit" && len(rest) > 0 && rest[0].is("fix") {
			install(c, "npm")
		}
	case "ls", "list", "ll", "la", "why", "explain", "root", "bin", "prefix", "help", "fund", "query", "sbom", "get":
		c.risk(risk.ReadOnly)
	case "config", "c", "pkg":
		if len(rest) > 0 && rest[0].is("get", "list", "ls") {
			c.risk(risk.ReadOnly)
			return
		}
		c.risk(risk.Mutating, risk.Exec)
		c.opaque(c.name + " " + sub + " changes configuration that can run programs")
	case "version":
		if len(rest) == 0 {
			c.risk(risk.ReadOnly)
			return
		}
		c.risk(risk.Mutating, risk.Exec)
		c.cwd(true)
	case "cache":
		switch {
		case len(rest) > 0 && rest[0].is("clean", "clear", "rm"):
			c.risk(risk.Destructive)
		case len(rest) > 0 && rest[0].is("add"):
			c.risk(risk.Mutating)
			c.fetch("npm")
		default:
			c.risk(risk.ReadOnly)
		}
	case "init", "create", "innit":
		c.risk(risk.Mutating, risk.Exec)
		c.fetch("npm")
		c.cwd(true)
	case "dlx", "exec", "x":
		c.risk(risk.Exec)
		c.fetch("npm")
	case "pack":
		c.risk(risk.Mutating, risk.Exec)
		c.cwd(true)
	case "docs", "home", "repo", "bugs", "edit", "explore", "shell":
		c.risk(risk.Exec)
		c.opaque(c.name + " " + sub + " opens a browser, an editor or a shell")
	default: // run, test, start, build, and yarn/pnpm/bun scripts
		c.risk(risk.Exec)
		if c.name == "bun" && len(rest) == 0 && sub != "run" && sub != "test" {
			c.read(o.pos[0])
		}
	}
}

// npmSpecHost records the host of a package given as a URL or a git reference.
func npmSpecHost(c *call, p arg) {
	if !p.lit {
		return
	}
	v := p.val
	if at := strings.LastIndexByte(v, '@'); at > 0 && !strings.Contains(v, "://") && !strings.HasPrefix(v, "git") {
		v = v[at+1:]
	}
	switch {
	case strings.Contains(v, "://"):
		c.net(hostOf(strings.TrimPrefix(strings.TrimPrefix(v, "git+"), "git+")))
	case strings.HasPrefix(v, "github:") || strings.HasPrefix(v, "gitlab:") || strings.HasPrefix(v, "bitbucket:") ||
		strings.HasPrefix(v, "gist:") || strings.Contains(v, "/") && !strings.HasPrefix(v, "@") && !strings.HasPrefix(v, ".") &&
		!strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "file:"):
		c.net()
		c.opaque(c.name + " fetches " + p.val + " from a git host the line does not name")
	case strings.HasPrefix(v, "git@"):
		c.net(gitHost(v))
	case strings.HasPrefix(v, "file:") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "/"):
		c.read(arg{val: strings.TrimPrefix(v, "file:"), lit: true})
	}
}

// pip classifies pip (and pip3, pipx, uv pip) by subcommand; its options are in pipSpec.
func pip(c *call) {
	o, _ := pipSpec.parse(c.args)
	c.applyOpts(&o)
	if len(o.pos) == 0 {
		c.risk(risk.ReadOnly)
		return
	}
	if !o.pos[0].lit {
		c.opaque("the pip subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	sub, rest := o.pos[0].val, o.pos[1:]
	for _, e := range o.values("-e", "-f") {
		pipTarget(c, e)
	}
	switch sub {
	case "install", "download", "wheel", "uninstall", "inject", "run", "upgrade":
		if c.name == "pipx" && sub == "run" {
			c.risk(risk.Exec)
			c.fetch("pypi")
			return
		}
		install(c, "pypi")
		if c.name == "pipx" {
			c.opaque(c.name + " writes outside the workspace")
		}
		if sub == "uninstall" {
			c.risk(risk.Destructive)
			return
		}
		for _, p := range rest {
			pipTarget(c, p)
		}
	case "list", "show", "freeze", "check", "help", "config", "debug", "inspect", "hash", "cache":
		c.risk(risk.ReadOnly)
		if sub == "hash" {
			c.readAll(rest)
		}
		if sub == "list" && o.has("-o", "-u") {
			c.fetch("pypi")
		}
		if sub == "config" && len(rest) > 0 && !rest[0].is("list", "get", "debug") {
			c.risk(risk.Mutating, risk.Exec)
			c.opaque("pip config changes configuration")
		}
		if sub == "cache" && len(rest) > 0 && rest[0].is("purge", "remove") {
			c.risk(risk.Destructive)
		}
	case "search", "index":
		c.risk(risk.ReadOnly)
		c.fetch("pypi")
	default:
		c.risk(risk.Exec)
		c.opaque("pip " + sub + " is not a known subcommand")
	}
}

// pipTarget records what a requirement operand reaches: a URL's host, a local path.
func pipTarget(c *call, p arg) {
	if !p.lit {
		c.opaque("a requirement is not literal")
		return
	}
	v := p.val
	if _, u, ok := strings.Cut(v, " @ "); ok {
		v = strings.TrimSpace(u)
	}
	switch {
	case strings.Contains(v, "://"):
		v = strings.TrimPrefix(v, "git+")
		if strings.HasPrefix(v, "file://") {
			c.read(arg{val: strings.TrimPrefix(v, "file://"), lit: true})
			return
		}
		c.net(hostOf(v))
	case strings.HasPrefix(v, "git@"):
		c.net(gitHost(v))
	case v == "." || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "/") ||
		strings.HasSuffix(v, ".whl") || strings.HasSuffix(v, ".tar.gz") || strings.HasSuffix(v, ".zip"):
		c.read(arg{val: v, lit: true, glob: p.glob})
		c.note("builds and installs a local project, running its build scripts")
	}
}

// Global options of the Python package managers (before the subcommand).
var (
	// uv(1), uv 0.4, global options: the configuration file can name indexes and Python
	// downloads.
	uvSpec = &spec{man: "uv(1)", posix: true, opts: `
	-q --quiet
	-v --verbose
	--color =
	--native-tls
	--offline
	--no-progress
	--directory --project =M
	--config-file =X
	--no-config
	--cache-dir =W
	-n --no-cache
	--python-preference =
	--no-python-downloads
	--allow-insecure-host =N
	-h --help
	-V --version`}
	// poetry(1), Poetry 1.8, global options.
	poetrySpec = &spec{man: "poetry(1)", posix: true, opts: `
	-h --help
	-q --quiet
	-V --version
	--ansi --no-ansi
	-n --no-interaction
	--no-plugins
	--no-cache
	-C --directory -P --project =M
	-v --verbose`}
	// pipenv, pdm, conda, mamba, micromamba, hatch, rye: only --help and --version before the
	// subcommand are followed.
	pmPlainSpec = &spec{man: "--help and --version before the subcommand", posix: true, opts: `
	-h --help
	-V --version`}
)

// pyNet are the Python package manager subcommands that only report but resolve or look up
// packages on the index.
var pyNet = map[string]bool{"tree": true, "search": true, "outdated": true}

func pyPM(c *call) {
	sp := pmPlainSpec
	switch c.name {
	case "uv":
		sp = uvSpec
	case "poetry":
		sp = poetrySpec
	}
	sub, lit, rest := subcommand(c, sp)
	if !lit {
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	if c.name == "pipenv" {
		// pipenv loads the project's .env (or $PIPENV_DOTENV_LOCATION) into its own
		// environment on every start, --version and help included: configuration from the
		// workspace, and a secret read that no word of the line names.
		c.opaque("pipenv loads the project's .env on every start")
		c.risk(risk.Exec)
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
			c.fetch("pypi") // uv run and pipenv run may sync first
		}
	case "list", "show", "info", "search", "", "version", "help", "tree", "check":
		c.risk(risk.ReadOnly)
		if pyNet[sub] || sub == "show" && c.name == "poetry" && (containsWord(rest, "--latest", "-l", "--outdated", "-o")) {
			c.fetch("pypi") // resolving the dependency tree or the latest versions reads the index
		}
	default:
		c.risk(risk.Exec)
	}
}

// containsWord reports whether any of args is literally one of words.
func containsWord(args []arg, words ...string) bool {
	for _, a := range args {
		if a.is(words...) {
			return true
		}
	}
	return false
}

// pmPlain: gem, bundle and composer before their subcommand.
func rubyPM(c *call) {
	simplePM(c, "rubygems", []string{"install", "update", "add", "lock", "outdated", "fetch", "cache", "package"},
		[]string{"uninstall", "remove", "clean", "cleanup", "pristine"}, []string{"search", "query", "specification", "info"})
	if c.name != "gem" && c.cmd.Risk.Has(risk.ReadOnly) && !c.cmd.Risk.Has(risk.Exec) {
		// bundle evaluates the Gemfile, which is Ruby: whatever it reports, it runs the
		// project's code.
		c.risk(risk.Exec)
		c.note(c.name + " evaluates the Gemfile, which is Ruby code")
	}
}

func composer(c *call) {
	simplePM(c, "composer", []string{"install", "require", "update", "upgrade", "create-project"}, []string{"remove"},
		[]string{"search", "outdated", "browse"})
	if !containsWord(c.args, "--no-plugins") && !c.cmd.Risk.Has(risk.Exec) {
		// composer loads the plugins installed in the project's vendor directory.
		c.risk(risk.Exec)
		c.note("composer loads the project's plugins")
	}
}

// simplePM classifies a package manager by its subcommand: installs, removals, lookups on the
// index, the listing ones read-only, the rest exec.
func simplePM(c *call, ecosystem string, installs, removals, lookups []string) {
	sub, lit, rest := subcommand(c, pmPlainSpec)
	switch {
	case !lit:
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
	case contains(installs, sub):
		install(c, ecosystem)
	case contains(removals, sub):
		c.risk(risk.Destructive, risk.Exec)
		c.cwd(true)
	case contains(lookups, sub):
		c.risk(risk.ReadOnly)
		c.fetch(ecosystem)
	case sub == "list" || sub == "show" || sub == "info" || sub == "help" || sub == "version" || sub == "" || sub == "check":
		c.risk(risk.ReadOnly)
		if containsWord(rest, "-r", "--remote", "-l", "--latest", "-o", "--outdated", "-a", "--available") {
			c.fetch(ecosystem)
		}
	default:
		c.risk(risk.Exec)
	}
}

// aptSpec: apt-get(8), APT 2.6, OPTIONS: -o sets configuration (APT::Update::Pre-Invoke runs
// commands), -c reads a configuration file.
var aptSpec = &spec{man: "apt-get(8)", abbrev: true, opts: `
	--no-install-recommends --install-recommends --install-suggests --no-install-suggests
	-d --download-only
	-f --fix-broken
	-m --ignore-missing --fix-missing
	--no-download
	-q --quiet
	-s --simulate --just-print --dry-run --recon --no-act
	-y --yes --assume-yes
	--assume-no
	--no-show-upgraded --show-upgraded
	-V --verbose-versions
	-a --host-architecture =
	-P --build-profiles =
	-b --compile --build
	--ignore-hold
	--with-new-pkgs
	--no-upgrade --only-upgrade
	--allow-downgrades --allow-remove-essential --allow-change-held-packages
	--force-yes
	--print-uris
	--purge
	--reinstall
	--list-cleanup --no-list-cleanup
	-t --target-release --default-release =
	--trivial-only
	--no-remove
	--auto-remove --autoremove
	--only-source
	--diff-only --dsc-only --tar-only
	--arch-only --indep-only
	--allow-unauthenticated
	--no-allow-insecure-repositories --allow-releaseinfo-change
	--show-progress
	--with-source =R
	-h --help
	-v --version
	-c --config-file =X
	-o --option =X
	--installed --upgradable --all-versions --full --names-only`}

// systemPM is a system package manager: installs and removals write system locations; searching
// and showing read its local cache, except for the managers that refresh it from the network
// first (dnf, yum, zypper, brew, snap, choco, winget, pkg).
func systemPM(c *call) {
	var sub string
	var lit bool
	if c.name == "apt" || c.name == "apt-get" || c.name == "aptitude" {
		o := c.parsed(aptSpec)
		if len(o.pos) > 0 {
			sub, lit = o.pos[0].val, o.pos[0].lit
		} else {
			lit = true
		}
	} else if c.name == "pacman" {
		// pacman's operation is its first option (-S, -Q, -R ...); what follows is not analysed.
		if len(c.args) > 0 {
			sub, lit = c.args[0].val, c.args[0].lit
		} else {
			lit = true
		}
	} else {
		sub, lit, _ = subcommand(c, pmPlainSpec)
	}
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
	refreshes := map[string]bool{"dnf": true, "zypper": true, "brew": true, "snap": true, "choco": true, "winget": true, "pkg": true}
	switch {
	case !lit:
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
	case strings.HasPrefix(sub, "-S") && !strings.HasPrefix(sub, "-Ss") && !strings.HasPrefix(sub, "-Si") || sub == "install" || sub == "add" || sub == "upgrade" || sub == "update" || sub == "reinstall" || sub == "dist-upgrade" || sub == "full-upgrade" || sub == "build-dep" || sub == "tap" || sub == "refresh" || sub == "sync" || sub == "-i" || sub == "-U":
		c.risk(risk.Network, risk.Exec, risk.Mutating)
		c.net(c.w.opts.Registries[eco]...)
		c.write(system)
	case strings.HasPrefix(sub, "-R") || sub == "remove" || sub == "purge" || sub == "uninstall" || sub == "del" || sub == "autoremove" || sub == "erase" || sub == "-e":
		c.risk(risk.Destructive, risk.Exec)
		c.write(system)
	case sub == "search" || sub == "info" || sub == "show" || sub == "list" || sub == "policy" || sub == "depends" || sub == "rdepends" || strings.HasPrefix(sub, "-Q") || strings.HasPrefix(sub, "-Ss") || strings.HasPrefix(sub, "-Si") || sub == "" || sub == "help" || sub == "doctor" || sub == "outdated" || sub == "find":
		c.risk(risk.ReadOnly)
		if refreshes[eco] && sub != "" && sub != "help" {
			c.net(c.w.opts.Registries[eco]...) // these refresh their package lists from the network first
			if len(c.w.opts.Registries[eco]) == 0 {
				c.net()
			}
		}
	default:
		c.risk(risk.Exec)
	}
}

// goEnvCostly reports whether go env, given these names, computes the variables whose values
// come from running the C compiler: every variable (no names), or a cgo or compiler one.
func goEnvCostly(names []arg) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if !n.lit || strings.HasPrefix(n.val, "CGO_") || n.val == "GOGCCFLAGS" || n.val == "PKG_CONFIG" ||
			n.val == "CC" || n.val == "CXX" || strings.ContainsAny(n.val, "*?[$") {
			return true
		}
	}
	return false
}
