package gate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

func benchWorkspace(b testing.TB) string {
	dir := b.TempDir()
	require.NoError(b, os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(dir, "src", "pkg", "main.go"), []byte("package main\n"), 0o644))
	return dir
}

func newBenchGate(b testing.TB, p profile.Profile) *gate.Gate {
	g, err := gate.New(p, &gate.Options{Workspace: []string{benchWorkspace(b)}})
	require.NoError(b, err)
	return g
}

// regexBlocklist is a DEV profile whose blocklist is a set of command regexes.
func regexBlocklist() profile.Profile {
	return profile.MustBuiltin(profile.ProfileDev).WithRules(
		policy.Rule{ID: "deny-rm-root", Priority: 1, Action: policy.Deny, Condition: policy.Condition{CommandPattern: `^rm\s+-[a-zA-Z]*[rf][a-zA-Z]*\s+(/|~)(\s|$)`}},
		policy.Rule{ID: "deny-curl-sh", Priority: 1, Action: policy.Deny, Condition: policy.Condition{CommandPattern: `\b(curl|wget)\b.*\|\s*(ba|z)?sh\b`}},
		policy.Rule{ID: "deny-mkfs", Priority: 1, Action: policy.Deny, Condition: policy.Condition{CommandPattern: `^mkfs(\.\w+)?\s`}},
		policy.Rule{ID: "deny-dd", Priority: 1, Action: policy.Deny, Condition: policy.Condition{CommandPattern: `^dd\s+.*of=/dev/`}},
		policy.Rule{ID: "deny-force-push", Priority: 1, Action: policy.Deny, Condition: policy.Condition{CommandPattern: `git\s+push\s+.*(--force|-f)\b`}},
		policy.Rule{ID: "deny-chmod-777", Priority: 1, Action: policy.Deny, Condition: policy.Condition{CommandPattern: `(?i)chmod\s+-R\s+777`}},
	)
}

// BenchmarkCheck: PROFILE-DEV (11 rules), actions that are allowed. The command cases hit the
// per-profile analysis cache, as an agent repeating its test command does.
func BenchmarkCheck(b *testing.B) {

	dev := newBenchGate(b, profile.MustBuiltin(profile.ProfileDev))
	rx := newBenchGate(b, regexBlocklist())
	cases := []struct {
		name string
		g    *gate.Gate
		a    policy.Action
	}{
		{"path", dev, policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"src/pkg/main.go"}}},
		{"path-depth1", dev, policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"main.go"}}},
		{"command", dev, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "go test ./..."}},
		{"command-regex-blocklist", rx, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "go test ./..."}},
		{"no-target", dev, policy.Action{Tool: "plan", Operation: policy.OpPlan, Risk: risk.Of(risk.Mutating)}},
	}
	for _, c := range cases {
		g := c.g
		b.Run(c.name, func(b *testing.B) {
			d, err := decide(g, c.a)
			require.NoError(b, err)
			require.Equal(b, policy.Allow, d.Verdict, d.String())
			b.ReportAllocs()
			for b.Loop() {
				_, _ = decide(g, c.a)
			}
		})
	}
}

// BenchmarkCheckLine: command lines of four simple commands under PROFILE-DEV with the regex
// blocklist. allowed: every part is decided, each blocklist pattern runs on the whole line once
// (not once per part); denied-first and denied-last: the same commands with a denied one first
// or last. A Check stops at the denied part, so denied-first costs about one part of
// denied-last; compare the two in one run.
func BenchmarkCheckLine(b *testing.B) {

	g := newBenchGate(b, regexBlocklist())
	cases := []struct {
		name, line string
		verdict    policy.Verdict
	}{
		{"allowed", "go test ./... && go vet ./... && go build ./... && make", policy.Allow},
		{"denied-first", "chmod -R 777 src ; go test ./... && go vet ./... && go build ./...", policy.Deny},
		{"denied-last", "go test ./... && go vet ./... && go build ./... ; chmod -R 777 src", policy.Deny},
	}
	for _, c := range cases {
		a := policy.Action{Tool: "bash", Operation: policy.OpShell, Command: c.line}
		b.Run(c.name, func(b *testing.B) {
			d, err := decide(g, a)
			require.NoError(b, err)
			require.Equal(b, c.verdict, d.Verdict, d.String())
			b.ReportAllocs()
			for b.Loop() {
				_, _ = decide(g, a)
			}
		})
	}
}

