//go:build linux

package shell_test

import (
	"strings"

	"github.com/reins-go/reins/risk/shell"
)

// What the tracer proofs cannot prove, and what they currently reject.

// proofUnpackaged are the programs the analysis knows that Debian does not package (or packages
// as a different program under the same name). A row that names one with a bounded claim is
// unproven: it is not run, and TestProof counts it as such. Nothing proves the analysis of
// those lines; the sandbox that confines every line the gate lets through holds them to their
// claim all the same (the analysis proposes, the sandbox enforces).
var proofUnpackaged = map[string]string{
	"fd":            "Debian packages fd as fdfind (fd-find); no program named fd exists",
	"gsed":          "gsed is Homebrew's name for GNU sed; Debian has none",
	"yq":            "the table describes mikefarah's yq 4; Debian's yq is kislyuk's yq 3, another program (a Python wrapper around jq)",
	"chdir":         "chdir is neither a bash builtin nor a program (zsh has it); bash says command not found",
	"python2":       "Debian 12 has no Python 2",
	"pip2":          "Debian 12 has no Python 2",
	"pypy":          "Debian 12 has no PyPy 2 (pypy3 only)",
	"yarn":          "Debian's yarnpkg installs yarnpkg, not yarn",
	"rar":           "rar is non-free; the proofs' mirrors are main",
	"terraform":     "not packaged by Debian",
	"bazel":         "Debian's bazel-bootstrap only builds Debian packages",
	"bun":           "not packaged by Debian",
	"caffeinate":    "macOS only",
	"launchctl":     "macOS only",
	"catchsegv":     "removed from glibc 2.35; Debian 12 has none",
	"cnpm":          "not packaged by Debian",
	"conda":         "not packaged by Debian",
	"dart":          "not packaged by Debian",
	"deno":          "not packaged by Debian",
	"dotnet":        "not packaged by Debian",
	"flutter":       "not packaged by Debian",
	"golangci-lint": "not packaged by Debian 12",
	"helm":          "not packaged by Debian",
	"nerdctl":       "not packaged by Debian",
	"prettier":      "not packaged by Debian 12",
	"ruff":          "not packaged by Debian 12",
	"swift":         "not packaged by Debian",
	"uv":            "not packaged by Debian",
	"vite":          "not packaged by Debian",
	"with-contenv":  "part of s6-overlay, not packaged by Debian",
	"zig":           "not packaged by Debian 12",
	"apk":           "Alpine's package manager",
	"brew":          "Homebrew, not packaged by Debian",
	"choco":         "Windows only",
	"scoop":         "Windows only",
	"winget":        "Windows only",
	"port":          "MacPorts, macOS only",
	"pkg":           "FreeBSD's package manager",
	"emerge":        "Gentoo's package manager",
	"yum":           "Red Hat's package manager, not packaged by Debian 12",
	"zypper":        "openSUSE's package manager, not packaged by Debian",
	"rye":           "not packaged by Debian",
}

// proofNotInCI are programs Debian packages that CI does not install: whole toolchains that
// the analysis calls read-only only for "--version", an init system, and a kubectl four years
// older than the one agents run. Their rows are unproven as well.
var proofNotInCI = map[string]string{
	"ghc":        "ghc: about 800 MB installed, for one --version line",
	"kotlin":     "kotlin: about 300 MB, for one --version line",
	"gradle":     "gradle: a JVM and hundreds of libraries, for one --version line",
	"scala":      "scala: a JVM, for one --version line",
	"clang":      "clang: LLVM, for one --version line",
	"clang++":    "clang: LLVM, for one --version line",
	"java":       "default-jdk-headless: a JVM, for one --version line",
	"javac":      "default-jdk-headless: a JVM, for one --version line",
	"mvn":        "maven: a JVM, for one --version line",
	"elixir":     "elixir: Erlang, for one --version line",
	"mix":        "elixir: Erlang, for one --version line",
	"tsc":        "node-typescript: npm's dependency tree, for one --version line",
	"eslint":     "eslint: npm's dependency tree, for one --version line",
	"jest":       "jest: npm's dependency tree, for one --version line",
	"npm":        "npm: hundreds of node-* packages, for --version lines",
	"npx":        "npm: hundreds of node-* packages, for --version lines",
	"podman":     "podman: a container engine, for its --version and --help lines",
	"pypy3":      "pypy3: a second Python, for one --version line",
	"cargo":      "cargo and rustc: the Rust toolchain, for --version lines",
	"rustc":      "cargo and rustc: the Rust toolchain, for --version lines",
	"rc-service": "openrc: an init system, for one --version line",
	"kubectl":    "Debian 12's kubernetes-client is kubectl 1.20 (2021): proving it says nothing of the kubectl agents run",
	// Package managers of other systems and Python project tools, for their query and
	// --version lines: not installed by CI (each is a system of its own: a daemon, a store, a
	// root to manage), or not in the Debian release CI runs.
	"aptitude":   "aptitude: apt's other front end, not installed by CI",
	"crontab":    "cron: a daemon package, not installed by CI",
	"dnf":        "dnf: Debian's build manages another distribution's root, not installed by CI",
	"pacman":     "pacman-package-manager: Debian's build manages another distribution's root, not installed by CI",
	"flatpak":    "flatpak: bubblewrap, ostree and a system helper, not installed by CI",
	"snap":       "snapd: a daemon under systemd, not installed by CI",
	"nix-env":    "nix-bin: a daemon and a store in /nix, not installed by CI",
	"mamba":      "not installed by CI (conda's solver)",
	"micromamba": "not installed by CI (conda's solver)",
	"hatch":      "not installed by CI (not in Debian 12)",
	"pdm":        "not installed by CI (not in Debian 12)",
}

