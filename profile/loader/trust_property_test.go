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
	"github.com/reins-go/reins/profile/internal/evalmodel"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

// act turns an action into the evaluation model's: a command line is one command of exec
// risk (or the declared risk), its words the arguments.
func act(a policy.Action) evalmodel.Action {
	x := evalmodel.Action{Action: a}
	if a.Command != "" {
		lv := a.Risk
		if lv.Empty() {
			lv = risk.Of(risk.Exec)
		}
		x.Commands = []evalmodel.Command{{Argv: strings.Fields(a.Command), Risk: lv, Severity: a.Severity}}
	}
	return x
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
	before := evalmodel.New(without.Profile.MustCompile())

	proj, err := json.MarshalIndent(g.file(), "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "repo", ".reins", "project-profile.json"), proj, 0o644))
	with, err := loader.Load(context.Background(), opts)
	if err != nil {
		return false, false // an invalid combination (a band that contradicts the mode, an unknown list)
	}
	require.Equal(t, loader.Untrusted, with.Trust)
	after := evalmodel.New(with.Profile.MustCompile())
	for _, a := range actions {
		d0, d1 := before.Decide(act(a)), after.Decide(act(a))
		if !evalmodel.AtLeastAsStrict(d1, d0) {
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
	d := evalmodel.Decide(l.Profile.MustCompile(), act(upgrade))
	assert.Equal(t, policy.Cell{Verdict: policy.Allow, Obligations: policy.Checkpoint | policy.Notify | policy.Sandbox}, policy.Cell{Verdict: d.Verdict, Obligations: d.Obligations})

	f.writeUser(`{"active_profile": "PROFILE-FULL-AUTO", "trusted_projects": [` + f.trustEntry() + `]}`)
	l = f.mustLoad()
	assert.Equal(t, loader.TrustedByUser, l.Trust)
	assert.Empty(t, l.Skipped)
	d = evalmodel.Decide(l.Profile.MustCompile(), act(upgrade))
	assert.Equal(t, policy.Cell{Verdict: policy.Allow, Obligations: policy.Checkpoint | policy.Sandbox}, policy.Cell{Verdict: d.Verdict, Obligations: d.Obligations}, "trusted, the project may do it")
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
