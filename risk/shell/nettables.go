package shell

// The option tables of the programs that reach other hosts. They are never read-only; the
// tables say which options read files (keys, lists, configurations), write them (logs, control
// sockets), run programs or reach hosts the line names, and an unknown option makes the command
// opaque.

// ssh(1), OpenSSH 9.2: -F reads a configuration (which may name commands to run), -o sets one
// option (see sshOptions), -E and -S write, -I loads a PKCS#11 library; -D, -L, -R and -W open
// forwardings.
var sshSpec = &spec{man: "ssh(1)", posix: true, opts: `
	-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y
	-B =
	-b =
	-c =
	-D =N
	-E =W
	-e =
	-F =O
	-I =X
	-i =R
	-J =M
	-L =N
	-l =
	-m =
	-O =
	-o =M
	-P =
	-p =
	-Q =
	-R =N
	-S =W
	-W =N
	-w =`}

// scp(1), OpenSSH 9.2: -S and -D name programs to run, -F reads a configuration.
var scpSpec = &spec{man: "scp(1)", opts: `
	-3 -4 -6 -A -B -C -O -p -q -R -r -s -T -v
	-c =
	-D =X
	-F =O
	-i =R
	-J =M
	-l =
	-o =M
	-P =
	-S =X
	-X =`}

// sftp(1), OpenSSH 9.2: -b reads a batch of commands ("!" among them runs a local shell).
var sftpSpec = &spec{man: "sftp(1)", posix: true, opts: `
	-4 -6 -A -a -C -f -N -p -q -r -v
	-B =
	-b =X
	-c =
	-D =X
	-F =O
	-i =R
	-J =M
	-l =
	-o =M
	-P =
	-R =
	-S =X
	-s =
	-X =`}

// rsync(1), rsync 3.2, OPTIONS: -e and --rsync-path run programs (see scpLike), the -from and
// password files are read, the log, batch, backup and temporary files written.
var rsyncSpec = &spec{man: "rsync(1)", opts: `
	-v --verbose
	--info --debug =
	--stderr =
	-q --quiet
	--no-motd
	-c --checksum
	-a --archive
	-r --recursive
	-R --relative
	--no-implied-dirs
	-b --backup
	--backup-dir =W
	--suffix =
	-u --update
	--inplace
	--append
	--append-verify
	-d --dirs
	--old-dirs --old-d
	--mkpath
	-l --links
	-L --copy-links
	--copy-unsafe-links
	--safe-links
	--munge-links
	-k --copy-dirlinks
	-K --keep-dirlinks
	-H --hard-links
	-p --perms
	-E --executability
	--chmod =
	-A --acls
	-X --xattrs
	-o --owner
	-g --group
	--devices
	--copy-devices
	--write-devices
	--specials
	-D
	-t --times
	-U --atimes
	--open-noatime
	-N --crtimes
	-O --omit-dir-times
	-J --omit-link-times
	--super
	--fake-super
	-S --sparse
	--preallocate
	-n --dry-run
	-W --whole-file
	--checksum-choice --cc =
	-x --one-file-system
	-B --block-size =
	-e --rsh =M
	--rsync-path =X
	--existing
	--ignore-existing
	--remove-source-files !M
	--del --delete --delete-before --delete-during --delete-delay --delete-after --delete-excluded !M
	--ignore-missing-args
	--delete-missing-args !M
	--ignore-errors
	--force
	--max-delete --max-size --min-size --max-alloc =
	--partial
	--partial-dir =W
	--delay-updates
	-m --prune-empty-dirs
	--numeric-ids
	--usermap --groupmap --chown =
	--timeout --contimeout =
	-I --ignore-times
	--size-only
	-@ --modify-window =
	-T --temp-dir =W
	-y --fuzzy
	--compare-dest --copy-dest --link-dest =R
	-z --compress
	--compress-choice --zc --compress-level --zl --skip-compress =
	-C --cvs-exclude
	-f --filter =O
	-F
	--exclude --include =
	--exclude-from --include-from --files-from =R
	-0 --from0
	--old-args
	-s --secluded-args
	--trust-sender
	--copy-as =X
	--address --sockopts =
	--port =N
	--blocking-io
	--outbuf =
	--stats
	-8 --8-bit-output
	-h --human-readable
	--progress
	-P
	-i --itemize-changes
	-M --remote-option =X
	--out-format --log-file-format =
	--log-file =W
	--password-file =R
	--early-input =R
	--list-only
	--bwlimit --stop-after --stop-at =
	--fsync
	--write-batch --only-write-batch =W
	--read-batch =R
	--protocol --iconv --checksum-seed =
	-4 --ipv4
	-6 --ipv6
	-V --version
	--help`}

