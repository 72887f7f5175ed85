package loader

import (
	"bytes"
	"context"
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

// maxProblems bounds the problems one file's load reports; a file with more gets one more error
// saying so.
const maxProblems = 100

// largePiece is the size (in values) above which an array is validated apart from the value
// that holds it, in chunks, with a look at the context between them.
const largePiece = 256

// validateSchema validates a decoded file against the schema and returns one Error per problem,
// ordered by position, at most maxProblems of them (and then one more saying so). It looks at
// ctx between pieces of the document and returns ctx's error, as a *Error, when ctx is done.
func validateSchema(ctx context.Context, doc *document) ([]*Error, error) {
	return validateIn(ctx, doc, largePiece)
}

// piece is a part of a document validated on its own: value v at the JSON pointer tokens loc
// (plus offset on its first token when v is a chunk of the array at loc) against schema s.
type piece struct {
	s      *jsonschema.Schema
	v      any
	loc    []string
	offset int
	chunk  bool
}

// validateIn is validateSchema with arrays of more than large values validated in pieces: each
// such array is replaced by an empty one in the value that holds it (which is then validated on
// its own), its length is checked against the schema's maxItems, and its elements are validated
// in chunks against the array's schema. Tests call it with large 0, which must report exactly
// what validating the whole document at once does.
func validateIn(ctx context.Context, doc *document, large int) ([]*Error, error) {
	sch, err := compiledSchema()
	if err != nil {
		// The schema is embedded and tested; this cannot happen in a released build.
		panic("profile: bug: the embedded schema does not compile: " + err.Error())
	}
	var out []*Error
	seen := map[string]bool{}
	truncated := false
	add := func(e *Error) {
		k := e.Pointer + "\x00" + e.Reason
		switch {
		case seen[k]:
		case len(out) >= maxProblems:
			truncated = true
		default:
			seen[k] = true
			out = append(out, e)
		}
	}
	queue := []piece{{s: sch, v: doc.value}}
	for len(queue) > 0 && !truncated {
		if err := ctx.Err(); err != nil {
			return nil, notLoaded(doc.file, err)
		}
		p := queue[0]
		queue = queue[1:]
		v, subs := stubLarge(p.s, p.v, nil, large)
		for _, sub := range subs {
			loc := joinLoc(p, sub.loc)
			arr := sub.v.([]any)
			as := deref(sub.s)
			if as.MaxItems >= 0 && len(arr) > as.MaxItems {
				for _, e := range translate(doc, pointerOf(loc...), &jsonschema.ValidationError{KeywordLocation: "/maxItems",
					Message: fmt.Sprintf("maximum %d items required, but found %d items", as.MaxItems, len(arr))}) {
					add(e)
				}
			}
			n := max(1, min(64, as.MaxItems))
			for i := 0; i < len(arr); i += n {
				queue = append(queue, piece{s: sub.s, v: arr[i:min(i+n, len(arr))], loc: loc, offset: i, chunk: true})
			}
		}
		err := p.s.Validate(v)
		if err == nil {
			continue
		}
		ve, ok := err.(*jsonschema.ValidationError)
		if !ok {
			add(doc.errorf(pointerOf(p.loc...), "cannot validate: %v", err))
			continue
		}
		var walk func(*jsonschema.ValidationError)
		walk = func(e *jsonschema.ValidationError) {
			if len(e.Causes) == 0 {
				for _, x := range translate(doc, pieceLoc(p, e.InstanceLocation), e) {
					add(x)
				}
			}
			for _, c := range e.Causes {
				walk(c)
			}
		}
		walk(ve)
	}
	sortErrors(out)
	if truncated {
		out = append(out, doc.errorf("", "more than %d problems; only the first %d are reported", maxProblems, maxProblems))
	}
	return out, nil
}

// joinLoc returns the tokens of p's root followed by rel (rel's first token shifted by p's
// offset when p is a chunk).
func joinLoc(p piece, rel []string) []string {
	loc := slices.Clone(p.loc)
	if p.chunk && len(rel) > 0 {
		if i, err := strconv.Atoi(rel[0]); err == nil {
			rel = append([]string{strconv.Itoa(i + p.offset)}, rel[1:]...)
		}
	}
	return append(loc, rel...)
}

// pieceLoc turns the schema library's instance location, relative to p's value, into the JSON
// pointer of the document.
func pieceLoc(p piece, instance string) string {
	ptr := rfcPointer(instance)
	var rel []string
	if ptr != "" {
		for _, t := range strings.Split(ptr[1:], "/") {
			rel = append(rel, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
		}
	}
	return pointerOf(joinLoc(p, rel)...)
}

// deref follows $ref from schemas that assert nothing else.
func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for s.Ref != nil && len(s.Types) == 0 && s.Enum == nil && s.Constant == nil && s.Always == nil &&
		s.Not == nil && s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil && s.If == nil {
		s = s.Ref
	}
	return s
}

// plainArray reports whether s (after deref) is an array schema whose constraints can be checked
// piece by piece: a type, maxItems and one items schema, nothing that relates elements to each
// other or requires elements to exist, so [] is valid for it.
func plainArray(s *jsonschema.Schema) bool {
	s = deref(s)
	return slices.Equal(s.Types, []string{"array"}) && s.Items2020 != nil && s.MinItems <= 0 && !s.UniqueItems &&
		s.Contains == nil && s.PrefixItems == nil && s.Items == nil && s.AdditionalItems == nil &&
		s.UnevaluatedItems == nil && s.Enum == nil && s.Constant == nil && s.Not == nil &&
		s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil && s.If == nil && s.Ref == nil
}

// stubLarge returns v with every array of more than large values that sits where a plain array
// schema applies (an object member or an array element, below v) replaced by an empty array,
// and those arrays as pieces (loc relative to v). v itself is never replaced, and it is copied
// only where something below it is.
func stubLarge(s *jsonschema.Schema, v any, loc []string, large int) (any, []piece) {
	s = deref(s)
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		var subs []piece
		for _, k := range slices.Sorted(maps.Keys(x)) {
			ms := s.Properties[k]
			if ms == nil {
				ms, _ = s.AdditionalProperties.(*jsonschema.Schema)
			}
			if ms == nil {
				continue
			}
			ml := append(slices.Clone(loc), k)
			var nv any
			var ns []piece
			if arr, ok := x[k].([]any); ok && plainArray(ms) && values(arr, large) > large {
				nv, ns = []any{}, []piece{{s: ms, v: arr, loc: ml}}
			} else {
				nv, ns = stubLarge(ms, x[k], ml, large)
			}
			if ns == nil {
				continue
			}
			if out == nil {
				out = maps.Clone(x)
			}
			out[k], subs = nv, append(subs, ns...)
		}
		if out == nil {
			return v, nil
		}
		return out, subs
	case []any:
		if s.Items2020 == nil {
			return v, nil
		}
		var out []any
		var subs []piece
		for i, e := range x {
			nv, ns := stubLarge(s.Items2020, e, append(slices.Clone(loc), strconv.Itoa(i)), large)
			if ns == nil {
				continue
			}
			if out == nil {
				out = slices.Clone(x)
			}
			out[i], subs = nv, append(subs, ns...)
		}
		if out == nil {
			return v, nil
		}
		return out, subs
	}
	return v, nil
}

