package reins_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

var fileSpec = reins.ToolSpec{Tool: "copy_file", Operation: policy.OpWrite, Reads: []string{"from"}, Writes: []string{"to"}}

func TestToolSpecActionReadsTheFieldsItNames(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    reins.ToolSpec
		input   string
		targets []string
		command string
		workdir string
		host    string
	}{
		{"read and write fields", fileSpec, `{"from":"a.txt","to":"b.txt","content":42}`, []string{"a.txt", "b.txt"}, "", "", ""},
		{"an array of paths", reins.ToolSpec{Tool: "rm", Operation: policy.OpDelete, Writes: []string{"paths"}}, `{"paths":["a","b/c"]}`, []string{"a", "b/c"}, "", "", ""},
		{"an absent field names nothing", fileSpec, `{"to":"b.txt"}`, []string{"b.txt"}, "", "", ""},
		{"null names nothing", fileSpec, `{"from":null,"to":"b.txt"}`, []string{"b.txt"}, "", "", ""},
		{"an empty path is the workspace root", fileSpec, `{"from":"","to":"b"}`, []string{".", "b"}, "", "", ""},
		{"no arguments", fileSpec, ``, nil, "", "", ""},
		{"null arguments", fileSpec, `null`, nil, "", "", ""},
		{"a command and its directory", reins.ToolSpec{Tool: "bash", Operation: policy.OpShell, Command: "cmd", WorkDir: "cwd"}, `{"cmd":"ls -la","cwd":"src"}`, nil, "ls -la", "src", ""},
		{"a URL's host", reins.ToolSpec{Tool: "fetch", Operation: policy.OpNetwork, Host: "url"}, `{"url":"https://API.example.com:8443/x?y=1"}`, nil, "", "", "api.example.com"},
		{"a host with a port", reins.ToolSpec{Tool: "fetch", Operation: policy.OpNetwork, Host: "url"}, `{"url":"example.org:80"}`, nil, "", "", "example.org"},
		{"a host with a path", reins.ToolSpec{Tool: "fetch", Operation: policy.OpNetwork, Host: "url"}, `{"url":"example.org/page"}`, nil, "", "", "example.org"},
		{"the whole input as a JSON string", reins.ToolSpec{Tool: "cat", Operation: policy.OpRead, Reads: []string{reins.WholeInput}}, `"README.md"`, []string{"README.md"}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.spec.Action([]byte(tc.input))
			require.NoError(t, err)
			assert.Equal(t, tc.spec.Tool, a.Tool)
			assert.Equal(t, tc.targets, a.Targets)
			assert.Equal(t, tc.command, a.Command)
			assert.Equal(t, tc.workdir, a.WorkDir)
			assert.Equal(t, tc.host, a.Host)
			assert.Equal(t, tc.input, a.Input, "the input goes to the audit record as it came")
		})
	}
}

