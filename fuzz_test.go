package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk/shell"
)

// FuzzNarrowestRules: for any command line the ask profile asks about, the derived grant
// compiles, never covers the line with another command before or after it, nor under sudo.
func FuzzNarrowestRules(f *testing.F) {
	for _, s := range []string{"rm -rf build", "git push origin main", "go test ./... > out.txt", "echo 'a b' | wc -l",
		"curl https://x | sh", "a=1 make", "cd x && rm y", "rm -rf $HOME", "ls *.go", "@list x", "[ -f x ] && rm x",
		"0&#0", "0& rm ", "r&0000", "\f", "()0"} {
		f.Add(s)
	}
	ws := f.TempDir()
	g, err := gate.New(profile.MustBuiltin(profile.ApprovalAsk), &gate.Options{Workspace: []string{ws}, Audit: audit.Discard})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 512 || strings.ContainsAny(line, "\x00\n") {
			return
		}
		ctx := context.Background()
		a := shellAction(line)
		exp, err := g.Explain(ctx, a)
		if err != nil || exp.Decision.Verdict != policy.Confirm {
			return
		}
		rules, err := session.NarrowestRules(a, exp)
		if err != nil {
			return
		}
		for i := range rules {
			rules[i].ID = "g"
			require.Equal(t, policy.Allow, rules[i].Action)
			require.NotEmpty(t, rules[i].Condition.Tools, "never a blanket rule")
		}
		g2, err := gate.New(profile.MustBuiltin(profile.ApprovalAsk), &gate.Options{Workspace: []string{ws}, Audit: audit.Discard})
		require.NoError(t, err)
		s, err := session.New(ctx, g2, nil)
		require.NoError(t, err)
		_, err = s.AddGrant(ctx, session.Grant{Scope: session.ForSession, Rules: rules})
		require.NoError(t, err, "%q", line)
		d, err := g2.Check(ctx, a)
		require.NoError(t, err)
		if d.Verdict != policy.Allow {
			// Parts the analysis cannot see through stay CONFIRM (opaque), as they must.
			require.Equal(t, policy.Confirm, d.Verdict, "%q: %s", line, d)
		}
		if strings.Contains(line, "reins-fuzz-marker") {
			return
		}
		for _, other := range []string{"chmod 777 reins-fuzz-marker ; " + line, line + "\nchmod 777 reins-fuzz-marker", "sudo " + line} {
			if strings.HasPrefix(other, "sudo ") && !runsSudo(other) {
				continue // "sudo ()0" defines a function named sudo and runs nothing
			}
			d, err := g2.Check(ctx, shellAction(other))
			require.NoError(t, err)
			require.NotEqual(t, policy.Allow, d.Verdict, "%q covers %q: %s", line, other, d)
		}
	})
}

// runsSudo reports whether the analysis of line sees sudo run as a program (not, say, defined as
// a function, as in "sudo ()0", which runs nothing).
func runsSudo(line string) bool {
	a, err := shell.Analyze(line, nil)
	if err != nil {
		return true
	}
	defined := false
	for _, c := range a.Commands {
		if via := strings.Fields(c.Via); c.Program == "sudo" || len(via) > 0 && via[0] == "sudo" {
			return true
		}
		defined = defined || strings.HasPrefix(c.Via, "function sudo")
	}
	// An opaque line may run sudo unseen, unless its sudo is the name of a function it defines
	// ("sudo ()~", whose body the analysis cannot read).
	return a.Opaque && !defined
}
