package loader_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

// outcome is a decision as far as a profile decides it: the verdict and the obligations.
type outcome struct {
	v policy.Verdict
	o policy.Obligations
}

func (o outcome) String() string { return policy.Cell{Verdict: o.v, Obligations: o.o}.String() }

// atLeastAsStrict reports whether a is at least as strict as b: a DENY is stricter than
// anything; otherwise the verdict must be at least as strict (Allow < Confirm < Deny) and the
// obligations a superset. This is the order the loader promises for untrusted project files (a
// CONFIRM that drops the sandbox an ALLOW had is not at least as strict).
func atLeastAsStrict(a, b outcome) bool {
	return a.v == policy.Deny || !b.v.StricterThan(a.v) && a.o.Has(b.o)
}

// decideModel decides an action the way the gate's layers that a profile contributes do (see
// gate/decide.go): the protected paths (relative entries, by path component), the permission
// mode, then for every part (each risk level of the action, with each target) the rules by
// priority and otherwise the autonomy matrix, adding the matrix cell's obligations and the
// checkpoint discipline (mutating and destructive parts are checkpointed); the strictest part
// decides and the obligations of the parts that go ahead add up; a plan with more files than
// max_files_per_plan is confirmed. It leaves out what no profile setting changes (hard stops,
// halts) and the shell analysis (a command's parts are its words).
func decideModel(c *profile.Compiled, a policy.Action) outcome {
	deny := outcome{v: policy.Deny}
	op := a.Operation.Canonical()
	levels := a.Risk.Union(op.DefaultRisk())
	if levels.Empty() {
		levels = risk.Of(risk.Destructive)
	}
	writes := levels.Has(risk.Mutating) || levels.Has(risk.Destructive)
	for _, t := range a.Targets {
		if !strings.HasPrefix(t, "/") && (protectedModel(c.ProtectedPaths(), t) || writes && protectedModel(c.WriteProtectedPaths(), t)) {
			return deny
		}
	}
	switch c.Mode() {
	case profile.ModePlan, profile.ModeEmergencyStop:
		return deny
	case profile.ModeReadOnly:
		if levels != risk.Of(risk.ReadOnly) {
			return deny
		}
	}
	var acc outcome
	first := true
	add := func(p outcome) {
		if p.v != policy.Deny {
			acc.o |= p.o
		}
		if first || p.v.StricterThan(acc.v) {
			acc.v, first = p.v, false
		}
	}
	sub := policy.Subject{Tool: a.Tool, Operation: op, Provider: a.Provider, Surface: a.Surface, Line: a.Command,
		Command: a.Command, Argv: strings.Fields(a.Command), Host: strings.ToLower(a.Host)}
	for l := range levels.All() {
		sub.Level, sub.Severity = l, l.Severity()
		if a.Severity != 0 && a.Risk.Has(l) {
			sub.Severity = a.Severity
		}
		targets := a.Targets
		if len(targets) == 0 {
			targets = []string{""}
		}
		for _, t := range targets {
			sub.Root, sub.Target = "", t
			if t != "" && !strings.HasPrefix(t, "/") {
				sub.Root = "/ws"
			}
			cell := policy.Matrix(c.Band(), l)
			obl := cell.Obligations
			if l == risk.Mutating || l == risk.Destructive {
				obl |= policy.Checkpoint
			}
			if m, ok := c.Rules().Evaluate(&sub); ok {
				add(outcome{m.Verdict, obl | m.Obligations})
			} else {
				add(outcome{cell.Verdict, obl})
			}
		}
	}
	if max := c.Limits().MaxFilesPerPlan; acc.v == policy.Allow && op == policy.OpPlan && max > 0 && len(a.Targets) > max {
		acc.v = policy.Confirm
	}
	if acc.v == policy.Deny {
		acc.o = 0
	}
	return acc
}

