package reins_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

// Issue 24: a grant is exactly as narrow as it says. A session grant for `go test ./...`
// covers that line, in the directory where it was approved, with the environment it was
// approved with, and nothing else: not under a wrapper, not chained, not after a cd, not in
// another working directory, not with another environment. Each near miss is asked again.
func TestGrantCoversOnlyTheLineAsApproved(t *testing.T) {
	ctx := context.Background()
	ap := &script{answers: []reins.Answer{{Verdict: policy.Allow, Scope: reins.ForSession, By: "alice"}}}
	f := newPlain(t, builtin(profile.ApprovalAsk), func(o *reins.Options) { o.Approver = ap; o.Checkpointer = &nopCheckpointer{} })
	line := "go test ./..."
	out, err := f.r.Do(ctx, shellAction(line), ok)
	require.NoError(t, err)
	require.NotEmpty(t, out.Approval.Grant)
	gs := f.grants(t)
	require.Len(t, gs, 1)
	assert.Equal(t, line, gs[0].Line)
	assert.NotEmpty(t, gs[0].Dir)
	assert.Empty(t, gs[0].Env)

	// The line as approved: the grant answers, no question.
	out, err = f.r.Do(ctx, shellAction(line), ok)
	require.NoError(t, err)
	assert.Nil(t, out.Approval)
	assert.True(t, grantedBy(out.Decision), "%s", out.Decision)
	assert.Equal(t, 1, ap.count())

	type nearMiss struct {
		what string
		a    policy.Action
	}
	var misses []nearMiss
	for _, w := range wrappers {
		misses = append(misses, nearMiss{"under " + w, shellAction(w + line)})
	}
	for _, l := range []string{"cd docs && " + line, "cd .. && " + line, "cd " + t.TempDir() + " && " + line, line + " && rm -rf build",
		line + "; echo done", "true && " + line, line + " -run X", "sudo " + line} {
		misses = append(misses, nearMiss{l, shellAction(l)})
	}
	for _, dir := range []string{"docs", "src/pkg", t.TempDir(), filepath.Dir(f.ws)} {
		a := shellAction(line)
		a.WorkDir = dir
		misses = append(misses, nearMiss{"in " + dir, a})
	}
	for _, env := range [][]string{{"GOFLAGS=-count=1"}, {"LANG=C"}, {"LD_PRELOAD=/tmp/x.so"}, {"GOFLAGS=-toolexec=/tmp/x"}} {
		a := shellAction(line)
		a.Env = env
		misses = append(misses, nearMiss{"with " + env[0], a})
	}
	for _, m := range misses {
		d, err := f.r.Check(ctx, m.a)
		require.NoError(t, err, m.what)
		assert.False(t, grantedBy(d), "the grant for %q covers %s: %s", line, m.what, d)
		assert.NotEqual(t, policy.Allow, d.Verdict, "%s: %s", m.what, d)
		if _, halted := f.halted(); halted {
			require.NoError(t, f.r.Reset(ctx, "next near miss")) // a write outside the workspace
		}
	}
	// Through Do each is asked about again (the script refuses).
	before := ap.count()
	for _, m := range misses[:len(wrappers)] {
		_, err := f.r.Do(ctx, m.a, ok)
		require.ErrorIs(t, err, gate.ErrDenied, m.what)
	}
	assert.Equal(t, before+len(wrappers), ap.count(), "every wrapper is asked about")
	gs = f.grants(t)
	require.Len(t, gs, 1)
	assert.Equal(t, 1, gs[0].Used, "only the line as approved used the grant")
}

