package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// Programs that act on the system: processes, services, scheduled jobs, keys and certificates.

// systemctlSpec: systemctl(1), systemd 252, OPTIONS: -H runs the command on another host over
// ssh, -M in a container; --root and --image act on another tree.
var systemctlSpec = &spec{man: "systemctl(1)", abbrev: true, opts: `
	-t --type =
	--state =
	-p --property =
	-P =
	-a --all
	-r --recursive
	--reverse
	--after
	--before
	--with-dependencies
	-l --full
	--value
	--show-types
	--job-mode =
	-T --show-transaction
	--fail
	--check-inhibitors =
	-i
	--dry-run
	-q --quiet
	--no-block
	--wait
	--user
	--system
	--failed
	--no-wall
	--global
	--no-reload
	--no-ask-password
	--kill-whom --kill-value =
	-s --signal =
	--what =
	-f --force
	--message =
	--now
	--root =M
	--image =M
	--runtime
	--preset-mode =
	-n --lines =
	-o --output =
	--firmware-setup
	--boot-loader-menu --boot-loader-entry --reboot-argument =
	--plain
	--timestamp =
	--mkdir
	--marked
	--read-only
	-H --host =N
	-M --machine =X
	--no-pager
	--legend =
	-h --help
	--version`}

// systemctlReads are the systemctl commands that only report.
var systemctlReads = map[string]bool{
	"status": true, "show": true, "cat": true, "list-units": true, "list-unit-files": true, "list-sockets": true,
	"list-timers": true, "list-jobs": true, "list-dependencies": true, "list-machines": true, "list-automounts": true,
	"list-paths": true, "is-active": true, "is-enabled": true, "is-failed": true, "is-system-running": true,
	"get-default": true, "show-environment": true, "help": true,
}

// systemctl: the command is its first operand; only the reporting ones are read-only, and only
// on this machine (-H reaches another host, -M a container).
func systemctl(c *call) {
	o := c.parsed(systemctlSpec)
	if o.has("--root", "--image") {
		c.opaque("systemctl acts on another root tree")
	}
	if len(o.pos) == 0 {
		if o.has("--version", "-h") || len(c.args) == 0 {
			c.risk(risk.ReadOnly)
			return
		}
		c.risk(risk.ReadOnly) // list-units
		return
	}
	if o.pos[0].lit && systemctlReads[o.pos[0].val] {
		c.risk(risk.ReadOnly)
		return
	}
	c.risk(risk.Destructive, risk.Exec)
}

// service: "service NAME COMMAND" runs the service's init script; launchctl, rc-service and sv
// likewise. Only their listing commands are read-only.
func service(c *call) {
	if len(c.args) > 0 && c.args[0].is("status", "list", "print", "--status-all", "--version") {
		c.risk(risk.ReadOnly)
		return
	}
	c.risk(risk.Destructive, risk.Exec)
}

// crontabSpec: crontab(1), cronie 1.6: -l lists, -r removes, -e edits, a FILE operand is
// installed (cron runs what it says).
var crontabSpec = &spec{man: "crontab(1)", opts: `
	-u =
	-l !M
	-r !M
	-e !X
	-i
	-n =
	-c
	-s
	-T =R
	-V`}

func crontab(c *call) {
	o := c.parsed(crontabSpec)
	switch {
	case o.has("-l"), o.has("-T"):
		c.risk(risk.ReadOnly)
	case o.has("-r"):
		c.risk(risk.Destructive)
	default:
		c.risk(risk.Mutating, risk.Exec)
		c.readAll(o.pos)
	}
}

// sshKeygenSpec: ssh-keygen(1), OpenSSH 9.2: -f names the key file (written when generating or
// changing it, read otherwise: recorded as a write, which the gate checks more strictly); -D
// and -w load a PKCS#11 or FIDO library.
var sshKeygenSpec = &spec{man: "ssh-keygen(1)", opts: `
	-A
	-a =
	-B
	-b =
	-C =
	-c
	-D =X
	-E =
	-e
	-F =
	-f =W
	-g
	-H
	-h
	-I =
	-i
	-K
	-k
	-L
	-l
	-M =
	-m =
	-N =
	-n =
	-O =
	-P =
	-p
	-Q
	-q
	-R =
	-r =
	-s =R
	-t =
	-U
	-u
	-V =
	-v
	-w =X
	-Y =
	-y
	-Z =
	-z =`}