// unprovable says why a program cannot be proven here, or "".
func unprovable(program string) string {
	if why, ok := proofUnpackaged[program]; ok {
		return why
	}
	return proofNotInCI[program]
}

// proofKnownRow is one entry of proofKnown: a line (or, with Line empty, every line that names
// Program) and the keys of the findings it shows (proofFinding.Key). Entry names the table entry
// a line stands for, so that FuzzProof's combinations leave it out.
type proofKnownRow struct {
	Line     string
	Program  string
	Findings []string
	Entry    string
	// Why says what the program does and why the analysis does not claim it yet: a table to
	// fix, or an effect the sandbox denies and the program survives.
	Why string
}

// proofKnownSet is proofKnown indexed.
type proofKnownSet struct {
	lines     map[string]map[string]bool // line -> finding keys
	programs  map[string]map[string]bool // program -> finding keys of its program entries
	byProgram map[string]map[string]bool // program -> finding keys of any entry naming it (FuzzProof)
	fuzz      map[string]bool            // lines from FuzzProof's corpus, not from a generator
}

func proofKnownIndex() proofKnownSet {
	k := proofKnownSet{lines: map[string]map[string]bool{}, programs: map[string]map[string]bool{},
		byProgram: map[string]map[string]bool{}, fuzz: map[string]bool{}}
	add := func(m map[string]map[string]bool, key string, findings []string) {
		if m[key] == nil {
			m[key] = map[string]bool{}
		}
		for _, f := range findings {
			m[key][f] = true
		}
	}
	for _, r := range proofKnown {
		if r.Line == "" {
			add(k.programs, r.Program, r.Findings)
			add(k.byProgram, r.Program, r.Findings)
			continue
		}
		add(k.lines, r.Line, r.Findings)
		if r.Entry == "fuzz" {
			k.fuzz[r.Line] = true
		}
		an, _ := shell.Analyze(r.Line, &shell.Options{Dir: "/w", Home: "/h"})
		for _, c := range an.Commands {
			add(k.byProgram, c.Program, r.Findings)
		}
	}
	return k
}

// listed reports whether proofKnown lists finding f of result r: for its line, or for one of
// the programs it names.
func (k proofKnownSet) listed(r proofResult, f proofFinding) bool {
	if matchKey(k.lines[r.Row.Line], f.Key) != "" {
		return true
	}
	for _, p := range r.Programs {
		if matchKey(k.programs[p], f.Key) != "" {
			return true
		}
	}
	return false
}

// explains is listed, more widely, for FuzzProof: a finding listed for any line of a program
// the input names is not reported again.
func (k proofKnownSet) explains(r proofResult, f proofFinding) bool {
	if k.listed(r, f) {
		return true
	}
	for _, p := range r.Programs {
		if matchKey(k.byProgram[p], f.Key) != "" {
			return true
		}
	}
	return false
}

