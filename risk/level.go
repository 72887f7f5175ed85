package risk

import (
	"fmt"
	"strings"
)

// Level is what an action can do to the world. The five levels come from the autonomy seed:
// every tool declares one (or, for a compound action such as a shell line, several; see [Set]).
//
// The zero Level is not a level: it means "not declared". The gate never treats an undeclared
// level as ReadOnly; it derives one from the operation type or, failing that, assumes the worst.
type Level uint8

// The risk levels, in the order the seed lists them. The order is not a ranking: whether Exec is
// stricter than Network depends on the autonomy matrix, not on these numbers.
const (
	// ReadOnly reads files, searches code, lists directories.
	ReadOnly Level = iota + 1
	// Mutating writes files, edits code.
	Mutating
	// Exec runs programs (shell commands, interpreters, build and test runners).
	Exec
	// Destructive deletes files, drops tables, force-pushes: effects that are hard to undo.
	Destructive
	// Network makes requests to other hosts.
	Network

	numLevels = Network + 1 // one past the last level
)

// Levels lists every risk level in declaration order.
func Levels() []Level { return []Level{ReadOnly, Mutating, Exec, Destructive, Network} }

var levelNames = [numLevels]string{"", "read_only", "mutating", "exec", "destructive", "network"}

// Valid reports whether l is one of the five declared levels.
func (l Level) Valid() bool { return l >= ReadOnly && l < numLevels }

// String returns the level's canonical name ("read_only", "mutating", "exec", "destructive",
// "network"), or "Level(n)" for an invalid value.
func (l Level) String() string {
	if l.Valid() {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel returns the level with the given canonical name, ignoring ASCII case. Unknown names,
// including the empty string, are errors.
func ParseLevel(name string) (Level, error) {
	for l := ReadOnly; l < numLevels; l++ {
		if strings.EqualFold(name, levelNames[l]) {
			return l, nil
		}
	}
	return 0, fmt.Errorf("risk: unknown risk level %q (want one of read_only, mutating, exec, destructive, network)", name)
}

// MarshalText implements [encoding.TextMarshaler]. An invalid level is an error, so an
// undeclared level can never be written out as if it were one.
func (l Level) MarshalText() ([]byte, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("risk: cannot marshal invalid level %d", uint8(l))
	}
	return []byte(levelNames[l]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseLevel].
func (l *Level) UnmarshalText(text []byte) error {
	v, err := ParseLevel(string(text))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Severity is the coarse Low/Medium/High scale the profile and policy spec uses ("risk level =
// HIGH"). The zero Severity means "not declared"; [Level.Severity] gives the default.
type Severity uint8

// The severity scale, from least to most severe. Comparisons (<, >) are meaningful.
const (
	Low Severity = iota + 1
	Medium
	High

	numSeverities = High + 1
)

var severityNames = [numSeverities]string{"", "low", "medium", "high"}

// Valid reports whether s is Low, Medium or High.
func (s Severity) Valid() bool { return s >= Low && s < numSeverities }

// String returns "low", "medium" or "high", or "Severity(n)" for an invalid value.
func (s Severity) String() string {
	if s.Valid() {
		return severityNames[s]
	}
	return fmt.Sprintf("Severity(%d)", uint8(s))
}

// ParseSeverity returns the severity with the given name ("low", "medium", "high"), ignoring
// ASCII case. Unknown names are errors.
func ParseSeverity(name string) (Severity, error) {
	for s := Low; s < numSeverities; s++ {
		if strings.EqualFold(name, severityNames[s]) {
			return s, nil
		}
	}
	return 0, fmt.Errorf("risk: unknown severity %q (want one of low, medium, high)", name)
}

// MarshalText implements [encoding.TextMarshaler]; an invalid severity is an error.
func (s Severity) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("risk: cannot marshal invalid severity %d", uint8(s))
	}
	return []byte(severityNames[s]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseSeverity].
func (s *Severity) UnmarshalText(text []byte) error {
	v, err := ParseSeverity(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Severity returns the default severity of a level: ReadOnly is Low, Destructive is High, and
// Mutating, Exec and Network are Medium. A tool may declare another severity for its actions; the
// default applies when it does not. An invalid level is High (fail closed).
func (l Level) Severity() Severity {
	switch l {
	case ReadOnly:
		return Low
	case Mutating, Exec, Network:
		return Medium
	default:
		return High
	}
}
