package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// findPrimary is one find(1) primary: how many words it takes and what it does.
type findPrimary struct {
	args int
	eff  effect // effRead / effWrite apply to its first word
}

// findPrimaries: find(1), GNU findutils 4.9, EXPRESSION (options, tests, actions, operators).
// -exec, -execdir, -ok and -okdir (a command up to ";" or "+") and -delete are handled by find;
// -newerXY takes one word, a file unless Y is "t".
var findPrimaries = map[string]findPrimary{
	// Operators.
	"(": {}, ")": {}, "!": {}, ",": {}, "-not": {}, "-a": {}, "-and": {}, "-o": {}, "-or": {},
	// Positional and global options.
	"-daystart": {}, "-depth": {}, "-d": {}, "-follow": {}, "-ignore_readdir_race": {}, "-noignore_readdir_race": {},
	"-maxdepth": {args: 1}, "-mindepth": {args: 1}, "-mount": {}, "-xdev": {}, "-noleaf": {}, "-regextype": {args: 1},
	"-warn": {}, "-nowarn": {}, "-help": {}, "--help": {}, "-version": {}, "--version": {},
	// Tests.
	"-amin": {args: 1}, "-atime": {args: 1}, "-cmin": {args: 1}, "-ctime": {args: 1}, "-mmin": {args: 1}, "-mtime": {args: 1},
	"-empty": {}, "-executable": {}, "-false": {}, "-true": {}, "-fstype": {args: 1}, "-gid": {args: 1}, "-uid": {args: 1},
	"-group": {args: 1}, "-user": {args: 1}, "-ilname": {args: 1}, "-lname": {args: 1}, "-iname": {args: 1}, "-name": {args: 1},
	"-inum": {args: 1}, "-ipath": {args: 1}, "-path": {args: 1}, "-iregex": {args: 1}, "-regex": {args: 1},
	"-iwholename": {args: 1}, "-wholename": {args: 1}, "-links": {args: 1}, "-nogroup": {}, "-nouser": {},
	"-perm": {args: 1}, "-readable": {}, "-writable": {}, "-size": {args: 1}, "-type": {args: 1}, "-xtype": {args: 1},
	"-used": {args: 1}, "-context": {args: 1},
	"-newer": {args: 1, eff: effRead}, "-anewer": {args: 1, eff: effRead}, "-cnewer": {args: 1, eff: effRead},
	"-samefile": {args: 1, eff: effRead},
	// Actions that only print.
	"-print": {}, "-print0": {}, "-printf": {args: 1}, "-ls": {}, "-prune": {}, "-quit": {},
	// Actions that write a file.
	"-fprint": {args: 1, eff: effWrite}, "-fprint0": {args: 1, eff: effWrite}, "-fls": {args: 1, eff: effWrite},
	"-fprintf": {args: 2, eff: effWrite},
}

// find reads its starting points; -delete destroys what it finds, -exec and friends run a
// command on it (analysed as its own command), -fprint and friends write a file. A primary not in
// findPrimaries makes the command exec and opaque.
func find(c *call) {
	c.risk(risk.ReadOnly)
	var roots []arg
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.lit {
			roots = append(roots, a) // read: opaque
			continue
		}
		if strings.HasPrefix(a.val, "-") || a.val == "(" || a.val == "!" || a.val == "," {
			if a.is("-H", "-L", "-P") || strings.HasPrefix(a.val, "-O") && isDigits(a.val[2:]) {
				continue
			}
			if a.is("-D") {
				i++
				continue
			}
			break
		}
		roots = append(roots, a)
	}
	if len(roots) == 0 {
		roots = []arg{{val: ".", lit: true}}
	}
	c.readAll(roots)
	// What -exec or -delete acts on: anything under the roots.
	under := make([]arg, 0, len(roots))
	for _, r := range roots {
		if !r.lit {
			under = append(under, arg{})
			continue
		}
		under = append(under, arg{val: strings.TrimSuffix(r.val, "/") + "/**", lit: true, glob: true})
	}
	// What -exec hands its command for "{}": a path under the root (it never looks like an
	// option, as it starts with the root).
	found := arg{}
	if len(roots) == 1 && roots[0].lit {
		found = arg{val: roots[0].val, input: true, found: true}
	}
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.lit {
			c.opaque("find: an expression word the line does not spell out")
			continue
		}
		switch {
		case a.val == "-delete":
			c.risk(risk.Destructive)
			c.writeAll(under)
			continue
		case a.is("-exec", "-execdir", "-ok", "-okdir"):
			var sub []arg
			j := i + 1
			for ; j < len(c.args); j++ {
				if c.args[j].is(";", "+") {
					break
				}
				s := c.args[j]
				if s.lit && strings.Contains(s.val, "{}") {
					if s.val == "{}" {
						s = found
					} else {
						s = arg{}
					}
				}
				sub = append(sub, s)
			}
			i = j
			c.spawn(sub, "find "+a.val)
			continue
		case strings.HasPrefix(a.val, "-newer") && len(a.val) == len("-newerXY"):
			if i+1 < len(c.args) {
				i++
				if a.val[len(a.val)-1] != 't' {
					c.read(c.args[i])
				}
			}
			continue
		}
		p, ok := findPrimaries[a.val]
		if !ok {
			c.opaque("find: unknown primary " + a.val + ": the analysis does not know what it does")
			c.risk(risk.Exec)
			continue
		}
		if p.args > 0 && i+1 < len(c.args) {
			switch p.eff {
			case effRead:
				c.read(c.args[i+1])
			case effWrite:
				c.risk(risk.Mutating)
				c.write(c.args[i+1])
			}
		}
		i += p.args
	}
}

