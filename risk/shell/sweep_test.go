package shell

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk"
)

// allSpecs lists every option table with the programs (or "git <sub>") it serves.
func allSpecs() map[string]*spec {
	out := map[string]*spec{}
	for name, t := range readOnlyTools {
		out[name] = t.spec
	}
	out["sed"], out["awk"], out["git"] = sedSpec, awkSpec, gitGlobalSpec
	for sub, s := range gitSubSpecs {
		out["git "+sub] = s
	}
	for sub, s := range gitWriteSpecs {
		out["git "+sub] = s
	}
	for name, s := range extraSpecs() {
		out[name] = s
	}
	return out
}

func lits(words ...string) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = arg{val: w, lit: true}
	}
	return out
}

// spellings returns every way to give option o a value v, each followed by the operand "OPERAND".
func spellings(s *spec, o *option, v string) [][]string {
	var out [][]string
	for _, n := range o.names {
		short := !s.oneDash && len(n) >= 2 && n[1] != '-'
		switch o.arg {
		case argNone:
			out = append(out, []string{n, "OPERAND"})
		case argReq:
			out = append(out, []string{n, v, "OPERAND"})
			if short {
				out = append(out, []string{n + v, "OPERAND"})
				// Clustered behind a flag that takes no value.
				for _, f := range s.list {
					if f.arg == argNone && f.eff == effNone {
						for _, fn := range f.names {
							if len(fn) == 2 && fn[1] != '-' && !(s.num && fn[1] >= '0' && fn[1] <= '9') {
								out = append(out, []string{fn + n[1:], v, "OPERAND"}, []string{fn + n[1:] + v, "OPERAND"})
								goto clustered
							}
						}
					}
				}
			clustered:
			} else {
				out = append(out, []string{n + "=" + v, "OPERAND"})
			}
		case argOpt:
			if short {
				out = append(out, []string{n + v, "OPERAND"}, []string{n, "OPERAND"})
			} else {
				out = append(out, []string{n + "=" + v, "OPERAND"}, []string{n, "OPERAND"})
			}
		case argTwo:
			out = append(out, []string{n, v, v, "OPERAND"})
		}
	}
	return out
}

// TestOptionSweep: for every table, every option in every spelling parses as that option and
// consumes exactly its value, leaving the operand; an unknown option is reported unknown.
func TestOptionSweep(t *testing.T) {
	specs := allSpecs()
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	count := 0
	for _, name := range names {
		s := specs[name].compile()
		require.NotEmpty(t, s.man, "%s: the table names its manual section", name)
		for _, o := range s.list {
			for _, sp := range spellings(s, o, "VALUE") {
				count++
				p, idx := s.parse(lits(sp...))
				require.Empty(t, p.unknown, "%s %v: every listed spelling is known", name, sp)
				var last flagArg
				found := false
				for _, f := range p.flags {
					if f.opt == o {
						last, found = f, true
					}
				}
				require.True(t, found, "%s %v parses as %v", name, sp, o.names)
				if s.posix {
					require.Equal(t, len(sp)-1, idx, "%s %v: the operand starts the command", name, sp)
					continue
				}
				require.Len(t, p.pos, 1, "%s %v: exactly the operand is left", name, sp)
				require.Equal(t, "OPERAND", p.pos[0].val, "%s %v", name, sp)
				switch {
				case o.arg == argReq || o.arg == argTwo:
					require.True(t, last.has, "%s %v takes its value", name, sp)
					require.Equal(t, "VALUE", last.val.val, "%s %v", name, sp)
				case o.arg == argOpt && len(sp) == 2 && sp[0] != o.names[0] && !contains(o.names, sp[0]):
					require.Equal(t, "VALUE", last.val.val, "%s %v", name, sp)
				}
			}
		}
		for _, u := range []string{"--zz-unknown-option", "--zz-unknown-option=x", "-\x01"} {
			if s.open {
				break // an open table takes options it does not list as flags
			}
			count++
			p, _ := s.parse(lits(u, "OPERAND"))
			require.NotEmpty(t, p.unknown, "%s %s is unknown", name, u)
		}
	}
	t.Logf("%d tables, %d spellings", len(specs), count)
}

// TestUnknownOptionNeverReadOnly runs every table-driven program (and git subcommand) through
// Analyze with an unknown option: the command is exec and opaque, never read-only alone.
func TestUnknownOptionNeverReadOnly(t *testing.T) {
	for name, s := range allSpecs() {
		if s.open || strings.Contains(name, "(") || name == "time" {
			continue // "time" is the shell's keyword; the program is reached as command time
		}
		for _, u := range []string{"--zz-unknown", "-\x02", "--zz-unknown=./x"} {
			line := name + " " + u + " f"
			if strings.HasPrefix(name, "git ") && name != "git" {
				line = name + " " + u + " f"
			}
			an, err := Analyze(line, &Options{Dir: "/w"})
			require.NoError(t, err, line)
			assert.True(t, an.Risk.Has(risk.Exec), "%q: an unknown option is exec (%s)", line, an.Risk)
			assert.True(t, an.Opaque, "%q: an unknown option is opaque", line)
		}
	}
}

// TestReadOnlyOptionsStayReadOnly: every flag a table marks read-only leaves a read-only
// program read-only and not opaque.
func TestReadOnlyOptionsStayReadOnly(t *testing.T) {
	for name, tl := range readOnlyTools {
		s := tl.spec.compile()
		for _, o := range s.list {
			if o.eff != effNone || o.arg != argNone {
				continue
			}
			line := name + " " + o.names[0]
			if s.posix {
				continue
			}
			an, err := Analyze(line, &Options{Dir: "/w"})
			require.NoError(t, err, line)
			assert.False(t, an.Risk.Has(risk.Exec) || an.Risk.Has(risk.Mutating), "%q: %s", line, an.Risk)
			assert.False(t, an.Opaque, "%q: %v", line, an.Commands[0].Why)
		}
	}
}

func TestAbbreviations(t *testing.T) {
	s := (&spec{man: "test", abbrev: true, opts: `
	--output =W
	--outline
	--verbose`}).compile()
	p, _ := s.parse(lits("--verb", "x"))
	require.Empty(t, p.unknown)
	require.Equal(t, "--verbose", p.flags[0].name)
	p, _ = s.parse(lits("--out", "x"))
	require.Equal(t, []string{"--out"}, p.unknown, "an ambiguous prefix is unknown")
	p, _ = s.parse(lits("--outp=f", "x"))
	require.Empty(t, p.unknown)
	require.Equal(t, "f", p.flags[0].val.val)
	require.Equal(t, effWrite, p.flags[0].opt.eff)
	s2 := (&spec{man: "test", opts: `--verbose`}).compile()
	p, _ = s2.parse(lits("--verb"))
	require.NotEmpty(t, p.unknown, "without abbreviations a prefix is unknown")
}

func TestDoubleDashEndsOptions(t *testing.T) {
	p, _ := sortSpec.parse(lits("--", "-o", "x"))
	require.Empty(t, p.flags)
	require.Len(t, p.pos, 2)
}
