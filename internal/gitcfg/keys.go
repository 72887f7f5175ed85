package gitcfg

import "strings"

// programKeys are variables that name a program, a command line or a place programs are taken
// from, by section, subsection presence and name (all lower-case; "*" for any subsection). The
// sources are the variable lists of git-config(1) and the manuals they point to.
var programKeys = map[string]string{
	// core: run on status, diff, log, fetch, push, commit...
	"core.fsmonitor":              "names a program git runs to watch the file system",
	"core.pager":                  "names the pager git runs",
	"core.editor":                 "names the editor git runs",
	"core.sshcommand":             "names the ssh command git runs",
	"core.askpass":                "names the password prompt program git runs",
	"core.gitproxy":               "names a proxy command git runs for git://",
	"core.hookspath":              "moves hooks out of .git, so other files run as hooks",
	"core.alternaterefscommand":   "names a command git runs for alternate refs",
	"core.worktree":               "moves the working tree git reads and writes",
	"diff.external":               "names an external diff program",
	"diff.*.textconv":             "names a text conversion program for diffs",
	"diff.*.command":              "names an external diff driver",
	"difftool.*.cmd":              "names a diff tool command",
	"difftool.*.path":             "names a diff tool program",
	"mergetool.*.cmd":             "names a merge tool command",
	"mergetool.*.path":            "names a merge tool program",
	"filter.*.clean":              "names a clean filter git runs on status and add",
	"filter.*.smudge":             "names a smudge filter git runs on checkout",
	"filter.*.process":            "names a long-running filter process",
	"merge.*.driver":              "names a merge driver",
	"credential.helper":           "names a credential helper",
	"credential.*.helper":         "names a credential helper",
	"gpg.program":                 "names the signing program (run by log --show-signature and verify)",
	"gpg.*.program":               "names a signing program",
	"gpg.ssh.defaultkeycommand":   "names a command that picks the signing key",
	"sequence.editor":             "names the rebase todo editor",
	"interactive.difffilter":      "names a filter for interactive diffs",
	"uploadpack.packobjectshook":  "names a command that packs objects",
	"remote.*.uploadpack":         "names the program run on the other side of a fetch",
	"remote.*.receivepack":        "names the program run on the other side of a push",
	"remote.*.vcs":                "names a remote helper program",
	"remote.*.proxy":              "sends a remote's traffic through a proxy",
	"url.*.insteadof":             "rewrites remote URLs (to ext:: commands or other hosts)",
	"url.*.pushinsteadof":         "rewrites push URLs",
	"http.proxy":                  "sends git's traffic through a proxy",
	"http.*.proxy":                "sends git's traffic through a proxy",
	"imap.tunnel":                 "names a command that connects to the IMAP server",
	"tar.*.command":               "names a compressor git archive runs",
	"trailer.*.command":           "names a command interpret-trailers runs",
	"trailer.*.cmd":               "names a command interpret-trailers runs",
	"browser.*.cmd":               "names a browser command",
	"browser.*.path":              "names a browser program",
	"man.*.cmd":                   "names a man viewer command",
	"man.*.path":                  "names a man viewer program",
	"man.viewer":                  "names a man viewer",
	"web.browser":                 "names a browser",
	"guitool.*.cmd":               "names a command the GUI runs",
	"sendemail.smtpserver":        "may name a sendmail program",
	"sendemail.*.smtpserver":      "may name a sendmail program",
	"instaweb.httpd":              "names an HTTP server program",
	"instaweb.modulepath":         "names where HTTP server modules are loaded from",
	"init.templatedir":            "copies hooks from a template directory",
	"protocol.allow":              "allows transports such as ext::, which runs commands",
	"protocol.*.allow":            "allows a transport; ext:: runs commands",
	"log.showsignature":           "makes git log and git show verify signatures, running the signing program",
	"extensions.partialclone":     "makes the repository a partial clone: reading a missing object fetches it from the remote",
	"remote.*.promisor":           "makes the remote a promisor: reading a missing object fetches it from there",
	"remote.*.partialclonefilter": "makes the repository a partial clone: reading a missing object fetches it from the remote",
	"core.partialclonefilter":     "makes the repository a partial clone: reading a missing object fetches it from the remote",
}

