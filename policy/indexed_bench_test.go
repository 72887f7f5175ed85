package policy_test

import (
	"path"
	"slices"
	"strings"

	"github.com/reins-go/reins/policy"
)

// indexedEngine is the second baseline of the evaluation benchmarks: a purpose-built indexed
// first-match engine, as one would write for this policy language with the standard matchers.
// Each rule is filed under the one key of its condition that is most selective (a target's
// base name, literal directory or extension; a tool name or its literal prefix; a command's
// program; the first word of an anchored command regex; an operation; a risk level or severity),
// or under "always" when it has none. Evaluating a subject looks up the posting lists of the
// subject's keys, merges them in rule order and runs the naive matcher (regexp,
// doublestar.Match) on each candidate until one matches.
type indexedEngine struct {
	rules      []naiveRule // evaluation order
	always     []int32
	byOp       map[policy.Operation][]int32
	byRisk     [16][]int32 // levels 1-5, severities 9-11
	toolExact  map[string][]int32
	toolPrefix map[string][]int32
	toolLens   []int
	base       map[string][]int32
	ext        map[string][]int32
	relDir     map[string][]int32
	absDir     map[string][]int32
	prog       map[string][]int32
	cmdWord    map[string][]int32
}

func indexedCompile(rules []policy.Rule) (*indexedEngine, error) {
	nr, err := naiveCompile(rules)
	if err != nil {
		return nil, err
	}
	e := &indexedEngine{rules: nr, byOp: map[policy.Operation][]int32{}, toolExact: map[string][]int32{},
		toolPrefix: map[string][]int32{}, base: map[string][]int32{}, ext: map[string][]int32{},
		relDir: map[string][]int32{}, absDir: map[string][]int32{}, prog: map[string][]int32{}, cmdWord: map[string][]int32{}}
	for n := range nr {
		i := int32(n)
		c := &nr[n].r.Condition
		switch {
		case e.fileTarget(c.TargetPattern, i):
		case e.fileTools(c.Tools, i):
		case len(c.Commands) > 0:
			for _, entry := range c.Commands {
				if f := strings.Fields(entry); len(f) > 0 {
					e.prog[f[0]] = append(e.prog[f[0]], i)
				}
			}
		case nr[n].re != nil && anchoredWord(c.CommandPattern) != "":
			w := anchoredWord(c.CommandPattern)
			e.cmdWord[w] = append(e.cmdWord[w], i)
		case len(c.OperationType) > 0:
			for _, op := range c.OperationType {
				e.byOp[op] = append(e.byOp[op], i)
			}
		case !c.Risk.IsZero():
			for l := range c.Risk.Levels.All() {
				e.byRisk[l] = append(e.byRisk[l], i)
			}
			for s := range c.Risk.Severities.All() {
				e.byRisk[8+int(s)] = append(e.byRisk[8+int(s)], i)
			}
		default:
			e.always = append(e.always, i)
		}
	}
	return e, nil
}

// fileTarget files a rule under its target pattern's literal base name, directory or
// extension, when the pattern has one of the three simple shapes.
func (e *indexedEngine) fileTarget(p string, i int32) bool {
	switch {
	case p == "" || strings.ContainsAny(p, "{[?\\"):
		return false
	case strings.HasPrefix(p, "**/") && !strings.ContainsAny(p[3:], "*/"):
		e.base[p[3:]] = append(e.base[p[3:]], i)
	case strings.HasPrefix(p, "**/*.") && !strings.ContainsAny(p[4:], "*/"):
		e.ext[p[4:]] = append(e.ext[p[4:]], i)
	case strings.HasSuffix(p, "/**") && !strings.Contains(p[:len(p)-3], "*"):
		dir := p[:len(p)-3]
		if strings.HasPrefix(dir, "/") {
			e.absDir[dir] = append(e.absDir[dir], i)
		} else {
			e.relDir[dir] = append(e.relDir[dir], i)
		}
	default:
		return false
	}
	return true
}

