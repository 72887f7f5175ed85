package reinstest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/reinstest"
)

// writeTool is a small agent tool under test: it writes a file through the session, so the
// gate decides, the workspace is checkpointed, and a failed write is rolled back.
type writeTool struct {
	r  *reins.Run
	ws string
}

func (w writeTool) Write(ctx context.Context, name, content string) error {
	a := policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{name}}
	_, err := w.r.Do(ctx, a, func(context.Context, gate.Decision) error {
		if content == "" {
			// A half-done write, then a failure: the checkpoint undoes it.
			_ = os.WriteFile(filepath.Join(w.ws, name), []byte("half"), 0o644)
			return errors.New("write_file: empty content")
		}
		return os.WriteFile(filepath.Join(w.ws, name), []byte(content), 0o644)
	})
	return err
}

func TestWriteTool(t *testing.T) {
	ctx := context.Background()
	k := reinstest.New(t, nil) // trusted: writes go ahead with a checkpoint and a notification
	require.NoError(t, os.WriteFile(filepath.Join(k.Workspace, "notes.md"), []byte("v1"), 0o644))
	tool := writeTool{r: k.Run, ws: k.Workspace}

	require.NoError(t, tool.Write(ctx, "notes.md", "v2"))
	b, err := os.ReadFile(filepath.Join(k.Workspace, "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "v2", string(b))
	assert.Len(t, k.Checkpointer.Taken(), 1)
	assert.Len(t, k.Notifier.Notices(), 1)

	// A failure is the tool's, not the gate's, and it is rolled back.
	err = tool.Write(ctx, "notes.md", "")
	require.Error(t, err)
	assert.NotErrorIs(t, err, gate.ErrDenied)
	b, err = os.ReadFile(filepath.Join(k.Workspace, "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "v2", string(b))
	assert.Len(t, k.Checkpointer.Restored(), 1)

	// A protected path is the gate's refusal; nothing is written.
	err = tool.Write(ctx, ".env", "TOKEN=x")
	require.ErrorIs(t, err, gate.ErrDenied)
	assert.NoFileExists(t, filepath.Join(k.Workspace, ".env"))

	assert.Equal(t, []audit.Kind{
		audit.KindDecision, audit.KindCheckpointCreated, audit.KindOutcome,
		audit.KindDecision, audit.KindCheckpointCreated, audit.KindOutcome, audit.KindCheckpointRestored,
		audit.KindDecision, audit.KindOutcome,
	}, k.Kinds())
}

func TestWriteToolUnderSupervision(t *testing.T) {
	ctx := context.Background()
	p := profile.MustBuiltin(profile.PermissionSupervised)
	k := reinstest.New(t, &reinstest.Options{Profile: &p})
	tool := writeTool{r: k.Run, ws: k.Workspace}
	k.RequireConfirm(policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"a.txt"}})

	// Refused by the scripted human, then approved for the reins.
	k.Approver.Script(reins.Answer{Verdict: policy.Deny, By: "reviewer"},
		reins.Answer{Verdict: policy.Allow, Scope: reins.ForSession, By: "reviewer"})
	require.ErrorIs(t, tool.Write(ctx, "a.txt", "x"), gate.ErrDenied)
	require.NoError(t, tool.Write(ctx, "a.txt", "x"))
	require.NoError(t, tool.Write(ctx, "a.txt", "y"), "the session grant answers")
	assert.Len(t, k.Approver.Asked(), 2)
	k.RequireAllowed(policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"a.txt"}})
	k.RequireConfirm(policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"b.txt"}})
}

func TestDecisionTable(t *testing.T) {
	k := reinstest.New(t, nil)
	cp := policy.Checkpoint | policy.Notify
	k.Table([]reinstest.Case{
		{Name: "read", Action: policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"x.go"}}, Want: policy.Allow},
		{Name: "write", Action: policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"x.go"}}, Want: policy.Allow, Obligations: &cp},
		{Name: "secret", Action: policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{".env"}}, Want: policy.Deny, RuleID: gate.CheckProtectedPath},
		{Name: "delete", Action: policy.Action{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"x.go"}}, Want: policy.Confirm},
	})
	k.Golden(filepath.Join("testdata", "trusted.golden"), []policy.Action{
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"x.go"}},
		{Tool: "bash", Operation: policy.OpShell, Command: "rm -rf build"},
		{Tool: "bash", Operation: policy.OpShell, Command: "go test ./..."},
		{Tool: "fetch", Operation: policy.OpNetwork, Host: "example.com"},
	})
}