// values counts the values in v, stopping once it passes limit.
func values(v any, limit int) int {
	n := 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if n += values(e, limit-n); n > limit {
				return n
			}
		}
	case []any:
		for _, e := range x {
			if n += values(e, limit-n); n > limit {
				return n
			}
		}
	}
	return n
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

// translate turns one validation failure, of the value at ptr, into Errors with a plain reason:
// unknown key (one Error per key, see unknownKeys), wrong type, out of range, invalid value,
// missing key.
func translate(doc *document, ptr string, e *jsonschema.ValidationError) []*Error {
	if strings.HasSuffix(e.KeywordLocation, "/additionalProperties") {
		obj, _ := lookupObject(doc.value, ptr)
		var out []*Error
		for _, k := range unknownKeys(obj, ptr, e.Message) {
			out = append(out, doc.errorf(ptr+"/"+escapeToken(k), "unknown key %q%s", k, suggest(k, ptr)))
		}
		if len(out) > 0 {
			return out
		}
		return []*Error{doc.errorf(ptr, "unknown key: %s", e.Message)}
	}
	return []*Error{translate1(doc, ptr, e)}
}

func lookupObject(v any, ptr string) (map[string]any, bool) {
	x, ok := lookup(v, ptr)
	m, isMap := x.(map[string]any)
	return m, ok && isMap
}

func translate1(doc *document, ptr string, e *jsonschema.ValidationError) *Error {
	kw := e.KeywordLocation[strings.LastIndexByte(e.KeywordLocation, '/')+1:]
	val, _ := lookup(doc.value, ptr)
	switch kw {
	case "type":
		msg := strings.Replace(strings.TrimPrefix(e.Message, "expected "), ", but got ", ", got ", 1)
		return doc.errorf(ptr, "wrong type: want %s", msg)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
		"minLength", "maxLength", "minItems", "maxItems", "maxProperties":
		return doc.errorf(ptr, "out of range: %s", rangeMessage(val, e.Message))
	case "enum":
		want := strings.TrimPrefix(e.Message, "value must be ")
		if ptr == "/active_profile" || ptr == "/approval/mode" {
			return doc.errorf(ptr, "unknown profile %s: want %s", show(val), want)
		}
		return doc.errorf(ptr, "invalid value %s: want %s", show(val), want)
	case "required":
		return doc.errorf(ptr, "missing required key: %s", strings.ReplaceAll(strings.TrimPrefix(e.Message, "missing properties: "), "'", ""))
	case "pattern":
		switch {
		case strings.Contains(e.KeywordLocation, "/propertyNames/"):
			name := ptr[strings.LastIndexByte(ptr, '/')+1:]
			name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
			return doc.errorf(ptr, "invalid name %q: a name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", name)
		case strings.HasSuffix(ptr, "/sha256"):
			return doc.errorf(ptr, "invalid value %s: want the SHA-256 of the project file as 64 lower-case hex digits", show(val))
		case strings.HasSuffix(ptr, "/id"):
			return doc.errorf(ptr, "invalid rule id %s: 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", show(val))
		}
		return doc.errorf(ptr, "invalid value %s: %s", show(val), e.Message)
	}
	return doc.errorf(ptr, "%s", e.Message)
}

// unknownKeys returns the keys of obj (the object at ptr) that its schema does not know, sorted,
// at most maxProblems+1 of them (one more than are reported, so the report says there were
// more): from knownKeys when it lists the object, else from the schema library's message.
func unknownKeys(obj map[string]any, ptr, message string) []string {
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		if _, err := strconv.Atoi(t); err == nil {
			toks[i] = "*"
		}
	}
	known, listed := knownKeys[strings.Join(toks, "/")]
	var out []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if listed && !slices.Contains(known, k) || !listed && strings.Contains(message, quoteSingle(k)) {
			if out = append(out, k); len(out) > maxProblems {
				break
			}
		}
	}
	return out
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
		"auto_approve_patterns", "host_groups", "registries", "resource_limits", "trusted_projects", "approval", "managed"},
	"/managed":                  {"max_band", "max_permission_mode", "managed_rules_only"},
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