// proofKnown: the open findings, the to-do of the table fixes (issue 22). TestProof fails on a
// finding not listed here and on an entry that no longer shows its findings, so fixing a table
// means deleting its entries. A failure message spells the entry to add; only add one for a
// finding to be fixed in a table.
//
// Each entry names a program: every line naming it may show these findings (the runs that show
// them are TestProof's rows; its log lists them). The sandbox holds every one of these lines to
// its claim all the same: a read-only line runs with the workspace and home read-only, the
// secrets masked and no network.
var proofKnown = []proofKnownRow{
	{Program: "black", Findings: []string{"writes: $FIXTURE/home/.cache/black/23.1.0/"},
		Why: "black keeps a cache under ~/.cache/black on every run, --version included. The sandbox keeps home read-only for a read-only line. To fix: claim the cache directory"},
	{Program: "composer", Findings: []string{"starts a program: grep", "starts a program: sh", "starts a program: stty", "writes: $FIXTURE/home/", "writes: $FIXTURE/home/.cache/", "writes: $FIXTURE/home/.cache/composer/", "writes: $FIXTURE/home/.config/", "writes: $FIXTURE/home/.config/composer/", "writes: $FIXTURE/home/.local/", "writes: $FIXTURE/home/.local/share/", "writes: $FIXTURE/home/.local/share/composer/"},
		Why: "composer starts sh, stty and grep to size the terminal and creates its cache, configuration and data directories in home, even for --version. To fix: composer's table"},
	{Program: "docker", Findings: []string{"network: AF_UNIX"},
		Why: "docker's client asks its daemon over /var/run/docker.sock, including for the read subcommands (the daemon does what the client asks, as root). To fix: docker reaches a local service, which the analysis should say"},
	{Program: "gh", Findings: []string{"reads an unreported file: $FIXTURE/home/.config/gh/hosts.yml"},
		Why: "gh reads its hosts.yml (which holds the token) on start, --version included. To fix: report the read, which the gate then judges as a secret"},
	{Program: "git", Findings: []string{"starts a program: basename", "starts a program: col", "starts a program: envsubst", "starts a program: gettext", "starts a program: git-submodule", "starts a program: groff", "starts a program: grotty", "starts a program: locale", "starts a program: man", "starts a program: nroff", "starts a program: preconv", "starts a program: sed", "starts a program: tbl", "starts a program: troff", "starts a program: uname", "writes: $FIXTURE/ws/.git/", "writes: /var/cache/man/cat1/"},
		Why: "git status and describe --dirty refresh the index (.git/index.lock, renamed over .git/index): an opportunistic write that git skips when .git is read-only, as the sandbox keeps it. git submodule is a shell script that starts basename, gettext, sed and uname. git help starts man and its formatting pipeline. To fix: the index refresh claimed or turned off (GIT_OPTIONAL_LOCKS=0), the submodule and help helpers named"},
	{Program: "go", Findings: []string{"network: AF_INET", "reads an unreported file: $FIXTURE/home/.netrc", "writes: $FIXTURE/home/", "writes: $FIXTURE/home/.config/", "writes: $FIXTURE/home/.config/go/", "writes: $FIXTURE/home/.config/go/telemetry/", "writes: $FIXTURE/home/.config/go/telemetry/local/", "writes: $FIXTURE/home/go/**", "writes: $FIXTURE/ws/.git/", "starts a program: git", "writes: $FIXTURE/home/.cache/**"},
		Why: "go and gofmt count telemetry under ~/.config/go/telemetry on every run (GOTELEMETRY=local, the default); the sandbox keeps home read-only for a read-only line and go ignores the failure. go fmt with a -mod value and a package path reaches the module proxy (reading ~/.netrc); go list -buildvcs creates the module cache; go list of the workspace's main package writes the build cache (~/.cache/go-build) and the module cache's record of its version (~/go/pkg/mod/cache), and starts git to stamp that version (git refreshes the index) (the analysis gives go list the repository configuration's trust, as git's). To fix: the telemetry directory claimed (or GOTELEMETRY=off), go fmt's package operands resolved as go does, git named as a program go list starts"},
	{Program: "gofmt", Findings: []string{"writes: $FIXTURE/home/.config/", "writes: $FIXTURE/home/.config/go/", "writes: $FIXTURE/home/.config/go/telemetry/", "writes: $FIXTURE/home/.config/go/telemetry/local/"},
		Why: "gofmt counts telemetry under ~/.config/go/telemetry, as go does (see go)"},
	{Program: "man", Findings: []string{"starts a program: apropos", "starts a program: col", "starts a program: eqn", "starts a program: groff", "starts a program: grotty", "starts a program: gzip", "starts a program: iconv", "starts a program: locale", "starts a program: neqn", "starts a program: nroff", "starts a program: pic", "starts a program: preconv", "starts a program: refer", "starts a program: tbl", "starts a program: troff", "starts a program: whatis", "writes: /var/cache/man/cat1/"},
		Why: "man-db formats a page through a pipeline it starts (preconv, tbl, groff, nroff, troff, grotty, col; eqn, pic, refer with -p; gzip, iconv) and may save the page in /var/cache/man; -k and -f run apropos and whatis. To fix: man's table names the pipeline"},
	{Program: "mkdir", Findings: []string{"writes: $FIXTURE/ws/"},
		Why: "mkdir -p creates every missing parent (build for build/out): the claim names only the operand. To fix: claim the parents -p may create"},
	{Program: "patch", Findings: []string{"writes: $FIXTURE/home/.ssh/"},
		Why: "patch -b writes its backup next to the output file (-o FILE: FILE.orig). To fix: claim the backup"},
	{Program: "pidof", Findings: []string{"network: AF_UNIX", "writes: /dev/"},
		Why: "pidof opens /dev/kmsg-like devices and a local socket to list processes. To fix: pidof's table"},
	{Program: "pip", Findings: []string{"network: AF_INET6"},
		Why: "pip probes IPv6 support by binding ::1 port 0 on start (Python's socket module); nothing is reached. To fix: the harness could accept a bind to a loopback port 0"},
	{Program: "pip3", Findings: []string{"network: AF_INET6"},
		Why: "pip3 is pip (see pip)"},
	{Program: "pipx", Findings: []string{"writes: $FIXTURE/home/", "writes: $FIXTURE/home/.local/", "writes: $FIXTURE/home/.local/pipx/", "writes: $FIXTURE/home/.local/pipx/.cache/", "writes: $FIXTURE/home/.local/pipx/logs/"},
		Why: "pipx creates ~/.local/pipx with its log and cache directories on every run. To fix: claim them, or call pipx mutating"},
	{Program: "rsync", Findings: []string{"writes: $FIXTURE/ws/"},
		Why: "rsync writes the destination through a temporary file beside it (.out.txt.XXXXXX), renamed over it. To fix: claim the destination's directory entries"},
	{Program: "scp", Findings: []string{"starts a program: cp"},
		Why: "scp between two local paths starts cp. To fix: scp's local copies named as cp"},
	{Program: "sed", Findings: []string{"writes: $FIXTURE/ws/"},
		Why: "sed -i writes a temporary file beside the file (./sedXXXXXX), renamed over it. To fix: claim the file's directory entries"},
	{Program: "service", Findings: []string{"starts a program: basename"},
		Why: "service is a shell script that starts basename. To fix: name its helpers"},
	{Program: "ssh-keygen", Findings: []string{"writes: $FIXTURE/home/.ssh/"},
		Why: "ssh-keygen -f FILE writes FILE.pub too. To fix: claim FILE.pub"},
	{Program: "systemctl", Findings: []string{"network: AF_UNIX", "writes: /dev/"},
		Why: "systemctl status asks systemd over its private socket and writes to /dev (the journal, the console). To fix: systemctl reaches a local service"},
	{Program: "tar", Findings: []string{"starts a program: gzip", "starts a program: sh"},
		Why: "tar -z and -j start gzip and bzip2 (through sh for -I). To fix: tar's compression options name the compressor"},
	{Program: "top", Findings: []string{"writes: $FIXTURE/home/", "writes: $FIXTURE/home/.config/"},
		Why: "top creates ~/.config/procps on start. To fix: claim it, or the sandbox's read-only home suffices"},
	{Program: "zip", Findings: []string{"writes: $FIXTURE/home/.ssh/"},
		Why: "zip --logfile-path writes its log and a temporary file in the log's directory. To fix: claim the directory entries"},
}

// matchKey returns the entry of set that matches a finding's key: the key itself, or an entry
// ending in "**" that the key starts with (a cache directory's many subdirectories); "" when
// none does.
func matchKey(set map[string]bool, key string) string {
	if set[key] {
		return key
	}
	for e := range set {
		if pre, ok := strings.CutSuffix(e, "**"); ok && strings.HasPrefix(key, pre) {
			return e
		}
	}
	return ""
}
