package shell

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/risk"
)

// Option tables.
//
// A program's options are data: a spec lists every option the analysis knows, with the
// spellings it accepts, whether it takes a value and what it does. Parsing follows the spec and
// nothing else, so an option nobody listed is unknown, and an unknown option makes the command
// exec and opaque: the analysis cannot say what it does.
//
// The table syntax is one option per line: its spellings ("-o", "--output"), then optionally
// one token saying what it takes and does:
//
//	(nothing)  a flag that only changes how the program reads or prints
//	=          takes a value (attached "-ovalue", "--opt=value", or the next word)
//	?          takes an optional value, attached only ("-ivalue", "--opt=value")
//	2          takes two values, the next two words (jq --arg name value)
//	!          takes no value
//
// followed by an effect letter:
//
//	R  the value is a path the program reads
//	W  the value is a path the program writes (a flag: the program writes its operands)
//	X  the program runs another program (named by the value, or implied by the flag)
//	N  the program reaches the network (the value is a host or URL)
//	D  the value is a directory the program works in (it reads it)
//	O  the program reads or writes paths the line does not name (the command is opaque)
//	M  the option changes what the program does with its operands; its handler reads it
//
// Lines starting with "#" are comments. A spelling of one dash and several letters ("-FF") is
// matched before single letters. The spec's fields say how the program reads its words besides
// (see spec): options after operands or not (posix), long options with one dash (oneDash),
// abbreviations (abbrev), -NUM (num), an old-style first bundle (bundle), "@FILE" (atFiles),
// "+x" (plus), and whether options it does not list are unknown (all but open tables).

// argKind says whether an option takes a value.
type argKind uint8

const (
	argNone argKind = iota // a flag
	argReq                 // a value: attached or the next word
	argOpt                 // an optional value, attached only
	argTwo                 // two values: the next two words
)

// effect is what an option does beyond changing how the program reads or prints.
type effect uint8

const (
	effNone effect = iota
	effRead
	effWrite
	effExec
	effNet
	effDir
	effOpaque
	effMode
)

var effectLetters = map[byte]effect{'R': effRead, 'W': effWrite, 'X': effExec, 'N': effNet, 'D': effDir, 'O': effOpaque, 'M': effMode}

// option is one entry of a spec.
type option struct {
	names []string // every spelling, "-o" and "--output"
	arg   argKind
	eff   effect
}

// spec is a program's (or a subcommand's) option table.
type spec struct {
	// man names the manual section the table follows.
	man string
	// opts is the table (see the syntax above).
	opts string
	// oneDash: long options take one dash ("-name", "-maxdepth"; find, go, java); "--name"
	// is accepted as well where the program does. No clustering.
	oneDash bool
	// abbrev: unique prefixes of long options are accepted (GNU getopt_long, git's
	// parse-options, Python's optparse and argparse). An ambiguous prefix is unknown.
	abbrev bool
	// num: "-NUM" is a count (head -20, git log -5).
	num bool
	// posix: options end at the first operand (the operands are a command or a subcommand).
	posix bool
	// bundle: a first argument that does not start with "-" is a bundle of short options, each
	// of which takes its value from the words that follow, in order (tar cfC a.tar dir, ar rcs).
	bundle bool
	// atFiles: an argument "@FILE" is replaced by the words FILE holds (GNU binutils, gcc,
	// javac): the file is read, and the options in it are unknown.
	atFiles bool
	// open: the table lists only the options whose effects matter to a command that is never
	// read-only (git's rarer subcommands); an option it does not list is taken as a flag
	// instead of making the command opaque.
	open bool
	// plus: a word "+x" unsets what "-x" sets (the shells): it is parsed as the short options
	// it names, each recorded as "+x".
	plus bool
	// last names options after which the rest are operands (python -c and -m end the option
	// list: what follows is the script's or the module's).
	last []string

	short map[byte]*option
	// multi holds single-dash options of more than one letter ("-FF", "-la" in zip), matched
	// before single letters, longest first (maxMulti letters).
	multi    map[string]*option
	maxMulti int
	long     map[string]*option
	longs    []string // sorted long spellings, for abbreviations
	list     []*option
	safe     bool // every option is a read-only flag or value: a hidden option cannot do harm
	once     sync.Once
}

