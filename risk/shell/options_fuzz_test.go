package shell

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzSpecs are tables that exercise every feature of the parser: abbreviations, clusters,
// optional and two-word values, -NUM, old-style bundles, "+x" words, multi-letter short
// options, @FILE, one-dash long options, open tables and posix order.
var fuzzSpecs = []*spec{sortSpec, tarSpec, shellSpec, zipSpec, stringsSpec, opensslSpec, gitOtherSpec, timeoutSpec, jqSpec, headSpec, chmodSpec}

// FuzzParseOptions: the option parser never panics on any words; the operands it returns are words it was given; an unknown option
// is never one the table has under that spelling; where it stops is within the words.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		"-o out.txt in", "-uo out in", "--output=out in", "--outp=x in", "--out x", "--compress-prog=./x f", "-- -o x",
		"xzfC a.tar dir m", "-xf a.tar --to-com=sh", "cfT a.tar list", "+B -c 'rm {a,b}'", "-k +o posix -c x",
		"-FF -lf log a.zip f", "-9rq a.zip d", "@.env", "-engine ./e.so -in f", "--exec=x --upload-p=y",
		"-s 9 sleep 1", "--rawfile a .env -n", "-20 f", "-rwx f", "-R -x+w f", "-", "--", "---", "-=", "--=", "@",
		"-\x00", "--\xff=x", "x y z", "-oq", "-q -o", "--output", "-T",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 512 {
			return
		}
		words := strings.Fields(line)
		args := make([]arg, len(words))
		for i, w := range words {
			args[i] = arg{val: w, lit: true}
		}
		for _, s := range fuzzSpecs {
			o, idx := s.parse(args)
			require.GreaterOrEqual(t, idx, 0, "%s %q", s.man, line)
			require.LessOrEqual(t, idx, len(args), "%s %q", s.man, line)
			given := map[string]bool{}
			for _, w := range words {
				given[w] = true
			}
			for _, p := range o.pos {
				require.True(t, given[p.val], "%s %q: operand %q was not given", s.man, line, p.val)
			}
			for _, fl := range o.flags {
				if fl.opt == nil {
					require.Equal(t, "-NUM", fl.name, "%s %q: a flag without a table entry", s.man, line)
					continue
				}
				require.NotEmpty(t, fl.opt.names, "%s %q", s.man, line)
			}
			for _, u := range o.unknown {
				// An unknown option is one the table does not have under that spelling.
				body, ok := strings.CutPrefix(u, "--")
				if !ok {
					body = strings.TrimPrefix(u, "-")
				}
				name, _, _ := strings.Cut(body, "=")
				if s.oneDash || strings.HasPrefix(u, "--") {
					require.Nil(t, s.long[name], "%s %q: %q is in the table", s.man, line, u)
				}
			}
		}
	})
}

// TestParseGNUSemantics pins getopt_long's rules on concrete words.
func TestParseGNUSemantics(t *testing.T) {
	o, _ := sortSpec.parse(lits("-uo", "out", "in"))
	require.Equal(t, []string{"-u", "-o"}, []string{o.flags[0].name, o.flags[1].name}, "a cluster: -u then -o with the next word")
	require.Equal(t, "out", o.flags[1].val.val)
	o, _ = sortSpec.parse(lits("-oout", "in"))
	require.Equal(t, "out", o.flags[0].val.val, "a value attached to a short option")
	require.True(t, o.flags[0].val.attached)
	o, _ = sortSpec.parse(lits("--compress-prog=./x", "f"))
	require.Equal(t, "--compress-program", o.flags[0].name, "a unique prefix is the option")
	require.Equal(t, effExec, o.flags[0].opt.eff)
	o, _ = sortSpec.parse(lits("--c", "f"))
	require.NotEmpty(t, o.unknown, "an ambiguous prefix is unknown")
	o, _ = sortSpec.parse(lits("in", "-o", "out"))
	require.Equal(t, "out", o.flags[0].val.val, "GNU order: options after operands")
	o, _ = sortSpec.parse(lits("--", "-o", "out"))
	require.Empty(t, o.flags, "-- ends the options")
	o, _ = lsSpec.parse(lits("--color", "always"))
	require.False(t, o.flags[0].has, "an optional value is attached only")
	require.Len(t, o.pos, 1)
	o, _ = sortSpec.parse(lits("--stable=x"))
	require.NotEmpty(t, o.unknown, "a flag given a value is not what the table says")
	o, idx := timeoutSpec.parse(lits("-s", "9", "sleep", "-o", "x"))
	require.Equal(t, 2, idx, "a posix table stops at the first operand")
	require.Len(t, o.flags, 1)
	o, idx = tarSpec.parse(lits("xfC", "a.tar", "/etc", "m"))
	require.Equal(t, 4, idx, "a table that is not posix reads every word")
	a, _ := o.value("-f")
	d, _ := o.value("-C")
	require.Equal(t, "a.tar", a.val)
	require.Equal(t, "/etc", d.val)
	require.Equal(t, []string{"m"}, []string{o.pos[0].val})
	o, _ = shellSpec.parse(lits("+B", "-c", "x"))
	require.Equal(t, "+B", o.flags[0].name, "a +x word unsets x")
	o, _ = zipSpec.parse(lits("-FF", "-lf", "log", "a.zip"))
	require.Equal(t, "-FF", o.flags[0].name, "a multi-letter short option")
	lf, _ := o.value("-lf")
	require.Equal(t, "log", lf.val)
	o, _ = stringsSpec.parse(lits("@.env"))
	require.Equal(t, ".env", o.atFiles[0].val, "@FILE is read")
	o, _ = gitOtherSpec.parse(lits("--upload-p=./x", "--whatever", "-zq"))
	require.Empty(t, o.unknown, "an open table takes what it does not list as flags")
	require.Equal(t, effExec, o.flags[0].opt.eff, "and still knows its own options by prefix")
}
