package policy

import "sync/atomic"

// ruleSetIDs numbers rule sets for LineMemo (0 is no rule set).
var ruleSetIDs atomic.Uint64

// LineMemo remembers, across the parts of one action, which DENY and CONFIRM command patterns
// match the action's whole command line, so that [RuleSet.EvaluateMemo] runs each of them on the
// line at most once per action: a line of five commands is decided as five or more parts, and
// without a memo a pattern that spans a pipe would be searched for in the line for each.
//
// The zero LineMemo is ready to use and holds nothing. It notices a different rule set or line
// and starts afresh, so one memo may serve many evaluations; it remembers the first sixteen
// patterns it ran and runs any other every time. A LineMemo is not safe for concurrent use.
type LineMemo struct {
	rs   uint64 // the rule set's id (a pointer here would move the evaluation's state to the heap)
	line string
	n    uint8
	hits uint16 // bit k: rule[k]'s pattern matched the line
	rule [16]int32
}

// matchLine reports whether rule i's command pattern matches the subject's whole line, from the
// memo when it has the answer.
func (p *probe) matchLine(i int32, re *cmdRegex) bool {
	m := p.memo
	line := p.s.Line
	if m == nil {
		return re.match(line)
	}
	if m.rs != p.rs.id || m.line != line {
		m.rs, m.line, m.n, m.hits = p.rs.id, line, 0, 0
	}
	for k := range m.n {
		if m.rule[k] == i {
			return m.hits&(1<<k) != 0
		}
	}
	hit := re.match(line)
	if int(m.n) < len(m.rule) {
		m.rule[m.n] = i
		if hit {
			m.hits |= 1 << m.n
		}
		m.n++
	}
	return hit
}
