package profile

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// coverEnv is the list environment rules are compiled against in the covers tests.
var coverEnv = &policy.Env{Home: "/home/u", Lists: map[string][]string{
	policy.ListShellBlocklist: {"rm -rf", "curl"}, policy.ListShellAllowlist: {"go test", "cat"},
	"package-managers": {"proxy.golang.org"},
}}

// randomRule draws a rule whose condition sets a few fields from small pools, so that two draws
// often share entries.
func randomRule(rng *rand.Rand, id string) policy.Rule {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	some := func(xs ...string) []string {
		var out []string
		for range 1 + rng.IntN(2) {
			out = append(out, pick(xs...))
		}
		return out
	}
	var c policy.Condition
	for range rng.IntN(4) {
		switch rng.IntN(9) {
		case 0:
			for _, op := range some("read", "write", "edit", "shell", "bash", "network") {
				c.OperationType = append(c.OperationType, policy.Operation(op))
			}
		case 1:
			m, err := policy.ParseRiskMatch(some("read_only", "mutating", "exec", "destructive", "network", "low", "medium", "high")...)
			if err != nil {
				panic(err) // the pool's names are valid
			}
			c.Risk = m
		case 2:
			c.TargetPattern = pick("**", "src/**", "/etc/**", "~/x/**")
		case 3:
			c.CommandPattern = pick("^rm", "curl .*sh", "test")
		case 4:
			c.Commands = some("rm", "go test", "cat", "@shell_blocklist", "@shell_allowlist", "rm >")
		case 5:
			c.Tools = some("bash", "edit", "mcp__*", "*")
		case 6:
			c.Hosts = some("evil.example", "*.example", "@package-managers")
		case 7:
			c.OutsideWorkspace = true
		case 8:
			c.Surfaces = some("cli", "ide")
		}
	}
	return policy.Rule{ID: id, Action: []policy.Verdict{policy.Allow, policy.Deny, policy.Confirm}[rng.IntN(3)], Condition: c}
}

// coverSubjects are parts of every kind, for checking that a covering rule matches them.
func coverSubjects() []policy.Subject {
	var out []policy.Subject
	for _, op := range []policy.Operation{policy.OpRead, policy.OpWrite, policy.OpShell, policy.OpNetwork} {
		for _, l := range risk.Levels() {
			for _, sev := range []risk.Severity{risk.Low, risk.High} {
				base := policy.Subject{Operation: op, Level: l, Severity: sev, Tool: "bash", Surface: "cli"}
				out = append(out, base)
				for _, tg := range [][2]string{{"/ws", "src/a.go"}, {"", "/etc/passwd"}, {"", "/home/u/x/y"}} {
					s := base
					s.Root, s.Target = tg[0], tg[1]
					out = append(out, s)
				}
				for _, line := range []string{"rm -rf build", "/bin/rm x", "go test ./...", "cat a > b", "curl x | sh"} {
					s := base
					s.Tool, s.Command, s.Line = "edit", line, line
					s.Argv = splitWords(line)
					s.Redirects = line == "cat a > b"
					out = append(out, s)
				}
				for _, h := range []string{"evil.example", "a.example", "proxy.golang.org"} {
					s := base
					s.Host = h
					out = append(out, s)
				}
				s := base
				s.HostGroup = "package-managers"
				out = append(out, s)
			}
		}
	}
	return out
}

func splitWords(s string) []string {
	var out []string
	w := ""
	for _, r := range s + " " {
		if r == ' ' {
			if w != "" {
				out = append(out, w)
			}
			w = ""
			continue
		}
		w += string(r)
	}
	return out
}

// coverProfile holds coverEnv's lists, for preparing rules.
var coverProfile = Profile{ShellBlocklist: coverEnv.Lists[policy.ListShellBlocklist], ShellAllowlist: coverEnv.Lists[policy.ListShellAllowlist],
	HostGroups: map[string][]string{"package-managers": coverEnv.Lists["package-managers"]}}

// coversRules is covers on two rules of coverProfile: with their lists as written, or (expanded)
// with the references expanded, as the pair-by-pair proof compares them.
func coversRules(a, b policy.Rule, expanded bool) bool {
	p := coverProfile
	p.Rules = []policy.Rule{a, b}
	x := prepareRules(&p)
	if !expanded {
		return covers(&x[0], &x[1])
	}
	w := &work{left: pairwiseWork}
	return x[0].mask&x[1].mask == x[1].mask && coversExceptRisk(&x[0], &x[1], w) && w.left >= 0
}

// checkCovers fails t if covers(a, b) holds (lists as written or expanded) but some subject
// matches b and not a.
func checkCovers(t *testing.T, a, b policy.Rule, subjects []policy.Subject) {
	t.Helper()
	for _, expanded := range []bool{false, true} {
		if coversRules(a, b, expanded) {
			checkCoversOne(t, a, b, subjects)
		}
	}
}

func checkCoversOne(t *testing.T, a, b policy.Rule, subjects []policy.Subject) {
	t.Helper()
	ra, err := policy.Compile([]policy.Rule{a}, coverEnv)
	require.NoError(t, err)
	rb, err := policy.Compile([]policy.Rule{b}, coverEnv)
	require.NoError(t, err)
	for i := range subjects {
		s := &subjects[i]
		_, mb := rb.Evaluate(s)
		_, ma := ra.Evaluate(s)
		if mb && !ma {
			t.Fatalf("covers(%+v, %+v) but %+v matches only the second", a, b, *s)
		}
	}
}

// TestCoversIsSound: whenever covers says rule a matches everything rule b matches, it does, for
// every subject of a corpus (random rule pairs, and pairs where a is b with a field dropped).
func TestCoversIsSound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 2))
	subjects := coverSubjects()
	n := 0
	for range 3000 {
		a, b := randomRule(rng, "a"), randomRule(rng, "b")
		if rng.IntN(2) == 0 { // a is b, broadened or with another verdict
			a = b.Clone()
			a.ID = "a"
			a.Action = []policy.Verdict{policy.Allow, policy.Deny, policy.Confirm}[rng.IntN(3)]
			switch rng.IntN(3) {
			case 0:
				a.Condition.Commands = nil
			case 1:
				a.Condition.Risk = a.Condition.Risk.Union(policy.MatchSeverities(risk.High))
			}
		}
		if coversRules(a, b, false) {
			n++
		}
		checkCovers(t, a, b, subjects)
	}
	require.Greater(t, n, 300, "the test exercises covering pairs")
}

// FuzzCovers is TestCoversIsSound with the fuzzer choosing the rules.
func FuzzCovers(f *testing.F) {
	for i := range 6 {
		f.Add(uint64(i), uint64(100+i))
	}
	subjects := coverSubjects()
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		rng := rand.New(rand.NewPCG(s1, s2))
		a, b := randomRule(rng, "a"), randomRule(rng, "b")
		if rng.IntN(2) == 0 {
			a = b.Clone()
			a.ID = "a"
			a.Action = policy.Deny
		}
		checkCovers(t, a, b, subjects)
	})
}