// synthRules makes n rules of the shapes real profiles have: target globs under distinct
// directories, command regexes for distinct tools, tool-name rules, and a few risk rules.
func synthRules(n int) []policy.Rule {
	rules := make([]policy.Rule, 0, n)
	for i := 0; len(rules) < n; i++ {
		switch i % 4 {
		case 0:
			rules = append(rules, policy.Rule{ID: fmt.Sprintf("deny-dir-%d", i), Priority: 10 + i, Action: policy.Deny,
				Condition: policy.Condition{TargetPattern: fmt.Sprintf("vendor/mod%d/**", i)}})
		case 1:
			rules = append(rules, policy.Rule{ID: fmt.Sprintf("deny-cmd-%d", i), Priority: 10 + i, Action: policy.Deny,
				Condition: policy.Condition{CommandPattern: fmt.Sprintf(`^tool%d(\s|$)`, i)}})
		case 2:
			rules = append(rules, policy.Rule{ID: fmt.Sprintf("confirm-tool-%d", i), Priority: 10 + i, Action: policy.Confirm,
				Condition: policy.Condition{Tools: []string{fmt.Sprintf("mcp__server%d__*", i), fmt.Sprintf("tool_%d", i)}}})
		case 3:
			rules = append(rules, policy.Rule{ID: fmt.Sprintf("deny-secret-%d", i), Priority: 10 + i, Action: policy.Deny,
				Condition: policy.Condition{TargetPattern: fmt.Sprintf("**/*.secret%d", i)}})
		}
	}
	return rules
}

func BenchmarkCheckRules(b *testing.B) {

	for _, n := range []int{10, 100, 1000, 10000} {
		p := profile.MustBuiltin(profile.PermissionAutonomous).WithRules(synthRules(n)...)
		g := newBenchGate(b, p)
		for _, c := range []struct {
			name string
			a    policy.Action
		}{
			{"path", policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"src/pkg/main.go"}}},
			{"command", policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "go test ./..."}},
		} {
			b.Run(fmt.Sprintf("%s/rules=%d", c.name, n), func(b *testing.B) {
				d, err := decide(g, c.a)
				require.NoError(b, err)
				require.Equal(b, policy.Allow, d.Verdict, d.String())
				b.ReportAllocs()
				for b.Loop() {
					_, _ = decide(g, c.a)
				}
			})
		}
	}
}

// BenchmarkCompileRules: compiling 10,000 rules. best-ms is the fastest single compile, the
// figure a loaded machine distorts least.
func BenchmarkCompileRules(b *testing.B) {
	rules := synthRules(10000)
	b.ReportAllocs()
	best := time.Duration(1 << 62)
	for b.Loop() {
		t0 := time.Now()
		_, err := policy.Compile(rules, nil)
		if err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	b.ReportMetric(float64(best.Nanoseconds())/1e6, "best-ms")
}

func BenchmarkCheckParallel(b *testing.B) {

	g := newBenchGate(b, profile.MustBuiltin(profile.ProfileDev))
	a := policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"src/pkg/main.go"}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = decide(g, a)
		}
	})
}

// BenchmarkLstatBaseline is the floor of a path check: one lstat(2) of a workspace file, the
// system call symlink-safe resolution makes per path component (BenchmarkCheck/path resolves
// three components, path-depth1 one).
func BenchmarkLstatBaseline(b *testing.B) {
	ws := benchWorkspace(b)
	p := filepath.Join(ws, "src", "pkg", "main.go")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.Lstat(p); err != nil {
			b.Fatal(err)
		}
	}
}