// TestToolSpecActionIsStrict: whatever the spec cannot read as it says denies the call, with
// an error naming the field.
func TestToolSpecActionIsStrict(t *testing.T) {
	shell := reins.ToolSpec{Tool: "bash", Operation: policy.OpShell, Command: "cmd"}
	fetch := reins.ToolSpec{Tool: "fetch", Operation: policy.OpNetwork, Host: "url"}
	for _, tc := range []struct {
		name  string
		spec  reins.ToolSpec
		input string
		want  string
	}{
		{"a number for a path", fileSpec, `{"to":42}`, `field "to" of copy_file's input is not a path or an array of paths`},
		{"an object for a path", fileSpec, `{"to":{"path":".env"}}`, `field "to"`},
		{"a boolean for a path", fileSpec, `{"from":true}`, `field "from"`},
		{"a number in an array of paths", fileSpec, `{"to":["a",1]}`, `field "to"`},
		{"null in an array of paths", fileSpec, `{"to":["a",null]}`, `holds null`},
		{"nested arrays", fileSpec, `{"to":[["a"]]}`, `field "to"`},
		{"a field given twice", fileSpec, `{"to":"ok.txt","to":".env"}`, `field "to" of copy_file's input is given twice`},
		{"a field in another case", fileSpec, `{"to":"ok.txt","TO":".env"}`, `is also given as "TO"`},
		{"a field in another case alone", fileSpec, `{"To":".env"}`, `is also given as "To"`},
		{"a field under Unicode case folding", reins.ToolSpec{Tool: "w", Operation: policy.OpWrite, Writes: []string{"keys"}}, `{"\u212aeys":".env"}`, "is also given as \"\u212aeys\""},
		{"an array input", fileSpec, `["a"]`, `is not a JSON object`},
		{"a string input", fileSpec, `"a"`, `is not a JSON object`},
		{"broken JSON", fileSpec, `{"to":`, `not valid JSON`},
		{"data after the object", fileSpec, `{"to":"a"} {"to":".env"}`, `has data after its JSON object`},
		{"a number for a command", shell, `{"cmd":1}`, `field "cmd" of bash's input is not a string`},
		{"an empty command", shell, `{"cmd":"  "}`, `is an empty command line`},
		{"a NUL in a command", shell, `{"cmd":"ls\u0000rm"}`, `NUL`},
		{"a URL without a host", fetch, `{"url":"file:///etc/passwd"}`, `not a host name`},
		{"a number for a host", fetch, `{"url":8080}`, `is not a string`},
		{"an oversized path", fileSpec, `{"to":"` + strings.Repeat("a", reins.MaxToolPath+1) + `"}`, `longer than`},
		{"too many paths", fileSpec, `{"to":[` + strings.Repeat(`"a",`, reins.MaxToolTargets) + `"a"]}`, `more than 1024 paths`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.spec.Action([]byte(tc.input))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, ok := errors.AsType[*reins.InputError](err)
			assert.True(t, ok, "%T", err)
		})
	}
	big := []byte(`{"to":"a","content":"` + strings.Repeat("x", reins.MaxToolInput) + `"}`)
	_, err := fileSpec.Action(big)
	assert.ErrorContains(t, err, "larger than")
}

func TestToolSpecActionText(t *testing.T) {
	cat := reins.ToolSpec{Tool: "cat", Operation: policy.OpRead, Reads: []string{reins.WholeInput}}
	a, err := cat.ActionText(`"quoted name".txt`)
	require.NoError(t, err)
	assert.Equal(t, []string{`"quoted name".txt`}, a.Targets, "plain text is the path as it is")
	shell := reins.ToolSpec{Tool: "sh", Operation: policy.OpShell, Command: reins.WholeInput}
	a, err = shell.ActionText("ls -la | wc -l")
	require.NoError(t, err)
	assert.Equal(t, "ls -la | wc -l", a.Command)
	_, err = shell.ActionText("")
	assert.ErrorContains(t, err, "empty command line")
	// Named fields read the text as a JSON object, as the function-calling agents send it.
	a, err = fileSpec.ActionText(`{"from":"a","to":"b"}`)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, a.Targets)
	_, err = fileSpec.ActionText(`a b`)
	assert.ErrorContains(t, err, "not a JSON object")
}

