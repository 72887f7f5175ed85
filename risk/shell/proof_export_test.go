package shell

import (
	"slices"
	"sort"
	"strings"
)

// This file is the only place where the tracer proofs (proof*_test.go, package shell_test) see
// the option tables' internals. It turns them into plain data: when the tables change shape,
// only the functions below follow.

// ProofOption is one option of a table, as the proofs see it.
type ProofOption struct {
	// Names are every spelling the table lists ("-o", "--output"; "-name" for one-dash tables).
	Names []string
	// Arg is 0 for a flag, '=' for a required value, '?' for an optional attached value and '2'
	// for two values.
	Arg byte
	// Effect is the table's effect letter (R, W, X, N, D, O, M), or 0 for none.
	Effect byte
}

// ProofTable is one option table and where on a line its options go.
type ProofTable struct {
	// Context is the words before the options: "sort", "git log", "go vet", "docker ps". For a
	// table of global options (git, docker) or a wrapper, it is the program alone.
	Context string
	// Man names the manual section the table follows.
	Man string
	// OneDash, Abbrev, Num and Posix are the table's parsing rules (see the spec type).
	OneDash, Abbrev, Num, Posix bool
	Options                     []ProofOption
}

var proofEffects = map[effect]byte{effRead: 'R', effWrite: 'W', effExec: 'X', effNet: 'N', effDir: 'D', effOpaque: 'O', effMode: 'M'}

// proofSpecs returns every option table by the context it serves.
func proofSpecs() map[string]*spec {
	specs := map[string]*spec{}
	for name, t := range readOnlyTools {
		specs[name] = t.spec
	}
	specs["sed"], specs["gsed"], specs["awk"], specs["gawk"], specs["mawk"] = sedSpec, sedSpec, awkSpec, awkSpec, awkSpec
	specs["git"] = gitGlobalSpec
	for sub, s := range gitSubSpecs {
		specs["git "+sub] = s
	}
	for sub, s := range gitWriteSpecs {
		specs["git "+sub] = s
	}
	for name, s := range extraSpecs() {
		specs[name] = s
	}
	return specs
}

// ProofTables lists every option table with the contexts it serves, sorted by context.
func ProofTables() []ProofTable {
	specs := proofSpecs()
	out := make([]ProofTable, 0, len(specs))
	for ctx, s := range specs {
		s.compile()
		t := ProofTable{Context: ctx, Man: s.man, OneDash: s.oneDash, Abbrev: s.abbrev, Num: s.num, Posix: s.posix}
		for _, o := range s.list {
			po := ProofOption{Names: append([]string(nil), o.names...), Effect: proofEffects[o.eff]}
			switch o.arg {
			case argReq:
				po.Arg = '='
			case argOpt:
				po.Arg = '?'
			case argTwo:
				po.Arg = '2'
			}
			t.Options = append(t.Options, po)
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Context < out[j].Context })
	return out
}

// ProofPrograms lists every program name the analysis has a handler for, sorted.
func ProofPrograms() []string {
	out := make([]string, 0, len(programs))
	for name := range programs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ProofPrimary is one find(1) primary: its name, the words it takes and its effect letter.
type ProofPrimary struct {
	Name   string
	Args   int
	Effect byte
}

// ProofFindPrimaries lists find's primaries, sorted by name.
func ProofFindPrimaries() []ProofPrimary {
	out := make([]ProofPrimary, 0, len(findPrimaries))
	for name, p := range findPrimaries {
		if strings.TrimSpace(name) == "" {
			continue
		}
		out = append(out, ProofPrimary{Name: name, Args: p.args, Effect: proofEffects[p.eff]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ProofMisclassify sets the effect of the option spelled name in the table of context (as
// ProofTables names it) to eff (0 for none), to show that the proofs catch a table that lies;
// restore puts the table back. Not safe while analyses run concurrently: only a test that
// runs alone (no t.Parallel) may call it.
func ProofMisclassify(context, name string, eff byte) (restore func(), ok bool) {
	s := proofSpecs()[context]
	if s == nil {
		return nil, false
	}
	s.compile()
	for _, o := range s.list {
		if !slices.Contains(o.names, name) {
			continue
		}
		was := o.eff
		o.eff = effNone
		for e, letter := range proofEffects {
			if letter == eff {
				o.eff = e
			}
		}
		return func() { o.eff = was }, true
	}
	return nil, false
}