func sshKeygen(c *call) {
	c.risk(risk.Mutating)
	o := c.parsed(sshKeygenSpec)
	if o.has("-K", "-A") {
		c.cwd(true) // resident keys and host keys are written where the program chooses
	}
	if o.has("-Y", "-Q", "-k") {
		c.readAll(o.pos)
	}
}

// opensslSpec: openssl(1), OpenSSL 3.0, the options of the commands the analysis follows (from
// each command's -help): inputs, keys, certificates and random sources are read; -out and the
// like written; -engine, -provider and -config load code; -connect and the like reach a host.
// Pass phrase arguments ("file:PATH", "env:VAR") are read by the handler.
var opensslSpec = &spec{man: "openssl(1) and openssl-<command>(1)", oneDash: true, opts: `
	-1 -4 -6 -A -CAstore -LMK -P -RSAPublicKey_in -RSAPublicKey_out -V
	-a -alias -allow_no_dhe_kex -allow_proxy_certs -anti_replay -asymcipher-algorithms -async -b
	-badsig -base64 -batch -binary -brief -bugs -build_chain -c -cacerts -chain -chainCAstore -check
	-check_ss_sig -cipher-algorithms -cipher-commands -ciphers -clcerts -client_renegotiation -clrext
	-clrreject -clrtrust -commands -comp -crl_check -crl_check_all -crlf -crlnumber
	-ct -d -dane_ee_no_namechecks -dates -debug -debug_broken_protocol -decoders -descert -digest-algorithms
	-digest-commands -disabled -dtls -dtls1 -dtls1_2 -dump -e -email -enable_pha -encoders -enddate
	-engine_impl -engines -explicit_policy -export -ext_cache -extended_crl -f -fallback_scsv -fingerprint
	-fips-fingerprint -hash -hash_old -help -hex -i -ign_eof -ignore_critical
	-ignore_err -ignore_unexpected_eof -info -inhibit_any -inhibit_map -issuer_checks -issuer_hash
	-issuer_hash_old -kdf-algorithms -kem-algorithms -key-exchange-algorithms -key-managers -keyex
	-keysig -lastupdate -legacy -legacy_renegotiation -legacy_server_connect -list -m -mac-algorithms
	-maciter -modulus -msg -multivalue-rdn -nbio -nbio_test -new -newhdr -next_serial -nextupdate
	-no-CAfile -no-CApath -no-CAstore -no_alt_chains -no_anti_replay -no_ca_names -no_cache -no_cert_checks
	-no_cert_verify -no_certs -no_chain -no_check_time -no_comp -no_dhe -no_etm -no_explicit -no_ign_eof
	-no_intern -no_legacy_server_connect -no_middlebox -no_nonce -no_public -no_renegotiation -no_resume_ephemeral
	-no_resumption_on_reneg -no_signature_verify -no_ssl3 -no_ticket -no_tls1 -no_tls1_1 -no_tls1_2
	-no_tls1_3 -nocert -nocerts -nocommands -noct -nodes -noenc -noiter -nokeys -nomac -nomaciter
	-nomacver -nonce -none -noout -nopad -nosalt -noservername -noverify -o -objects -ocsp_uri -ocspid
	-p -param_out -partial_chain -pbkdf2 -policy_check -policy_print -precert -preserve_dates -prexit
	-prioritize_chacha -providers -pubcheck -pubin -pubkey -public-key-algorithms -public-key-methods
	-pubout -pvk-none -pvk-strong -pvk-weak -quiet -r -random-generators -random-instances -reconnect
	-req -req_text -resp_key_id -resp_no_certs -resp_text -reuse -rev -s -salt -security_debug -security_debug_verbose
	-servername_fatal -serverpref -show_chain -showcerts -signature-algorithms -srp -srp_lateuser
	-srp_moregroups -standard-commands -startdate -state -stateless -status -status_verbose -stdname
	-store-loaders -strict -strictpem -subject -subject_hash -subject_hash_old -suiteB_128 -suiteB_128_only
	-suiteB_192 -text -text_pub -tls1 -tls1_1 -tls1_2 -tls1_3 -tlsextdebug -trace -traditional -trust_other
	-trusted_first -trustout -twopass -unlink -use_deltas -utf8 -v -verbose -verifyCAstore -verify_quiet
	-verify_return_error -x509 -x509_strict -x509toreq -xchain_build
	-md5 -sha1 -sha224 -sha256 -sha384 -sha512 -sha512-224 -sha512-256 -sha3-224 -sha3-256 -sha3-384 -sha3-512
	-blake2b512 -blake2s256 -sm3 -md4 -rmd160 -shake128 -shake256
	-aes-128-cbc -aes-192-cbc -aes-256-cbc -aes-128-ctr -aes-192-ctr -aes-256-ctr -aes-128-gcm -aes-256-gcm
	-chacha20 -des3 -aes128 -aes192 -aes256
	-CAform -CAkeyform -CRLform -CSP -K -S -Verify -addext -addreject -addtrust -alpn -attime -auth_level =
	-bufsize -caname -certform -certopt -certpbe -checkemail -checkend -checkhost -checkip -cipher =
	-ciphersuites -client_sigalgs -context -conv_form -convert -copy_extensions -curves -dane_tlsa_domain =
	-dane_tlsa_rrdata -dateopt -days -dcertform -dkeyform -dlimit -ec_conv_form -ec_param_enc -ext =
	-extensions -genstr -groups -header -hmac -id_prefix -inform -item -iter -iv -k -keyform -keymatexport =
	-keymatexportlen -keypbe -length -mac -macalg -macopt -max_early_data -max_pipelines -max_protocol =
	-max_send_frag -maxfraglen -md -min_protocol -mtu -multi -name -named_curve -nameopt -ndays =
	-nextprotoneg -nmin -no_proxy -nrequest -num_tickets -offset -options -outform -param_enc =
	-path -pkeyopt -policy -propquery -proxy_user -psk -psk_hint -psk_identity -purpose -rcid -read_buf =
	-record_padding -recv_max_early_data -reqexts -reqopt -rmd -rsigopt -section -select -serial =
	-serverinfo -servername -set_serial -setalias -sigalgs -sigopt -split_send_frag -srp_strength =
	-srpuser -srpuserseed -starttls -status_age -status_timeout -strparse -subj -time -timeout -use_srtp =
	-validity_period -verify_depth -verify_email -verify_hostname -verify_ip -verify_name -vfyopt =
	-xcertform -xkeyform -xmpphost -xoflen =
	-newkey =M
	-CA -CAfile -CAkey -CRL -CRLfile -VAfile -cafile -cert -cert2 -cert_chain -certfile -chainCAfile =R
	-ctlogfile -dcert -dcert_chain -dhparam -dkey -early_data -extfile -force_pubkey -gendelta -in =R
	-index -inkey -issuer -key -key2 -kfile -oid -prverify -psk_session -reqin -requestCAfile =R
	-respin -rkey -rother -rsigner -sess_in -sign -sign_other -signature -signer -signkey -srpvfile =R
	-status_file -trusted -untrusted -verify -verifyCAfile -verify_other -xcert -xchain -xkey -peerkey =R
	-rand =M
	-keylogfile -keyout -msgfile -out -reqout -respout -sess_out -writerand =W
	-CAserial =W
	-CAcreateserial !O
	-CApath -chainCApath -verifyCApath =D
	-config -engine -genconf -keygen_engine -provider -provider-path -ssl_client_engine -ssl_config =X
	-accept -bind -connect -host -naccept -port -proxy -status_url -unix -url -www =N
	-crl_download -listen !N
	-WWW -HTTP -sendfile !O
	-dpass -pass -passcerts -passin -passout -password -proxy_pass -srppass =M`}