// nc(1): the union of netcat-openbsd 1.219 and ncat 7.93 (an option one of them lacks is
// refused by it): -e, -c and --lua-exec connect a program to the socket; -o and -x write what
// passes; the TLS and access files are read.
var ncSpec = &spec{man: "nc(1), ncat(1)", opts: `
	-4 -6 -b -C -D -d -F -h -k -l -N -n -r -S -t -U -u -v -z -Z
	-I -i -M -m -O -P -p -q -s -T -V -W -w =
	-X =
	-x =N
	-e --exec --sh-exec --lua-exec =X
	-c =X
	-o --output --hex-dump --append-output =W
	--listen --keep-open --send-only --recv-only --nodns --udp --sctp --crlf --ssl --ssl-verify --no-shutdown --version --help
	--proxy =N
	--proxy-type --proxy-auth --source --source-port --max-conns --wait --idle-timeout --delay --broker --chat =
	--ssl-cert --ssl-key --ssl-trustfile --allowfile --denyfile =R
	--allow --deny --ssl-ciphers --ssl-servername --ssl-alpn =`}

// The lookup tools: ping(8) iputils 20221126, dig(1) and host(1) BIND 9.18, nslookup(1),
// whois(1) 5.5, traceroute(8) 2.1, tracepath(8), mtr(8) 0.95, nmap(1) 7.93. Files they read
// (dig -f, -k; mtr -F; nmap -iL ...) are recorded, nmap's output files written, and its scripts
// (Lua code) run.
var lookupSpecs = map[string]*spec{
	"ping": {man: "ping(8)", opts: `
	-4 -6 -a -A -b -B -d -D -f -h -L -n -O -q -R -r -U -v -V
	-c -e -F -i -I -l -m -M -N -p -Q -s -S -t -T -w -W =`},
	"dig": {man: "dig(1)", opts: `
	-4 -6 -h -m -r -u -v
	-b -c -p -q -t -x -y =
	-f =R
	-k =R`},
	"host": {man: "host(1)", opts: `
	-4 -6 -a -A -C -d -l -r -s -T -U -v -V -w
	-c -D -i -m -N -R -t -W =`},
	"nslookup": {man: "nslookup(1)", opts: ``},
	"whois": {man: "whois(1)", abbrev: true, opts: `
	-h --host =N
	-p --port =
	-I
	-H
	--verbose
	--no-recursion
	-l -L -m -M -c -x -b -B -G -d -K -r -R -a
	-i -T -s -g -t -v -q =
	--help
	--version`},
	"traceroute": {man: "traceroute(8)", abbrev: true, opts: `
	-4 -6 -d -F -I -T -U -n -e -A -V -r -D --debug --icmp --tcp --udp --UL --UDP --mtu --back --help --version
	-f -g -i -m -N -p -t -l -w -q -s -z -M -O -P --first --gateway --interface --max-hops --sim-queries --port --tos --flowlabel --wait --queries --source --sendwait --module --options --protocol --sport --fwmark =`},
	"tracepath": {man: "tracepath(8)", opts: `
	-4 -6 -b -n -V
	-l -m -p =`},
	"mtr": {man: "mtr(8)", abbrev: true, opts: `
	-h --help
	-v --version
	-F --filename =R
	-6 -4 -u -T -e -x -t -g -r -w -j -C -l -p -n -b -z -y -Z --displaymode
	-c -s -a -B -f -m -U -E -L -P -Q -i -G -o -M --report-cycles --psize --address --first-ttl --max-ttl --max-unknown --port --localport --timeout --interval --gracetime --order --mark =`},
	"drill": {man: "drill(1)", opts: `
	-4 -6 -a -b -D -d -o -r -s -t -T -u -v -V -x -z -c -S
	-e -i -I -k -p -q -w -y =`},
	"nmap": {man: "nmap(1)", oneDash: true, opts: `
	-iL --excludefile --resume --script-args-file =R
	-oN -oX -oS -oG -oA --stylesheet =W
	--script --datadir --servicedb --versiondb =X
	-sn -sL -sS -sT -sU -sV -sC -sA -sW -sM -sN -sF -sX -sY -sZ -sO -Pn -PE -PP -PM -n -R -A -O -F -r -v -vv -d -6 -T0 -T1 -T2 -T3 -T4 -T5 --open --reason --traceroute --system-dns --version-all --version-light --osscan-limit --osscan-guess --packet-trace --iflist --append-output --no-stylesheet --webxml --privileged --unprivileged -V -h --help
	-p --exclude --top-ports --min-rate --max-rate --max-retries --host-timeout --scan-delay --dns-servers --source-port -S -e -g --ttl --data-length --exclude-ports --version-intensity -PS -PA -PU -PY -PO =`},
}

