package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on what a profile file may be, so a hostile file cannot exhaust memory, the stack or
// the time a load may take (the package documentation lists them).
const (
	maxFileSize = 1 << 20 // bytes
	maxDepth    = 32      // nesting of objects and arrays
	maxValues   = 200_000 // values after YAML aliases are expanded
	// maxExpanded bounds what a YAML file stands for once its aliases are expanded, counted as
	// the bytes of the JSON value it converts to: no more than a JSON file may hold. Without it
	// a small file could expand into one far larger (a billion laughs), within every other limit.
	maxExpanded = maxFileSize
	// maxKey bounds an object key (the longest a profile file uses is 64 bytes).
	maxKey = 1024
	// ctxEvery is how many values are decoded between two looks at the context.
	ctxEvery = 1024
)

// document is a decoded profile file: its JSON value (map[string]any, []any, string,
// json.Number, bool, nil) and the line of every value.
type document struct {
	file  string
	value any
	lines *lineTree
}

// lineTree holds the lines of a document's values, shaped like the value: an object member's
// or an array element's line is under its key or index. (A map from JSON pointer to line would
// hold one pointer string per value, each as long as the keys above it: quadratic in the
// document.)
type lineTree struct {
	line  int
	keys  map[string]*lineTree // an object's members
	elems []*lineTree          // an array's elements
}

func (d *document) errorf(ptr, format string, args ...any) *Error {
	return &Error{File: d.file, Pointer: ptr, Line: d.line(ptr), Reason: fmt.Sprintf(format, args...)}
}

// line returns the line of the value at ptr, or of its nearest ancestor that has one.
func (d *document) line(ptr string) int {
	n := d.lines
	if n == nil {
		return 0
	}
	best := n.line
	for ptr != "" && ptr[0] == '/' {
		ptr = ptr[1:]
		tok := ptr
		if i := strings.IndexByte(ptr, '/'); i >= 0 {
			tok, ptr = ptr[:i], ptr[i:]
		} else {
			ptr = ""
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next *lineTree
		if n.keys != nil {
			next = n.keys[tok]
		} else if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.elems) {
			next = n.elems[i]
		}
		if next == nil {
			break
		}
		n = next
		if n.line > 0 {
			best = n.line
		}
	}
	return best
}

// notLoaded is the error for a load stopped by its context.
func notLoaded(file string, err error) *Error {
	return &Error{File: file, Reason: "not loaded: " + err.Error(), Err: err}
}

// decode decodes a profile file's content: YAML when yaml is set, else JSON. It looks at ctx
// every ctxEvery values.
func decode(ctx context.Context, file string, data []byte, yaml bool) (*document, error) {
	if err := ctx.Err(); err != nil {
		return nil, notLoaded(file, err)
	}
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
		return decodeYAML(ctx, file, data)
	}
	return decodeJSON(ctx, file, data)
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
	ctx   context.Context
	doc   *document
	data  []byte
	dec   *json.Decoder
	nl    []int // offsets of '\n'
	count int
	path  []string // the reference tokens of the value being decoded
}