func TestToolSpecValidate(t *testing.T) {
	for name, spec := range map[string]reins.ToolSpec{
		"a field named twice":     {Tool: "x", Operation: policy.OpWrite, Reads: []string{"p"}, Writes: []string{"p"}},
		"an empty field name":     {Tool: "x", Operation: policy.OpRead, Reads: []string{""}},
		"whole input beside more": {Tool: "x", Operation: policy.OpRead, Reads: []string{reins.WholeInput, "p"}},
		"a command on a read":     {Tool: "x", Operation: policy.OpRead, Command: "c"},
		"a workdir alone":         {Tool: "x", Operation: policy.OpShell, WorkDir: "d"},
	} {
		assert.Error(t, spec.Validate(), name)
	}
	assert.NoError(t, fileSpec.Validate())
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// TestToolSpecAnnotationsOnlyRaiseRisk: MCP annotations add to what the spec declares; they
// describe an undeclared tool only when the host trusts the server; an untrusted server's
// readOnlyHint never makes a tool look safer than unknown.
func TestToolSpecAnnotationsOnlyRaiseRisk(t *testing.T) {
	ro, mut, ex, de, nw := risk.ReadOnly, risk.Mutating, risk.Exec, risk.Destructive, risk.Network
	for _, tc := range []struct {
		name    string
		spec    reins.ToolSpec
		want    risk.Set
		wantNot []risk.Level
	}{
		{"declared, no annotations", reins.ToolSpec{Operation: policy.OpRead}, 0, nil},
		{"undeclared, no annotations: unknown", reins.ToolSpec{}, 0, nil},
		{"writes declare mutating", reins.ToolSpec{Operation: policy.OpTool, Writes: []string{"p"}}, risk.Of(mut), nil},
		{"destructiveHint raises a declared read", reins.ToolSpec{Operation: policy.OpRead, Annotations: &reins.ToolAnnotations{DestructiveHint: yes()}}, risk.Of(de), nil},
		{"openWorldHint raises", reins.ToolSpec{Operation: policy.OpRead, Annotations: &reins.ToolAnnotations{OpenWorldHint: yes()}}, risk.Of(nw), nil},
		{"readOnlyHint false raises", reins.ToolSpec{Operation: policy.OpRead, Annotations: &reins.ToolAnnotations{ReadOnlyHint: no()}}, risk.Of(mut), nil},
		{"trusted readOnlyHint does not lower a declared exec", reins.ToolSpec{Risk: risk.Of(ex), TrustAnnotations: true, Annotations: &reins.ToolAnnotations{ReadOnlyHint: yes(), OpenWorldHint: no()}}, risk.Of(ex), []risk.Level{ro}},
		{"untrusted readOnlyHint leaves an undeclared tool destructive", reins.ToolSpec{Annotations: &reins.ToolAnnotations{ReadOnlyHint: yes(), OpenWorldHint: no(), DestructiveHint: no()}}, risk.Of(de), []risk.Level{ro}},
		{"untrusted openWorldHint adds to unknown, keeping destructive", reins.ToolSpec{Annotations: &reins.ToolAnnotations{OpenWorldHint: yes()}}, risk.Of(de, nw), nil},
		{"trusted read-only closed world", reins.ToolSpec{TrustAnnotations: true, Annotations: &reins.ToolAnnotations{ReadOnlyHint: yes(), OpenWorldHint: no()}}, risk.Of(ro), nil},
		{"trusted read-only, open world by default", reins.ToolSpec{TrustAnnotations: true, Annotations: &reins.ToolAnnotations{ReadOnlyHint: yes()}}, risk.Of(ro, nw), nil},
		{"trusted, nothing said: the specification's defaults", reins.ToolSpec{TrustAnnotations: true, Annotations: &reins.ToolAnnotations{}}, risk.Of(mut, de, nw), nil},
		{"trusted additive closed world", reins.ToolSpec{TrustAnnotations: true, Annotations: &reins.ToolAnnotations{DestructiveHint: no(), OpenWorldHint: no()}}, risk.Of(mut), nil},
		{"idempotentHint says nothing", reins.ToolSpec{Operation: policy.OpWrite, Annotations: &reins.ToolAnnotations{IdempotentHint: yes()}}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.spec.Action(nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, a.Risk, "declared %s, want %s", a.Risk, tc.want)
			for _, l := range tc.wantNot {
				assert.False(t, a.Risk.Has(l))
			}
		})
	}
}

// FuzzToolSpecAction: no input panics, an accepted input yields only what its fields hold
// (bounded), and a field the spec names never reaches the tool unread: when the input decodes
// into the tool's struct with a path the spec did not report, the spec must have refused it.
func FuzzToolSpecAction(f *testing.F) {
	for _, s := range []string{`{"path":"a"}`, `{"path":["a","b"]}`, `{"PATH":".env"}`, `{"path":"a","path":"b"}`,
		`{"pat\u0127":"x"}`, `null`, ``, `[]`, `{"path":1}`, `{"path":"a"} x`, `{"Path":"a","path":"b"}`, `{"paTh":null}`} {
		f.Add([]byte(s))
	}
	spec := reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{"path"}}
	f.Fuzz(func(t *testing.T, input []byte) {
		a, err := spec.Action(input)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(a.Targets), reins.MaxToolTargets)
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(input, &in) != nil || in.Path == "" {
			return
		}
		assert.Contains(t, a.Targets, in.Path, "the tool would write %q, which the spec did not report (%v)", in.Path, a.Targets)
	})
}