// httpie(1), HTTPie 3.2, OPTIONS (xh takes the same): -o and --download write, --session
// writes its session file, --cert and --cert-key read; request items "field@file",
// "field=@file" and "field:=@file" read files.
var httpieSpec = &spec{man: "http(1)", abbrev: true, opts: `
	-j --json
	-f --form
	--multipart
	--boundary =
	--raw =
	-x --compress
	--pretty =
	-s --style =
	--unsorted --sorted
	--response-charset --response-mime --format-options =
	-p --print =
	-h --headers
	-m --meta
	-b --body
	-v --verbose
	--all
	-S --stream
	-o --output =W
	-d --download !M
	-c --continue
	-q --quiet
	--session =W
	--session-read-only =R
	-a --auth =
	-A --auth-type =
	--ignore-netrc
	--offline
	--proxy =N
	-F --follow
	--max-redirects --max-headers --timeout =
	--check-status
	--path-as-is
	--chunked
	--verify =M
	--ssl --ciphers =
	--cert --cert-key =R
	--cert-key-pass =
	-I --ignore-stdin
	--help
	--manual
	--version
	--traceback
	--default-scheme =
	--debug`}

// aria2c(1), aria2 1.36: the --on-download-* hooks run programs; the RPC options listen; the
// output, session, log and cookie files are written; the input, netrc, key and cookie files read.
var aria2Spec = &spec{man: "aria2c(1)", opts: `
	-d --dir =W
	-o --out =W
	-i --input-file =R
	-l --log --save-session --save-cookies --dht-file-path --dht-file-path6 --server-stat-of =W
	--load-cookies --netrc-path --private-key --certificate --ca-certificate --server-stat-if =R
	-T --torrent-file -M --metalink-file =R
	--conf-path =X
	--on-download-start --on-download-pause --on-download-stop --on-download-complete --on-download-error --on-bt-download-complete =X
	--enable-rpc --rpc-listen-all ?N
	--rpc-listen-port =N
	-x --max-connection-per-server -s --split -k --min-split-size -j --max-concurrent-downloads =
	-c --continue ?
	-q --quiet ?
	--allow-overwrite --auto-file-renaming --check-certificate ?
	-U --user-agent --header --http-user --http-passwd --referer --max-tries --retry-wait --timeout --connect-timeout --max-download-limit --max-overall-download-limit =
	--all-proxy --http-proxy --https-proxy --ftp-proxy =N
	-h --help ?
	-v --version`}

