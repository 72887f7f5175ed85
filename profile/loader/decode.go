package loader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on what a profile file may be, so a hostile file cannot exhaust memory or the stack.
const (
	maxFileSize = 1 << 20 // bytes
	maxDepth    = 32      // nesting of objects and arrays
	maxValues   = 200_000 // values after YAML aliases are expanded
)

// document is a decoded profile file: its JSON value (map[string]any, []any, string,
// json.Number, bool, nil), the line of every value by JSON pointer, and the raw content.
type document struct {
	file  string
	value any
	lines map[string]int
}

func (d *document) errorf(ptr, format string, args ...any) *Error {
	return &Error{File: d.file, Pointer: ptr, Line: d.line(ptr), Reason: fmt.Sprintf(format, args...)}
}

// line returns the line of the value at ptr, or of its nearest ancestor that has one.
func (d *document) line(ptr string) int {
	for {
		if l, ok := d.lines[ptr]; ok {
			return l
		}
		i := lastSlash(ptr)
		if i < 0 {
			return 0
		}
		ptr = ptr[:i]
	}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// decode decodes a profile file's content: YAML when yaml is set, else JSON.
func decode(file string, data []byte, yaml bool) (*document, error) {
	if len(data) > maxFileSize {
		return nil, &Error{File: file, Reason: fmt.Sprintf("the file is larger than %d bytes", maxFileSize)}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, w := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && w <= 1 {
				break
			}
			off += w
		}
		l, c := position(data, off)
		return nil, &Error{File: file, Line: l, Column: c, Reason: "the file is not valid UTF-8"}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if yaml {
		return decodeYAML(file, data)
	}
	return decodeJSON(file, data)
}

// position returns the 1-based line and column (in bytes) of byte offset off.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	return line, off - (bytes.LastIndexByte(data[:off], '\n') + 1) + 1
}

// jsonWalker decodes JSON token by token, so it can record the line of every value and reject
// duplicate keys (encoding/json silently keeps the last of two equal keys, which would let a
// file show a reviewer one value and apply another).
type jsonWalker struct {
	doc   *document
	data  []byte
	dec   *json.Decoder
	nl    []int // offsets of '\n'
	count int
}

func decodeJSON(file string, data []byte) (*document, error) {
	w := &jsonWalker{doc: &document{file: file, lines: map[string]int{}}, data: data}
	for i, b := range data {
		if b == '\n' {
			w.nl = append(w.nl, i)
		}
	}
	w.dec = json.NewDecoder(bytes.NewReader(data))
	w.dec.UseNumber()
	v, err := w.value("", 0)
	if err != nil {
		return nil, err
	}
	off := w.skip(int(w.dec.InputOffset()))
	if _, err := w.dec.Token(); err != io.EOF {
		l, c := position(data, off)
		return nil, &Error{File: file, Line: l, Column: c, Reason: "malformed JSON: data after the top-level value"}
	}
	w.doc.value = v
	return w.doc, nil
}

// skip returns the offset of the next token at or after off.
func (w *jsonWalker) skip(off int) int {
	for off < len(w.data) {
		switch w.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

func (w *jsonWalker) lineAt(off int) int {
	return 1 + sort.SearchInts(w.nl, off)
}

func (w *jsonWalker) syntax(err error) error {
	var se *json.SyntaxError
	off := len(w.data)
	reason := "malformed JSON: " + err.Error()
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) // the decoder's offset is that of the offending byte
	case err == io.EOF && len(bytes.TrimSpace(w.data)) == 0:
		reason = "malformed JSON: the file is empty"
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		reason = "malformed JSON: unexpected end of input"
	}
	l, c := position(w.data, off)
	return &Error{File: w.doc.file, Line: l, Column: c, Reason: reason}
}

