package shell

import (
	"net"
	"net/url"
	"strings"

	"github.com/reins-go/reins/risk"
)

// hostOf extracts the host of a URL or of a bare "host[:port][/path]"; "" when there is none.
func hostOf(s string) string {
	if s == "" {
		return ""
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return strings.ToLower(u.Hostname())
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = s[at+1:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	s = strings.Trim(s, "[]")
	if s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t*") {
		return ""
	}
	if net.ParseIP(s) != nil || s == "localhost" || strings.Contains(s, ".") {
		return strings.ToLower(s)
	}
	return ""
}

// urlArgs records the hosts (and local files) named by URL positionals.
func urlArgs(c *call, pos []arg) {
	for _, p := range pos {
		if !p.lit {
			c.opaque("a URL is not literal")
			c.cmd.Network = true
			continue
		}
		if strings.HasPrefix(p.val, "file://") {
			if u, err := url.Parse(p.val); err == nil {
				c.read(arg{val: u.Path, lit: true})
			}
			continue
		}
		if h := hostOf(p.val); h != "" {
			c.net(h)
		} else {
			c.net()
		}
	}
}

// atFile reads the file behind a curl-style "@file" or "name=@file" value.
func atFile(c *call, v arg) {
	if !v.lit {
		return
	}
	s := v.val
	if i := strings.Index(s, "=@"); i >= 0 {
		s = s[i+1:]
	} else if i := strings.Index(s, "=<"); i >= 0 {
		s = "@" + s[i+2:]
	}
	if strings.HasPrefix(s, "@") && s != "@-" {
		c.read(arg{val: strings.SplitN(s[1:], ";", 2)[0], lit: true})
	}
}

// curl(1), curl 8.5, OPTIONS: the options agents use; an option not listed makes the command
// opaque (curl has many that read or write files: --libcurl, --etag-save, --hsts, --variable).
var curlSpec = &spec{man: "curl(1)", opts: `
	-a --append
	-A --user-agent =
	-b --cookie =M
	-B --use-ascii
	-c --cookie-jar =W
	-C --continue-at =
	-d --data --data-binary --data-raw --data-urlencode --data-ascii --json =M
	-D --dump-header =W
	-e --referer =
	-E --cert =R
	--key --cacert --capath --netrc-file --proxy-cacert --etag-compare =R
	-f --fail
	--fail-with-body
	--fail-early
	-F --form =M
	--form-string =
	-g --globoff
	-G --get
	-h --help
	-H --header --proxy-header =M
	-i --include
	-I --head
	-j --junk-session-cookies
	-J --remote-header-name !M
	-k --insecure
	--proxy-insecure
	-K --config =M
	-l --list-only
	-L --location
	--location-trusted
	-m --max-time =
	-n --netrc !O
	--netrc-optional !O
	-N --no-buffer
	-o --output =W
	--output-dir --trace --trace-ascii --stderr --libcurl --etag-save --hsts --alt-svc =W
	--create-dirs
	-O --remote-name !M
	--remote-name-all !M
	-p --proxytunnel
	-r --range =
	-R --remote-time
	-s --silent
	-S --show-error
	--no-progress-meter
	-T --upload-file =R
	-u --user =
	-U --proxy-user =
	-v --verbose
	-V --version
	-w --write-out =M
	-x --proxy --socks5 --socks5-hostname --socks4 --socks4a --preproxy =N
	-X --request =
	-y --speed-time =
	-Y --speed-limit =
	-z --time-cond =M
	-Z --parallel
	--parallel-max =
	-0 --http1.0
	--http1.1
	--http2
	--http2-prior-knowledge
	--http3
	-1 --tlsv1
	--tlsv1.2
	--tlsv1.3
	--tls-max =
	-4 --ipv4
	-6 --ipv6
	-# --progress-bar
	--url --url-query =M
	--compressed
	--retry --retry-delay --retry-max-time =
	--retry-all-errors
	--retry-connrefused
	--connect-timeout --limit-rate --oauth2-bearer --key-type --cert-type --pass --pinnedpublickey =
	--noproxy --interface --dns-servers --max-filesize --max-redirs --proto --proto-redir --aws-sigv4 --rate =
	--keepalive-time --request-target --happy-eyeballs-timeout-ms --expect100-timeout =
	--resolve --connect-to =
	--unix-socket =R
	--abstract-unix-socket =
	--post301 --post302 --post303
	--digest --basic --ntlm --negotiate --anyauth
	--ssl --ssl-reqd
	--path-as-is
	--raw
	--no-keepalive
	--tcp-nodelay
	--trace-time
	--trace-ids
	--styled-output
	--no-styled-output
	--no-sessionid
	--ca-native`}

func curl(c *call) {
	c.risk(risk.Network)
	o, _ := curlSpec.parse(c.args)
	c.applyOpts(&o)
	urlArgs(c, append(o.pos, o.values("--url")...))
	if o.has("-o", "-c", "-D", "--output-dir") {
		c.risk(risk.Mutating)
	}
	if o.has("-O", "-J") {
		c.risk(risk.Mutating)
		c.cwd(true)
	}
	for _, d := range o.values("-d", "-F", "-H", "--url-query") {
		atFile(c, d)
	}
	for _, w := range o.values("-w", "-H") {
		if w.lit && strings.HasPrefix(w.val, "@") && w.val != "@-" {
			c.read(arg{val: w.val[1:], lit: true})
		}
	}
	for _, z := range o.values("-z") {
		if z.lit && !strings.ContainsAny(z.val, " :") {
			c.read(z) // a file whose time is the condition (a date has spaces or colons)
		}
	}
	for _, b := range o.values("-b") {
		if b.lit && !strings.Contains(b.val, "=") {
			c.read(b)
		}
	}
	for _, e := range o.values("-E") {
		// "-E cert[:password]": the certificate is the part before an unescaped colon.
		if e.lit && strings.Contains(e.val, ":") {
			c.read(arg{val: e.val[:strings.IndexByte(e.val, ':')], lit: true, word: e.word})
		}
	}
	if cfg, ok := o.value("-K"); ok {
		c.read(cfg)
		c.opaque("curl reads more options from a config file")
	}
	if o.has("--unix-socket", "--abstract-unix-socket") {
		c.note("talks to a local UNIX socket")
	}
}

// wget(1), GNU Wget 1.21, OPTIONS: the options agents use; an option not listed makes the
// command opaque.
var wgetSpec = &spec{man: "wget(1)", abbrev: true, opts: `
	-V --version
	-h --help
	-b --background
	-e --execute =O
	-o --output-file -a --append-output --rejected-log --hsts-file --warc-file --save-cookies =W
	-d --debug
	-q --quiet
	-v --verbose
	-n =
	--no-verbose --no-clobber --no-directories --no-host-directories --no-parent
	--report-speed =
	-i --input-file =M
	-F --force-html
	-B --base =
	--config =O
	--no-config
	-t --tries =
	--retry-connrefused
	--retry-on-host-error
	--retry-on-http-error =
	-O --output-document =M
	--no-netrc
	-c --continue
	--start-pos =
	--progress =
	--show-progress
	-N --timestamping
	--no-if-modified-since
	--no-use-server-timestamps
	-S --server-response
	--spider
	-T --timeout --dns-timeout --connect-timeout --read-timeout =
	-w --wait --waitretry =
	--random-wait
	--no-proxy
	-Q --quota =
	--bind-address --limit-rate --restrict-file-names --prefer-family =
	--no-dns-cache
	--ignore-case
	-4 --inet4-only
	-6 --inet6-only
	--user --password --http-user --http-password --proxy-user --proxy-password =
	--ask-password
	--no-iri
	--local-encoding --remote-encoding =
	--unlink
	-x --force-directories
	--protocol-directories
	--cut-dirs =
	-P --directory-prefix =M
	--default-page =
	-E --adjust-extension
	--header --compression --max-redirect --referer --method --body-data --post-data =
	--save-headers
	-U --user-agent =
	--post-file --body-file --certificate --private-key --ca-certificate --crl-file --ca-directory --load-cookies =R
	--content-disposition
	--content-on-error
	--trust-server-names
	--auth-no-challenge
	--no-check-certificate
	--certificate-type --private-key-type --secure-protocol =
	--https-only
	--no-hsts
	--keep-session-cookies
	--no-cookies
	-r --recursive
	-l --level =
	--delete-after
	-k --convert-links
	-K --backup-converted
	-m --mirror
	-p --page-requisites
	-A --accept -R --reject --accept-regex --reject-regex =
	-D --domains --exclude-domains =
	-I --include-directories -X --exclude-directories =
	-L --relative
	--follow-ftp
	-H --span-hosts`}

func wget(c *call) {
	c.risk(risk.Network)
	o, _ := wgetSpec.parse(c.args)
	c.applyOpts(&o)
	urlArgs(c, o.pos)
	if out, ok := o.value("-O", "--output-document"); ok {
		if !out.is("-") {
			c.risk(risk.Mutating)
			c.write(out)
		}
	} else if d, ok := o.value("-P", "--directory-prefix"); ok {
		c.risk(risk.Mutating)
		c.write(d)
	} else if !o.has("--spider") {
		c.risk(risk.Mutating)
		c.cwd(true)
	}
	if in, ok := o.value("-i", "--input-file"); ok {
		c.read(in)
		c.opaque("wget reads the URLs to fetch from a file")
	}
}

// sshConfigKeys are the ssh_config(5) keywords, OpenSSH 9.2, that ssh -o (and scp, sftp, rsync
// -e ssh) may be given, by what their value does: "" only changes how ssh connects or prints,
// R and W name a file read or written, X runs a program or loads a library, N names a host. A
// keyword not listed makes the command opaque.
var sshConfigKeys = map[string]effect{
	"addkeystoagent": effNone, "addressfamily": effNone, "batchmode": effNone, "canonicaldomains": effNone,
	"canonicalizefallbacklocal": effNone, "canonicalizehostname": effNone, "canonicalizemaxdots": effNone,
	"canonicalizepermittedcnames": effNone, "casignaturealgorithms": effNone, "checkhostip": effNone,
	"ciphers": effNone, "clearallforwardings": effNone, "compression": effNone, "connectionattempts": effNone,
	"connecttimeout": effNone, "controlmaster": effNone, "controlpersist": effNone, "enableescapecommandline": effNone,
	"escapechar": effNone, "exitonforwardfailure": effNone, "fingerprinthash": effNone, "forkafterauthentication": effNone,
	"forwardagent": effNone, "forwardx11": effNone, "forwardx11timeout": effNone, "forwardx11trusted": effNone,
	"gatewayports": effNone, "gssapiauthentication": effNone, "gssapidelegatecredentials": effNone,
	"hashknownhosts": effNone, "hostbasedacceptedalgorithms": effNone, "hostbasedauthentication": effNone,
	"hostkeyalgorithms": effNone, "hostkeyalias": effNone, "identitiesonly": effNone, "ipqos": effNone,
	"kbdinteractiveauthentication": effNone, "kbdinteractivedevices": effNone, "kexalgorithms": effNone,
	"loglevel": effNone, "logverbose": effNone, "macs": effNone, "nohostauthenticationforlocalhost": effNone,
	"numberofpasswordprompts": effNone, "passwordauthentication": effNone, "port": effNone,
	"preferredauthentications": effNone, "pubkeyacceptedalgorithms": effNone, "pubkeyauthentication": effNone,
	"rekeylimit": effNone, "requesttty": effNone, "requiredrsasize": effNone, "sendenv": effNone,
	"serveralivecountmax": effNone, "serveraliveinterval": effNone, "sessiontype": effNone, "setenv": effNone,
	"stdinnull": effNone, "streamlocalbindmask": effNone, "streamlocalbindunlink": effNone,
	"stricthostkeychecking": effNone, "syslogfacility": effNone, "tcpkeepalive": effNone, "tunnel": effNone,
	"tunneldevice": effNone, "updatehostkeys": effNone, "user": effNone, "verifyhostkeydns": effNone,
	"visualhostkey": effNone, "xauthlocation": effExec, "obscurekeystroketiming": effNone, "bindaddress": effNone,
	"bindinterface": effNone,
	"identityfile":  effRead, "certificatefile": effRead, "userknownhostsfile": effWrite, "globalknownhostsfile": effRead,
	"revokedhostkeys": effRead, "identityagent": effRead, "controlpath": effWrite,
	"proxycommand": effExec, "localcommand": effExec, "permitlocalcommand": effExec, "knownhostscommand": effExec,
	"remotecommand": effExec, "pkcs11provider": effExec, "securitykeyprovider": effExec, "match": effExec,
	"include": effOpaque, "hostname": effNet, "proxyjump": effNet, "localforward": effNet, "remoteforward": effNet,
	"dynamicforward": effNet, "proxyusefdpass": effNone,
}

// sshOptions records what ssh's -o options, -F and -J do (ssh, scp, sftp, rsync -e ssh).
func sshOptions(c *call, o opts) {
	for _, v := range o.values("-o") {
		if !v.lit {
			c.opaque("an ssh -o option is not literal")
			continue
		}
		key, val, _ := strings.Cut(strings.TrimSpace(v.val), "=")
		if k, rest, ok := strings.Cut(key, " "); ok {
			key, val = k, rest
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		eff, known := sshConfigKeys[key]
		switch {
		case !known:
			c.opaque("ssh -o " + key + ": an option the analysis does not know")
			c.risk(risk.Exec)
		case eff == effExec:
			c.cmd.ExecutesCode = true
			c.risk(risk.Exec)
			c.opaque("ssh -o " + key + " runs a local program")
		case eff == effOpaque:
			c.opaque("ssh -o " + key + " reads more options from a file")
		case eff == effRead:
			c.read(arg{val: val, lit: true, word: v.word})
		case eff == effWrite:
			c.risk(risk.Mutating)
			c.write(arg{val: val, lit: true, word: v.word})
		case eff == effNet && (key == "hostname" || key == "proxyjump"):
			for _, hop := range strings.Split(val, ",") {
				c.net(hostOf(hop))
			}
		case eff == effNet:
			c.net()
		}
	}
	if cfg, ok := o.value("-F"); ok {
		c.read(cfg)
		c.opaque("ssh reads options (possibly commands) from another config file")
	}
	for _, j := range o.values("-J") {
		for _, hop := range strings.Split(j.val, ",") {
			c.net(hostOf(hop))
		}
	}
}

func ssh(c *call) {
	c.risk(risk.Network)
	o, idx := sshSpec.parse(c.args)
	c.applyOpts(&o)
	sshOptions(c, o)
	if idx >= len(c.args) {
		return
	}
	dest := c.args[idx]
	// ssh reads options after the destination too, up to the remote command.
	more, n := sshSpec.parse(c.args[idx+1:])
	c.applyOpts(&more)
	sshOptions(c, more)
	idx += n
	if !dest.lit {
		c.opaque("the ssh destination is not literal")
		c.net()
	} else {
		h := dest.val
		if !strings.Contains(h, "://") {
			h = "ssh://" + h
		}
		c.net(hostOf(h))
	}
	if idx+1 < len(c.args) {
		c.risk(risk.Exec)
		c.note("runs a command on the remote host")
	}
}

// sshProgram reports whether an ssh transport names ssh itself ("ssh", "ssh -p 22", "/usr/bin/ssh").
func sshProgram(s string) bool {
	f := strings.Fields(s)
	return len(f) > 0 && (f[0] == "ssh" || strings.HasSuffix(f[0], "/ssh")) && !strings.ContainsAny(s, "'\"$`;|&<>()\\")
}

func scpLike(c *call) {
	c.risk(risk.ReadOnly) // a local copy reads at least; writes and remotes add to it
	sp := map[string]*spec{"scp": scpSpec, "sftp": sftpSpec, "rsync": rsyncSpec}[c.name]
	o, _ := sp.parse(c.args)
	c.applyOpts(&o)
	sshOptions(c, o)
	if sh, ok := o.value("-e"); ok {
		c.risk(risk.Exec)
		switch {
		case !sh.lit:
			c.opaque(c.name + " runs a transport the line does not spell out")
		case sshProgram(sh.val):
			c.note(c.name + " connects through " + sh.val)
		default:
			c.opaque(c.name + " runs " + sh.val + " as its transport")
			c.cmd.ExecutesCode = true
		}
	}
	pos := o.pos
	if c.name == "sftp" {
		if len(pos) > 0 && pos[0].lit {
			c.net(hostOf("ssh://" + strings.SplitN(pos[0].val, ":", 2)[0]))
		} else {
			c.net()
		}
		return
	}
	for i, p := range pos {
		last := i == len(pos)-1 && len(pos) > 1
		if !p.lit {
			c.opaque("a transfer path is not literal")
			continue
		}
		if h := remoteHost(p.val); h != "" {
			c.net(h)
			continue
		}
		if last {
			c.risk(risk.Mutating)
			c.write(p)
			if o.has("--delete", "--delete-before", "--delete-after", "--delete-during", "--delete-excluded", "--del") {
				c.risk(risk.Destructive)
			}
		} else {
			c.read(p)
			if o.has("--remove-source-files") {
				c.risk(risk.Destructive)
				c.write(p)
			}
		}
	}
}

// remoteHost returns the host of an scp/rsync remote path (host:path, user@host:path,
// rsync://host/..., host::module), or "" for a local path.
func remoteHost(s string) string {
	if strings.HasPrefix(s, "rsync://") || strings.HasPrefix(s, "ssh://") || strings.HasPrefix(s, "scp://") {
		return hostOf(s)
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
		return ""
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 || strings.Contains(s[:i], "/") {
		return ""
	}
	h := s[:i]
	if at := strings.LastIndexByte(h, '@'); at >= 0 {
		h = h[at+1:]
	}
	return strings.ToLower(h)
}

func netcat(c *call) {
	c.risk(risk.Network)
	if c.name == "telnet" || c.name == "ftp" || c.name == "tftp" {
		c.net()
		c.risk(risk.Exec)
		c.opaque(c.name + " is an interactive client: its commands come from its input (ftp's \"!\" runs a shell)")
		return
	}
	o, _ := ncSpec.parse(c.args)
	c.applyOpts(&o)
	if o.has("-l", "--listen") {
		c.note("listens for connections")
	}
	if len(o.pos) > 0 && o.pos[0].lit {
		c.net(hostOf(o.pos[0].val))
	} else {
		c.net()
	}
}

func socat(c *call) {
	c.risk(risk.Network)
	for _, a := range c.args {
		if !a.lit {
			c.opaque("a socat address is not literal")
			continue
		}
		kind, rest, _ := strings.Cut(a.val, ":")
		switch strings.ToUpper(kind) {
		case "EXEC", "SYSTEM":
			c.cmd.ExecutesCode = true
			c.risk(risk.Exec)
			c.opaque("socat runs a program")
		case "TCP", "TCP4", "TCP6", "UDP", "UDP4", "UDP6", "SSL", "OPENSSL", "SCTP":
			c.net(hostOf(strings.SplitN(rest, ",", 2)[0]))
		case "OPEN", "CREATE", "GOPEN", "FILE":
			c.risk(risk.Mutating)
			c.write(arg{val: strings.SplitN(rest, ",", 2)[0], lit: true})
		}
	}
}

func lookup(c *call) {
	c.risk(risk.Network, risk.ReadOnly)
	sp := lookupSpecs[c.name]
	if sp == nil {
		sp = lookupSpecs[strings.TrimSuffix(c.name, "6")]
	}
	o, _ := sp.parse(c.args)
	c.applyOpts(&o)
	if c.name == "nslookup" && len(o.pos) == 0 {
		c.opaque("nslookup without a name reads its commands from its input")
	}
	for _, p := range o.pos {
		if p.lit {
			c.net(hostOf(strings.TrimPrefix(p.val, "@")))
		}
	}
	c.cmd.Network = true
}

func httpie(c *call) {
	c.risk(risk.Network)
	o, _ := httpieSpec.parse(c.args)
	c.applyOpts(&o)
	for _, v := range o.values("--verify") {
		if v.lit && !v.is("yes", "no", "true", "false") {
			c.read(v) // a CA bundle
		}
	}
	for _, p := range o.pos {
		// Request items that take their value from a file: field@file, field=@file,
		// field:=@file, header:@file.
		if p.lit && !strings.Contains(p.val, "://") {
			if i := strings.IndexByte(p.val, '@'); i > 0 && !strings.ContainsAny(p.val[:i], "/") {
				c.read(arg{val: p.val[i+1:], lit: true, word: p.word})
			}
		}
	}
	for _, p := range o.pos {
		if p.lit && !p.is("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS") && !strings.ContainsAny(p.val, "=:@") || (p.lit && strings.Contains(p.val, "://")) {
			urlArgs(c, []arg{p})
			break
		}
	}
	if _, ok := o.value("-o"); ok {
		c.risk(risk.Mutating)
	}
	if o.has("-d") {
		c.risk(risk.Mutating)
		c.cwd(true)
	}
}

// docker handles docker, podman and nerdctl.
// docker(1) 26, global OPTIONS: another daemon host is a host to check; a context or a config
// directory can name a remote daemon or credential helpers that run programs.
var dockerGlobalSpec = &spec{man: "docker(1) global options", posix: true, opts: `
	-H --host =N
	-c --context =X
	--config =X
	-D --debug
	-l --log-level =
	--tls
	--tlsverify
	--tlscacert --tlscert --tlskey =R
	-v --version
	-h --help`}

// dockerReadSpec: the options of docker's listing and inspecting subcommands (ps, images,
// inspect, logs, version, info, stats, top, port, history, events, diff and their "container",
// "image", "volume", "network", "system", "compose" forms).
var dockerReadSpec = &spec{man: "docker-ps(1), docker-inspect(1), docker-logs(1) and the like", opts: `
	-a --all
	-q --quiet
	-s --size
	-n --last =
	-l --latest
	-f --filter --format =
	--no-trunc
	--digests
	--tree
	-t --timestamps
	--tail --since --until =
	--details
	--type =
	--no-stream
	--human
	--services
	--resolve-image-digests
	--no-interpolate
	--profile --project-name -p --project-directory =
	--env-file =R
	--file =R`}

func docker(c *call) {
	g, idx := dockerGlobalSpec.parse(c.args)
	c.applyOpts(&g)
	sub, lit, rest := "", true, []arg(nil)
	if idx < len(c.args) {
		sub, lit, rest = c.args[idx].val, c.args[idx].lit, c.args[idx+1:]
	}
	if sub == "" {
		c.risk(risk.ReadOnly)
		return
	}
	if !lit {
		c.opaque("the " + c.name + " subcommand is not literal")
		c.risk(risk.Exec)
		return
	}
	if sub == "compose" || sub == "container" || sub == "image" || sub == "volume" || sub == "network" || sub == "system" || sub == "builder" || sub == "buildx" {
		if len(rest) > 0 && rest[0].lit {
			sub, rest = sub+" "+rest[0].val, rest[1:]
		}
	}
	if sub == "compose" || strings.HasPrefix(sub, "compose ") {
		// docker compose's own options come before its subcommand.
		cargs := c.args[idx+1:]
		co, cidx := dockerComposeSpec.parse(cargs)
		c.applyOpts(&co)
		if d, ok := co.value("--project-directory"); ok {
			c.read(d)
		}
		sub, rest = "compose", nil
		if cidx < len(cargs) {
			sub, rest = "compose "+cargs[cidx].val, cargs[cidx+1:]
			if !cargs[cidx].lit {
				c.opaque("the " + c.name + " compose subcommand is not literal")
				c.risk(risk.Exec)
				return
			}
		}
	}
	var o opts
	switch sub {
	case "run", "create", "container run", "container create", "compose run", "compose create":
		o, _ = dockerRunSpec.parse(rest)
		c.applyOpts(&o)
	case "build", "buildx build", "image build", "compose build":
		o, _ = dockerBuildSpec.parse(rest)
		c.applyOpts(&o)
		for _, v := range o.values("--secret", "--ssh") {
			for _, kv := range strings.Split(v.val, ",") {
				if k, f, ok := strings.Cut(kv, "="); ok && (k == "src" || k == "source") || v.lit && !strings.Contains(v.val, "=") && strings.Contains(v.val, "/") {
					if !ok {
						f = v.val
					}
					c.read(arg{val: f, lit: true, word: v.word})
				}
			}
			if !v.lit {
				c.opaque("a build secret the line does not spell out")
			}
		}
	case "cp", "container cp", "save", "image save", "load", "image load":
		o, _ = dockerFileSpec.parse(rest)
		c.applyOpts(&o)
	default:
		o, _ = dockerReadSpec.parse(rest)
	}
	switch sub {
	case "run", "create", "container run", "container create", "compose run", "compose up", "compose create":
		c.risk(risk.Exec, risk.Network)
		for _, v := range append(o.values("-v", "--volume"), o.values("--mount")...) {
			bindMount(c, v)
		}
		if o.has("--privileged") || len(o.values("--cap-add", "--device")) > 0 {
			c.severity(risk.High)
			c.note("the container gets host privileges or devices")
		}
		for _, f := range o.values("--pid", "--ipc", "--network", "--net") {
			if f.is("host") {
				c.severity(risk.High)
				c.note("the container shares a host namespace")
			}
		}
		imageHost(c, o.pos)
	case "build", "buildx build", "image build", "compose build":
		c.risk(risk.Exec, risk.Network)
		c.readAll(o.pos)
		c.net()
	case "pull", "push", "login", "logout", "search", "image pull", "image push", "compose pull", "compose push":
		c.risk(risk.Network)
		if strings.HasSuffix(sub, "push") {
			c.risk(risk.Destructive)
		}
		imageHost(c, o.pos)
	case "exec", "container exec", "compose exec", "attach", "start", "restart", "compose start", "compose restart", "unpause", "container start":
		c.risk(risk.Exec)
	case "rm", "rmi", "kill", "stop", "prune", "container rm", "container prune", "container stop", "container kill", "image rm", "image prune",
		"volume rm", "volume prune", "network rm", "network prune", "system prune", "builder prune", "compose down", "compose rm", "compose kill", "compose stop":
		c.risk(risk.Destructive)
	case "cp", "container cp":
		c.risk(risk.Mutating)
		for _, p := range o.pos {
			if p.lit && !strings.Contains(p.val, ":") {
				c.write(p)
			}
		}
	case "save", "image save", "load", "image load":
		c.risk(risk.Mutating)
	case "ps", "images", "inspect", "logs", "version", "info", "stats", "top", "port", "history", "events", "diff",
		"container ls", "container inspect", "container logs", "image ls", "image inspect", "image history", "volume ls",
		"volume inspect", "network ls", "network inspect", "system df", "system info", "compose ps", "compose logs",
		"compose config", "compose ls", "compose top", "context", "buildx ls":
		c.risk(risk.ReadOnly)
		ro, _ := dockerReadSpec.parse(rest)
		c.applyOpts(&ro)
	default:
		c.risk(risk.Exec)
	}
}

// bindMount records the host side of a bind mount: the container may write it.
func bindMount(c *call, v arg) {
	if !v.lit {
		c.opaque("a volume is not literal")
		return
	}
	src := ""
	if strings.Contains(v.val, "type=") || strings.Contains(v.val, "source=") || strings.Contains(v.val, "src=") {
		for _, kv := range strings.Split(v.val, ",") {
			k, val, _ := strings.Cut(kv, "=")
			if k == "source" || k == "src" {
				src = val
			}
		}
	} else {
		src = strings.SplitN(v.val, ":", 2)[0]
	}
	if strings.HasPrefix(src, "/") || strings.HasPrefix(src, ".") || strings.HasPrefix(src, "~") {
		c.risk(risk.Mutating)
		c.write(arg{val: src, lit: true})
		if src == "/var/run/docker.sock" || src == "/run/docker.sock" {
			c.severity(risk.High)
			c.note("the container controls the host's docker daemon")
		}
	}
}

// imageHost records the registry host of an image reference when it names one.
func imageHost(c *call, pos []arg) {
	if len(pos) == 0 || !pos[0].lit {
		c.net()
		return
	}
	ref := pos[0].val
	if first, _, ok := strings.Cut(ref, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		c.net(hostOf(first))
		return
	}
	c.net(c.w.opts.Registries["docker"]...)
}

// cloudCLI handles clis that act on remote infrastructure: network, and destructive for their
// delete-like verbs.
func cloudCLI(c *call) {
	c.risk(risk.Network, risk.Exec)
	c.net(c.w.opts.Registries[c.name]...)
	for _, a := range c.args {
		if !a.lit {
			continue
		}
		switch a.val {
		case "delete", "destroy", "rm", "remove", "terminate", "purge", "drain", "uninstall", "rb", "delete-stack",
			"delete-bucket", "delete-object", "cordon", "scale", "rollout", "apply", "replace", "patch", "taint":
			c.risk(risk.Destructive)
			return
		case "get", "describe", "list", "ls", "show", "plan", "version", "status", "logs", "whoami", "validate", "explain", "diff", "top":
			c.risk(risk.ReadOnly)
		}
	}
}

func registerNetwork() {
	register(curl, "curl")
	register(wget, "wget")
	register(ssh, "ssh", "mosh", "autossh")
	register(scpLike, "scp", "rsync", "sftp")
	register(netcat, "nc", "ncat", "netcat", "telnet", "ftp", "tftp")
	register(socat, "socat")
	register(lookup, "ping", "ping6", "traceroute", "traceroute6", "tracepath", "mtr", "dig", "host", "nslookup", "whois", "nmap", "drill")
	register(httpie, "http", "https", "xh", "xhs")
	register(func(c *call) {
		c.risk(risk.Network, risk.Mutating)
		sp := aria2Spec
		if c.name == "axel" {
			sp = axelSpec
		}
		o, _ := sp.parse(c.args)
		c.applyOpts(&o)
		urlArgs(c, o.pos)
		if _, ok := o.value("-d", "-o"); !ok {
			c.cwd(true)
		}
	}, "aria2c", "axel")
	register(docker, "docker", "podman", "nerdctl")
	register(cloudCLI, "kubectl", "oc", "helm", "terraform", "tofu", "pulumi", "aws", "gcloud", "gsutil", "az", "doctl",
		"heroku", "fly", "flyctl", "vercel", "netlify", "firebase", "wrangler", "serverless", "sls", "ansible",
		"ansible-playbook", "eksctl", "argocd", "vault", "consul", "nomad", "packer", "cdk", "sam", "gh", "glab", "hub", "railway", "supabase")
	register(func(c *call) { c.risk(risk.Network); c.net() }, "mail", "mailx", "sendmail", "mutt", "msmtp")
	register(func(c *call) {
		c.risk(risk.Exec)
		for _, a := range c.args {
			if a.lit && strings.Contains(a.val, "://") {
				urlArgs(c, []arg{a})
			}
		}
	}, "open", "xdg-open", "start", "sensible-browser", "x-www-browser")
}
