package loader

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// FuzzLoadProfile feeds arbitrary bytes to the JSON loader, as a user file and as a project
// file on top of a real user file. It never panics; every failure is a Error naming the
// file; anything that loads is valid JSON that passes the published schema (checked here with
// a separately compiled schema and encoding/json), its effective profile compiles, and an
// untrusted project file never makes the profile less restrictive by the documented order. The
// order is compared only where it is as precise as the loader: the project keeps the active
// profile, adds no hosts to groups (the loader may widen a group only DENY rules use) and
// replaces no ALLOW rule (the loader accepts an ALLOW rule restated with a new reason or more
// obligations, which the order counts as a change).
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
	user, err := parseFile(OriginUser, "user.json", userData)
	require.NoError(f, err)
	userOnly, err := build(profile.ProfileSafe, "", user, nil, false, []string{"/home/u/.config/reins"})
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := parseFile(OriginUser, "fuzz.json", data)
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

		if b, err := build(profile.ProfileSafe, "", pf, nil, false, nil); err == nil {
			_, err := b.p.Compile()
			require.NoError(t, err, "the effective profile compiles")
		} else {
			require.NotEmpty(t, Errors(err), "%v", err)
		}

		proj, err := parseFile(OriginProject, "project.json", data)
		if err != nil {
			require.Contains(t, err.Error(), "only the user file may list trusted projects")
			return
		}
		b, err := build(profile.ProfileSafe, "", user, proj, false, []string{"/home/u/.config/reins"})
		if err != nil {
			require.NotEmpty(t, Errors(err), "%v", err)
			return
		}
		_, err = b.p.Compile()
		require.NoError(t, err, "the effective profile compiles")
		if proj.cfg.ActiveProfile == nil && (proj.cfg.Approval == nil || proj.cfg.Approval.Mode == nil) && len(proj.cfg.HostGroups) == 0 &&
			!replacesAllowRule(userOnly.p, proj) {
			// AtLeastAsRestrictive takes any change to a DENY or CONFIRM rule for a loosening.
			// The loader accepts one kind: a DENY rule that provably matches every action the
			// rule it replaces matched (covers, checked against evaluation by FuzzCovers) and is
			// evaluated no later. Such a replacement must be that, and the rest of the profile
			// is compared with the rule it replaced.
			eff := b.p
			eff.Rules = slices.Clone(b.p.Rules)
			for i, r := range eff.Rules {
				j := slices.IndexFunc(userOnly.p.Rules, func(o policy.Rule) bool { return o.ID == r.ID })
				if j < 0 || reflect.DeepEqual(r, userOnly.p.Rules[j]) || r.Action != policy.Deny {
					continue
				}
				old := userOnly.p.Rules[j]
				require.True(t, r.Priority <= old.Priority && covers(r, old),
					"an untrusted project file replaced the %s rule %q by a DENY rule that may match less or later", old.Action, r.ID)
				eff.Rules[i] = old
			}
			ok, why := profile.AtLeastAsRestrictive(eff, userOnly.p)
			require.True(t, ok, "an untrusted project file loosened the profile: %s", why)
		}
	})
}

func replacesAllowRule(p profile.Profile, f *parsedFile) bool {
	for _, r := range f.cfg.CustomRules {
		for _, old := range p.Rules {
			if old.ID == r.ID && old.Action == policy.Allow {
				return true
			}
		}
	}
	return false
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
	} {
		f.Add([]byte(s))
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	require.NoError(f, c.AddResource("fuzz://profile.schema.json", bytes.NewReader(Schema())))
	schema, err := c.Compile("fuzz://profile.schema.json")
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := parseFile(OriginUser, "fuzz.yaml", data)
		if err != nil {
			errs := Errors(err)
			require.NotEmpty(t, errs, "every failure is a Error: %v", err)
			for _, e := range errs {
				require.Equal(t, "fuzz.yaml", e.File)
			}
			return
		}
		require.NoError(t, schema.Validate(pf.doc.value), "what loads passes the schema")
		if b, err := build(profile.ProfileSafe, "", pf, nil, false, nil); err == nil {
			_, err := b.p.Compile()
			require.NoError(t, err, "the effective profile compiles")
		} else {
			require.NotEmpty(t, Errors(err), "%v", err)
		}
	})
}