func (w *jsonWalker) value(ptr string, depth int) (any, error) {
	start := w.skip(int(w.dec.InputOffset()))
	if _, ok := w.doc.lines[ptr]; !ok {
		w.doc.lines[ptr] = w.lineAt(start)
	}
	if w.count++; w.count > maxValues {
		return nil, w.doc.errorf(ptr, "the file holds more than %d values", maxValues)
	}
	tok, err := w.dec.Token()
	if err != nil {
		return nil, w.syntax(err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxDepth {
		return nil, w.doc.errorf(ptr, "nested more than %d levels deep", maxDepth)
	}
	switch d {
	case '{':
		m := map[string]any{}
		for w.dec.More() {
			keyStart := w.skip(int(w.dec.InputOffset()))
			kt, err := w.dec.Token()
			if err != nil {
				return nil, w.syntax(err)
			}
			key, ok := kt.(string)
			if !ok {
				return nil, w.syntax(fmt.Errorf("object key is not a string"))
			}
			cp := ptr + "/" + escapeToken(key)
			if _, dup := m[key]; dup {
				l, c := position(w.data, keyStart)
				return nil, &Error{File: w.doc.file, Pointer: cp, Line: l, Column: c, Reason: fmt.Sprintf("duplicate key %q", key)}
			}
			w.doc.lines[cp] = w.lineAt(keyStart)
			v, err := w.value(cp, depth+1)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		if _, err := w.dec.Token(); err != nil {
			return nil, w.syntax(err)
		}
		return m, nil
	default: // '['
		a := []any{}
		for w.dec.More() {
			v, err := w.value(ptr+"/"+strconv.Itoa(len(a)), depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := w.dec.Token(); err != nil {
			return nil, w.syntax(err)
		}
		return a, nil
	}
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func decodeYAML(file string, data []byte) (*document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	err := dec.Decode(&root)
	switch {
	case err == io.EOF:
		return nil, &Error{File: file, Reason: "malformed YAML: the file is empty"}
	case err != nil:
		e := &Error{File: file, Reason: "malformed YAML: " + err.Error()}
		if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Reason = "malformed YAML: " + m[2]
		}
		return nil, e
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &Error{File: file, Line: extra.Line, Reason: "malformed YAML: more than one document"}
	}
	c := &yamlConv{doc: &document{file: file, lines: map[string]int{}}}
	v, err := c.value(&root, "", 0)
	if err != nil {
		return nil, err
	}
	c.doc.value = v
	return c.doc, nil
}

// yamlConv converts a YAML node tree to the JSON value it stands for.
type yamlConv struct {
	doc   *document
	count int
}

func (c *yamlConv) fail(n *yaml.Node, ptr, format string, args ...any) error {
	return &Error{File: c.doc.file, Pointer: ptr, Line: n.Line, Column: n.Column, Reason: fmt.Sprintf(format, args...)}
}

func (c *yamlConv) value(n *yaml.Node, ptr string, depth int) (any, error) {
	if _, ok := c.doc.lines[ptr]; !ok && n.Line > 0 {
		c.doc.lines[ptr] = n.Line
	}
	if c.count++; c.count > maxValues {
		return nil, c.fail(n, ptr, "the file holds more than %d values (aliases count each time they are used)", maxValues)
	}
	if depth >= maxDepth {
		return nil, c.fail(n, ptr, "nested more than %d levels deep", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], ptr, depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, ptr, "alias to an unknown anchor")
		}
		return c.value(n.Alias, ptr, depth+1)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				return nil, c.fail(k, ptr, "merge keys (<<) are not supported")
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return nil, c.fail(k, ptr, "a mapping key is not a string (JSON keys are strings; quote it)")
			}
			cp := ptr + "/" + escapeToken(k.Value)
			if _, dup := m[k.Value]; dup {
				return nil, c.fail(k, cp, "duplicate key %q", k.Value)
			}
			c.doc.lines[cp] = k.Line
			x, err := c.value(v, cp, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		return m, nil
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			x, err := c.value(e, ptr+"/"+strconv.Itoa(i), depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, x)
		}
		return a, nil
	case yaml.ScalarNode:
		return c.scalar(n, ptr)
	}
	return nil, c.fail(n, ptr, "unsupported YAML node")
}

func (c *yamlConv) scalar(n *yaml.Node, ptr string) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!timestamp":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, ptr, "%v", err)
		}
		return b, nil
	case "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			return nil, c.fail(n, ptr, "%v", err)
		}
		switch v := x.(type) {
		case int:
			return json.Number(strconv.Itoa(v)), nil
		case int64:
			return json.Number(strconv.FormatInt(v, 10)), nil
		case uint64:
			return json.Number(strconv.FormatUint(v, 10)), nil
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, c.fail(n, ptr, "%s is not a JSON number", n.Value)
			}
			return json.Number(strconv.FormatFloat(v, 'g', -1, 64)), nil
		}
		return nil, c.fail(n, ptr, "%s is not a number", n.Value)
	default:
		return nil, c.fail(n, ptr, "unsupported YAML tag %s", tag)
	}
}
