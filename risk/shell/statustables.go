package shell

import "github.com/reins-go/reins/risk"

// The option tables of the programs that report on the system and the shell's builtins that
// only report or end something: their operands are process selections, names, numbers or
// formats, not files (unless the table or the handler says so).

var statusSpecs = map[string]*spec{
	// uptime(1), procps-ng 4.0.
	"uptime": {man: "uptime(1)", abbrev: true, opts: `
	-p --pretty
	-h --help
	-s --since
	-V --version`},
	// free(1), procps-ng 4.0.
	"free": {man: "free(1)", abbrev: true, opts: `
	-b --bytes
	-k --kibi
	-m --mebi
	-g --gibi
	--tebi --pebi --kilo --mega --giga --tera --peta --si
	-h --human
	-w --wide
	-c --count =
	-l --lohi
	-s --seconds =
	-t --total
	-v --committed
	--help
	-V --version`},
	// sleep(1), GNU coreutils 9.1: the operands are durations.
	"sleep": {man: "sleep(1)", opts: `
	--help
	--version`},
	// yes(1), GNU coreutils 9.1: the operands are printed.
	"yes": {man: "yes(1)", opts: `
	--help
	--version`},
	// locale(1), glibc 2.36.
	"locale": {man: "locale(1)", abbrev: true, opts: `
	-a --all-locales
	-m --charmaps
	-c --category-name
	-k --keyword-name
	-v --verbose
	-? --help
	--usage
	-V --version`},
	// getconf(1), glibc 2.36: a PATH operand is looked at, not read.
	"getconf": {man: "getconf(1)", opts: `
	-a
	-v =`},
	// expr(1), GNU coreutils 9.1: the operands are the expression.
	"expr": {man: "expr(1)", opts: `
	--help
	--version`},
	// cal(1), util-linux 2.38.
	"cal": {man: "cal(1)", abbrev: true, opts: `
	-1 --one
	-3 --three
	-n --months =
	-S --span
	-s --sunday
	-m --monday
	-j --julian
	--reform =
	--iso
	-y --year
	-Y --twelve
	-w --week ?
	-v --vertical
	--color ?
	-c --columns =
	-h --help
	-V --version`},
	// tput(1), ncurses 6.4: -S reads capability names from standard input.
	"tput": {man: "tput(1)", opts: `
	-S
	-T =
	-V
	-x`},
	// clear(1), ncurses 6.4.
	"clear": {man: "clear(1)", opts: `
	-T =
	-V
	-x`},
	// vmstat(8), procps-ng 4.0: the operands are the delay and the count.
	"vmstat": {man: "vmstat(8)", abbrev: true, opts: `
	-a --active
	-f --forks
	-m --slabs
	-n --one-header
	-s --stats
	-d --disk
	-D --disk-sum
	-p --partition =
	-S --unit =
	-t --timestamp
	-w --wide
	-y --no-first
	-V --version
	-h --help`},
	// who(1), GNU coreutils 9.1: a FILE operand is read in place of the utmp file.
	"who": {man: "who(1)", abbrev: true, opts: `
	-a --all
	-b --boot
	-d --dead
	-H --heading
	--ips
	-l --login
	--lookup
	-m
	-p --process
	-q --count
	-r --runlevel
	-s --short
	-t --time
	-T -w --mesg --message --writable
	-u --users
	--help
	--version`},
	// w(1), procps-ng 4.0: the operand is a user name.
	"w": {man: "w(1)", abbrev: true, opts: `
	-h --no-header
	-u --no-current
	-s --short
	-f --from
	-o --old-style
	-i --ip-addr
	-p --pids
	--help
	-V --version`},
	// last(1), util-linux 2.38: -f reads another wtmp file.
	"last": {man: "last(1)", abbrev: true, num: true, opts: `
	-a --hostlast
	-d --dns
	-f --file =R
	-F --fulltimes
	-i --ip
	-n --limit =
	-p --present =
	-R --nohostname
	-s --since =
	-t --until =
	--time-format =
	-w --fullnames
	-x --system
	-h --help
	-V --version`},
	// lscpu(1), util-linux 2.38: --sysroot reads another system's files.
	"lscpu": {man: "lscpu(1)", abbrev: true, opts: `
	-a --all
	-B --bytes
	-b --online
	-C --caches ?
	-c --offline
	-e --extended ?
	-J --json
	-p --parse ?
	-s --sysroot =D
	-x --hex
	-y --physical
	--output-all
	-r --raw
	-h --help
	-V --version`},
	// lsblk(8), util-linux 2.38: the operands are devices.
	"lsblk": {man: "lsblk(8)", abbrev: true, opts: `
	-A --noempty
	-a --all
	-b --bytes
	-D --discard
	-d --nodeps
	-E --dedup =
	-e --exclude =
	-f --fs
	-I --include =
	-i --ascii
	-J --json
	-l --list
	-M --merge
	-m --perms
	-n --noheadings
	-o --output =
	-O --output-all
	-P --pairs
	-p --paths
	-r --raw
	-S --scsi
	-s --inverse
	-T --tree ?
	-t --topology
	-h --help
	-V --version
	-w --width =
	-x --sort =
	-y --shell
	-z --zoned
	--sysroot =D`},
	// lsusb(8), usbutils 014: -D reads a device file.
	"lsusb": {man: "lsusb(8)", abbrev: true, opts: `
	-v --verbose
	-s =
	-d =
	-D =R
	-t --tree
	-V --version
	-h --help`},
	// lspci(8), pciutils 3.9: -i, -p and -F read files.
	"lspci": {man: "lspci(8)", opts: `
	-v
	-n
	-x
	-b
	-D
	-P
	-k
	-t
	-m
	-q
	-M
	-G
	-s =
	-d =
	-i =R
	-p =R
	-F =R
	-A =
	-O =
	-H =
	--version
	--help`},
	// pgrep(1), procps-ng 4.0: -F reads a PID file.
	"pgrep": {man: "pgrep(1)", abbrev: true, opts: `
	-c --count
	-d --delimiter =
	-f --full
	-g --pgroup =
	-G --group =
	-i --ignore-case
	-l --list-name
	-a --list-full
	-n --newest
	-o --oldest
	-O --older =
	-P --parent =
	-s --session =
	-t --terminal =
	-u --euid =
	-U --uid =
	-v --inverse
	-w --lightweight
	-x --exact
	-F --pidfile =R
	-L --logpidfile
	-r --runstates =
	-A --ignore-ancestors
	--cgroup --ns --nslist =
	-V --version
	-h --help`},
	// pidof(8), sysvinit-utils 3.06.
	"pidof": {man: "pidof(8)", opts: `
	-s
	-c
	-n
	-q
	-x
	-z
	-d =
	-o =`},
	// jobs, bash(1) SHELL BUILTIN COMMANDS: -x runs a command with job numbers replaced.
	"jobs": {man: "bash(1) jobs", opts: `
	-l
	-n
	-p
	-r
	-s
	-x !X`},
	// wait, bash(1): -p names a variable.
	"wait": {man: "bash(1) wait", opts: `
	-f
	-n
	-p =`},
	// help, bash(1).
	"help": {man: "bash(1) help", opts: `
	-d
	-m
	-s`},
	// unalias, bash(1).
	"unalias": {man: "bash(1) unalias", opts: `
	-a`},
	// reset(1) (tset), ncurses 6.4.
	"reset": {man: "reset(1)", opts: `
	-c
	-e =
	-I
	-i =
	-k =
	-m =
	-Q
	-q
	-r
	-s
	-V
	-w`},
	// iostat(1), sysstat 12.6: -f reads statistics from another directory.
	"iostat": {man: "iostat(1)", opts: `
	-c
	-d
	-h
	-k
	-m
	-N
	-s
	-t
	-V
	-x
	-y
	-z
	--compact
	--dec =
	-f =D
	-g =
	-H
	--human
	-j =
	-o =
	-p ?
	--pretty`},
	// times, getopts, shift, return, exit, break, continue, bash(1): no options (exit and
	// return take a negative status).
	"times":    {man: "bash(1) times", opts: ``},
	"getopts":  {man: "bash(1) getopts", opts: ``},
	"shift":    {man: "bash(1) shift", opts: ``},
	"break":    {man: "bash(1) break", opts: ``},
	"continue": {man: "bash(1) continue", opts: ``},
	"exit":     {man: "bash(1) exit", num: true, opts: ``},
	"return":   {man: "bash(1) return", num: true, opts: ``},
}

// status handles a program of statusSpecs: read-only, its operands not files (but who's FILE).
func status(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(statusSpecs[c.name])
	if c.name == "who" && len(o.pos) == 1 {
		c.read(o.pos[0])
	}
}