// fileTools files a rule under its tool names (exact) or their literal prefixes (a trailing
// "*"), when every entry has one of the two shapes.
func (e *indexedEngine) fileTools(tools []string, i int32) bool {
	if len(tools) == 0 {
		return false
	}
	for _, t := range tools {
		if k := strings.IndexAny(t, "*?[{\\"); k >= 0 && (k == 0 || k != len(t)-1 || t[k] != '*') {
			return false
		}
	}
	for _, t := range tools {
		if p, ok := strings.CutSuffix(t, "*"); ok {
			e.toolPrefix[p] = append(e.toolPrefix[p], i)
			if !slices.Contains(e.toolLens, len(p)) {
				e.toolLens = append(e.toolLens, len(p))
			}
		} else {
			e.toolExact[t] = append(e.toolExact[t], i)
		}
	}
	return true
}

// anchoredWord returns the literal first word of a regex anchored with ^ ("^tool12(\s|$)" gives
// "tool12"), or "".
func anchoredWord(re string) string {
	rest, ok := strings.CutPrefix(re, "^")
	if !ok {
		return ""
	}
	n := 0
	for n < len(rest) && (rest[n] == '_' || rest[n] >= '0' && rest[n] <= '9' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z') {
		n++
	}
	if n == 0 || n < len(rest) && strings.ContainsRune("*+?{", rune(rest[n])) {
		return ""
	}
	return rest[:n]
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// evaluate merges the posting lists of the subject's keys in rule order and returns the first
// candidate that matches.
func (e *indexedEngine) evaluate(s *policy.Subject) *policy.Rule {
	var buf [24][]int32
	lists := buf[:0]
	add := func(l []int32) {
		if len(l) > 0 && len(lists) < len(buf) {
			lists = append(lists, l)
		}
	}
	add(e.always)
	add(e.byOp[s.Operation])
	if s.Level < 8 {
		add(e.byRisk[s.Level])
	}
	if s.Severity < 8 {
		add(e.byRisk[8+int(s.Severity)])
	}
	if s.Tool != "" {
		add(e.toolExact[s.Tool])
		for _, n := range e.toolLens {
			if n <= len(s.Tool) {
				add(e.toolPrefix[s.Tool[:n]])
			}
		}
	}
	if s.Target != "" {
		add(e.base[path.Base(s.Target)])
		if ext := path.Ext(s.Target); ext != "" {
			add(e.ext[ext])
		}
		var ab [512]byte
		abs := append(ab[:0], s.Target...)
		if s.Root != "" {
			for i := 0; i <= len(s.Target); i++ {
				if i == len(s.Target) || s.Target[i] == '/' {
					add(e.relDir[s.Target[:i]])
				}
			}
			abs = append(append(append(ab[:0], s.Root...), '/'), s.Target...)
		}
		for i := 1; i <= len(abs); i++ {
			if i == len(abs) || abs[i] == '/' {
				add(e.absDir[string(abs[:i])]) // no allocation: a map lookup by converted bytes
			}
		}
	}
	if len(s.Argv) > 0 {
		add(e.prog[s.Argv[0]])
	}
	if s.Command != "" {
		add(e.cmdWord[firstWord(s.Command)])
	}
	if s.Line != "" && s.Line != s.Command {
		add(e.cmdWord[firstWord(s.Line)])
	}
	// k-way merge by rule position: the smallest head first.
	var pos [24]int
	for {
		best := int32(-1)
		for k, l := range lists {
			if pos[k] < len(l) && (best < 0 || l[pos[k]] < best) {
				best = l[pos[k]]
			}
		}
		if best < 0 {
			return nil
		}
		if naiveMatch(&e.rules[best], s) {
			return &e.rules[best].r
		}
		for k, l := range lists {
			if pos[k] < len(l) && l[pos[k]] == best {
				pos[k]++
			}
		}
	}
}
