package gitcfg

import (
	"fmt"
	"strings"
)

// Entry is one variable of a configuration file.
type Entry struct {
	// Section is the section name, lower-cased ("core", "diff").
	Section string
	// Subsection is the subsection: as written for `[diff "name"]`, lower-cased for the
	// deprecated `[diff.name]`; "" when there is none. HasSub tells an empty one from none.
	Subsection string
	HasSub     bool
	// Name is the variable name, lower-cased ("fsmonitor").
	Name string
	// Value is the value after quote removal and escapes; NoValue is set for a bare name
	// (`key` alone, a boolean true).
	Value   string
	NoValue bool
	// Line is the line the variable starts on (1-based).
	Line int
}

// Key returns the variable's full name as git prints it: section[.subsection].name.
func (e Entry) Key() string {
	if e.Section == "" {
		return e.Name // a variable before any section: git reads it, nothing uses it
	}
	if e.HasSub {
		return e.Section + "." + e.Subsection + "." + e.Name
	}
	return e.Section + "." + e.Name
}

// Parse parses a git configuration file (the syntax of git-config(1), "CONFIGURATION FILE":
// sections and subsections, case-insensitive section and variable names, quoting, escapes,
// comments, continuation lines) and calls fn for each variable in order. An error from fn stops
// the parse and is returned. A file git would reject is an error naming the line.
//
// Parse does not follow includes: include.path is an entry like any other.
func Parse(data []byte, fn func(Entry) error) error {
	p := parser{data: data, line: 1}
	if strings.HasPrefix(string(data[:min(3, len(data))]), "\xef\xbb\xbf") {
		p.pos = 3
	}
	return p.parse(fn)
}

type parser struct {
	data []byte
	pos  int
	line int
	eof  bool
}

// next returns the next character, with "\r\n" read as "\n"; at the end it returns '\n' and
// sets eof.
func (p *parser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{p.line}, args...)...)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (p *parser) parse(fn func(Entry) error) error {
	var section, sub string
	var hasSub bool
	for {
		c := p.next()
		if p.eof {
			return nil
		}
		switch {
		case c == '\n' || isSpace(c):
			continue
		case c == '#' || c == ';':
			for c != '\n' {
				c = p.next()
			}
			continue
		case c == '[':
			var err error
			section, sub, hasSub, err = p.header()
			if err != nil {
				return err
			}
			continue
		case !isAlpha(c):
			return p.errorf("unexpected %q", c)
		}
		e := Entry{Section: section, Subsection: sub, HasSub: hasSub, Line: p.line}
		var name strings.Builder
		name.WriteByte(lower(c))
		for {
			c = p.next()
			if p.eof || !isKeyChar(c) {
				break
			}
			name.WriteByte(lower(c))
		}
		e.Name = name.String()
		for c == ' ' || c == '\t' {
			c = p.next()
		}
		if c != '\n' {
			if c != '=' {
				return p.errorf("expected '=' after %q", e.Name)
			}
			v, err := p.value()
			if err != nil {
				return err
			}
			e.Value = v
		} else {
			e.NoValue = true
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// header parses a section header after its "[".
func (p *parser) header() (section, sub string, hasSub bool, err error) {
	var b strings.Builder
	for {
		c := p.next()
		if p.eof || c == '\n' {
			return "", "", false, p.errorf("unterminated section header")
		}
		if c == ']' {
			break
		}
		if isSpace(c) {
			sub, err = p.subsection()
			if err != nil {
				return "", "", false, err
			}
			hasSub = true
			break
		}
		if !isKeyChar(c) && c != '.' {
			return "", "", false, p.errorf("bad section header character %q", c)
		}
		b.WriteByte(lower(c))
	}
	section = b.String()
	if section == "" {
		return "", "", false, p.errorf("empty section name")
	}
	if !hasSub {
		// Deprecated [section.subsection]: the subsection is lower-cased.
		if s, rest, ok := strings.Cut(section, "."); ok {
			section, sub, hasSub = s, rest, true
		}
	} else if strings.Contains(section, ".") {
		return "", "", false, p.errorf("dotted section name with a quoted subsection")
	}
	return section, sub, hasSub, nil
}

// subsection parses ` "name"]` after the section name.
func (p *parser) subsection() (string, error) {
	c := p.next()
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c != '"' {
		return "", p.errorf("expected '\"' to start a subsection")
	}
	var b strings.Builder
	for {
		c = p.next()
		if p.eof || c == '\n' {
			return "", p.errorf("unterminated subsection")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = p.next()
			if p.eof || c == '\n' {
				return "", p.errorf("unterminated subsection")
			}
		}
		b.WriteByte(c)
	}
	if p.next() != ']' {
		return "", p.errorf("expected ']' after the subsection")
	}
	return b.String(), nil
}

// value parses a value after its "=", up to the end of the line (continuations included).
func (p *parser) value() (string, error) {
	var b strings.Builder
	quote, comment := false, false
	space := 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", p.errorf("unterminated quote")
			}
			return b.String(), nil
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if b.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		switch c {
		case '\\':
			c = p.next()
			switch {
			case c == '\n' && !p.eof:
				continue // a continuation line
			case c == 't':
				c = '\t'
			case c == 'b':
				c = '\b'
			case c == 'n':
				c = '\n'
			case c == '\\' || c == '"':
			default:
				return "", p.errorf("bad escape in a value")
			}
			b.WriteByte(c)
		case '"':
			quote = !quote
		default:
			b.WriteByte(c)
		}
	}
}