// opensslReads are the openssl commands that read their inputs and write only what -out and the
// like name; opensslNet reach a host (s_client and s_time connect to localhost:4433 unless told
// otherwise; s_server listens).
var (
	opensslReads = map[string]bool{
		"x509": true, "req": true, "dgst": true, "enc": true, "base64": true, "verify": true, "rand": true, "pkey": true,
		"pkeyparam": true, "rsa": true, "ec": true, "ecparam": true, "dsa": true, "dsaparam": true, "dhparam": true,
		"genrsa": true, "genpkey": true, "gendsa": true, "crl": true, "crl2pkcs7": true, "asn1parse": true, "version": true,
		"list": true, "ciphers": true, "errstr": true, "help": true, "pkcs12": true, "pkcs7": true, "pkcs8": true,
		"sess_id": true, "spkac": true, "prime": true, "passwd": true, "kdf": true, "mac": true, "nseq": true,
		"cms": true, "smime": true, "pkeyutl": true, "rsautl": true, "info": true, "speed": true,
	}
	opensslNet = map[string]bool{"s_client": true, "s_time": true, "s_server": true, "ocsp": true}
	// opensslDigests are the message digest and cipher names openssl also takes as commands.
	opensslDigests = map[string]string{
		"md5": "dgst", "sha1": "dgst", "sha224": "dgst", "sha256": "dgst", "sha384": "dgst", "sha512": "dgst",
		"sha3-256": "dgst", "sha3-512": "dgst", "blake2b512": "dgst", "blake2s256": "dgst", "rmd160": "dgst", "sm3": "dgst",
		"aes-128-cbc": "enc", "aes-192-cbc": "enc", "aes-256-cbc": "enc", "aes128": "enc", "aes256": "enc", "des3": "enc",
		"chacha20": "enc",
	}
)

