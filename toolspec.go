package reins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// WholeInput, as a field name of a ToolSpec, names the tool's whole input instead of a field of
// it: for a tool whose input is plain text (langchaingo's tools.Tool takes a string), the text
// itself is the path, the command line or the host; for a JSON input, the input must then be a
// JSON string (or, for paths, an array of strings).
const WholeInput = "$"

// Bounds of what a ToolSpec reads from a call's input. A call over a bound is denied.
const (
	// MaxToolInput bounds the size of a call's input, in bytes.
	MaxToolInput = 8 << 20
	// MaxToolTargets bounds the paths one call may name, over all its path fields.
	MaxToolTargets = 1024
	// MaxToolPath bounds the length of one path, command line or host a field holds, in bytes.
	MaxToolPath = 64 << 10
)

// CheckToolInput is the check id of the denial of a tool call whose input its ToolSpec cannot
// read (layer input): not a JSON object, a field of the wrong type, a field given twice or in
// another case, a bound exceeded.
const CheckToolInput = "tool-input"

// ToolSpec tells the run what one tool does, so that each call is decided on what it does, not
// on the tool's name: the operation, the risk it declares, and which fields of its input hold
// the paths it reads and writes, the command line it runs and the host it reaches. [Guard] and
// [GuardCommand] read a call's input through it; [ToolSpec.Action] does it for adapters.
//
// The input is decoded strictly: a field the spec names must hold what the spec says (a string;
// for paths, a string or an array of strings) or the call is denied, so a call cannot slip a
// path past the gate in a shape the tool accepts and the spec does not read. The same field
// given twice, or in another letter case (which Go's encoding/json would still hand to the
// tool's struct), is denied too. A field the spec names and the input leaves out (or sets to
// null) names nothing; an empty path names the workspace root. Fields the spec does not name
// are the tool's business (a file's new content, say) and are not read.
//
// A tool without a spec, or whose spec declares neither an operation with a risk of its own nor
// a risk, is decided as an unknown tool: operation "tool" with no declared risk, which the gate
// treats as destructive.
type ToolSpec struct {
	// Tool is the name the call is decided and recorded under (policy.Action.Tool): the name the
	// model calls it by, or "mcp__<server>__<tool>" for an MCP server's tool, the naming agents
	// use, so that a rule can match a server's tools with one glob.
	Tool string
	// Operation is the kind of action (policy.OpRead, OpWrite, OpDelete, OpShell, OpNetwork, ...).
	// Empty means policy.OpTool (GuardCommand: policy.OpShell).
	Operation policy.Operation
	// Risk is the risk the tool declares on top of its operation's.
	Risk risk.Set
	// Reads names the input fields that hold paths the tool reads; Writes those that hold
	// paths it writes or deletes (a spec with Writes declares at least Mutating risk). Each
	// field holds a path or an array of paths, absolute or relative to the workspace.
	Reads, Writes []string
	// Command names the input field that holds a shell command line; WorkDir the field that
	// holds the directory it runs in (relative to the workspace; absent means the workspace).
	Command, WorkDir string
	// Host names the input field that holds the host or URL the tool reaches.
	Host string
	// Annotations are the tool's MCP annotations, if it has any.
	Annotations *ToolAnnotations
	// TrustAnnotations says that Annotations come from a server the host trusts (its own). They
	// never lower the risk the spec declares; only trusted annotations describe a tool the spec
	// leaves undeclared, and annotations from a server the host does not trust only ever raise
	// the risk. See ToolAnnotations.
	TrustAnnotations bool
}

// ToolAnnotations are an MCP tool's annotations (the specification's ToolAnnotations): hints
// about what the tool does, each nil when the server left it out. A server can say anything
// here, so the run maps them to risk only upward:
//
//   - From any server, an explicit hint that says more than the spec raises the risk:
//     readOnlyHint false adds Mutating, destructiveHint true Destructive, openWorldHint true
//     Network.
//   - Only from a server the host trusts (ToolSpec.TrustAnnotations), and only for a tool the
//     spec leaves undeclared, do the annotations describe the tool, with the specification's
//     defaults for what they leave out: read-only (readOnlyHint true) is ReadOnly; otherwise
//     Mutating, plus Destructive unless destructiveHint is false; plus Network unless
//     openWorldHint is false.
//   - An untrusted server's readOnlyHint (or any other hint) never makes an undeclared tool
//     less than unknown: it stays destructive, with whatever the hints add.
//
// idempotentHint says nothing about risk and is ignored.
type ToolAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Validate reports a spec that cannot describe a tool: a field named twice, WholeInput beside
// named fields, Command or WorkDir on an operation other than shell.
func (s ToolSpec) Validate() error {
	fields := s.fields()
	seen := map[string]bool{}
	whole := false
	for _, f := range fields {
		switch {
		case f.name == "":
			return fmt.Errorf("reins: tool spec %q: an empty field name", s.Tool)
		case seen[f.name]:
			return fmt.Errorf("reins: tool spec %q: field %q is named twice", s.Tool, f.name)
		}
		seen[f.name] = true
		whole = whole || f.name == WholeInput
	}
	if whole && len(fields) > 1 {
		return fmt.Errorf("reins: tool spec %q: WholeInput cannot stand beside named fields", s.Tool)
	}
	if (s.Command != "" || s.WorkDir != "") && s.op() != policy.OpShell {
		return fmt.Errorf("reins: tool spec %q: Command and WorkDir need operation shell, not %q", s.Tool, s.op())
	}
	if s.WorkDir != "" && s.Command == "" {
		return fmt.Errorf("reins: tool spec %q: WorkDir without Command", s.Tool)
	}
	return nil
}