// boolKeys name a program unless their value is a boolean.
var boolKeys = map[string]bool{"pager.*": true}

// falseKeys are findings unless their value is false: core.fsmonitor=true starts git's own
// file system monitor daemon, log.showSignature=true runs the signing program, and a promisor
// or partial clone filter set to anything makes reads fetch.
var falseKeys = map[string]bool{"core.fsmonitor": true, "log.showsignature": true, "remote.*.promisor": true}

func isFalse(v string, noValue bool) bool {
	if noValue {
		return false // a bare name is true
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0", "":
		return true
	}
	return false
}

// programSuffixes catch variables nobody listed: a name that ends like one of these names a
// command or a program.
var programSuffixes = []string{"command", "cmd", "program", "helper", "hook", "editor", "pager", "driver", "textconv"}

func isBool(v string, noValue bool) bool {
	if noValue {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "false", "yes", "no", "on", "off", "1", "0", "":
		return true
	}
	return false
}

// RunsProgram says why a configuration variable makes git run a program (or send its traffic
// somewhere, or move what it reads), or "" when it does not. Variable names are compared
// case-insensitively, as git does (Entry holds them lower-cased).
func RunsProgram(e Entry) string {
	key := e.Section + "." + e.Name
	if e.HasSub {
		key = e.Section + ".*." + e.Name
	}
	switch {
	case e.Section == "alias":
		// alias.name (or alias.name.command, git 2.46): "!cmd" runs a shell command.
		if strings.HasPrefix(strings.TrimSpace(e.Value), "!") {
			return "is an alias that runs a shell command"
		}
		return ""
	case e.Section == "pager":
		if isBool(e.Value, e.NoValue) {
			return ""
		}
		return "names the pager git runs for " + e.Name
	case e.Section == "submodule" && e.HasSub && e.Name == "update":
		if strings.HasPrefix(strings.TrimSpace(e.Value), "!") {
			return "runs a command on submodule update"
		}
		return ""
	case e.Section == "remote" && e.HasSub && (e.Name == "url" || e.Name == "pushurl"):
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(e.Value)), "ext::") {
			return "is an ext:: URL, which runs a command"
		}
		return ""
	case e.Section == "sendemail" && (strings.HasSuffix(e.Name, "cmd")):
		return "names a command send-email runs"
	case e.Section == "pretty" && !e.HasSub || key == "format.pretty":
		// A named or default format that shows signatures (%G?, %GS ..., %(signature))
		// makes log and show run the signing program.
		if strings.Contains(e.Value, "%G") || strings.Contains(e.Value, "%(signature") {
			return "is a format that verifies signatures, running the signing program"
		}
		return ""
	}
	if falseKeys[key] {
		if isFalse(e.Value, e.NoValue) {
			return ""
		}
		return programKeys[key]
	}
	if why, ok := programKeys[key]; ok {
		if boolKeys[key] && isBool(e.Value, e.NoValue) {
			return ""
		}
		if key == "protocol.allow" || key == "protocol.*.allow" {
			// Only the ext transport runs commands; protocol.allow=always enables it too.
			v := strings.ToLower(strings.TrimSpace(e.Value))
			if v == "never" || key == "protocol.allow" && v != "always" || key == "protocol.*.allow" && !strings.EqualFold(e.Subsection, "ext") {
				return ""
			}
		}
		if key == "core.pager" || key == "core.editor" || key == "sequence.editor" {
			if v := strings.TrimSpace(e.Value); v == "cat" || v == "" {
				return ""
			}
		}
		return why
	}
	for _, s := range programSuffixes {
		if strings.HasSuffix(e.Name, s) {
			return "names a program (a variable ending in \"" + s + "\")"
		}
	}
	return ""
}
