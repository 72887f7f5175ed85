package loader

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed profile.schema.json
var schemaJSON []byte

// SchemaID is the $id of the profile file schema; a profile file may name it in "$schema" so
// editors validate and complete it.
const SchemaID = "https://github.com/reins-go/reins/raw/main/profile/loader/profile.schema.json"

// Schema returns the JSON Schema (draft 2020-12) that profile files are validated against: the
// content of profile.schema.json in this package, which is also published in the repository
// for editors. The caller may modify the returned slice.
func Schema() []byte { return bytes.Clone(schemaJSON) }

var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(SchemaID, bytes.NewReader(schemaJSON)); err != nil {
		return nil, err
	}
	return c.Compile(SchemaID)
})

// validateSchema validates a decoded file against the schema and returns one Error per
// problem, ordered by position.
func validateSchema(doc *document) []*Error {
	sch, err := compiledSchema()
	if err != nil {
		// The schema is embedded and tested; this cannot happen in a released build.
		panic("profile: bug: the embedded schema does not compile: " + err.Error())
	}
	err = sch.Validate(doc.value)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []*Error{doc.errorf("", "cannot validate: %v", err)}
	}
	var leaves []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	var out []*Error
	seen := map[string]bool{}
	for _, leaf := range leaves {
		for _, le := range translate(doc, leaf) {
			k := le.Pointer + "\x00" + le.Reason
			if !seen[k] {
				seen[k] = true
				out = append(out, le)
			}
		}
	}
	sortErrors(out)
	return out
}

func sortErrors(errs []*Error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Pointer < b.Pointer
	})
}

// translate turns one validation failure into Errors with a plain reason: unknown key,
// wrong type, out of range, invalid value, missing key.
func translate(doc *document, e *jsonschema.ValidationError) []*Error {
	ptr := rfcPointer(e.InstanceLocation)
	kw := e.KeywordLocation[strings.LastIndexByte(e.KeywordLocation, '/')+1:]
	val, _ := lookup(doc.value, ptr)
	switch kw {
	case "additionalProperties":
		obj, _ := val.(map[string]any)
		var out []*Error
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if strings.Contains(e.Message, quoteSingle(k)) {
				p := ptr + "/" + escapeToken(k)
				out = append(out, doc.errorf(p, "unknown key %q%s", k, suggest(k, ptr)))
			}
		}
		if len(out) > 0 {
			return out
		}
		return []*Error{doc.errorf(ptr, "unknown key: %s", e.Message)}
	case "type":
		msg := strings.Replace(strings.TrimPrefix(e.Message, "expected "), ", but got ", ", got ", 1)
		return []*Error{doc.errorf(ptr, "wrong type: want %s", msg)}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
		"minLength", "maxLength", "minItems", "maxItems", "maxProperties":
		return []*Error{doc.errorf(ptr, "out of range: %s", rangeMessage(val, e.Message))}
	case "enum":
		want := strings.TrimPrefix(e.Message, "value must be ")
		if ptr == "/active_profile" || ptr == "/approval/mode" {
			return []*Error{doc.errorf(ptr, "unknown profile %s: want %s", show(val), want)}
		}
		return []*Error{doc.errorf(ptr, "invalid value %s: want %s", show(val), want)}
	case "required":
		return []*Error{doc.errorf(ptr, "missing required key: %s", strings.ReplaceAll(strings.TrimPrefix(e.Message, "missing properties: "), "'", ""))}
	case "pattern":
		switch {
		case strings.Contains(e.KeywordLocation, "/propertyNames/"):
			name := ptr[strings.LastIndexByte(ptr, '/')+1:]
			name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
			return []*Error{doc.errorf(ptr, "invalid name %q: a name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", name)}
		case strings.HasSuffix(ptr, "/sha256"):
			return []*Error{doc.errorf(ptr, "invalid value %s: want the SHA-256 of the project file as 64 lower-case hex digits", show(val))}
		case strings.HasSuffix(ptr, "/id"):
			return []*Error{doc.errorf(ptr, "invalid rule id %s: 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", show(val))}
		}
		return []*Error{doc.errorf(ptr, "invalid value %s: %s", show(val), e.Message)}
	}
	return []*Error{doc.errorf(ptr, "%s", e.Message)}
}

func rangeMessage(val any, msg string) string {
	// The library's messages read "must be >= 0 but found -1".
	if i := strings.Index(msg, " but found "); i >= 0 && strings.HasPrefix(msg, "must be ") {
		return fmt.Sprintf("%s is not %s", show(val), msg[len("must be "):i])
	}
	return msg
}

// show renders a JSON value briefly for an error message.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// quoteSingle quotes a name the way the schema library does in its messages.
func quoteSingle(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

// rfcPointer turns the schema library's instance location (tokens escaped as in RFC 6901 and
// then URL path-escaped) into an RFC 6901 JSON pointer.
func rfcPointer(loc string) string {
	if loc == "" {
		return ""
	}
	toks := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i, t := range toks {
		if u, err := url.PathUnescape(t); err == nil {
			toks[i] = u
		}
	}
	return "/" + strings.Join(toks, "/")
}

// lookup resolves a JSON pointer in a decoded value.
func lookup(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// knownKeys lists the keys the schema allows in each object, by the pointer of the object with
// array indexes and free-form names replaced by "*", for "did you mean" hints.
var knownKeys = map[string][]string{
	"": {"$schema", "$comment", "active_profile", "autonomy", "permission_mode", "external_writes", "exec_checkpoints", "custom_rules",
		"shell_allowlist", "shell_blocklist", "network_allowlist", "denied_paths", "write_protected_paths", "unprotected_paths", "trusted_paths", "allowed_tools",
		"auto_approve_patterns", "host_groups", "registries", "resource_limits", "trusted_projects", "approval"},
	"/resource_limits":          {"max_concurrent_ops", "max_files_per_plan", "timeout_seconds"},
	"/approval":                 {"mode", "trusted_paths", "denied_paths", "allowed_tools", "auto_approve_patterns"},
	"/trusted_projects/*":       {"path", "sha256"},
	"/custom_rules/*":           {"$comment", "id", "priority", "condition", "action", "reason", "obligations"},
	"/custom_rules/*/condition": {"operation_type", "risk_level", "target_pattern", "command_pattern", "commands", "tools", "hosts", "providers", "surfaces", "outside_workspace"},
}

// suggest returns ` (did you mean "x"?)` when key is a near miss of an allowed key.
func suggest(key, objPtr string) string {
	toks := strings.Split(objPtr, "/")
	for i, t := range toks {
		if _, err := strconv.Atoi(t); err == nil {
			toks[i] = "*"
		}
	}
	best, bestD := "", 3
	for _, k := range knownKeys[strings.Join(toks, "/")] {
		if d := editDistance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b (bytes), capped for long inputs.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