// protectedModel matches a relative target against the relative protected entries: an entry
// without a slash matches any path component, one with a slash a leading run of components
// (case-insensitively).
func protectedModel(entries []string, target string) bool {
	comps := strings.Split(strings.ToLower(target), "/")
	for _, e := range entries {
		if strings.HasPrefix(e, "/") || strings.HasPrefix(e, "~") {
			continue
		}
		ec := strings.Split(strings.ToLower(strings.Trim(e, "/")), "/")
		if len(ec) == 1 && slices.Contains(comps, ec[0]) || len(ec) > 1 && len(comps) >= len(ec) && slices.Equal(comps[:len(ec)], ec) {
			return true
		}
	}
	return false
}

// corpus is a fixed set of actions of every operation and risk level.
func corpus() []policy.Action {
	var out []policy.Action
	ops := []policy.Operation{policy.OpRead, policy.OpWrite, policy.OpDelete, policy.OpShell, policy.OpNetwork,
		policy.OpPlan, policy.OpTool, policy.OpSelfUpgrade, "file_write", "mcp"}
	for _, op := range ops {
		out = append(out, policy.Action{Tool: "tool_" + string(op), Operation: op})
	}
	for _, l := range risk.Levels() {
		for _, sev := range []risk.Severity{0, risk.Low, risk.High} {
			out = append(out, policy.Action{Tool: "mcp__x__y", Operation: policy.OpTool, Risk: risk.Of(l), Severity: sev})
		}
	}
	for _, cmd := range []string{"go test ./...", "rm -rf build", "npm publish", "curl x | sh", "make deploy", "cat README.md", "git push --force", "./rm x", "/bin/rm -rf /"} {
		out = append(out, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd})
		out = append(out, policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd, Risk: risk.Of(risk.Exec), Severity: risk.Low})
	}
	for _, t := range []string{"src/main.go", "docs/a.md", "deploy/prod/x", "db/migrations/1.sql", "/outside/x", "vendor/v.go", ".git/config", ".env", ".vscode/settings.json"} {
		out = append(out,
			policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{t}},
			policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{t}},
			policy.Action{Tool: "rm", Operation: policy.OpDelete, Targets: []string{t}, Severity: risk.Medium, Risk: risk.Of(risk.Destructive)})
	}
	for _, h := range []string{"api.example-llm.com", "evil.example", "proxy.golang.org", "a.tracker.example"} {
		out = append(out, policy.Action{Tool: "web_fetch", Operation: policy.OpNetwork, Host: h})
	}
	out = append(out,
		policy.Action{Tool: "planner", Operation: policy.OpPlan, Targets: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}},
		policy.Action{Tool: "upgrade", Operation: policy.OpSelfUpgrade, Risk: risk.Of(risk.Exec)},
		policy.Action{Tool: "never-matches", Operation: policy.OpSelfUpgrade},
		policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"src/a.go", "/outside/b"}, Risk: risk.Of(risk.Mutating, risk.Network), Host: "evil.example"},
	)
	return out
}

// userFiles are the user layers the property runs under.
var userFiles = []string{
	"",
	`{"active_profile": "PROFILE-FULL-AUTO"}`,
	`{"active_profile": "PROFILE-DEV"}`,
	`{"active_profile": "PROFILE-DEV", "autonomy": 0.4, "custom_rules": [
		{"id": "confirm-blocked", "priority": 1, "condition": {"commands": ["@shell_blocklist"]}, "action": "CONFIRM", "obligations": ["notify"]},
		{"id": "allow-docs", "priority": 3, "condition": {"target_pattern": "docs/**"}, "action": "ALLOW", "obligations": ["notify"]}]}`,
	`{"active_profile": "trusted", "custom_rules": [
		{"id": "allow-make", "priority": 0, "condition": {"operation_type": ["shell"], "commands": ["make"]}, "action": "ALLOW", "obligations": ["sandbox"]},
		{"id": "deny-prod", "priority": 1, "condition": {"target_pattern": "deploy/prod/**"}, "action": "DENY"}]}`,
	`{"active_profile": "auto", "allowed_tools": ["mcp__x__*"]}`,
	`{"active_profile": "PROFILE-SAFE", "autonomy": 0.5}`,
}

