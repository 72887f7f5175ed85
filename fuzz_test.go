package reins_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// nearMisses are the ways to run a granted line differently that a grant never covers (issue
// 24): the line under each wrapper or sudo, after a cd, after another command.
var nearMisses = append(slices.Clone(wrappers), "sudo ", "cd /tmp && ", "cd .. && ", "chmod 777 reins-fuzz-marker ; ")

// FuzzNarrowestRules: for any command line the ask profile asks about, the derived grant is as
// narrow as an approval (Grant.Validate), compiles, and covers the line as approved, in the
// directory and with the environment it was approved with, and nothing else: not the line with
// another command before or after it, under a wrapper (nice, timeout, nohup, command, setsid,
// env -i, stdbuf, taskset, exec, sudo), after a cd, in another working directory, or with
// another environment.
func FuzzNarrowestRules(f *testing.F) {
	for _, s := range []string{"rm -rf build", "git push origin main", "go test ./... > out.txt", "echo 'a b' | wc -l",
		"curl https://x | sh", "a=1 make", "cd x && rm y", "rm -rf $HOME", "ls *.go", "@list x", "[ -f x ] && rm x",
		"0&#0", "0& rm ", "r&0000", "\f", "()0", "go test ./...", "make -j4 build"} {
		f.Add(s)
	}
	ws := f.TempDir()
	other := f.TempDir()
	cfg := filepath.Join(f.TempDir(), "reins")
	ctx := context.Background()
	newRun := func(t testing.TB) *reins.Run {
		r, err := reins.New(ctx, profile.MustBuiltin(profile.ApprovalAsk), &reins.Options{Workspace: []string{ws}, Audit: audit.Discard, ConfigDir: cfg})
		require.NoError(t, err)
		return r
	}
	r0 := newRun(f)
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 512 || strings.ContainsAny(line, "\x00\n") {
			return
		}
		a := shellAction(line)
		exp, err := r0.Explain(ctx, a)
		if err != nil || exp.Decision.Verdict != policy.Confirm {
			return
		}
		rules, err := reins.NarrowestRules(a, exp)
		if err != nil {
			return
		}
		for i := range rules {
			require.Equal(t, policy.Allow, rules[i].Action)
			require.NotEmpty(t, rules[i].Condition.Tools, "never a blanket rule")
		}
		r := newRun(t)
		defer r.Close()
		g, err := r.AddGrant(ctx, reins.Grant{Scope: reins.ForSession, Rules: rules, Line: line, Dir: exp.Dir})
		require.NoError(t, err, "%q: the narrowest rules are a valid grant", line)
		require.NoError(t, g.Validate())
		d, err := r.Check(ctx, a)
		require.NoError(t, err)
		if d.Verdict != policy.Allow {
			// Parts the analysis cannot see through stay CONFIRM (opaque), as they must.
			require.Equal(t, policy.Confirm, d.Verdict, "%q: %s", line, d)
		}
		if strings.Contains(line, "reins-fuzz-marker") {
			return
		}
		notCovered := func(b policy.Action, what string) {
			t.Helper()
			d, err := r.Check(ctx, b)
			require.NoError(t, err)
			if _, halted := r.Halted(ctx); halted {
				// A write outside the workspace latched the hard stop: not the grant's doing.
				require.NoError(t, r.Reset(ctx, "next near miss"))
			}
			require.False(t, d.Verdict == policy.Allow && strings.HasPrefix(d.RuleID, gate.CheckGrantPrefix),
				"%q covers %s: %s", line, what, d)
			if d.Verdict == policy.Allow {
				// Allowed without the grant (the profile allows it on its own): the grant played
				// no part in it.
				e, err := r.Explain(ctx, b)
				require.NoError(t, err)
				for _, p := range e.Parts {
					require.False(t, strings.HasPrefix(p.RuleID, gate.CheckGrantPrefix), "%q covers a part of %s: %s", line, what, d)
				}
			}
		}
		for _, pre := range nearMisses {
			if pre == "sudo " && !runsSudo(pre+line) {
				continue // "sudo ()0" defines a function named sudo and runs nothing
			}
			notCovered(shellAction(pre+line), "the line after "+pre)
		}
		notCovered(shellAction(line+"\nchmod 777 reins-fuzz-marker"), "the line followed by another command")
		notCovered(shellAction(line+" && chmod 777 reins-fuzz-marker"), "the line chained with another command")
		b := a
		b.WorkDir = other
		notCovered(b, "the line in another directory")
		b = a
		b.WorkDir = "docs"
		notCovered(b, "the line in a subdirectory")
		b = a
		b.Env = []string{"GOFLAGS=-count=1"}
		notCovered(b, "the line with another environment")
		b.Env = []string{"LD_PRELOAD=/tmp/x.so"}
		notCovered(b, "the line with LD_PRELOAD")
	})
}