// compile parses the table once, safely for concurrent analyses; a malformed table is a
// programming error.
func (s *spec) compile() *spec {
	s.once.Do(s.build)
	return s
}

// build parses the table.
func (s *spec) build() {
	s.short, s.long = map[byte]*option{}, map[string]*option{}
	s.safe = true
	for _, line := range strings.Split(s.opts, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		o := &option{}
		for _, tok := range f {
			switch tok[0] {
			case '-':
				o.names = append(o.names, tok)
			case '=', '?', '2', '!':
				o.arg = map[byte]argKind{'=': argReq, '?': argOpt, '2': argTwo, '!': argNone}[tok[0]]
				if len(tok) == 2 {
					e, ok := effectLetters[tok[1]]
					if !ok {
						panic(fmt.Sprintf("shell: spec %q: bad effect in %q", s.man, line))
					}
					o.eff = e
				} else if len(tok) > 2 {
					panic(fmt.Sprintf("shell: spec %q: bad token %q", s.man, tok))
				}
			default:
				panic(fmt.Sprintf("shell: spec %q: bad token %q in %q", s.man, tok, line))
			}
		}
		if len(o.names) == 0 {
			panic(fmt.Sprintf("shell: spec %q: no option name in %q", s.man, line))
		}
		if o.eff != effNone && o.eff != effMode {
			s.safe = false
		}
		for _, n := range o.names {
			switch {
			case !s.oneDash && len(n) == 2 && n[1] != '-':
				if s.short[n[1]] != nil {
					panic(fmt.Sprintf("shell: spec %q: %s listed twice", s.man, n))
				}
				s.short[n[1]] = o
			case !s.oneDash && len(n) > 2 && n[1] != '-':
				if s.multi == nil {
					s.multi = map[string]*option{}
				}
				if s.multi[n[1:]] != nil {
					panic(fmt.Sprintf("shell: spec %q: %s listed twice", s.man, n))
				}
				s.multi[n[1:]] = o
				s.maxMulti = max(s.maxMulti, len(n)-1)
			default:
				key := strings.TrimLeft(n, "-")
				if s.long[key] != nil {
					panic(fmt.Sprintf("shell: spec %q: %s listed twice", s.man, n))
				}
				s.long[key] = o
				s.longs = append(s.longs, key)
			}
		}
		s.list = append(s.list, o)
	}
	slices.Sort(s.longs)
}

// readsFiles reports whether an option of the table makes the program read a file (one it names,
// a directory, or ones a file lists: md5sum -c).
func (s *spec) readsFiles() bool {
	s.compile()
	for _, o := range s.list {
		if o.eff == effRead || o.eff == effDir || o.eff == effOpaque {
			return true
		}
	}
	return false
}

// lookupLong finds a long option by name, or by unique prefix when the program accepts
// abbreviations.
func (s *spec) lookupLong(name string) *option {
	if o := s.long[name]; o != nil {
		return o
	}
	if !s.abbrev || name == "" {
		return nil
	}
	i, _ := slices.BinarySearch(s.longs, name)
	var found *option
	for ; i < len(s.longs) && strings.HasPrefix(s.longs[i], name); i++ {
		o := s.long[s.longs[i]]
		if found != nil && found != o {
			return nil // ambiguous
		}
		found = o
	}
	return found
}