// axel(1), axel 2.17: -o writes the output.
var axelSpec = &spec{man: "axel(1)", abbrev: true, opts: `
	-s --max-speed =
	-n --num-connections =
	-o --output =W
	-S --search ?
	-4 --ipv4
	-6 --ipv6
	-H --header =
	-U --user-agent =
	-k --insecure
	-c --no-clobber
	-N --no-proxy
	-q --quiet
	-v --verbose
	-a --alternate
	-p --percentage
	-T --timeout =
	-h --help
	-V --version`}

// docker run and docker create, docker 24 (podman and nerdctl take the same): -v and --mount
// bind host paths (see bindMount), --env-file and --label-file are read, --cidfile written.
var dockerRunSpec = &spec{man: "docker-run(1)", opts: `
	--add-host --annotation -a --attach --blkio-weight --blkio-weight-device --cap-add --cap-drop =
	--cgroup-parent --cgroupns --cpu-count --cpu-percent --cpu-period --cpu-quota --cpu-rt-period =
	--cpu-rt-runtime -c --cpu-shares --cpus --cpuset-cpus --cpuset-mems --detach-keys --device =
	--device-cgroup-rule --device-read-bps --device-read-iops --device-write-bps --device-write-iops =
	--dns --dns-option --dns-search --domainname --entrypoint -e --env --expose --gpus --group-add =
	--health-cmd --health-interval --health-retries --health-start-interval --health-start-period =
	--health-timeout -h --hostname --io-maxbandwidth --io-maxiops --ip --ip6 --ipc --isolation =
	--kernel-memory -l --label --link --link-local-ip --log-driver --log-opt --mac-address -m --memory =
	--memory-reservation --memory-swap --memory-swappiness --mount --name --network --net =
	--network-alias --net-alias --oom-score-adj --pid --pids-limit --platform -p --publish --pull =
	--restart --runtime --security-opt --shm-size --stop-signal --stop-timeout --storage-opt =
	--sysctl --tmpfs --ulimit -u --user --userns --uts -v --volume --volume-driver --volumes-from -w --workdir =
	--env-file --label-file =R
	--cidfile =W
	-d --detach --disable-content-trust --help --init -i --interactive --no-healthcheck --oom-kill-disable
	--privileged -P --publish-all -q --quiet --read-only --rm --sig-proxy -t --tty`}

// docker build, docker 24 (buildx): -f reads the Dockerfile, --secret and --ssh read files,
// -o, --iidfile and --metadata-file write.
var dockerBuildSpec = &spec{man: "docker-build(1)", opts: `
	--add-host --build-arg --build-context --cache-from --cache-to --cgroup-parent --cpu-period =
	--cpu-quota -c --cpu-shares --cpuset-cpus --cpuset-mems --isolation -l --label -m --memory =
	--memory-swap --network --no-cache-filter --platform --progress --provenance --sbom =
	--security-opt --shm-size -t --tag --target --ulimit --allow --attest --builder --call =
	-f --file =R
	--secret --ssh =M
	-o --output --iidfile --metadata-file =W
	--check --compress --force-rm --load --no-cache --pull --push -q --quiet --rm --squash --help`}

// docker compose, docker compose v2, global options: -f and --env-file read files.
var dockerComposeSpec = &spec{man: "docker-compose(1)", posix: true, opts: `
	-f --file --env-file =R
	-p --project-name --profile --ansi --progress --parallel =
	--project-directory =M
	--compatibility
	--dry-run
	--all-resources
	-h --help`}

// docker cp, save and load, docker 24.
var dockerFileSpec = &spec{man: "docker-cp(1), docker-save(1), docker-load(1)", opts: `
	-a --archive
	-L --follow-link
	-q --quiet
	-o --output =W
	-i --input =R
	--platform =
	--help`}