type fieldKind uint8

const (
	fieldRead fieldKind = iota
	fieldWrite
	fieldCommand
	fieldWorkDir
	fieldHost
)

type specField struct {
	name string
	kind fieldKind
}

func (s ToolSpec) fields() []specField {
	var out []specField
	for _, n := range s.Reads {
		out = append(out, specField{n, fieldRead})
	}
	for _, n := range s.Writes {
		out = append(out, specField{n, fieldWrite})
	}
	for _, f := range []specField{{s.Command, fieldCommand}, {s.WorkDir, fieldWorkDir}, {s.Host, fieldHost}} {
		if f.name != "" {
			out = append(out, f)
		}
	}
	return out
}

func (s ToolSpec) op() policy.Operation {
	if s.Operation == "" {
		return policy.OpTool
	}
	return s.Operation.Canonical()
}

// risk returns the risk a call of the tool declares to the gate: the spec's, Mutating when it
// writes, and what the annotations add (see ToolAnnotations). An empty result means unknown,
// which the gate treats as destructive.
func (s ToolSpec) risk() risk.Set {
	declared := s.Risk
	if len(s.Writes) > 0 {
		declared |= risk.Of(risk.Mutating)
	}
	a := s.Annotations
	if a == nil {
		return declared
	}
	undeclared := declared == 0 && s.op().DefaultRisk() == 0
	if undeclared && !s.TrustAnnotations {
		// Unknown stays unknown: hints can add to it, never make it less than destructive.
		declared = risk.Of(risk.Destructive)
	}
	if undeclared && s.TrustAnnotations {
		if isTrue(a.ReadOnlyHint) {
			declared = risk.Of(risk.ReadOnly)
		} else {
			declared = risk.Of(risk.Mutating)
			if !isFalse(a.DestructiveHint) {
				declared |= risk.Of(risk.Destructive)
			}
		}
		if !isFalse(a.OpenWorldHint) {
			declared |= risk.Of(risk.Network)
		}
	}
	if isFalse(a.ReadOnlyHint) {
		declared |= risk.Of(risk.Mutating)
	}
	if isTrue(a.DestructiveHint) {
		declared |= risk.Of(risk.Destructive)
	}
	if isTrue(a.OpenWorldHint) {
		declared |= risk.Of(risk.Network)
	}
	return declared
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

// InputError is the reason a ToolSpec cannot read a call's input. It names the field.
type InputError struct {
	Tool, Field string
	Reason      string
}

// Error implements error.
func (e *InputError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("the input of %s %s", e.Tool, e.Reason)
	}
	return fmt.Sprintf("field %q of %s's input %s", e.Field, e.Tool, e.Reason)
}

// Action returns the action a call of the tool with JSON input (the arguments of an MCP call,
// say) asks the gate about: the tool's name, operation and risk, the paths, command, working
// directory and host its fields hold, and the input itself for the audit trail. Empty input or
// null is no arguments. An error (an *InputError) means the input cannot be read as the spec
// says, and the call must be denied.
func (s ToolSpec) Action(input []byte) (policy.Action, error) {
	a := s.baseAction(string(input))
	if len(input) > MaxToolInput {
		return a, s.inputErr("", fmt.Sprintf("is larger than %d bytes", MaxToolInput))
	}
	fields := s.fields()
	if len(fields) == 0 {
		return a, nil
	}
	values, err := s.decode(input, fields)
	if err != nil {
		return a, err
	}
	return a, s.fill(&a, fields, values)
}

// ActionText is Action for a tool whose input is plain text (langchaingo's tools take a
// string): with WholeInput the text itself is the path, command line or host; with named
// fields the text must be a JSON object, read as Action reads it.
func (s ToolSpec) ActionText(input string) (policy.Action, error) {
	fields := s.fields()
	if len(fields) != 1 || fields[0].name != WholeInput {
		return s.Action([]byte(input))
	}
	a := s.baseAction(input)
	if len(input) > MaxToolInput {
		return a, s.inputErr("", fmt.Sprintf("is larger than %d bytes", MaxToolInput))
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return a, s.inputErr("", "is not text: "+err.Error())
	}
	return a, s.fill(&a, fields, map[string]json.RawMessage{WholeInput: raw})
}

