package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/profile"
)

// FuzzLoadProfile feeds arbitrary bytes to the JSON loader, as a user file and as a project
// file on top of a real user file. It never panics; every failure is a Error naming the
// file; anything that loads is valid JSON that passes the published schema (checked here with
// a separately compiled schema and encoding/json), its effective profile compiles, and an
// untrusted project file never makes the profile less restrictive by the one order
// (profile.AtLeastAsRestrictive), which is also what the loader judges each setting by.
func FuzzLoadProfile(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "profiles", "*.json"))
	require.NoError(f, err)
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{
		`{}`, `[]`, `null`, ``, `{"autonomy": 1.5}`, `{"autonomy": 0.2, "autonomy": 0.9}`,
		`{"active_profile": "yolo", "approval": {"mode": "ask"}}`,
		`{"permission_mode": "trusted", "autonomy": 0.1}`,
		`{"custom_rules": [{"id": "a", "action": "ALLOW", "condition": {"target_pattern": "{a,b"}}]}`,
		`{"custom_rules": [{"id": "a", "action": "deny", "condition": {"command_pattern": "(?i)rm\\s+-rf", "hosts": ["@ai-apis"]}}]}`,
		`{"custom_rules": [{"id": "deny-dangerous-commands", "priority": 2, "action": "DENY", "condition": {"commands": ["@shell_blocklist"]}}]}`,
		`{"custom_rules": [{"id": "allow-low-med-risk", "priority": 5, "action": "CONFIRM", "condition": {"risk_level": ["low", "medium"]}}]}`,
		`{"host_groups": {"x": ["*.example"]}, "custom_rules": [{"id": "d", "action": "DENY", "condition": {"hosts": ["@x"]}}]}`,
		`{"denied_paths": ["a/../b"], "trusted_paths": ["~"], "registries": {"npm": ["r.example:8080"]}}`,
		`{"resource_limits": {"max_concurrent_ops": 1e2}}`,
		`{"$comment": "\ufeff\u0000"}`,
		"\ufeff{\"autonomy\": 0}",
		`{"approval": {"mode": "safe", "denied_paths": ["~/.ssh"], "auto_approve_patterns": ["go test >"]}}`,
		strings.Repeat(`{"a":`, 40) + strings.Repeat(`}`, 40),
		strings.Repeat(`[`, 100),
		`{"shell_allowlist": ["$()"], "external_writes": "policy", "trusted_projects": [{"path": "/p", "sha256": "` + strings.Repeat("a", 64) + `"}]}`,
	} {
		f.Add([]byte(s))
	}

	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	require.NoError(f, c.AddResource("fuzz://profile.schema.json", bytes.NewReader(Schema())))
	schema, err := c.Compile("fuzz://profile.schema.json")
	require.NoError(f, err)
	userData, err := os.ReadFile(filepath.Join("testdata", "profiles", "user-dev.json"))
	require.NoError(f, err)
	user, err := parseFile(context.Background(), OriginUser, "user.json", userData)
	require.NoError(f, err)
	userOnly, err := build(context.Background(), spec{def: profile.ProfileSafe, ls: layers{user: user}, protect: []string{"/home/u/.config/reins"}})
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := parseFile(context.Background(), OriginUser, "fuzz.json", data)
		if err != nil {
			errs := Errors(err)
			require.NotEmpty(t, errs, "every failure is a Error: %v", err)
			for _, e := range errs {
				require.Equal(t, "fuzz.json", e.File)
				require.NotEmpty(t, e.Reason)
			}
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&v), "what loads is JSON")
		require.NoError(t, schema.Validate(v), "what loads passes the schema")

		if b, err := build(context.Background(), spec{def: profile.ProfileSafe, ls: layers{user: pf}}); err == nil {
			_, err := b.p.Compile()
			require.NoError(t, err, "the effective profile compiles")
		} else {
			require.NotEmpty(t, Errors(err), "%v", err)
		}

		proj, err := parseFile(context.Background(), OriginProject, "project.json", data)
		if err != nil {
			require.Contains(t, err.Error(), "only the user file may list trusted projects")
			return
		}
		b, err := build(context.Background(), spec{def: profile.ProfileSafe, ls: layers{user: user, project: proj}, protect: []string{"/home/u/.config/reins"}})
		if err != nil {
			require.NotEmpty(t, Errors(err), "%v", err)
			return
		}
		_, err = b.p.Compile()
		require.NoError(t, err, "the effective profile compiles")
		ok, why := profile.AtLeastAsRestrictive(b.p, userOnly.p)
		require.True(t, ok, "an untrusted project file loosened the profile: %s", why)
	})
}

// FuzzLoadProfileYAML feeds arbitrary bytes to the YAML loader: it never panics, every failure
// is a Error naming the file, and anything that loads passes the schema (as the JSON it
// converts to) and compiles.
func FuzzLoadProfileYAML(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "profiles", "*.yaml"))
	require.NoError(f, err)
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{
		"", "{}", "[]", "autonomy: .nan", "a: &x [1]\nb: *x\n", "<<: {a: 1}", "1: x", "--- {}\n--- {}",
		"approval:\n  mode: yolo\n  denied_paths: [~/.ssh]\n", "custom_rules:\n- id: r\n  action: deny\n  condition: {command_pattern: '('}\n",
		"autonomy: !!binary aGk=", "x: &a [*a]", "resource_limits: {max_concurrent_ops: 0x10}", "autonomy: 1e-400",
		// Alias expansion over the budget: one alias used many times (issue 23's 34 KB file,
		// scaled down), and the nested billion laughs.
		"$comment: &a \"" + strings.Repeat("x", 2000) + "\"\nshell_blocklist: [*a" + strings.Repeat(",*a", 600) + "]\n",
		"a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
			"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n" +
			"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
		"shell_allowlist: &l [go test, make]\nshell_blocklist: *l\napproval: {auto_approve_patterns: *l}\n",
	} {
		f.Add([]byte(s))
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	require.NoError(f, c.AddResource("fuzz://profile.schema.json", bytes.NewReader(Schema())))
	schema, err := c.Compile("fuzz://profile.schema.json")
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := parseFile(context.Background(), OriginUser, "fuzz.yaml", data)
		if err != nil {
			errs := Errors(err)
			require.NotEmpty(t, errs, "every failure is a Error: %v", err)
			for _, e := range errs {
				require.Equal(t, "fuzz.yaml", e.File)
			}
			return
		}
		require.NoError(t, schema.Validate(pf.doc.value), "what loads passes the schema")
		if b, err := build(context.Background(), spec{def: profile.ProfileSafe, ls: layers{user: pf}}); err == nil {
			_, err := b.p.Compile()
			require.NoError(t, err, "the effective profile compiles")
		} else {
			require.NotEmpty(t, Errors(err), "%v", err)
		}
	})
}
