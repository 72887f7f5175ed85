package policy

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/reins-go/reins/risk"
)

// SeveritySet is a small set of severities (see [risk.Severity]). The zero SeveritySet is
// empty. Sets are values; every method returns a new set and leaves the receiver unchanged.
type SeveritySet uint8

// SeveritiesOf returns the set holding the given severities. Invalid severities are ignored.
func SeveritiesOf(sevs ...risk.Severity) SeveritySet {
	var s SeveritySet
	for _, v := range sevs {
		s = s.With(v)
	}
	return s
}

// validSeverities holds the bits of Low, Medium and High.
const validSeverities SeveritySet = 1<<risk.Low | 1<<risk.Medium | 1<<risk.High

// validLevels holds the bits of the five risk levels.
var validLevels = risk.Of(risk.Levels()...)

// With returns s with v added. An invalid severity leaves the set unchanged.
func (s SeveritySet) With(v risk.Severity) SeveritySet {
	if !v.Valid() {
		return s
	}
	return s | 1<<v
}

// Has reports whether v is in s.
func (s SeveritySet) Has(v risk.Severity) bool { return v.Valid() && s&(1<<v) != 0 }

// Union returns the severities in s or t.
func (s SeveritySet) Union(t SeveritySet) SeveritySet { return s | t }

// Empty reports whether s holds no severity.
func (s SeveritySet) Empty() bool { return s == 0 }

// All yields the severities in s from Low to High.
func (s SeveritySet) All() iter.Seq[risk.Severity] {
	return func(yield func(risk.Severity) bool) {
		for v := risk.Low; v <= risk.High; v++ {
			if s.Has(v) && !yield(v) {
				return
			}
		}
	}
}

// String returns the severity names joined by commas, e.g. "low,medium"; the empty set is "".
func (s SeveritySet) String() string {
	var b strings.Builder
	for v := range s.All() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(v.String())
	}
	return b.String()
}

// RiskMatch is the risk condition of a rule ([Condition.Risk]): the risk levels and the
// severities it lists. It holds for a part whose level is in Levels or whose severity is in
// Severities. The zero RiskMatch lists nothing; as a condition it is unset and holds for every
// part.
//
// In JSON (and in profile files) a RiskMatch is the array of names the policy spec writes under
// "risk_level": level names ("read_only", "mutating", "exec", "destructive", "network") and
// severity names ("low", "medium", "high") in any order and any ASCII case, for example
// ["high", "exec"]. It is written back in lower case, severities first (low to high), then
// levels in declaration order.
type RiskMatch struct {
	// Levels lists risk levels; a part at one of them matches.
	Levels risk.Set
	// Severities lists severities; a part with one of them matches, whatever its level.
	Severities SeveritySet
}

// MatchLevels returns the risk condition that lists the given levels.
func MatchLevels(levels ...risk.Level) RiskMatch { return RiskMatch{Levels: risk.Of(levels...)} }

// MatchSeverities returns the risk condition that lists the given severities.
func MatchSeverities(sevs ...risk.Severity) RiskMatch {
	return RiskMatch{Severities: SeveritiesOf(sevs...)}
}

// ParseRiskMatch parses level and severity names, as a profile file's "risk_level" lists them
// (ASCII case ignored). An unknown name is an error that names it.
func ParseRiskMatch(names ...string) (RiskMatch, error) {
	var m RiskMatch
	for _, name := range names {
		if l, err := risk.ParseLevel(name); err == nil {
			m.Levels = m.Levels.With(l)
		} else if s, err := risk.ParseSeverity(name); err == nil {
			m.Severities = m.Severities.With(s)
		} else {
			return RiskMatch{}, fmt.Errorf("unknown risk level or severity %q (want one of read_only, mutating, exec, destructive, network, low, medium, high)", name)
		}
	}
	return m, nil
}

// IsZero reports whether m lists nothing (the condition is unset). encoding/json's omitzero
// uses it.
func (m RiskMatch) IsZero() bool { return m.Levels == 0 && m.Severities == 0 }

// Valid reports whether m holds only valid levels and severities.
func (m RiskMatch) Valid() bool {
	return m.Levels&^validLevels == 0 && m.Severities&^validSeverities == 0
}

// Holds reports whether the condition holds for a part of level l and severity s: m is unset,
// or lists l or s.
func (m RiskMatch) Holds(l risk.Level, s risk.Severity) bool {
	return m.IsZero() || m.Levels.Has(l) || m.Severities.Has(s)
}

// Union returns the condition that lists what m or n lists.
func (m RiskMatch) Union(n RiskMatch) RiskMatch {
	return RiskMatch{Levels: m.Levels.Union(n.Levels), Severities: m.Severities.Union(n.Severities)}
}

// Contains reports whether m lists every level and severity n lists.
func (m RiskMatch) Contains(n RiskMatch) bool {
	return m.Levels.Union(n.Levels) == m.Levels && m.Severities.Union(n.Severities) == m.Severities
}

// Names returns the names m lists, in lower case: severities first (low to high), then levels
// in declaration order. The zero RiskMatch gives nil.
func (m RiskMatch) Names() []string {
	if m.IsZero() {
		return nil
	}
	out := make([]string, 0, 8)
	for s := range m.Severities.All() {
		out = append(out, s.String())
	}
	for l := range m.Levels.All() {
		out = append(out, l.String())
	}
	return out
}

// String returns [RiskMatch.Names] joined by commas, e.g. "high,exec"; the zero RiskMatch is "".
func (m RiskMatch) String() string { return strings.Join(m.Names(), ",") }

// MarshalJSON encodes m as a JSON array of names (see [RiskMatch.Names]). Bits that are no
// level or severity are an error.
func (m RiskMatch) MarshalJSON() ([]byte, error) {
	if !m.Valid() {
		return nil, fmt.Errorf("policy: cannot marshal risk condition with invalid bits (levels %#x, severities %#x)",
			uint8(m.Levels&^validLevels), uint8(m.Severities&^validSeverities))
	}
	names := m.Names()
	if names == nil {
		names = []string{}
	}
	return json.Marshal(names)
}

// UnmarshalJSON decodes a JSON array of level and severity names. An unknown name is an error
// that names it; JSON null leaves m unchanged.
func (m *RiskMatch) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return fmt.Errorf("policy: risk_level is a JSON array of risk level and severity names: %w", err)
	}
	v, err := ParseRiskMatch(names...)
	if err != nil {
		return fmt.Errorf("policy: risk_level: %w", err)
	}
	*m = v
	return nil
}