// opts is a parsed argument list: flags (with values where the spec says so) and operands.
type opts struct {
	flags []flagArg
	pos   []arg
	rest  []arg // the operands after "--" (also in pos)
	// unknown lists options the spec does not know; hidden reports a word the line does not
	// spell out where an option could be.
	unknown []string
	hidden  bool
	// atFiles are the files of "@FILE" arguments (see spec.atFiles).
	atFiles []arg
}

// flagArg is one option as given.
type flagArg struct {
	name string // the spelling used ("-x", "--name"; an abbreviation is spelled out)
	val  arg
	has  bool
	val2 arg // the second value of a two-value option
	opt  *option
}

func (f *flagArg) is(names []string) bool {
	if contains(names, f.name) {
		return true
	}
	if f.opt != nil {
		for _, n := range f.opt.names {
			if contains(names, n) {
				return true
			}
		}
	}
	return false
}

// parse splits args by the spec. idx is where the operands begin when the spec is posix (the
// index of the first operand, or after "--"), else len(args).
func (s *spec) parse(args []arg) (o opts, idx int) {
	s.compile()
	if s.bundle && len(args) > 0 && args[0].lit && args[0].val != "" && args[0].val[0] != '-' {
		var n int
		var unknown []string
		args, n, unknown = s.unbundle(args)
		o, idx = s.parseFrom(args)
		o.unknown = append(o.unknown, unknown...)
		// idx counts the unbundled words; the caller's words are n fewer.
		return o, max(0, idx-n)
	}
	return s.parseFrom(args)
}

// unbundle rewrites an old-style bundle ("cfC a.tar dir") as separate options ("-c -f a.tar -C
// dir"). It returns the new words, how many words it added, and the letters the table does not
// know (left out of the words).
func (s *spec) unbundle(args []arg) ([]arg, int, []string) {
	b := args[0]
	rest := args[1:]
	out := make([]arg, 0, len(args)+len(b.val))
	var unknown []string
	for j := 0; j < len(b.val); j++ {
		if s.short[b.val[j]] == nil {
			unknown = append(unknown, "-"+b.val[j:j+1])
			continue
		}
		out = append(out, arg{val: "-" + b.val[j:j+1], lit: true, word: b.word})
		if op := s.short[b.val[j]]; op != nil && op.arg == argReq && len(rest) > 0 {
			out = append(out, rest[0])
			rest = rest[1:]
		}
	}
	out = append(out, rest...)
	return out, len(out) - len(args), unknown
}

func (s *spec) parseFrom(args []arg) (o opts, idx int) {
	for i := 0; i < len(args); i++ {
		if len(s.last) > 0 && len(o.flags) > 0 && o.flags[len(o.flags)-1].is(s.last) {
			if s.posix {
				return o, i
			}
			o.pos = append(o.pos, args[i:]...)
			return o, len(args)
		}
		a := args[i]
		if s.atFiles && a.lit && len(a.val) > 1 && a.val[0] == '@' {
			// A response file: its words are arguments the line does not show.
			o.atFiles = append(o.atFiles, arg{val: a.val[1:], lit: true, word: a.word})
			continue
		}
		switch {
		case !a.lit:
			// The word may expand to anything, an option included (a process substitution
			// is a /dev/fd path; find's results never start with "-"; xargs' input is judged
			// where it is used, see call.unknownPath).
			if !s.safe && !isProcSubst(a) && !a.input {
				o.hidden = true
			}
			if s.posix {
				return o, i
			}
			o.pos = append(o.pos, a)
			continue
		case a.val == "--":
			o.rest = args[i+1:]
			if s.posix {
				return o, i + 1
			}
			o.pos = append(o.pos, args[i+1:]...)
			return o, len(args)
		case s.plus && len(a.val) > 1 && a.val[0] == '+':
			n := len(o.flags)
			i = s.parseShort(&o, args, i)
			for k := n; k < len(o.flags); k++ {
				o.flags[k].name = "+" + o.flags[k].name[1:]
			}
			continue
		case a.val == "-" || !strings.HasPrefix(a.val, "-"):
			if s.posix {
				return o, i
			}
			o.pos = append(o.pos, a)
			continue
		}
		if s.num && isDigits(a.val[1:]) {
			o.flags = append(o.flags, flagArg{name: "-NUM", val: arg{val: a.val[1:], lit: true, word: a.word}, has: true})
			continue
		}
		if s.oneDash || strings.HasPrefix(a.val, "--") {
			i = s.parseLong(&o, args, i)
			continue
		}
		i = s.parseShort(&o, args, i)
	}
	return o, len(args)
}

