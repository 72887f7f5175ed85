package profile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/reins-go/reins/policy"
)

// Describe returns the profile's settings, lists, limits and rules as text for humans (the
// policy spec's "profile show"): rules in evaluation order (by priority, ties in declaration
// order), each with its condition and reason. The output is deterministic.
func (p Profile) Describe() string {
	var b strings.Builder
	fam := p.Family
	if fam == "" {
		fam = "no family"
	}
	fmt.Fprintf(&b, "profile %s (%s)\n", p.Name, fam)
	if p.Description != "" {
		fmt.Fprintf(&b, "  %s\n", p.Description)
	}
	band := "invalid"
	if bd, err := policy.BandOf(p.Autonomy); err == nil {
		band = bd.String()
	}
	row := func(name, value string) { fmt.Fprintf(&b, "  %-22s %s\n", name, wrap(value, 25, 100)) }
	b.WriteString("settings\n")
	row("permission mode", p.Mode.String())
	row("autonomy", fmt.Sprintf("%s (%s band)", strconv.FormatFloat(p.Autonomy, 'g', -1, 64), band))
	row("external writes", p.ExternalWrites.String())
	row("exec checkpoints", p.ExecCheckpoints.String())
	row("hash", p.Hash())
	b.WriteString("limits\n")
	row("max concurrent ops", strconv.Itoa(p.Limits.MaxConcurrentOps))
	row("max files per plan", strconv.Itoa(p.Limits.MaxFilesPerPlan))
	row("timeout", p.Limits.Timeout.String())
	b.WriteString("lists\n")
	row("denied paths", quoteList(p.ProtectedPaths))
	row("write-protected paths", quoteList(p.WriteProtectedPaths))
	row("trusted paths", quoteList(p.TrustedPaths))
	row("shell allowlist", quoteList(p.ShellAllowlist))
	row("shell blocklist", quoteList(p.ShellBlocklist))
	row("network allowlist", quoteList(p.NetworkAllowlist))
	row("allowed tools", quoteList(p.AllowedTools))
	row("auto-approve patterns", quoteList(p.AutoApprovePatterns))
	for _, m := range []struct {
		title string
		m     map[string][]string
	}{{"host groups", p.HostGroups}, {"registries", p.Registries}} {
		if len(m.m) == 0 {
			fmt.Fprintf(&b, "%s: none\n", m.title)
			continue
		}
		b.WriteString(m.title + "\n")
		for _, k := range slices.Sorted(maps.Keys(m.m)) {
			row(k, quoteList(m.m[k]))
		}
	}
	rules := slices.Clone(p.Rules)
	slices.SortStableFunc(rules, func(a, b policy.Rule) int { return cmp.Compare(a.Priority, b.Priority) })
	fmt.Fprintf(&b, "rules (%d, in evaluation order)\n", len(rules))
	for _, r := range rules {
		action := r.Action.String()
		if r.Obligations != 0 {
			action += "+" + r.Obligations.String()
		}
		fmt.Fprintf(&b, "  %4d  %-7s %s: %s\n", r.Priority, action, r.ID, describeCondition(r.Condition))
		if r.Reason != "" {
			fmt.Fprintf(&b, "        %s\n", r.Reason)
		}
	}
	return b.String()
}

// wrap breaks a ", "-separated value into lines of at most width columns, continuation lines
// indented by indent spaces (the value itself starts at column indent).
func wrap(v string, indent, width int) string {
	if indent+len(v) <= width {
		return v
	}
	var b strings.Builder
	col := indent
	for i, part := range strings.SplitAfter(v, ", ") {
		if i > 0 && col+len(strings.TrimSuffix(part, " ")) > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		}
		if col == indent {
			part = strings.TrimPrefix(part, " ")
		}
		b.WriteString(part)
		col += len(part)
	}
	return strings.TrimRight(strings.ReplaceAll(b.String(), " \n", "\n"), " ")
}

func quoteList(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	q := make([]string, len(l))
	for i, e := range l {
		q[i] = strconv.Quote(e)
	}
	return strings.Join(q, ", ")
}

// describeCondition renders a condition as "key=value" terms; the empty condition is "any
// action".
func describeCondition(c policy.Condition) string {
	var t []string
	list := func(name string, l []string) {
		if len(l) > 0 {
			t = append(t, name+"="+strings.Join(l, "|"))
		}
	}
	ops := make([]string, len(c.OperationType))
	for i, op := range c.OperationType {
		ops[i] = string(op)
	}
	list("operation", ops)
	list("risk", c.Risk.Names())
	if c.TargetPattern != "" {
		t = append(t, "target="+strconv.Quote(c.TargetPattern))
	}
	if c.CommandPattern != "" {
		t = append(t, "command=/"+c.CommandPattern+"/")
	}
	q := func(name string, l []string) {
		if len(l) > 0 {
			t = append(t, name+"=["+quoteList(l)+"]")
		}
	}
	q("commands", c.Commands)
	q("tools", c.Tools)
	q("hosts", c.Hosts)
	q("providers", c.Providers)
	q("surfaces", c.Surfaces)
	if c.OutsideWorkspace {
		t = append(t, "outside workspace")
	}
	if len(t) == 0 {
		return "any action"
	}
	return strings.Join(t, " ")
}
