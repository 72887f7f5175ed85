package policy_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

var devEnv = &policy.Env{Lists: map[string][]string{policy.ListShellBlocklist: {"rm -rf /", "mkfs", "dd"}}, Home: "/home/u"}

func inside(rel string) (root, target string) { return "/w", rel }

// TestDevRulesSeedTable reproduces the policy spec's PROFILE-DEV default rules row by row: each
// row's condition, met on its own, makes that rule decide.
func TestDevRulesSeedTable(t *testing.T) {
	t.Parallel()
	rs, err := policy.Compile(policy.DevRules(), devEnv)
	require.NoError(t, err)
	rules := rs.Rules()
	wantIDs := []struct {
		prio   int
		id     string
		action policy.Verdict
	}{
		{1, "deny-outside-sandbox", policy.Deny},
		{2, "deny-dangerous-commands", policy.Deny},
		{3, "confirm-high-risk", policy.Confirm},
		{4, "confirm-delete-ops", policy.Confirm},
		{5, "allow-low-med-risk", policy.Allow},
		{99, "default-confirm", policy.Confirm},
	}
	require.Len(t, rules, len(wantIDs))
	for i, w := range wantIDs {
		assert.Equal(t, w.prio, rules[i].Priority)
		assert.Equal(t, w.id, rules[i].ID)
		assert.Equal(t, w.action, rules[i].Action)
	}

	root, src := inside("src/main.go")
	for _, tc := range []struct {
		row  string
		sub  policy.Subject
		want string
	}{
		{"target outside project root", policy.Subject{Operation: policy.OpRead, Level: risk.ReadOnly, Severity: risk.Low, Target: "/etc/passwd"}, "deny-outside-sandbox"},
		{"command matches blocklist", policy.Subject{Operation: policy.OpShell, Level: risk.Exec, Severity: risk.Medium, Command: "mkfs.ext4 /dev/sda", Argv: []string{"mkfs", "/dev/sda"}}, "deny-dangerous-commands"},
		{"blocklist entry matched on tokens", policy.Subject{Operation: policy.OpShell, Level: risk.Destructive, Severity: risk.High, Command: "/bin/rm -rf / --no-preserve-root", Argv: []string{"/bin/rm", "-rf", "/", "--no-preserve-root"}}, "deny-dangerous-commands"},
		{"risk level = HIGH", policy.Subject{Operation: policy.OpWrite, Level: risk.Mutating, Severity: risk.High, Root: root, Target: src}, "confirm-high-risk"},
		{"operation = DELETE", policy.Subject{Operation: policy.OpDelete, Level: risk.Destructive, Severity: risk.Medium, Root: root, Target: src}, "confirm-delete-ops"},
		{"risk level = LOW", policy.Subject{Operation: policy.OpRead, Level: risk.ReadOnly, Severity: risk.Low, Root: root, Target: src}, "allow-low-med-risk"},
		{"risk level = MEDIUM", policy.Subject{Operation: policy.OpWrite, Level: risk.Mutating, Severity: risk.Medium, Root: root, Target: src}, "allow-low-med-risk"},
		{"catch-all", policy.Subject{Operation: "custom"}, "default-confirm"},
		{"not on the blocklist: dd is a whole token", policy.Subject{Operation: policy.OpShell, Level: risk.Exec, Severity: risk.Medium, Command: "ddate", Argv: []string{"ddate"}}, "allow-low-med-risk"},
	} {
		m, ok := rs.Evaluate(&tc.sub)
		require.True(t, ok, tc.row)
		assert.Equal(t, tc.want, m.Rule.ID, tc.row)
	}
}

func TestCompileErrorsNameTheRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rule policy.Rule
		want string
	}{
		{"empty id", policy.Rule{Priority: 1}, `rule "" (#1): id is empty`},
		{"bad glob", policy.Rule{ID: "g", Condition: policy.Condition{TargetPattern: "src/[a"}}, `rule "g" (#1): condition.target_pattern`},
		{"bad regex", policy.Rule{ID: "r", Condition: policy.Condition{CommandPattern: "rm (-rf"}}, `rule "r" (#1): condition.command_pattern`},
		{"bad risk", policy.Rule{ID: "k", Condition: policy.Condition{Risk: policy.RiskMatch{Levels: 1 << 7}}}, `rule "k" (#1): condition.risk_level: invalid risk levels or severities`},
		{"bad severity", policy.Rule{ID: "k", Condition: policy.Condition{Risk: policy.RiskMatch{Severities: 1}}}, `rule "k" (#1): condition.risk_level: invalid risk levels or severities`},
		{"unknown list", policy.Rule{ID: "l", Condition: policy.Condition{Commands: []string{"@nope"}}}, `rule "l" (#1): condition.commands: unknown list "@nope"`},
		{"bad tool glob", policy.Rule{ID: "t", Condition: policy.Condition{Tools: []string{"mcp_{a"}}}, `rule "t" (#1): condition.tools`},
		{"bad verdict", policy.Rule{ID: "v", Action: policy.Verdict(5)}, `rule "v" (#1): action: invalid verdict 5`},
		{"empty command entry", policy.Rule{ID: "c", Condition: policy.Condition{Commands: []string{"  "}}}, `rule "c" (#1): condition.commands: command entry "  " names no command`},
		{"trailing slash", policy.Rule{ID: "s", Condition: policy.Condition{TargetPattern: "build/"}}, `use "build/**"`},
	} {
		_, err := policy.Compile([]policy.Rule{tc.rule}, nil)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
	_, err := policy.Compile([]policy.Rule{{ID: "a", Priority: 2}, {ID: "b"}, {ID: "a", Priority: 1}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rule "a" (#1): duplicate id (also rule #3)`)

	// Every problem is reported, not just the first.
	_, err = policy.Compile([]policy.Rule{
		{ID: "x", Condition: policy.Condition{TargetPattern: "["}},
		{ID: "y", Condition: policy.Condition{CommandPattern: "("}},
	}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"x"`)
	assert.Contains(t, err.Error(), `"y"`)
	assert.Panics(t, func() { policy.MustCompile([]policy.Rule{{}}, nil) })
}

func TestPriorityOrderAndTies(t *testing.T) {
	t.Parallel()
	rs, err := policy.Compile([]policy.Rule{
		{ID: "late", Priority: 50, Action: policy.Allow},
		{ID: "tie-first", Priority: 10, Action: policy.Confirm},
		{ID: "tie-second", Priority: 10, Action: policy.Deny},
		{ID: "early-miss", Priority: -5, Action: policy.Deny, Condition: policy.Condition{Tools: []string{"never"}}},
	}, nil)
	require.NoError(t, err)
	var ids []string
	for _, r := range rs.Rules() {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"early-miss", "tie-first", "tie-second", "late"}, ids)
	m, ok := rs.Evaluate(&policy.Subject{Tool: "x"})
	require.True(t, ok)
	assert.Equal(t, "tie-first", m.Rule.ID, "ties keep declaration order; the first match wins")
	assert.Equal(t, policy.Confirm, m.Verdict)

	tr := rs.Explain(&policy.Subject{Tool: "x"})
	require.Len(t, tr, 4)
	assert.False(t, tr[0].Matched)
	assert.Contains(t, tr[0].Why, `tools does not match "x"`)
	assert.True(t, tr[1].Decisive)
	assert.True(t, tr[2].Matched)
	assert.False(t, tr[2].Decisive, "only the first match is decisive")
}

func TestEmptyRuleSet(t *testing.T) {
	t.Parallel()
	rs, err := policy.Compile(nil, nil)
	require.NoError(t, err)
	_, ok := rs.Evaluate(&policy.Subject{Tool: "x"})
	assert.False(t, ok)
	var nilSet *policy.RuleSet
	_, ok = nilSet.Evaluate(&policy.Subject{})
	assert.False(t, ok)
}

func TestConditionFields(t *testing.T) {
	t.Parallel()
	env := &policy.Env{Home: "/home/u", Lists: map[string][]string{"pm": {"registry.example", "*.mirror.example"}, "empty": {}}}
	cases := []struct {
		name string
		cond policy.Condition
		sub  policy.Subject
		want bool
	}{
		{"tool glob", policy.Condition{Tools: []string{"mcp__github__*"}}, policy.Subject{Tool: "mcp__github__create_issue"}, true},
		{"tool glob miss", policy.Condition{Tools: []string{"mcp__github__*"}}, policy.Subject{Tool: "mcp__gitlab__x"}, false},
		{"no tool", policy.Condition{Tools: []string{"*"}}, policy.Subject{}, false},
		{"host group", policy.Condition{Hosts: []string{"@pm"}}, policy.Subject{Host: "eu.mirror.example"}, true},
		{"host group miss", policy.Condition{Hosts: []string{"@pm"}}, policy.Subject{Host: "evil.example"}, false},
		{"host upper-case pattern", policy.Condition{Hosts: []string{"API.Example"}}, policy.Subject{Host: "api.example"}, true},
		{"empty group matches nothing", policy.Condition{Hosts: []string{"@empty"}}, policy.Subject{Host: "x"}, false},
		{"empty command list matches nothing", policy.Condition{Commands: []string{"@empty"}}, policy.Subject{Argv: []string{"ls"}}, false},
		{"provider", policy.Condition{Providers: []string{"anthropic"}}, policy.Subject{Provider: "anthropic"}, true},
		{"surface", policy.Condition{Surfaces: []string{"ci", "ide"}}, policy.Subject{Surface: "cli"}, false},
		{"risk by level", policy.Condition{Risk: policy.MatchLevels(risk.Destructive)}, policy.Subject{Level: risk.Destructive, Severity: risk.Medium}, true},
		{"risk by severity", policy.Condition{Risk: mustRisk("HIGH")}, policy.Subject{Level: risk.Mutating, Severity: risk.High}, true},
		{"risk miss", policy.Condition{Risk: mustRisk("high", "network")}, policy.Subject{Level: risk.Mutating, Severity: risk.Medium}, false},
		{"operation alias", policy.Condition{OperationType: []policy.Operation{"file_write"}}, policy.Subject{Operation: policy.OpWrite}, true},
		{"relative pattern, inside", policy.Condition{TargetPattern: "src/**"}, policy.Subject{Root: "/w", Target: "src/a.go"}, true},
		{"relative pattern never matches outside", policy.Condition{TargetPattern: "**"}, policy.Subject{Target: "/etc/passwd"}, false},
		{"absolute pattern, outside", policy.Condition{TargetPattern: "/etc/**"}, policy.Subject{Target: "/etc/passwd"}, true},
		{"absolute pattern, inside", policy.Condition{TargetPattern: "/w/src/*.go"}, policy.Subject{Root: "/w", Target: "src/a.go"}, true},
		{"home pattern", policy.Condition{TargetPattern: "~/.aws/**"}, policy.Subject{Target: "/home/u/.aws/credentials"}, true},
		{"prefix confusion", policy.Condition{TargetPattern: "/w/app/**"}, policy.Subject{Target: "/w/app-evil/x"}, false},
		{"no target", policy.Condition{TargetPattern: "**"}, policy.Subject{}, false},
		{"outside", policy.Condition{OutsideWorkspace: true}, policy.Subject{Target: "/tmp/x"}, true},
		{"outside, inside", policy.Condition{OutsideWorkspace: true}, policy.Subject{Root: "/w", Target: "x"}, false},
		{"command regex", policy.Condition{CommandPattern: `\bcurl\b`}, policy.Subject{Command: "curl -s x"}, true},
		{"command regex miss", policy.Condition{CommandPattern: `\bcurl\b`}, policy.Subject{Command: "curly"}, false},
		{"commands prefix", policy.Condition{Commands: []string{"go test"}}, policy.Subject{Argv: []string{"go", "test", "-run", "X"}}, true},
		{"commands word boundary", policy.Condition{Commands: []string{"go test"}}, policy.Subject{Argv: []string{"go", "testify"}}, false},
		{"commands without argv", policy.Condition{Commands: []string{"go test"}}, policy.Subject{Command: "go test"}, false},
		{"conjunction", policy.Condition{Tools: []string{"bash"}, CommandPattern: "rm"}, policy.Subject{Tool: "bash", Command: "ls"}, false},
	}
	for _, tc := range cases {
		rs, err := policy.Compile([]policy.Rule{{ID: "r", Action: policy.Deny, Condition: tc.cond}}, env)
		require.NoError(t, err, tc.name)
		_, got := rs.Evaluate(&tc.sub)
		assert.Equal(t, tc.want, got, tc.name)
		explained := rs.Explain(&tc.sub)
		assert.Equal(t, tc.want, explained[0].Matched, "Explain agrees with Evaluate: %s (%s)", tc.name, explained[0].Why)
	}
}

func TestRuleJSONUsesSeedNames(t *testing.T) {
	t.Parallel()
	src := `{"id":"shell-allowlist","priority":3,"condition":{"operation_type":["shell","file_write"],
		"risk_level":["high"],"target_pattern":"src/**","command_pattern":"^go test"},"action":"CONFIRM","reason":"why"}`
	var r policy.Rule
	require.NoError(t, json.Unmarshal([]byte(src), &r))
	assert.Equal(t, "shell-allowlist", r.ID)
	assert.Equal(t, 3, r.Priority)
	assert.Equal(t, []policy.Operation{"shell", "file_write"}, r.Condition.OperationType)
	assert.Equal(t, policy.MatchSeverities(risk.High), r.Condition.Risk)
	assert.Equal(t, "src/**", r.Condition.TargetPattern)
	assert.Equal(t, "^go test", r.Condition.CommandPattern)
	assert.Equal(t, policy.Confirm, r.Action)
	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, strings.ReplaceAll(src, "\n\t\t", ""), string(out))
}

// TestIndexAgreesWithLinearScan compares the indexed Evaluate with Explain's linear scan over
// random rule sets and random subjects (fixed seeds).
func TestIndexAgreesWithLinearScan(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		rules := make([]policy.Rule, 60)
		for i := range rules {
			rules[i] = randomRule(rng, i)
		}
		rs, err := policy.Compile(rules, &policy.Env{Lists: map[string][]string{"grp": {"a.example", "*.b.example"}}})
		require.NoError(t, err, "seed %d", seed)
		for k := 0; k < 300; k++ {
			sub := randomSubject(rng)
			m, ok := rs.Evaluate(&sub)
			var want string
			for _, tr := range rs.Explain(&sub) {
				if tr.Decisive {
					want = tr.RuleID
				}
			}
			got := ""
			if ok {
				got = m.Rule.ID
			}
			require.Equal(t, want, got, "seed %d subject %+v", seed, sub)
		}
	}
}

// mustRisk parses risk condition names; the names are the test's own, so an error is a bug.
func mustRisk(names ...string) policy.RiskMatch {
	m, err := policy.ParseRiskMatch(names...)
	if err != nil {
		panic(err)
	}
	return m
}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

func randomRule(rng *rand.Rand, i int) policy.Rule {
	var c policy.Condition
	for n := rng.IntN(3); n > 0; n-- {
		switch rng.IntN(9) {
		case 0:
			c.OperationType = append(c.OperationType, pick(rng, policy.OpRead, policy.OpWrite, policy.OpShell, policy.OpDelete))
		case 1:
			c.Risk = c.Risk.Union(mustRisk(pick(rng, "read_only", "mutating", "exec", "high", "low")))
		case 2:
			c.TargetPattern = pick(rng, "src/**", "**/*.go", "src/a.go", "docs/*", "/etc/**", "**/secret.txt", "{src,lib}/**", "/w/src/**", "*")
		case 3:
			c.CommandPattern = pick(rng, `^go\s`, `\bpush\b`, `rm -rf`, `^git( |$)`, `(?i)sudo`, `\btest\b`)
		case 4:
			c.Commands = append(c.Commands, pick(rng, "go test", "git push", "rm", "ls"))
		case 5:
			c.Tools = append(c.Tools, pick(rng, "bash", "mcp__*", "*_file", "read_file", "edit_[fx]ile"))
		case 6:
			c.Hosts = append(c.Hosts, pick(rng, "a.example", "@grp", "*.example", "c.example"))
		case 7:
			c.OutsideWorkspace = true
		case 8:
			c.Providers = append(c.Providers, pick(rng, "p1", "p*"))
		}
	}
	return policy.Rule{ID: fmt.Sprintf("r%d", i), Priority: rng.IntN(20), Condition: c,
		Action: pick(rng, policy.Allow, policy.Deny, policy.Confirm)}
}

func randomSubject(rng *rand.Rand) policy.Subject {
	s := policy.Subject{
		Tool:      pick(rng, "bash", "read_file", "edit_file", "mcp__x__y", ""),
		Operation: pick(rng, policy.OpRead, policy.OpWrite, policy.OpShell, policy.OpDelete, "custom"),
		Level:     pick(rng, risk.ReadOnly, risk.Mutating, risk.Exec, risk.Destructive, risk.Network),
		Severity:  pick(rng, risk.Low, risk.Medium, risk.High),
		Host:      pick(rng, "", "a.example", "x.b.example", "c.example"),
		Provider:  pick(rng, "", "p1", "p2"),
	}
	switch rng.IntN(4) {
	case 0:
		s.Root, s.Target = "/w", pick(rng, "src/a.go", "src/x/secret.txt", "docs/readme", "lib/z.go", ".", "a.go")
	case 1:
		s.Target = pick(rng, "/etc/passwd", "/w2/src/a.go", "/tmp/secret.txt")
	}
	if rng.IntN(2) == 0 {
		s.Command = pick(rng, "go test ./...", "git push --force", "rm -rf build", "SUDO ls", "gotest", "git")
		s.Argv = strings.Fields(s.Command)
		s.Line = pick(rng, s.Command, "cd x && "+s.Command, s.Command+" | tee log", "echo push; "+s.Command)
	}
	return s
}

func TestAllowEntriesDoNotCoverRedirectsOrSubstitutions(t *testing.T) {
	t.Parallel()
	compile := func(v policy.Verdict, entries ...string) *policy.RuleSet {
		return policy.MustCompile([]policy.Rule{{ID: "r", Action: v, Condition: policy.Condition{Commands: entries}}}, nil)
	}
	argv := []string{"go", "test", "./..."}
	for _, tc := range []struct {
		name      string
		rs        *policy.RuleSet
		sub       policy.Subject
		wantMatch bool
	}{
		{"plain", compile(policy.Allow, "go test"), policy.Subject{Argv: argv}, true},
		{"redirect not covered", compile(policy.Allow, "go test"), policy.Subject{Argv: argv, Redirects: true}, false},
		{"redirect covered by >", compile(policy.Allow, "go test >"), policy.Subject{Argv: argv, Redirects: true}, true},
		{"substitution not covered", compile(policy.Allow, "go test"), policy.Subject{Argv: argv, Substitution: true}, false},
		{"substitution covered by $()", compile(policy.Allow, "go test $()"), policy.Subject{Argv: argv, Substitution: true}, true},
		{"both flags", compile(policy.Allow, "go test > $()"), policy.Subject{Argv: argv, Substitution: true, Redirects: true}, true},
		{"deny entries cover everything", compile(policy.Deny, "go test"), policy.Subject{Argv: argv, Redirects: true, Substitution: true}, true},
	} {
		_, ok := tc.rs.Evaluate(&tc.sub)
		assert.Equal(t, tc.wantMatch, ok, tc.name)
	}
	_, err := policy.Compile([]policy.Rule{{ID: "x", Condition: policy.Condition{Commands: []string{"> $()"}}}}, nil)
	assert.ErrorContains(t, err, "names no command")
}

// TestEvaluateAgreesWithExplainAtEverySize: the first-match loop (small rule sets), the loop
// head with the index (large ones) and the memo all give the rule Explain calls decisive, over
// random rule sets of sizes on both sides of the loop's limit and random subjects.
func TestEvaluateAgreesWithExplainAtEverySize(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 3, 12, 16, 17, 40, 250} {
		for seed := uint64(1); seed <= 12; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			rules := make([]policy.Rule, n)
			for i := range rules {
				rules[i] = randomRule(rng, i)
			}
			rs, err := policy.Compile(rules, &policy.Env{Lists: map[string][]string{"grp": {"a.example", "*.b.example"}}})
			require.NoError(t, err, "n %d seed %d", n, seed)
			var memo policy.LineMemo
			for k := 0; k < 200; k++ {
				sub := randomSubject(rng)
				switch rng.IntN(6) {
				case 0:
					sub.Root, sub.Target = "/", pick(rng, "w/src/a.go", "etc/passwd", ".")
				case 1:
					sub.Root, sub.Target = "/w/src", pick(rng, "a.go", "x/secret.txt", ".")
				}
				want := ""
				for _, tr := range rs.Explain(&sub) {
					if tr.Decisive {
						want = tr.RuleID
					}
				}
				for _, memo := range []*policy.LineMemo{nil, &memo} {
					m, ok := rs.EvaluateMemo(&sub, memo)
					got := ""
					if ok {
						got = m.Rule.ID
					}
					require.Equal(t, want, got, "n %d seed %d subject %+v", n, seed, sub)
				}
			}
		}
	}
}

// A large rule set is compiled in parallel; its problems are still every one, in rule order,
// and the compiled set is the same as the sequential loop's (Explain's order and answers).
func TestCompileLargeRuleSet(t *testing.T) {
	t.Parallel()
	rules := make([]policy.Rule, 5000)
	for i := range rules {
		rules[i] = policy.Rule{ID: fmt.Sprintf("r%d", i), Priority: i % 7, Action: policy.Deny,
			Condition: policy.Condition{TargetPattern: fmt.Sprintf("dir%d/**", i)}}
	}
	for _, bad := range []int{4999, 3, 2500, 1024} {
		rules[bad].Condition.CommandPattern = "(" // one problem each
	}
	_, err := policy.Compile(rules, nil)
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 4)
	// Reported in evaluation order: by priority (i % 7), then declaration order.
	for k, want := range []string{`"r2500"`, `"r4999"`, `"r1024"`, `"r3"`} { // priorities 1, 1, 2, 3
		assert.Contains(t, lines[k], want)
		assert.Contains(t, lines[k], "condition.command_pattern")
	}

	for _, bad := range []int{4999, 3, 2500, 1024} {
		rules[bad].Condition.CommandPattern = ""
	}
	rs, err := policy.Compile(rules, nil)
	require.NoError(t, err)
	require.Equal(t, 5000, rs.Len())
	got := rs.Rules()
	for k := 1; k < len(got); k++ {
		require.LessOrEqual(t, got[k-1].Priority, got[k].Priority)
	}
	m, ok := rs.Evaluate(&policy.Subject{Root: "/w", Target: "dir4321/x"})
	require.True(t, ok)
	assert.Equal(t, "r4321", m.Rule.ID)
}

// allocsPerRun is testing.AllocsPerRun over 100 runs, the least of three tries: the count is
// the whole process's, so another goroutine (a loaded race-detector run) can only add to it.
func allocsPerRun(f func()) float64 {
	least := testing.AllocsPerRun(100, f)
	for i := 0; i < 2 && least > 0; i++ {
		least = min(least, testing.AllocsPerRun(100, f))
	}
	return least
}

// Evaluating allocates nothing, with or without a memo, for every bench case at every size, and
// for a general pattern and an unclean path (the path split on the stack).
func TestEvaluateDoesNotAllocate(t *testing.T) {
	for _, n := range []int{12, 100, 1000} {
		rs, err := policy.Compile(scaledPolicy(n), &policy.Env{Home: "/home/u"})
		require.NoError(t, err)
		for _, c := range benchCases() {
			s := c.s
			var memo policy.LineMemo
			allocs := allocsPerRun(func() {
				rs.Evaluate(&s)
				rs.EvaluateMemo(&s, &memo)
			})
			assert.Zero(t, allocs, "rules=%d case=%s", n, c.name)
		}
	}
	rs := policy.MustCompile([]policy.Rule{
		{ID: "general", Action: policy.Deny, Condition: policy.Condition{TargetPattern: "src/**/*_test.go"}},
		{ID: "fast", Action: policy.Deny, Condition: policy.Condition{TargetPattern: "**/.env"}},
	}, nil)
	for _, s := range []policy.Subject{{Root: "/w", Target: "src/a/b_test.go"}, {Root: "/w", Target: "a//.env/"}} {
		allocs := allocsPerRun(func() { rs.Evaluate(&s) })
		assert.Zero(t, allocs, "%+v", s)
		_, ok := rs.Evaluate(&s)
		assert.True(t, ok, "%+v", s)
	}
}