func (s *spec) parseLong(o *opts, args []arg, i int) int {
	a := args[i]
	body := strings.TrimPrefix(a.val, "-")
	if strings.HasPrefix(a.val, "--") {
		body = a.val[2:]
	}
	name, val, hasEq := strings.Cut(body, "=")
	op := s.lookupLong(name)
	if op == nil && s.oneDash && len(name) > 1 && !strings.HasPrefix(a.val, "--") {
		// A one-letter option with its value attached ("-c8").
		if so := s.long[name[:1]]; so != nil && so.arg == argReq && !hasEq {
			o.flags = append(o.flags, flagArg{name: "-" + name[:1], val: arg{val: name[1:], lit: true, word: a.word}, has: true, opt: so})
			return i
		}
	}
	if op == nil {
		if !s.open {
			u, _, _ := strings.Cut(a.val, "=")
			o.unknown = append(o.unknown, u)
		}
		return i
	}
	f := flagArg{name: canonical(op, name, a.val), opt: op}
	switch op.arg {
	case argNone:
		if hasEq && !s.oneDash {
			o.unknown = append(o.unknown, a.val) // a flag given a value: not what the table says
			return i
		}
	case argReq:
		if hasEq {
			f.val, f.has = arg{val: val, lit: true, word: a.word}, true
		} else if i+1 < len(args) {
			i++
			f.val, f.has = args[i], true
		}
	case argOpt:
		if hasEq {
			f.val, f.has = arg{val: val, lit: true, word: a.word}, true
		}
	case argTwo:
		if hasEq {
			o.unknown = append(o.unknown, a.val)
			return i
		}
		if i+2 < len(args) {
			f.val, f.val2, f.has = args[i+1], args[i+2], true
		}
		i = min(i+2, len(args)-1)
	}
	o.flags = append(o.flags, f)
	return i
}

// canonical spells out the option as the table does (an abbreviation becomes the full name).
func canonical(op *option, name, typed string) string {
	for _, n := range op.names {
		if strings.TrimLeft(n, "-") == name {
			return n
		}
	}
	for _, n := range op.names {
		if strings.HasPrefix(n, "--") && strings.HasPrefix(n[2:], name) {
			return n
		}
	}
	if strings.HasPrefix(typed, "--") {
		return "--" + name
	}
	return "-" + name
}

func (s *spec) parseShort(o *opts, args []arg, i int) int {
	a := args[i]
	cluster := a.val[1:]
	for j := 0; j < len(cluster); j++ {
		op := s.short[cluster[j]]
		name := "-" + cluster[j:j+1]
		for l := min(s.maxMulti, len(cluster)-j); l >= 2; l-- {
			if mo := s.multi[cluster[j:j+l]]; mo != nil {
				op, name = mo, "-"+cluster[j:j+l]
				j += l - 1
				break
			}
		}
		if op == nil {
			if s.open {
				continue
			}
			// Unknown: what follows in the cluster (and perhaps the next word) is unknowable.
			o.unknown = append(o.unknown, "-"+cluster[j:j+1])
			return i
		}
		f := flagArg{name: name, opt: op}
		switch op.arg {
		case argNone:
			o.flags = append(o.flags, f)
			continue
		case argReq:
			if j+1 < len(cluster) {
				f.val, f.has = arg{val: cluster[j+1:], lit: true, word: a.word, attached: true}, true
			} else if i+1 < len(args) {
				i++
				f.val, f.has = args[i], true
			}
		case argOpt:
			if j+1 < len(cluster) {
				f.val, f.has = arg{val: cluster[j+1:], lit: true, word: a.word, attached: true}, true
			}
		case argTwo:
			if j+1 < len(cluster) {
				o.unknown = append(o.unknown, a.val)
				return i
			}
			if i+2 < len(args) {
				f.val, f.val2, f.has = args[i+1], args[i+2], true
			}
			i = min(i+2, len(args)-1)
		}
		o.flags = append(o.flags, f)
		return i
	}
	return i
}