func decodeJSON(ctx context.Context, file string, data []byte) (*document, error) {
	w := &jsonWalker{ctx: ctx, doc: &document{file: file, lines: &lineTree{}}, data: data}
	for i, b := range data {
		if b == '\n' {
			w.nl = append(w.nl, i)
		}
	}
	w.dec = json.NewDecoder(bytes.NewReader(data))
	w.dec.UseNumber()
	v, err := w.value(w.doc.lines, 0)
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

func (w *jsonWalker) ptr() string { return pointerOf(w.path...) }

// value decodes the value at w.path, recording lines in node.
func (w *jsonWalker) value(node *lineTree, depth int) (any, error) {
	start := w.skip(int(w.dec.InputOffset()))
	if node.line == 0 {
		node.line = w.lineAt(start)
	}
	if w.count++; w.count > maxValues {
		return nil, w.doc.errorf(w.ptr(), "the file holds more than %d values", maxValues)
	}
	if w.count%ctxEvery == 0 {
		if err := w.ctx.Err(); err != nil {
			return nil, notLoaded(w.doc.file, err)
		}
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
		return nil, w.doc.errorf(w.ptr(), "nested more than %d levels deep", maxDepth)
	}
	switch d {
	case '{':
		m := map[string]any{}
		node.keys = map[string]*lineTree{}
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
			if len(key) > maxKey {
				l, c := position(w.data, keyStart)
				return nil, &Error{File: w.doc.file, Pointer: w.ptr(), Line: l, Column: c, Reason: fmt.Sprintf("a key is longer than %d bytes", maxKey)}
			}
			if _, dup := m[key]; dup {
				l, c := position(w.data, keyStart)
				return nil, &Error{File: w.doc.file, Pointer: pointerOf(append(w.path, key)...), Line: l, Column: c, Reason: fmt.Sprintf("duplicate key %q", key)}
			}
			child := &lineTree{line: w.lineAt(keyStart)}
			node.keys[key] = child
			w.path = append(w.path, key)
			v, err := w.value(child, depth+1)
			w.path = w.path[:len(w.path)-1]
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
			child := &lineTree{}
			node.elems = append(node.elems, child)
			w.path = append(w.path, strconv.Itoa(len(a)))
			v, err := w.value(child, depth+1)
			w.path = w.path[:len(w.path)-1]
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

func decodeYAML(ctx context.Context, file string, data []byte) (*document, error) {
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
	c := &yamlConv{ctx: ctx, doc: &document{file: file, lines: &lineTree{}}}
	v, err := c.value(&root, c.doc.lines, 0)
	if err != nil {
		return nil, err
	}
	c.doc.value = v
	return c.doc, nil
}

// yamlConv converts a YAML node tree to the JSON value it stands for. Aliases are expanded
// where they are used, within two budgets: maxValues values and maxExpanded bytes of the JSON
// the result stands for (a scalar counts its length, a key its length, each with a few bytes of
// punctuation), so a small file cannot stand for more than a JSON file could hold.
type yamlConv struct {
	ctx   context.Context
	doc   *document
	count int
	size  int
	path  []string
}

func (c *yamlConv) ptr() string { return pointerOf(c.path...) }

func (c *yamlConv) fail(n *yaml.Node, format string, args ...any) error {
	return &Error{File: c.doc.file, Pointer: c.ptr(), Line: n.Line, Column: n.Column, Reason: fmt.Sprintf(format, args...)}
}

// grow charges n bytes to the expansion budget.
func (c *yamlConv) grow(node *yaml.Node, n int) error {
	if c.size += n; c.size > maxExpanded {
		return c.fail(node, "the YAML stands for more than %d bytes of JSON once its aliases are expanded (an alias counts each time it is used)", maxExpanded)
	}
	return nil
}

// value converts n, the value at c.path, recording lines in lt.
func (c *yamlConv) value(n *yaml.Node, lt *lineTree, depth int) (any, error) {
	if lt.line == 0 && n.Line > 0 {
		lt.line = n.Line
	}
	if c.count++; c.count > maxValues {
		return nil, c.fail(n, "the file holds more than %d values (aliases count each time they are used)", maxValues)
	}
	if c.count%ctxEvery == 0 {
		if err := c.ctx.Err(); err != nil {
			return nil, notLoaded(c.doc.file, err)
		}
	}
	if depth >= maxDepth {
		return nil, c.fail(n, "nested more than %d levels deep", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], lt, depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, "alias to an unknown anchor")
		}
		return c.value(n.Alias, lt, depth+1)
	case yaml.MappingNode:
		if err := c.grow(n, 2); err != nil {
			return nil, err
		}
		m := map[string]any{}
		lt.keys = map[string]*lineTree{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				return nil, c.fail(k, "merge keys (<<) are not supported")
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return nil, c.fail(k, "a mapping key is not a string (JSON keys are strings; quote it)")
			}
			if len(k.Value) > maxKey {
				return nil, c.fail(k, "a key is longer than %d bytes", maxKey)
			}
			if err := c.grow(k, len(k.Value)+4); err != nil {
				return nil, err
			}
			c.path = append(c.path, k.Value)
			if _, dup := m[k.Value]; dup {
				return nil, c.fail(k, "duplicate key %q", k.Value)
			}
			child := &lineTree{line: k.Line}
			lt.keys[k.Value] = child
			x, err := c.value(v, child, depth+1)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		return m, nil
	case yaml.SequenceNode:
		if err := c.grow(n, 2+len(n.Content)); err != nil {
			return nil, err
		}
		a := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			child := &lineTree{}
			lt.elems = append(lt.elems, child)
			c.path = append(c.path, strconv.Itoa(i))
			x, err := c.value(e, child, depth+1)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			a = append(a, x)
		}
		return a, nil
	case yaml.ScalarNode:
		if err := c.grow(n, len(n.Value)+2); err != nil {
			return nil, err
		}
		return c.scalar(n)
	}
	return nil, c.fail(n, "unsupported YAML node")
}

func (c *yamlConv) scalar(n *yaml.Node) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!timestamp":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, "%v", err)
		}
		return b, nil
	case "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			return nil, c.fail(n, "%v", err)
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
				return nil, c.fail(n, "%s is not a JSON number", n.Value)
			}
			return json.Number(strconv.FormatFloat(v, 'g', -1, 64)), nil
		}
		return nil, c.fail(n, "%s is not a number", n.Value)
	default:
		return nil, c.fail(n, "unsupported YAML tag %s", tag)
	}
}