// openssl: the command decides. A command outside the tables above is exec and opaque.
func openssl(c *call) {
	c.risk(risk.ReadOnly)
	if len(c.args) == 0 || !c.args[0].lit {
		c.shellState("openssl with no command, or one the line does not spell out, reads commands or runs an unknown one")
		return
	}
	sub := c.args[0].val
	if to, ok := opensslDigests[sub]; ok {
		sub = to
	}
	if !opensslReads[sub] && !opensslNet[sub] {
		c.risk(risk.Exec)
		c.opaque("openssl " + sub + " is not a command the analysis follows")
		return
	}
	o, _ := opensslSpec.parse(c.args[1:])
	c.applyOpts(&o)
	for _, v := range o.values("-passin", "-passout", "-pass", "-dpass", "-passcerts", "-password", "-proxy_pass", "-srppass") {
		switch {
		case !v.lit:
			c.opaque("a pass phrase source the line does not spell out")
		case strings.HasPrefix(v.val, "file:"):
			c.read(arg{val: v.val[len("file:"):], lit: true, word: v.word})
		case strings.HasPrefix(v.val, "env:"), strings.HasPrefix(v.val, "fd:"):
			c.opaque("openssl reads a pass phrase from " + v.val)
		}
	}
	for _, v := range o.values("-rand") {
		if !v.lit {
			c.opaque("a random source the line does not spell out")
			continue
		}
		for _, f := range strings.Split(v.val, ":") {
			c.read(arg{val: f, lit: true, word: v.word})
		}
	}
	for _, v := range o.values("-newkey") {
		if v.lit && strings.Contains(v.val, ":") {
			if _, f, _ := strings.Cut(v.val, ":"); !isDigits(f) {
				c.read(arg{val: f, lit: true, word: v.word}) // "alg:paramfile"
			}
		}
	}
	switch sub {
	case "s_client", "s_time":
		if len(o.values("-connect")) == 0 && len(o.values("-host")) == 0 && len(o.values("-proxy")) == 0 && len(o.values("-unix")) == 0 {
			if len(o.pos) > 0 && o.pos[0].lit {
				c.net(hostOf(o.pos[0].val))
			} else {
				c.net("localhost")
			}
		}
	case "s_server":
		c.net()
		c.note("openssl s_server listens for connections")
	case "dgst", "verify":
		c.readAll(o.pos)
	}
}

func registerSystem() {
	register(func(c *call) { c.risk(risk.Destructive) }, "kill", "pkill", "killall", "killall5", "xkill", "skill")
	register(func(c *call) { c.risk(risk.Destructive); c.severity(risk.High) },
		"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "mount", "umount", "losetup", "swapon", "swapoff",
		"modprobe", "insmod", "rmmod", "iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "useradd", "userdel",
		"usermod", "groupadd", "groupdel", "passwd", "chpasswd", "visudo", "sysctl", "hwclock", "timedatectl", "hostnamectl")
	programs["systemctl"] = systemctl
	register(service, "service", "launchctl", "rc-service", "sv")
	programs["crontab"] = crontab
	programs["ssh-keygen"] = sshKeygen
	programs["openssl"] = openssl
}
