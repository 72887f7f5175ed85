package risk

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"
)

// Set is a small set of risk levels, for actions that carry several at once: a shell line such
// as `go test ./... && git push` is Exec and Network. The zero Set is empty. Sets are values;
// every method returns a new set and leaves the receiver unchanged.
type Set uint8

// Of returns the set holding the given levels. Invalid levels are ignored.
func Of(levels ...Level) Set {
	var s Set
	for _, l := range levels {
		s = s.With(l)
	}
	return s
}

// With returns s with l added. An invalid level leaves the set unchanged.
func (s Set) With(l Level) Set {
	if !l.Valid() {
		return s
	}
	return s | 1<<l
}

// Union returns the levels in s or t.
func (s Set) Union(t Set) Set { return s | t }

// Has reports whether l is in s.
func (s Set) Has(l Level) bool { return l.Valid() && s&(1<<l) != 0 }

// Empty reports whether s holds no level.
func (s Set) Empty() bool { return s == 0 }

// Len returns the number of levels in s.
func (s Set) Len() int {
	n := 0
	for l := ReadOnly; l < numLevels; l++ {
		if s.Has(l) {
			n++
		}
	}
	return n
}

// All yields the levels in s in declaration order.
func (s Set) All() iter.Seq[Level] {
	return func(yield func(Level) bool) {
		for l := ReadOnly; l < numLevels; l++ {
			if s.Has(l) && !yield(l) {
				return
			}
		}
	}
}

// Severity returns the strictest default severity of the levels in s, or 0 for the empty set.
func (s Set) Severity() Severity {
	var max Severity
	for l := ReadOnly; l < numLevels; l++ {
		if s.Has(l) && l.Severity() > max {
			max = l.Severity()
		}
	}
	return max
}

// String returns the level names joined by commas, e.g. "exec,network"; the empty set is "".
func (s Set) String() string {
	var b strings.Builder
	for l := range s.All() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(levelNames[l])
	}
	return b.String()
}

// ParseSet parses a comma-separated list of level names as written by [Set.String]. Spaces
// around names are ignored; an empty string is the empty set; an unknown name is an error.
func ParseSet(text string) (Set, error) {
	var s Set
	if strings.TrimSpace(text) == "" {
		return s, nil
	}
	for _, name := range strings.Split(text, ",") {
		l, err := ParseLevel(strings.TrimSpace(name))
		if err != nil {
			return 0, err
		}
		s = s.With(l)
	}
	return s, nil
}

// MarshalJSON encodes the set as a JSON array of level names, e.g. ["exec","network"].
func (s Set) MarshalJSON() ([]byte, error) {
	if s&^validMask != 0 {
		return nil, fmt.Errorf("risk: cannot marshal set with invalid bits %#x", uint8(s&^validMask))
	}
	names := make([]string, 0, s.Len())
	for l := range s.All() {
		names = append(names, levelNames[l])
	}
	return json.Marshal(names)
}

// UnmarshalJSON decodes a JSON array of level names. Unknown names are errors.
func (s *Set) UnmarshalJSON(data []byte) error {
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return fmt.Errorf("risk: a risk set is a JSON array of level names: %w", err)
	}
	var v Set
	for _, name := range names {
		l, err := ParseLevel(name)
		if err != nil {
			return err
		}
		v = v.With(l)
	}
	*s = v
	return nil
}

const validMask Set = (1<<numLevels - 1) &^ 1
