package loader_test

import (
	"cmp"
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

// managedFile returns a random managed file: caps, managed rules only, DENY and CONFIRM rules
// (and sometimes an ALLOW rule) with random conditions, protected paths, values.
func (g *projectGen) managedFile() map[string]any {
	f := map[string]any{}
	caps := map[string]any{}
	if g.rng.IntN(2) == 0 {
		caps["max_band"] = g.pick("supervised", "trusted", "autonomous")
	}
	if g.rng.IntN(3) == 0 {
		caps["max_permission_mode"] = g.pick("default", "read-only", "plan")
	}
	if g.rng.IntN(3) == 0 {
		caps["managed_rules_only"] = true
	}
	if len(caps) > 0 {
		f["managed"] = caps
	}
	if g.rng.IntN(4) == 0 {
		f["active_profile"] = g.pick("PROFILE-SAFE", "PROFILE-DEV", "supervised", "ask")
	}
	if g.rng.IntN(4) == 0 {
		f["resource_limits"] = map[string]int{"max_files_per_plan": 1 + g.rng.IntN(100)}
	}
	if g.rng.IntN(3) == 0 {
		f["denied_paths"] = g.some(2, "docs", "deploy", "/srv/keys")
	}
	if g.rng.IntN(4) == 0 {
		f["shell_blocklist"] = g.some(2, "make deploy", "npm publish")
	}
	var rules []map[string]any
	for i := range g.rng.IntN(4) {
		r := map[string]any{"id": fmt.Sprintf("org-%d", i), "priority": []int{-1, 0, 1, 2, 5, 99}[g.rng.IntN(6)],
			"condition": g.condition(nil), "action": g.pick("DENY", "CONFIRM", "CONFIRM", "ALLOW")}
		if g.rng.IntN(3) == 0 {
			r["obligations"] = []string{g.pick("checkpoint", "notify", "sandbox")}
		}
		rules = append(rules, r)
	}
	if g.rng.IntN(6) == 0 {
		// A managed rule with the id of a built-in or user rule replaces it.
		rules = append(rules, map[string]any{"id": g.pick(g.ids...), "priority": 1, "condition": g.condition(nil), "action": g.pick("DENY", "CONFIRM")})
	}
	if len(rules) > 0 {
		f["custom_rules"] = rules
	}
	return f
}

// TestNothingBelowTheManagedTierLoosensIt is the managed tier's property: for random managed
// files and random user and project files (the project trusted or not), the effective profile
//   - carries the managed tier the managed file makes on its own (the same floor, caps and
//     managed rules only, whatever the files below say);
//   - lies within the caps (band and mode);
//   - protects every path the managed file protects, and holds every value it sets;
//   - decides no action of the corpus with a more permissive verdict than the managed tier's
//     DENY and CONFIRM rules on their own (the same profile with only those rules and a final
//     ALLOW rule), so no user or project rule outranks them;
//   - under managed rules only, holds no ALLOW rule of the user or project file and is at least
//     as restrictive (the one order, and every action of the corpus through the evaluation
//     model) as the managed tier over the built-in default without the user and project files.
func TestNothingBelowTheManagedTierLoosensIt(t *testing.T) {
	t.Parallel()
	g := &projectGen{rng: rand.New(rand.NewPCG(26, 2)), ids: ruleIDs()}
	actions := corpus()
	n := 160
	if testing.Short() {
		n = 40
	}
	loaded, rulesOnly := 0, 0
	for i := range n {
		l, ro := checkRandomManaged(t, g, i, actions)
		if l {
			loaded++
		}
		if ro {
			rulesOnly++
		}
	}
	t.Logf("%d of %d random combinations loaded (%d under managed rules only)", loaded, n, rulesOnly)
	assert.Greater(t, loaded, n/3)
	assert.Greater(t, rulesOnly, n/20)
}

// FuzzNothingBelowTheManagedTierLoosensIt is the managed tier's property with the fuzzer
// choosing the generator's seed.
func FuzzNothingBelowTheManagedTierLoosensIt(f *testing.F) {
	for i := range 6 {
		f.Add(uint64(i), uint64(i*13+5))
	}
	ids, actions := ruleIDs(), corpus()
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		g := &projectGen{rng: rand.New(rand.NewPCG(s1, s2)), ids: ids}
		checkRandomManaged(t, g, int(s1%7), actions)
	})
}