func isProcSubst(a arg) bool {
	if a.word == nil || len(a.word.Parts) != 1 {
		return false
	}
	_, ok := a.word.Parts[0].(*syntax.ProcSubst)
	return ok
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// applyOpts records the effects of parsed options: paths read and written, programs run,
// network use, unknown options. It reports whether the options left the command read-only.
func (c *call) applyOpts(o *opts) bool {
	clean := true
	for _, u := range o.unknown {
		c.opaque(c.name + ": unknown option " + u + ": the analysis does not know what it does")
		c.risk(risk.Exec)
		clean = false
	}
	if o.hidden {
		c.opaque(c.name + ": an argument the line does not spell out may be an option")
		clean = false
	}
	for _, f := range o.atFiles {
		c.read(f)
		c.opaque(c.name + " @" + f.val + " reads more arguments from a file")
		clean = false
	}
	for i := range o.flags {
		f := &o.flags[i]
		if f.opt == nil {
			continue
		}
		v := f.val
		if f.opt.arg == argTwo {
			v = f.val2
		}
		switch f.opt.eff {
		case effRead, effDir:
			if f.has {
				c.read(v)
			}
		case effWrite:
			c.risk(risk.Mutating)
			clean = false
			if f.has {
				c.write(v)
			}
		case effExec:
			c.cmd.ExecutesCode = true
			c.risk(risk.Exec)
			c.opaque(c.name + " " + f.name + " runs a program")
			clean = false
		case effNet:
			clean = false
			if f.has && v.lit {
				if h := hostOf(v.val); h != "" {
					c.net(h)
					continue
				}
			}
			c.net()
			if f.has && !v.lit {
				c.opaque("a host is not literal")
			}
		case effOpaque:
			c.opaque(c.name + " " + f.name + " reads or writes paths the line does not name")
			clean = false
		}
	}
	return clean
}

func (o opts) has(names ...string) bool {
	for i := range o.flags {
		if o.flags[i].is(names) {
			return true
		}
	}
	return false
}

func (o opts) values(names ...string) []arg {
	var out []arg
	for i := range o.flags {
		if o.flags[i].has && o.flags[i].is(names) {
			out = append(out, o.flags[i].val)
		}
	}
	return out
}

func (o opts) value(names ...string) (arg, bool) {
	v := o.values(names...)
	if len(v) == 0 {
		return arg{}, false
	}
	return v[len(v)-1], true
}

// tool is a program whose options are in a table.
type tool struct {
	*spec
	// operands classifies the operands (and whatever else the options ask for) once the
	// options are parsed and applied; nil means every operand is a file the program reads.
	operands func(c *call, o opts)
	// base is the risk of the program with known options (ReadOnly when zero).
	base risk.Level
}

func (t *tool) run(c *call) {
	if t.base == 0 {
		c.risk(risk.ReadOnly)
	} else {
		c.risk(t.base)
	}
	o, idx := t.parse(c.args)
	if t.posix {
		// The options ended at the first operand: the rest are operands (xxd IN OUT).
		o.pos = append(o.pos, c.args[min(idx, len(c.args)):]...)
	}
	c.applyOpts(&o)
	if t.operands == nil {
		c.readAll(o.pos)
		return
	}
	t.operands(c, o)
}