func (s ToolSpec) baseAction(input string) policy.Action {
	a := policy.Action{Tool: s.Tool, Operation: s.op(), Risk: s.risk(), Input: input}
	if len(a.Input) > policy.MaxInput {
		a.Input = cutInput(a.Input)
	}
	return a
}

func (s ToolSpec) inputErr(field, reason string) error {
	return &InputError{Tool: s.Tool, Field: field, Reason: reason}
}

// decode reads the values of the named fields from a JSON object, strictly: one object, each
// named field once and in its own letter case.
func (s ToolSpec) decode(input []byte, fields []specField) (map[string]json.RawMessage, error) {
	values := map[string]json.RawMessage{}
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return values, nil
	}
	if fields[0].name == WholeInput {
		if !json.Valid(trimmed) {
			return nil, s.inputErr("", "is not valid JSON")
		}
		values[WholeInput] = trimmed
		return values, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, s.inputErr("", "is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, s.inputErr("", "is not valid JSON: "+err.Error())
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, s.inputErr("", "is not valid JSON: "+err.Error())
		}
		for _, f := range fields {
			switch {
			case key == f.name:
				if _, dup := values[key]; dup {
					return nil, s.inputErr(f.name, "is given twice")
				}
				values[key] = raw
			case strings.EqualFold(key, f.name):
				// encoding/json matches struct fields in any case: the tool would read it.
				return nil, s.inputErr(f.name, fmt.Sprintf("is also given as %q", key))
			}
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, s.inputErr("", "is not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, s.inputErr("", "has data after its JSON object")
	}
	return values, nil
}

// fill puts the fields' values into the action.
func (s ToolSpec) fill(a *policy.Action, fields []specField, values map[string]json.RawMessage) error {
	for _, f := range fields {
		raw, ok := values[f.name]
		if !ok || string(raw) == "null" {
			continue
		}
		switch f.kind {
		case fieldRead, fieldWrite:
			paths, err := s.paths(f.name, raw)
			if err != nil {
				return err
			}
			if len(a.Targets)+len(paths) > MaxToolTargets {
				return s.inputErr(f.name, fmt.Sprintf("makes the call name more than %d paths", MaxToolTargets))
			}
			a.Targets = append(a.Targets, paths...)
		case fieldCommand:
			v, err := s.str(f.name, raw)
			if err != nil {
				return err
			}
			if strings.TrimSpace(v) == "" {
				return s.inputErr(f.name, "is an empty command line")
			}
			a.Command = v
		case fieldWorkDir:
			v, err := s.str(f.name, raw)
			if err != nil {
				return err
			}
			a.WorkDir = v
		case fieldHost:
			v, err := s.str(f.name, raw)
			if err != nil {
				return err
			}
			if a.Host, err = hostOf(v); err != nil {
				return s.inputErr(f.name, err.Error())
			}
		}
	}
	return nil
}

func (s ToolSpec) str(field string, raw json.RawMessage) (string, error) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", s.inputErr(field, "is not a string")
	}
	if len(v) > MaxToolPath {
		return "", s.inputErr(field, fmt.Sprintf("is longer than %d bytes", MaxToolPath))
	}
	if strings.IndexByte(v, 0) >= 0 {
		return "", s.inputErr(field, "holds a NUL byte")
	}
	return v, nil
}

// paths reads a path field: a string, or an array of strings. An empty path is the workspace
// root (what filepath.Join(root, "") names).
func (s ToolSpec) paths(field string, raw json.RawMessage) ([]string, error) {
	var list []json.RawMessage
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, s.inputErr(field, "is not a path or an array of paths")
		}
		if len(list) > MaxToolTargets {
			return nil, s.inputErr(field, fmt.Sprintf("names more than %d paths", MaxToolTargets))
		}
	} else {
		list = []json.RawMessage{raw}
	}
	out := make([]string, 0, len(list))
	for _, r := range list {
		if string(r) == "null" {
			return nil, s.inputErr(field, "holds null among its paths")
		}
		if len(r) == 0 || r[0] != '"' {
			return nil, s.inputErr(field, "is not a path or an array of paths")
		}
		p, err := s.str(field, r)
		if err != nil {
			return nil, err
		}
		if p == "" {
			p = "."
		}
		out = append(out, p)
	}
	return out, nil
}

// hostOf returns the host a host field names: a URL's host, or a host with or without a port
// and a path.
func hostOf(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errors.New("is empty")
	}
	raw := v
	if !strings.Contains(v, "://") {
		raw = "//" + v
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", errors.New("is not a host name or a URL with a host")
	}
	return strings.ToLower(u.Hostname()), nil
}