func checkRandomManaged(t *testing.T, g *projectGen, i int, actions []policy.Action) (loaded, rulesOnly bool) {
	t.Helper()
	root := t.TempDir()
	managedPath := filepath.Join(root, "etc", "managed-profile.json")
	opts := &loader.Options{UserDir: filepath.Join(root, "config"), ProjectDir: filepath.Join(root, "repo"),
		Default: profile.ProfileDev, ManagedFile: managedPath}
	for _, d := range []string{filepath.Join(root, "repo", ".reins"), opts.UserDir, filepath.Dir(managedPath)} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	mf, err := json.MarshalIndent(g.managedFile(), "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(managedPath, mf, 0o644))
	require.NoError(t, os.Chmod(managedPath, 0o644))

	// The managed tier on its own.
	alone, err := loader.Load(context.Background(), &loader.Options{NoUserFile: true, Default: profile.ProfileDev, ManagedFile: managedPath})
	if err != nil {
		return false, false // an invalid managed file (a cap its own values exceed, an unknown list)
	}
	m := alone.Profile.Managed
	require.NotNil(t, m)

	userJSON := []byte(cmp.Or(userFiles[i%len(userFiles)], "{}"))
	if i%2 == 1 {
		userJSON, err = json.Marshal(g.file())
		require.NoError(t, err)
	}
	var user map[string]any
	require.NoError(t, json.Unmarshal(userJSON, &user))
	// Every user file has an ALLOW rule, for managed rules only to drop.
	rules, _ := user["custom_rules"].([]any)
	user["custom_rules"] = append(rules, map[string]any{"id": "u-allow", "priority": g.rng.IntN(5) - 2, "condition": g.condition(nil), "action": "ALLOW"})
	proj, err := json.MarshalIndent(g.file(), "", " ")
	require.NoError(t, err)
	projPath := filepath.Join(root, "repo", ".reins", "project-profile.json")
	require.NoError(t, os.WriteFile(projPath, proj, 0o644))
	if g.rng.IntN(2) == 0 {
		digest, err := loader.TrustDigest(context.Background(), projPath)
		require.NoError(t, err)
		user["trusted_projects"] = []map[string]string{{"path": filepath.Join(root, "repo"), "sha256": digest}}
	}
	uf, err := json.MarshalIndent(user, "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(opts.UserDir, "profile.json"), uf, 0o644))

	l, err := loader.Load(context.Background(), opts)
	if err != nil {
		// An invalid lower file (a band that contradicts the mode, an unknown list): it is
		// invalid without the managed tier too.
		o := *opts
		o.NoManagedFile = true
		_, err2 := loader.Load(context.Background(), &o)
		require.Error(t, err2, "the managed tier made valid files fail to load: %v\nmanaged file %s", err, mf)
		return false, false
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("managed file %s\nuser file %s\nproject file %s\nskipped %v\n"+format, append([]any{mf, uf, proj, l.Skipped}, args...)...)
	}
	p := l.Profile
	if !m.Equal(p.Managed) {
		fail("the managed tier differs from the managed file's own: %+v, want %+v", p.Managed, m)
	}
	if m.MaxBand != nil {
		if b, _ := policy.BandOf(p.Autonomy); b > *m.MaxBand {
			fail("the dial %v lies past the cap %s", p.Autonomy, *m.MaxBand)
		}
	}
	if m.MaxMode.StricterThan(p.Mode) {
		fail("the mode %s lies past the cap %s", p.Mode, m.MaxMode)
	}
	for _, e := range m.ProtectedPaths {
		if !slices.Contains(p.ProtectedPaths, e) {
			fail("%q is not protected", e)
		}
	}
	var mfile map[string]any
	require.NoError(t, json.Unmarshal(mf, &mfile))
	if lim, ok := mfile["resource_limits"].(map[string]any); ok {
		if v := int(lim["max_files_per_plan"].(float64)); p.Limits.MaxFilesPerPlan != v {
			fail("max_files_per_plan %d, the managed file sets %d", p.Limits.MaxFilesPerPlan, v)
		}
	}
	c, err := p.Compile()
	require.NoError(t, err)

	// The floor on its own: the same profile, only the managed DENY and CONFIRM rules, then
	// allow.
	floor := p.Clone()
	floor.Managed = nil
	floor.Rules = nil
	for _, r := range p.Rules {
		if slices.ContainsFunc(m.Rules, func(x policy.Rule) bool { return x.ID == r.ID }) {
			floor.Rules = append(floor.Rules, r)
		}
	}
	floor.Rules = append(floor.Rules, policy.Rule{ID: "then-allow", Priority: profile.MaxRulePriority, Action: policy.Allow})
	fm, model := evalmodel.New(floor.MustCompile()), evalmodel.New(c)
	for _, a := range actions {
		want, got := fm.Decide(act(a)), model.Decide(act(a))
		if got.Verdict.StricterThan(want.Verdict) || got.Verdict == want.Verdict {
			continue
		}
		fail("action %+v: %s under the managed rules alone, %s with the files below", a, want, got)
	}
	if !m.RulesOnly {
		return true, false
	}
	for s, src := range l.Provenance.All() {
		if s.Field == "rules" && (src.Origin == loader.OriginUser || src.Origin == loader.OriginProject) {
			if r := findRule(p, s.Key); r != nil && r.Action == policy.Allow {
				fail("the %s's ALLOW rule %q applies under managed rules only", src.Origin, s.Key)
			}
		}
	}
	if ok, why := profile.AtLeastAsRestrictive(p, alone.Profile); !ok {
		fail("under managed rules only, looser than the managed tier alone: %s", why)
	}
	am := evalmodel.New(alone.Profile.MustCompile())
	for _, a := range actions {
		if d0, d1 := am.Decide(act(a)), model.Decide(act(a)); !evalmodel.AtLeastAsStrict(d1, d0) {
			fail("action %+v: %s under the managed tier alone, %s with the files below", a, d0, d1)
		}
	}
	return true, true
}