// Wrappers: the options they take before the command they run.
var (
	// timeout(1), GNU coreutils 9.4.
	timeoutSpec = &spec{man: "timeout(1)", abbrev: true, posix: true, opts: `
	--preserve-status
	--foreground
	-k --kill-after =
	-s --signal =
	-v --verbose
	--help
	--version`}
	// nice(1), GNU coreutils 9.4 (and the obsolete -NUM).
	niceSpec = &spec{man: "nice(1)", abbrev: true, posix: true, num: true, opts: `
	-n --adjustment =
	--help
	--version`}
	// ionice(1), util-linux 2.39.
	ioniceSpec = &spec{man: "ionice(1)", abbrev: true, posix: true, opts: `
	-c --class =
	-n --classdata =
	-t --ignore
	--help
	-V --version`}
	// nohup(1), GNU coreutils 9.4; valgrind and the like take no options the analysis follows.
	nohupSpec = &spec{man: "nohup(1)", posix: true, opts: `
	--help
	--version`}
	// setsid(1), util-linux 2.39.
	setsidSpec = &spec{man: "setsid(1)", abbrev: true, posix: true, opts: `
	-c --ctty
	-f --fork
	-w --wait
	--help
	-V --version`}
	// stdbuf(1), GNU coreutils 9.4.
	stdbufSpec = &spec{man: "stdbuf(1)", abbrev: true, posix: true, opts: `
	-i --input =
	-o --output =
	-e --error =
	--help
	--version`}
	// taskset(1), util-linux 2.39 (the mask or list is the first operand).
	tasksetSpec = &spec{man: "taskset(1)", abbrev: true, posix: true, opts: `
	-a --all-tasks
	-c --cpu-list
	--help
	-V --version`}
	// strace(1) 6.x and ltrace(1): -o writes the trace; -E sets the environment of the traced
	// program.
	straceSpec = &spec{man: "strace(1)", posix: true, opts: `
	-o --output =W
	-e =
	-s --string-limit =
	-a --columns =
	-f --follow-forks
	--output-separately
	-t
	-T --syscall-times
	-c --summary-only
	-C --summary
	-y --decode-fds
	-v --no-abbrev
	-x
	-q --quiet
	-r --relative-timestamps
	-i --instruction-pointer
	-k --stack-trace
	-z --successful-only
	-Z --failed-only
	-n --syscall-number
	-S --summary-sort-by =
	-X --const-print-style =
	-P --trace-path =
	-E --env =X
	-u --user =X
	-p --attach =X
	-b --detach-on =
	-h --help
	-V --version`}
	// xargs(1), GNU findutils 4.9.
	xargsSpec = &spec{man: "xargs(1)", abbrev: true, posix: true, opts: `
	-0 --null
	-a --arg-file =R
	-d --delimiter =
	-E =
	-e --eof ?
	-I =
	-i --replace ?
	-L --max-lines =
	-l ?
	-n --max-args =
	-P --max-procs =
	-p --interactive
	--process-slot-var =
	-r --no-run-if-empty
	-s --max-chars =
	--show-limits
	-t --verbose
	-x --exit
	-o --open-tty
	--help
	--version`}
)

// xargs runs its command with words from its input appended (or put where -I's string is).
// Those words are unknown and may be options: only a program of anyOperandReaders reads them as
// files it reads (unknown reads of the working directory); for any other the command is opaque.
func xargs(c *call) {
	o, idx := xargsSpec.parse(c.args)
	c.applyOpts(&o)
	rest := append([]arg(nil), c.args[idx:]...)
	if len(rest) == 0 {
		rest = []arg{{val: "echo", lit: true}}
	}
	input := arg{input: true} // a word read from the input
	if repl, ok := o.value("-I", "-i"); ok && repl.lit {
		for i := range rest {
			switch {
			case rest[i].is(repl.val):
				rest[i] = input
			case rest[i].lit && strings.Contains(rest[i].val, repl.val):
				rest[i] = arg{word: rest[i].word} // part of a word: unknown
			}
		}
	} else {
		rest = append(rest, input)
	}
	c.note("xargs supplies arguments from its input")
	c.rewrap(rest, "xargs")
	if !anyOperandReaders[c.name] && !c.cmd.Opaque {
		c.opaque("xargs hands " + c.name + " words from its input, which may be options")
	}
}