// ruleIDs are the ids a random project rule takes: the built-in profiles' and the user files'
// (so it replaces a rule) and new ones (so it adds one).
func ruleIDs() []string {
	seen := map[string]bool{}
	var ids []string
	for _, p := range profile.All() {
		for _, r := range p.Rules {
			if !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
			}
		}
	}
	return append(ids, "confirm-blocked", "allow-docs", "allow-make", "deny-prod", "p-new-1", "p-new-2")
}

type projectGen struct {
	rng *rand.Rand
	ids []string
}

func (g *projectGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *projectGen) some(n int, xs ...string) []string {
	var out []string
	for range 1 + g.rng.IntN(n) {
		if x := g.pick(xs...); !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// condition returns a random condition, or one derived from base (the same, broader, narrower).
func (g *projectGen) condition(base *policy.Rule) map[string]any {
	c := map[string]any{}
	if base != nil && g.rng.IntN(2) == 0 {
		b, err := json.Marshal(base.Condition)
		if err != nil {
			panic(err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			panic(err)
		}
		switch g.rng.IntN(4) {
		case 0: // the same
			return c
		case 1: // drop a field: broader
			if keys := slices.Sorted(maps.Keys(c)); len(keys) > 0 {
				delete(c, keys[g.rng.IntN(len(keys))])
			}
			return c
		}
		// add a field below: narrower (or the same field replaced)
	}
	switch g.rng.IntN(9) {
	case 0:
		c["operation_type"] = g.some(2, "read", "write", "delete", "shell", "network", "plan", "tool", "self_upgrade", "file_write")
	case 1:
		c["risk_level"] = g.some(2, "read_only", "mutating", "exec", "destructive", "network", "low", "medium", "high")
	case 2:
		c["target_pattern"] = g.pick("**", "docs/**", "src/**", "deploy/**", "/outside/**", "*.go")
	case 3:
		c["command_pattern"] = g.pick(`^go test`, `rm`, `curl .*\| *sh`, `^make`)
	case 4:
		c["commands"] = g.some(2, "go test", "rm", "npm publish", "make", "cat", "@shell_blocklist", "@shell_allowlist", "@auto_approve_patterns")
	case 5:
		c["tools"] = g.some(2, "bash", "never-matches", "write_file", "mcp__*", "*", "@allowed_tools", "upgrade")
	case 6:
		c["hosts"] = g.some(2, "evil.example", "*.example", "@ai-apis", "@package-managers", "@network_allowlist", "*")
	case 7:
		c["outside_workspace"] = true
	}
	return c
}

func (g *projectGen) file() map[string]any {
	f := map[string]any{}
	if g.rng.IntN(5) == 0 {
		f["active_profile"] = g.pick(profile.Names()...)
	}
	if g.rng.IntN(3) == 0 {
		f["autonomy"] = []float64{0, 0.2, 0.34, 0.4, 0.5, 0.67, 0.9, 1}[g.rng.IntN(8)]
	}
	if g.rng.IntN(6) == 0 {
		f["permission_mode"] = g.pick("default", "read-only", "plan", "supervised", "trusted", "autonomous")
	}
	if g.rng.IntN(6) == 0 {
		f["external_writes"] = g.pick("halt", "policy")
	}
	lists := map[string][]string{
		"shell_allowlist":       {"make deploy", "rm -rf", "go test", "npm publish"},
		"shell_blocklist":       {"make deploy", "go test", "cat", "curl"},
		"network_allowlist":     {"evil.example", "*.example"},
		"allowed_tools":         {"bash", "write_file", "*"},
		"auto_approve_patterns": {"rm -rf", "make"},
		"denied_paths":          {"docs", "src/main.go", "deploy"},
		"write_protected_paths": {"docs", "vendor"},
		"unprotected_paths":     {".env", ".git", ".reins", "vendor", "docs"},
	}
	for _, k := range slices.Sorted(maps.Keys(lists)) {
		if g.rng.IntN(6) == 0 {
			f[k] = g.some(2, lists[k]...)
		}
	}
	if g.rng.IntN(6) == 0 {
		f["host_groups"] = map[string][]string{g.pick("ai-apis", "package-managers", "configured-hosts", "mine"): {"evil.example"}}
	}
	if g.rng.IntN(8) == 0 {
		f["resource_limits"] = map[string]int{"max_files_per_plan": 1 + g.rng.IntN(300)}
	}
	var rules []map[string]any
	used := map[string]bool{}
	for range g.rng.IntN(4) {
		id := g.pick(g.ids...)
		if used[id] {
			continue
		}
		used[id] = true
		var base *policy.Rule
		for _, p := range profile.All() {
			for i := range p.Rules {
				if p.Rules[i].ID == id {
					base = &p.Rules[i]
				}
			}
		}
		prio := []int{-1, 0, 1, 2, 3, 4, 5, 50, 99}[g.rng.IntN(9)]
		if base != nil && g.rng.IntN(2) == 0 {
			prio = base.Priority + g.rng.IntN(3) - 1
		}
		r := map[string]any{"id": id, "priority": prio, "condition": g.condition(base), "action": g.pick("ALLOW", "DENY", "CONFIRM")}
		if obl := g.some(3, "checkpoint", "notify", "sandbox", ""); g.rng.IntN(2) == 0 {
			r["obligations"] = slices.DeleteFunc(obl, func(s string) bool { return s == "" })
		}
		rules = append(rules, r)
	}
	if len(rules) > 0 {
		f["custom_rules"] = rules
	}
	return f
}

// TestUntrustedProjectNeverLoosens is the trust property: for random untrusted project files
// (rules that replace built-in and user rules or add new ones, with random conditions,
// priorities, verdicts and obligations; dial, mode and profile changes; list and group
// entries), no action of a fixed corpus gets a decision less strict than without the file: not
// a more permissive verdict, and not fewer obligations (unless it is now denied).
func TestUntrustedProjectNeverLoosens(t *testing.T) {
	t.Parallel()
	g := &projectGen{rng: rand.New(rand.NewPCG(12, 6)), ids: ruleIDs()}
	actions := corpus()
	files := 200
	if testing.Short() {
		files = 40
	}
	loaded, applied := 0, 0
	for i := range files {
		l, a := checkRandomProject(t, g, userFiles[i%len(userFiles)], actions)
		if l {
			loaded++
		}
		if a {
			applied++
		}
	}
	t.Logf("%d of %d random project files loaded, %d changed the profile", loaded, files, applied)
	assert.Greater(t, loaded, files/2, "most random files are valid")
	assert.Greater(t, applied, files/4, "many change the profile without trust")
}

// FuzzUntrustedProject is the trust property with the fuzzer choosing the random project file
// (through the generator's seed) and the user file.
func FuzzUntrustedProject(f *testing.F) {
	for i := range 8 {
		f.Add(uint64(i), uint64(i*7+1), uint8(i))
	}
	ids, actions := ruleIDs(), corpus()
	f.Fuzz(func(t *testing.T, s1, s2 uint64, user uint8) {
		g := &projectGen{rng: rand.New(rand.NewPCG(s1, s2)), ids: ids}
		checkRandomProject(t, g, userFiles[int(user)%len(userFiles)], actions)
	})
}

// checkRandomProject loads a random project file under the user file (untrusted) and fails t if
// some action of the corpus is decided less strictly than without the project file. It reports
// whether the file loaded and whether it changed the profile.
func checkRandomProject(t *testing.T, g *projectGen, user string, actions []policy.Action) (loaded, applied bool) {
	t.Helper()
	root := t.TempDir()
	opts := &loader.Options{UserDir: filepath.Join(root, "config"), ProjectDir: filepath.Join(root, "repo"), Default: profile.ProfileDev}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "repo", ".reins"), 0o755))
	require.NoError(t, os.MkdirAll(opts.UserDir, 0o755))
	if user != "" {
		require.NoError(t, os.WriteFile(filepath.Join(opts.UserDir, "profile.json"), []byte(user), 0o644))
	}
	without, err := loader.Load(context.Background(), opts)
	require.NoError(t, err)
	before := without.Profile.MustCompile()

	proj, err := json.MarshalIndent(g.file(), "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "repo", ".reins", "project-profile.json"), proj, 0o644))
	with, err := loader.Load(context.Background(), opts)
	if err != nil {
		return false, false // an invalid combination (a band that contradicts the mode, an unknown list)
	}
	require.Equal(t, loader.Untrusted, with.Trust)
	after := with.Profile.MustCompile()
	for _, a := range actions {
		d0, d1 := decideModel(before, a), decideModel(after, a)
		if !atLeastAsStrict(d1, d0) {
			t.Fatalf("user file %s\nproject file %s\nskipped %v\naction %+v: %s without the project file, %s with it",
				user, proj, with.Skipped, a, d0, d1)
		}
	}
	return true, with.Profile.Hash() != without.Profile.Hash()
}

// TestProjectCannotStripSelfUpgradeObligations is issue 12's example: under PROFILE-FULL-AUTO,
// a project file that replaces allow-self-upgrade (ALLOW with checkpoint and notify) by a DENY
// rule that never matches would let self-upgrades fall through to default-allow, which takes the
// notification away. Untrusted, the replacement is skipped with its reason; trusted, it applies.
func TestProjectCannotStripSelfUpgradeObligations(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	f.writeUser(`{"active_profile": "PROFILE-FULL-AUTO"}`)
	f.writeProject(`{"custom_rules":[{"id":"allow-self-upgrade","priority":4,"condition":{"tools":["never-matches"]},"action":"DENY"}]}`)
	upgrade := policy.Action{Tool: "upgrade", Operation: policy.OpSelfUpgrade}

	l := f.mustLoad()
	assert.Equal(t, loader.Untrusted, l.Trust)
	require.Len(t, l.Skipped, 1)
	assert.Equal(t, "/custom_rules/0", l.Skipped[0].Source.Pointer)
	assert.Equal(t, `replaces the ALLOW rule "allow-self-upgrade", which adds checkpoint+notify, with a DENY rule that does not cover every action it allowed: those fall through to later rules or the autonomy matrix, without its obligations`, l.Skipped[0].Reason)
	d := decideModel(l.Profile.MustCompile(), upgrade)
	assert.Equal(t, outcome{policy.Allow, policy.Checkpoint | policy.Notify | policy.Sandbox}, d)

	f.writeUser(`{"active_profile": "PROFILE-FULL-AUTO", "trusted_projects": [` + f.trustEntry() + `]}`)
	l = f.mustLoad()
	assert.Equal(t, loader.TrustedByUser, l.Trust)
	assert.Empty(t, l.Skipped)
	d = decideModel(l.Profile.MustCompile(), upgrade)
	assert.Equal(t, outcome{policy.Allow, policy.Checkpoint | policy.Sandbox}, d, "trusted, the project may do it")
}

func ExampleLoaded_Skipped() {
	root, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(root)
	writeFile(filepath.Join(root, "config", "profile.json"), `{"active_profile": "PROFILE-FULL-AUTO"}`)
	writeFile(filepath.Join(root, "repo", ".reins", "project-profile.json"),
		`{"custom_rules": [{"id": "allow-self-upgrade", "priority": 4, "condition": {"tools": ["never-matches"]}, "action": "DENY"}]}`)
	l, err := loader.Load(context.Background(), &loader.Options{UserDir: filepath.Join(root, "config"), ProjectDir: filepath.Join(root, "repo")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, s := range l.Skipped {
		fmt.Println(s.Source.Pointer, s.Reason)
	}
	// Output:
	// /custom_rules/0 replaces the ALLOW rule "allow-self-upgrade", which adds checkpoint+notify, with a DENY rule that does not cover every action it allowed: those fall through to later rules or the autonomy matrix, without its obligations
}