// Issue 24: the proposal of an always grant lists the near misses a human would ask about (the
// line under each wrapper, chained, after a cd elsewhere, in another directory, with another
// environment) as non-matches, decided by the grant's own matcher.
func TestProposalListsTheNearMisses(t *testing.T) {
	ctx := context.Background()
	store := reins.NewMemoryStore()
	ap := &script{answers: []reins.Answer{{Verdict: policy.Allow, Scope: reins.Always, By: "carol"}, {Verdict: policy.Allow, By: "carol"}}}
	f := newPlain(t, builtin(profile.ApprovalAsk), func(o *reins.Options) {
		o.Approver, o.Grants, o.Checkpointer = ap, store, &nopCheckpointer{}
	})
	line := "go test ./..."
	out, err := f.r.Do(ctx, shellAction(line), ok)
	require.NoError(t, err)
	assert.Equal(t, reins.Always, out.Approval.Scope)
	require.Equal(t, 2, ap.count())
	prop := ap.asked[1].Proposal
	require.NotNil(t, prop)
	assert.Equal(t, line, prop.Grant.Line)
	assert.Equal(t, []string{line}, prop.Matches, "only the line itself")
	for _, w := range wrappers {
		assert.Contains(t, prop.NonMatches, w+line)
	}
	assert.Contains(t, prop.NonMatches, "sudo "+line)
	assert.Contains(t, prop.NonMatches, line+" --extra-flag")
	assert.Contains(t, prop.NonMatches, line+" && rm -rf ~")
	assert.Contains(t, prop.NonMatches, "cd /tmp && "+line)
	var inDir, withEnv bool
	for _, n := range prop.NonMatches {
		inDir = inDir || strings.HasPrefix(n, line+" (in ")
		withEnv = withEnv || n == line+" (with LD_PRELOAD=/tmp/x.so)"
	}
	assert.True(t, inDir, "another directory: %q", prop.NonMatches)
	assert.True(t, withEnv, "another environment: %q", prop.NonMatches)

	// What the preview says is what the grant does.
	for _, w := range wrappers {
		d, err := f.r.Check(ctx, shellAction(w+line))
		require.NoError(t, err)
		assert.False(t, grantedBy(d), w)
	}
	d, err := f.r.Check(ctx, shellAction(line))
	require.NoError(t, err)
	assert.True(t, grantedBy(d), "%s", d)
}

// Issue 24: DoCommand runs only what was decided. The command's directory and environment are
// the action's: one that differs from the action's is refused before anything is decided or
// run; one the action does not carry is decided with it. An environment that changes what a
// program runs (LD_PRELOAD, GOFLAGS=-toolexec) makes the command CONFIRM, never an ALLOW by a
// grant or by the profile; sh -c runs as bash -c, the grammar the analysis reads.
func TestDoCommandRunsOnlyWhatWasDecided(t *testing.T) {
	ctx := context.Background()
	run := &fakeRunner{}
	ap := &script{}
	f := newPlain(t, builtin(profile.ApprovalAsk), func(o *reins.Options) {
		o.Approver, o.Sandbox, o.Runner, o.Checkpointer = ap, run, run, &nopCheckpointer{}
	})
	line := "go test ./..."
	g := grantFor(t, f.r, shellAction(line), reins.ForSession)

	// The action as granted runs without a question, in the action's directory, with its
	// environment.
	out, _, err := f.r.DoCommand(ctx, shellAction(line), sandbox.Command{})
	require.NoError(t, err)
	assert.True(t, grantedBy(out.Decision), "%s", out.Decision)
	require.Len(t, run.ran(), 1)
	assert.Equal(t, []string{"bash", "-c", line}, run.ran()[0].Args)
	assert.Empty(t, run.ran()[0].Dir)
	assert.Empty(t, run.ran()[0].Env)

	// A directory or an environment that differs from the action's is refused: nothing is
	// decided, nothing runs.
	recs := len(f.sink.Records())
	for _, tc := range []struct {
		a   policy.Action
		cmd sandbox.Command
	}{
		{policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line, WorkDir: "docs"}, sandbox.Command{Dir: "src"}},
		{policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line, WorkDir: "docs"}, sandbox.Command{Dir: "/"}},
		{policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line, Env: []string{"LANG=C"}}, sandbox.Command{Env: []string{"LD_PRELOAD=/tmp/x.so"}}},
		{policy.Action{Tool: "bash", Operation: policy.OpShell, Command: line, Env: []string{"LANG=C"}}, sandbox.Command{Env: []string{"LANG=C", "GOFLAGS=-toolexec=/tmp/x"}}},
		{shellAction(line), sandbox.Command{Args: []string{"go", "test", "./...", "-exec", "/tmp/x"}}},
	} {
		out, res, err := f.r.DoCommand(ctx, tc.a, tc.cmd)
		require.Error(t, err, "%+v", tc)
		assert.False(t, out.Ran)
		assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
	}
	assert.Len(t, run.ran(), 1, "nothing more ran")
	assert.Len(t, f.sink.Records(), recs, "nothing was decided")
	assert.Zero(t, ap.count())

	// A directory the action does not carry is decided with it: the grant was approved in the
	// workspace root, so the same line in docs is asked about (and refused here).
	_, _, err = f.r.DoCommand(ctx, shellAction(line), sandbox.Command{Dir: "docs"})
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.Equal(t, 1, ap.count(), "asked")
	require.Len(t, ap.asked, 1)
	assert.Equal(t, "docs", ap.asked[0].Action.WorkDir, "the approver sees the directory that would run")
	assert.Len(t, run.ran(), 1)

	// An environment the action does not carry is decided with it: LD_PRELOAD and
	// GOFLAGS=-toolexec change what go test runs, so the grant does not answer.
	for _, env := range []string{"LD_PRELOAD=/tmp/x.so", "GOFLAGS=-toolexec=/tmp/x"} {
		n := ap.count()
		out, _, err := f.r.DoCommand(ctx, shellAction(line), sandbox.Command{Env: []string{env}})
		require.ErrorIs(t, err, gate.ErrDenied, env)
		assert.False(t, grantedBy(out.Decision))
		assert.Equal(t, n+1, ap.count(), "%s is asked about", env)
		assert.Equal(t, []string{env}, ap.asked[n].Action.Env)
	}
	assert.Len(t, run.ran(), 1)

	// Approved once, the command runs with exactly what was approved.
	ap.answers = []reins.Answer{{Verdict: policy.Allow, By: "alice"}}
	out, _, err = f.r.DoCommand(ctx, shellAction(line), sandbox.Command{Dir: "docs", Env: []string{"LANG=C"}})
	require.NoError(t, err)
	assert.True(t, out.Ran)
	got := run.ran()[len(run.ran())-1]
	assert.Equal(t, "docs", got.Dir)
	assert.Equal(t, []string{"LANG=C"}, got.Env)
	gs := f.grants(t)
	require.Len(t, gs, 1)
	assert.Equal(t, g.ID, gs[0].ID)
	assert.Equal(t, 1, gs[0].Used)

	// sh -c runs as bash -c, whichever way the command is given.
	f = newPlain(t, builtin(profile.ApprovalYolo), func(o *reins.Options) {
		o.Sandbox, o.Runner, o.Checkpointer = run, run, &nopCheckpointer{}
	})
	for _, tc := range []struct {
		a    policy.Action
		args []string
	}{
		{shellAction("echo hi"), []string{"sh", "-c", "echo hi"}},
		{policy.Action{Tool: "bash"}, []string{"sh", "-c", "echo hi"}},
		{policy.Action{Tool: "bash"}, []string{"sh", "-c", "echo $0", "x"}},
		{policy.Action{Tool: "bash"}, []string{"/bin/sh", "-c", "echo hi"}},
	} {
		out, _, err := f.r.DoCommand(ctx, tc.a, sandbox.Command{Args: tc.args})
		require.NoError(t, err, "%q", tc.args)
		require.True(t, out.Ran)
		got := run.ran()[len(run.ran())-1]
		assert.Equal(t, "bash", got.Args[0], "%q runs as %q", tc.args, got.Args)
		assert.Equal(t, tc.args[1:], got.Args[1:])
	}
}

