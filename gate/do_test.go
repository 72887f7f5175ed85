package gate_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

type doFixture struct {
	g        *gate.Gate
	ws       string
	sink     *audit.Memory
	notified []string
}

func newDoFixture(t *testing.T, p profile.Profile, approve *bool) *doFixture {
	t.Helper()
	f := &doFixture{ws: workspace(t), sink: audit.NewMemory(0)}
	// A real repository instead of the fixture's stand-in .git directory.
	require.NoError(t, os.RemoveAll(filepath.Join(f.ws, ".git")))
	out, err := exec.Command("git", "-C", f.ws, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var cp *checkpoint.Checkpointer
	cp, err = checkpoint.New(context.Background(), f.ws, &checkpoint.Options{ShadowRoot: t.TempDir()})
	require.NoError(t, err)
	opts := &gate.Options{Workspace: []string{f.ws}, Audit: f.sink, Checkpointer: cp,
		Notifier: gate.NotifierFunc(func(_ context.Context, a policy.Action, _ gate.Decision) error {
			f.notified = append(f.notified, a.Tool)
			return nil
		})}
	if approve != nil {
		opts.Approver = gate.ApproverFunc(func(context.Context, policy.Action, gate.Decision) (bool, error) { return *approve, nil })
	}
	f.g, err = gate.New(p, opts)
	require.NoError(t, err)
	return f
}

func (f *doFixture) outcomes() []audit.Outcome {
	var out []audit.Outcome
	for _, r := range f.sink.Records() {
		if r.Kind == audit.KindOutcome {
			out = append(out, r.Outcome)
		}
	}
	return out
}

var editMain = policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"src/pkg/main.go"}}

func TestDoSucceedsWithCheckpointAndNotification(t *testing.T) {
	t.Parallel()
	f := newDoFixture(t, builtin(profile.ModeTrusted), nil) // mutating: ALLOW + checkpoint + notify
	out, err := f.g.Do(context.Background(), editMain, func(_ context.Context, d gate.Decision) error {
		return os.WriteFile(filepath.Join(f.ws, "src/pkg/main.go"), []byte("edited\n"), 0o644)
	})
	require.NoError(t, err)
	assert.True(t, out.Ran)
	assert.NotEmpty(t, out.CheckpointID)
	assert.False(t, out.RolledBack)
	assert.Equal(t, []string{"edit_file"}, f.notified)
	got, err := os.ReadFile(filepath.Join(f.ws, "src/pkg/main.go"))
	require.NoError(t, err)
	assert.Equal(t, "edited\n", string(got))
	assert.Equal(t, []audit.Outcome{audit.OutcomeSucceeded}, f.outcomes())
}

