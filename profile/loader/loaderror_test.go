package loader_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
)

// TestLoadErrors: every kind of problem is a load error naming the file, the JSON pointer (and
// line) and what is wrong.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		file    string // the user file's name
		content string
		want    []string // "LINE[:COL] POINTER: REASON" after the file name
	}{
		{"unknown key", "profile.json", `{"autonomy": 0.5, "autonomyy": 1}`,
			[]string{`:1: /autonomyy: unknown key "autonomyy" (did you mean "autonomy"?)`}},
		{"unknown nested key", "profile.json", "{\n\"resource_limits\": {\"max_concurent_ops\": 2}}",
			[]string{`:2: /resource_limits/max_concurent_ops: unknown key "max_concurent_ops" (did you mean "max_concurrent_ops"?)`}},
		{"unknown key in a rule condition", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"command": "rm"}}]}`,
			[]string{`:1: /custom_rules/0/condition/command: unknown key "command" (did you mean "commands"?)`}},
		{"case matters in keys", "profile.json", `{"Autonomy": 0.5}`,
			[]string{`:1: /Autonomy: unknown key "Autonomy" (did you mean "autonomy"?)`}},
		{"wrong type", "profile.json", `{"shell_allowlist": "go test"}`,
			[]string{`:1: /shell_allowlist: wrong type: want array, got string`}},
		{"wrong type in a list", "profile.json", `{"denied_paths": [".env", 3]}`,
			[]string{`:1: /denied_paths/1: wrong type: want string, got number`}},
		{"wrong type at the top", "profile.json", `[]`,
			[]string{`:1: wrong type: want object, got array`}},
		{"wrong type: integer", "profile.json", `{"resource_limits": {"timeout_seconds": 1.5}}`,
			[]string{`:1: /resource_limits/timeout_seconds: wrong type: want integer, got number`}},
		{"out of range: autonomy", "profile.json", `{"autonomy": 1.5}`,
			[]string{`:1: /autonomy: out of range: 1.5 is not <= 1`}},
		{"out of range: negative", "profile.json", `{"autonomy": -0.1}`,
			[]string{`:1: /autonomy: out of range: -0.1 is not >= 0`}},
		{"out of range: limits", "profile.json", `{"resource_limits": {"max_concurrent_ops": 0, "timeout_seconds": 10000000}}`,
			[]string{`:1: /resource_limits/max_concurrent_ops: out of range: 0 is not >= 1`, `:1: /resource_limits/timeout_seconds: out of range: 10000000 is not <= 604800`}},
		{"out of range: empty entry", "profile.json", `{"shell_blocklist": [""]}`,
			[]string{`:1: /shell_blocklist/0: out of range: length must be >= 1, but got 0`}},
		{"unknown active profile", "profile.json", `{"active_profile": "PROFILE-DEVV"}`,
			[]string{`:1: /active_profile: unknown profile "PROFILE-DEVV": want one of "PROFILE-SAFE", "PROFILE-DEV", "PROFILE-FULL-AUTO", "read-only", "plan", "supervised", "trusted", "autonomous", "emergency-stop", "ask", "safe", "auto", "yolo"`}},
		{"unknown approval mode", "profile.yaml", "approval:\n  mode: careful\n",
			[]string{`:2: /approval/mode: unknown profile "careful": want one of "ask", "safe", "auto", "yolo"`}},
		{"invalid enum value", "profile.json", `{"permission_mode": "bypass"}`,
			[]string{`:1: /permission_mode: invalid value "bypass": want one of "default", "read-only", "plan", "emergency-stop", "supervised", "trusted", "autonomous"`}},
		{"invalid verdict", "profile.json", `{"custom_rules": [{"id": "r", "action": "MAYBE"}]}`,
			[]string{`:1: /custom_rules/0/action: invalid value "MAYBE": want one of "ALLOW", "DENY", "CONFIRM", "ASK", "allow", "deny", "confirm", "ask", "Allow", "Deny", "Confirm", "Ask"`}},
		{"unknown risk level", "profile.json", "{\"custom_rules\": [{\"id\": \"r\", \"action\": \"DENY\",\n \"condition\": {\"risk_level\": [\"high\", \"critical\"]}}]}",
			[]string{`:2: /custom_rules/0/condition/risk_level/1: invalid value "critical": want one of "read_only", "mutating", "exec", "destructive", "network", "low", "medium", "high", "READ_ONLY", "MUTATING", "EXEC", "DESTRUCTIVE", "NETWORK", "LOW", "MEDIUM", "HIGH"`}},
		{"risk level of the wrong type", "profile.yaml", "custom_rules:\n  - id: r\n    action: DENY\n    condition:\n      risk_level: high\n",
			[]string{`:5: /custom_rules/0/condition/risk_level: wrong type: want array, got string`}},
		{"missing rule keys", "profile.json", `{"custom_rules": [{"priority": 1}]}`,
			[]string{`:1: /custom_rules/0: missing required key: id, action`}},
		{"bad rule id", "profile.json", `{"custom_rules": [{"id": "has space", "action": "DENY"}]}`,
			[]string{`:1: /custom_rules/0/id: invalid rule id "has space": 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit`}},
		{"bad group name", "profile.json", `{"host_groups": {"a b": []}}`,
			[]string{`:1: /host_groups/a b: invalid name "a b": a name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit`}},
		{"bad digest", "profile.json", `{"trusted_projects": [{"path": "/p", "sha256": "ABC"}]}`,
			[]string{`:1: /trusted_projects/0/sha256: invalid value "ABC": want the SHA-256 of the project file as 64 lower-case hex digits`}},
		{"bad glob: target pattern", "profile.json", "{\"custom_rules\": [\n {\"id\": \"r\", \"action\": \"DENY\",\n  \"condition\": {\"target_pattern\": \"src/[a\"}}]}",
			[]string{`:3: /custom_rules/0/condition/target_pattern: bad glob: invalid glob "src/[a": unbalanced brackets or braces, or a trailing backslash`}},
		{"bad glob: trailing slash", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"target_pattern": "build/"}}]}`,
			[]string{`:1: /custom_rules/0/condition/target_pattern: bad glob: glob "build/": alternative "build/" ends with /, which never matches a clean path; use "build/**" to match a directory and everything under it`}},
		{"bad glob: tools", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"tools": ["ok_*", "mcp__{a,b"]}}]}`,
			[]string{`:1: /custom_rules/0/condition/tools/1: bad glob: invalid glob "mcp__{a,b": unbalanced brackets or braces, or a trailing backslash`}},
		{"bad glob: host group", "profile.json", `{"host_groups": {"pkg": ["[z-a].example"]}}`,
			[]string{`:1: /host_groups/pkg/0: bad glob: glob "[z-a].example": alternative "[z-a].example": reversed range 'z'-'a' in a character class`}},
		{"bad glob: allowed tools", "profile.yaml", "approval:\n  allowed_tools:\n    - read_file\n    - 'x\\'\n",
			[]string{`:4: /approval/allowed_tools/1: bad glob: invalid glob "x\\": unbalanced brackets or braces, or a trailing backslash`}},
		{"bad regex", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"command_pattern": "rm (-rf"}}]}`,
			[]string{":1: /custom_rules/0/condition/command_pattern: bad regular expression (RE2 syntax): error parsing regexp: missing closing ): `rm (-rf`"}},
		{"regex RE2 does not support", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"command_pattern": "(?<=sudo )rm"}}]}`,
			[]string{":1: /custom_rules/0/condition/command_pattern: bad regular expression (RE2 syntax): error parsing regexp: invalid named capture: `(?<=sudo )rm`"}},
		{"command entry names no command", "profile.json", `{"shell_allowlist": ["go test", ">"]}`,
			[]string{`:1: /shell_allowlist/1: command entry ">" names no command`}},
		{"reference outside a rule", "profile.json", `{"network_allowlist": ["@ai-apis"]}`,
			[]string{`:1: /network_allowlist/0: "@ai-apis": @references are allowed in rule conditions only`}},
		{"unknown reference", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"hosts": ["@nowhere"]}}]}`,
			[]string{`:1: /custom_rules/0/condition/hosts/0: unknown list "@nowhere": a rule may refer to @shell_allowlist, @shell_blocklist, @network_allowlist, @allowed_tools, @auto_approve_patterns, @ai-apis, @configured-hosts, @package-managers, or to a host group this file or a lower layer defines`}},
		{"reference to commands from a glob field", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"hosts": ["@shell_blocklist"]}}]}`,
			[]string{`:1: /custom_rules/0/condition/hosts/0: "@shell_blocklist" is a list of commands; hosts may refer to @network_allowlist, @allowed_tools and host groups`}},
		{"reference to globs from commands", "profile.json", `{"custom_rules": [{"id": "r", "action": "DENY", "condition": {"commands": ["@allowed_tools", "@"]}}]}`,
			[]string{`:1: /custom_rules/0/condition/commands/0: "@allowed_tools": commands may refer to @shell_allowlist, @shell_blocklist or @auto_approve_patterns only`,
				`:1: /custom_rules/0/condition/commands/1: "@" names no list`}},
		{"glob valid only before lower-casing", "profile.json", `{"allowed_tools": ["mcp_[Z-a]"]}`,
			[]string{`:1: /allowed_tools/0: bad glob: glob "mcp_[z-a]": alternative "mcp_[z-a]": reversed range 'z'-'a' in a character class`}},
		{"group named like a list", "profile.json", `{"host_groups": {"shell_allowlist": []}}`,
			[]string{`:1: /host_groups/shell_allowlist: "shell_allowlist" is the name of a profile list, not a host group`}},
		{"denied path pattern", "profile.json", `{"denied_paths": ["[ab].pem", "../up", "~root/x", " "]}`,
			[]string{`:1: /denied_paths/0: "[ab].pem": protected paths are literal paths (a name may hold * and ?), not patterns`,
				`:1: /denied_paths/1: "../up": ".." is not allowed in a relative entry`,
				`:1: /denied_paths/2: "~root/x": only ~/ is expanded (not ~user)`,
				`:1: /denied_paths/3: " ": names no path`}},
		{"relative trusted path", "profile.json", `{"trusted_paths": ["projects/x"]}`,
			[]string{`:1: /trusted_paths/0: "projects/x": a trusted path is absolute or starts with ~/`}},
		{"registry host pattern", "profile.json", `{"registries": {"npm": ["*.npmjs.org"]}}`,
			[]string{`:1: /registries/npm/0: "*.npmjs.org" is not a host name (registry hosts are literal names, optionally with :port)`}},
		{"active profile twice", "profile.json", `{"active_profile": "PROFILE-DEV", "approval": {"mode": "auto"}}`,
			[]string{`:1: /approval/mode: conflicts with active_profile "PROFILE-DEV": set the profile once`}},
		{"dial outside the mode's band", "profile.json", `{"permission_mode": "trusted", "autonomy": 0.9}`,
			[]string{`:1: /autonomy: 0.9 lies in the autonomous band, but permission_mode "trusted" puts the dial in the trusted band`}},
		{"duplicate rule id", "profile.json", "{\"custom_rules\": [\n{\"id\": \"r\", \"action\": \"DENY\"},\n{\"id\": \"r\", \"action\": \"ALLOW\"}]}",
			[]string{`:3: /custom_rules/1/id: duplicate rule id "r" (also /custom_rules/0)`}},
		{"NUL character", "profile.json", `{"shell_blocklist": ["rm\u0000x"]}`,
			[]string{`:1: /shell_blocklist/0: contains a NUL character`}},
		{"malformed JSON", "profile.json", "{\n  \"autonomy\": 0.5,\n  \"shell_allowlist\": [\"go test\" \"make\"]\n}",
			[]string{`:3:33: malformed JSON: invalid character '"' after array element`}},
		{"malformed JSON: trailing comma", "profile.json", "{\"autonomy\": 0.5,}",
			[]string{`:1:18: malformed JSON: invalid character '}' looking for beginning of object key string`}},
		{"malformed JSON: truncated", "profile.json", "{\"autonomy\": ",
			[]string{`:1:14: malformed JSON: unexpected end of input`}},
		{"malformed JSON: empty", "profile.json", "",
			[]string{`:1:1: malformed JSON: the file is empty`}},
		{"malformed JSON: two values", "profile.json", "{}\n{}",
			[]string{`:2:1: malformed JSON: data after the top-level value`}},
		{"duplicate key", "profile.json", "{\n  \"autonomy\": 0.1,\n  \"autonomy\": 1}",
			[]string{`:3:3: /autonomy: duplicate key "autonomy"`}},
		{"invalid UTF-8", "profile.json", "{\"$comment\": \"\xff\"}",
			[]string{`:1:15: the file is not valid UTF-8`}},
		{"malformed YAML", "profile.yaml", "approval:\n  mode: safe\n   denied_paths: [x]\n",
			[]string{`:3: malformed YAML: mapping values are not allowed in this context`}},
		{"YAML duplicate key", "profile.yaml", "autonomy: 0.1\nautonomy: 1\n",
			[]string{`:2:1: /autonomy: duplicate key "autonomy"`}},
		{"YAML non-string key", "profile.yaml", "host_groups:\n  1: [a]\n",
			[]string{`:2:3: /host_groups: a mapping key is not a string (JSON keys are strings; quote it)`}},
		{"YAML merge key", "profile.yaml", "base: &b {autonomy: 0.1}\n<<: *b\n",
			[]string{`:2:1: merge keys (<<) are not supported`}},
		{"YAML infinity", "profile.yaml", "autonomy: .inf\n",
			[]string{`:1:11: /autonomy: .inf is not a JSON number`}},
		{"YAML two documents", "profile.yaml", "autonomy: 0.1\n---\nautonomy: 1\n",
			[]string{`:2: malformed YAML: more than one document`}},
		{"YAML empty", "profile.yaml", "# nothing\n",
			[]string{`: malformed YAML: the file is empty`}},
		{"YAML wrong type", "profile.yml", "shell_allowlist: go test\n",
			[]string{`:1: /shell_allowlist: wrong type: want array, got string`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			l, err := loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: tc.file})
			require.Error(t, err)
			assert.Nil(t, l, "nothing is returned on error")
			errs := loader.Errors(err)
			var got []string
			for _, e := range errs {
				assert.Equal(t, path, e.File)
				got = append(got, strings.TrimPrefix(e.Error(), "profile: "+path))
			}
			assert.Equal(t, tc.want, got)
			var le *loader.Error
			assert.True(t, errors.As(err, &le), "errors.As finds a *Error")
		})
	}
}

func TestLoadErrorsFromBothFilesAreJoined(t *testing.T) {
	t.Parallel()
	f := newFiles(t)
	f.writeUser(`{"autonomy": 2}`)
	f.writeProject(`{"foo": 1, "custom_rules": [{"id": "x", "action": "DENY", "condition": {"command_pattern": "("}}]}`)
	_, err := f.load()
	errs := loader.Errors(err)
	require.Len(t, errs, 2, "the schema errors of both files; the project's regex is checked once its schema passes")
	assert.Equal(t, loader.Error{File: f.userFile, Pointer: "/autonomy", Line: 1, Reason: "out of range: 2 is not <= 1"}, *errs[0])
	assert.Equal(t, loader.Error{File: f.projFile, Pointer: "/foo", Line: 1, Reason: `unknown key "foo"`}, *errs[1])
	assert.Equal(t, "profile: "+f.userFile+":1: /autonomy: out of range: 2 is not <= 1\nprofile: "+f.projFile+`:1: /foo: unknown key "foo"`, err.Error())

	// Only the user file may list trusted projects: a project file cannot trust itself.
	f.writeUser(`{}`)
	f.writeProject(`{"autonomy": 1, "trusted_projects": [{"path": "` + f.project + `", "sha256": "` + strings.Repeat("0", 64) + `"}]}`)
	_, err = f.load()
	assert.EqualError(t, err, "profile: "+f.projFile+":1: /trusted_projects/0: only the user file may list trusted projects")

	// A project rule may use a host group of the user file; a user rule may not use the
	// project's.
	f.writeUser(`{"host_groups": {"corp": ["*.corp.example"]}}`)
	f.writeProject(`{"custom_rules": [{"id": "deny-corp", "action": "DENY", "condition": {"hosts": ["@corp"]}}]}`)
	_, err = f.load()
	require.NoError(t, err)
	f.writeUser(`{"custom_rules": [{"id": "deny-corp", "action": "DENY", "condition": {"hosts": ["@proj"]}}]}`)
	f.writeProject(`{"host_groups": {"proj": []}}`)
	_, err = f.load()
	assert.ErrorContains(t, err, f.userFile+`:1: /custom_rules/0/condition/hosts/0: unknown list "@proj"`)
}

func TestLoadErrorFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    loader.Error
		want string
	}{
		{loader.Error{File: "p.json", Reason: "r"}, "profile: p.json: r"},
		{loader.Error{File: "p.json", Line: 3, Reason: "r"}, "profile: p.json:3: r"},
		{loader.Error{File: "p.json", Line: 3, Column: 7, Pointer: "/a/0", Reason: "r"}, "profile: p.json:3:7: /a/0: r"},
		{loader.Error{File: "p.json", Column: 7, Pointer: "/a", Reason: "r"}, "profile: p.json: /a: r"},
	} {
		assert.Equal(t, tc.want, tc.e.Error())
	}
	assert.Nil(t, loader.Errors(nil))
	assert.Nil(t, loader.Errors(errors.New("other")))
	inner := &loader.Error{File: "x", Reason: "y"}
	assert.Equal(t, []*loader.Error{inner}, loader.Errors(errors.Join(errors.New("a"), wrap{inner})))
}

type wrap struct{ err error }

func (w wrap) Error() string { return "wrapped: " + w.err.Error() }
func (w wrap) Unwrap() error { return w.err }

// TestSchemaIsPublished: the embedded schema is the published file, it is valid JSON, and its
// enum of profiles is the list of built-in profiles.
func TestSchemaIsPublished(t *testing.T) {
	t.Parallel()
	onDisk, err := os.ReadFile("profile.schema.json")
	require.NoError(t, err)
	assert.Equal(t, onDisk, loader.Schema())
	var s struct {
		Schema     string `json:"$schema"`
		ID         string `json:"$id"`
		Properties struct {
			ActiveProfile struct {
				Enum []string `json:"enum"`
			} `json:"active_profile"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(onDisk, &s))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", s.Schema)
	assert.Equal(t, loader.SchemaID, s.ID)
	assert.Equal(t, profile.Names(), s.Properties.ActiveProfile.Enum)
	b := loader.Schema()
	b[0] = 'x'
	assert.Equal(t, onDisk, loader.Schema(), "Schema returns a copy")
}