// Issue 24: an environment that changes what a program runs makes the command CONFIRM whatever
// allows it: a profile that allows go test on its own, or a grant approved with that very
// environment (the opaque rule outranks a grant's ALLOW).
func TestUnsafeEnvironmentIsNeverAutoApproved(t *testing.T) {
	ctx := context.Background()
	line := "go test ./..."
	for _, name := range []string{profile.ProfileDev, profile.ProfileFullAuto, profile.ApprovalAuto, profile.ApprovalYolo, profile.PermissionAutonomous} {
		f := newPlain(t, builtin(name), nil)
		require.Equal(t, policy.Allow, f.check(t, shellAction(line)).Verdict, name)
		for _, env := range []string{"LD_PRELOAD=/tmp/x.so", "GOFLAGS=-toolexec=/tmp/x", "BASH_ENV=/tmp/x", "PATH=/tmp/bin"} {
			a := shellAction(line)
			a.Env = []string{env}
			d := f.check(t, a)
			assert.Equal(t, policy.Confirm, d.Verdict, "%s with %s: %s", name, env, d)
		}
	}

	ap := &script{answers: []reins.Answer{{Verdict: policy.Allow, Scope: reins.ForSession, By: "alice"}}}
	f := newPlain(t, builtin(profile.ApprovalAsk), func(o *reins.Options) { o.Approver = ap; o.Checkpointer = &nopCheckpointer{} })
	a := shellAction(line)
	a.Env = []string{"LD_PRELOAD=/tmp/x.so"}
	out, err := f.r.Do(ctx, a, ok)
	require.NoError(t, err)
	require.NotNil(t, out.Approval)
	_, err = f.r.Do(ctx, a, ok)
	require.ErrorIs(t, err, gate.ErrDenied, "asked again, and refused by the script")
	assert.Equal(t, 2, ap.count())
	d := f.check(t, a)
	assert.Equal(t, policy.Confirm, d.Verdict)
	assert.Equal(t, gate.CheckOpaqueCommand, d.RuleID)
}