func TestDoRollsBackAFailure(t *testing.T) {
	t.Parallel()
	f := newDoFixture(t, builtin(profile.ModeTrusted), nil)
	boom := errors.New("compile error")
	out, err := f.g.Do(context.Background(), editMain, func(context.Context, gate.Decision) error {
		require.NoError(t, os.WriteFile(filepath.Join(f.ws, "src/pkg/main.go"), []byte("broken\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(f.ws, "src/pkg/new.go"), []byte("new\n"), 0o644))
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.True(t, out.RolledBack)
	got, err := os.ReadFile(filepath.Join(f.ws, "src/pkg/main.go"))
	require.NoError(t, err)
	assert.Equal(t, "x\n", string(got), "the edit was rolled back")
	assert.NoFileExists(t, filepath.Join(f.ws, "src/pkg/new.go"), "a file created by the failed action is removed")
	assert.Equal(t, []audit.Outcome{audit.OutcomeRolledBack}, f.outcomes())
	recs := f.sink.Records()
	assert.Equal(t, out.CheckpointID, recs[len(recs)-1].CheckpointID)
	assert.Equal(t, "compile error", recs[len(recs)-1].Error)

	// Three failures of one tool in a row halt the run.
	for range 2 {
		_, _ = f.g.Do(context.Background(), editMain, func(context.Context, gate.Decision) error { return boom })
	}
	_, halted := f.g.Halted()
	assert.True(t, halted)
	_, err = f.g.Do(context.Background(), editMain, func(context.Context, gate.Decision) error {
		t.Fatal("a halted gate runs nothing")
		return nil
	})
	assert.ErrorIs(t, err, gate.ErrDenied)
}

func TestDoConfirm(t *testing.T) {
	t.Parallel()
	ran := false
	run := func(context.Context, gate.Decision) error { ran = true; return nil }
	destructive := policy.Action{Tool: "rm", Operation: policy.OpDelete, Targets: []string{"build"}}

	f := newDoFixture(t, builtin(profile.ModeTrusted), nil) // destructive: CONFIRM, nobody to ask
	_, err := f.g.Do(context.Background(), destructive, run)
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.ErrorContains(t, err, "no approver")
	assert.False(t, ran)

	no := false
	f = newDoFixture(t, builtin(profile.ModeTrusted), &no)
	_, err = f.g.Do(context.Background(), destructive, run)
	require.ErrorIs(t, err, gate.ErrNotApproved)
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.False(t, ran)
	last := f.sink.Records()[len(f.sink.Records())-1]
	assert.True(t, last.UserOverride)
	assert.Equal(t, audit.DecidedByUser, last.DecidedBy)

	yes := true
	f = newDoFixture(t, builtin(profile.ModeTrusted), &yes)
	out, err := f.g.Do(context.Background(), destructive, run)
	require.NoError(t, err)
	assert.True(t, ran)
	assert.True(t, out.Approved)
	assert.NotEmpty(t, out.CheckpointID, "a destructive action is checkpointed first")
}

func TestDoFailsClosedOnObligations(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	g, err := gate.New(builtin(profile.ModeTrusted), &gate.Options{Workspace: []string{ws}})
	require.NoError(t, err)
	_, err = g.Do(context.Background(), editMain, func(context.Context, gate.Decision) error {
		t.Fatal("ran without its checkpoint")
		return nil
	})
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.ErrorContains(t, err, "no checkpointer")

	var denied *gate.DeniedError
	_, err = g.Do(context.Background(), policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{".env"}},
		func(context.Context, gate.Decision) error { return nil })
	require.ErrorAs(t, err, &denied)
	assert.Equal(t, gate.LayerBoundary, denied.Decision.Layer)

	read := policy.Action{Tool: "read_file", Operation: policy.OpRead, Risk: risk.Of(risk.ReadOnly), Targets: []string{"README.md"}}
	out, err := g.Do(context.Background(), read, func(context.Context, gate.Decision) error { return nil })
	require.NoError(t, err, "a read needs no obligation")
	assert.True(t, out.Ran)
}

func TestRecordCheckpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, builtin(profile.ModeTrusted))
	ctx := context.Background()
	require.NoError(t, f.g.RecordCheckpoint(ctx, gate.CheckpointEvent{Kind: "created", ID: "0190-abc", Label: "before edit", Workspace: f.ws}))
	require.NoError(t, f.g.RecordCheckpoint(ctx, gate.CheckpointEvent{Kind: "restored", ID: "0190-abc", Undo: "0190-def", Cause: errors.New("tests failed")}))
	assert.Error(t, f.g.RecordCheckpoint(ctx, gate.CheckpointEvent{Kind: "exploded"}))
	recs := f.sink.Records()
	require.Len(t, recs, 2)
	assert.Equal(t, audit.KindCheckpointCreated, recs[0].Kind)
	assert.Equal(t, "0190-abc", recs[0].CheckpointID)
	assert.Equal(t, audit.KindCheckpointRestored, recs[1].Kind)
	assert.Equal(t, " (undo with 0190-def): tests failed", recs[1].Reason)
}
