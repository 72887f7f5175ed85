package loader

import (
	"errors"
	"strconv"
	"strings"
)

// Error is one problem with a profile file: which file, where in it (a JSON pointer such
// as "/custom_rules/2/condition/target_pattern", and the line and column when known) and what
// is wrong. [Load] reports every problem it finds, each as a *Error, joined with
// [errors.Join]; [Errors] takes them apart again.
type Error struct {
	// File is the path of the file as it was opened.
	File string
	// Pointer is the JSON pointer (RFC 6901) of the value at fault; "" means the whole file.
	// For YAML files it points into the same JSON document the YAML converts to.
	Pointer string
	// Line and Column are 1-based; 0 when unknown. Column counts bytes.
	Line, Column int
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error when the file could not be read (a permission error, the
	// context's error), for errors.Is; nil for problems with the content.
	Err error
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Error returns "profile: FILE:LINE:COLUMN: POINTER: REASON", leaving out the parts that are
// unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("profile: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	if e.Pointer != "" {
		b.WriteString(e.Pointer)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Errors returns every *Error in err's tree (err itself, and the errors it wraps or
// joins), in order.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *Error:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		default:
			walk(errors.Unwrap(err))
		}
	}
	walk(err)
	return out
}

// pointerOf builds a JSON pointer from reference tokens, escaping "~" and "/" (RFC 6901).
func pointerOf(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

func escapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}
