package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	reinslc "github.com/reins-go/reins/examples/langchaingo"
	"github.com/reins-go/reins/host"
	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// fnTool is a plain langchaingo tool, as an application writes one.
type fnTool struct {
	name  string
	calls atomic.Int32
	fn    func(ctx context.Context, input string) (string, error)
}

func (t *fnTool) Name() string        { return t.name }
func (t *fnTool) Description() string { return "the " + t.name + " tool" }
func (t *fnTool) Call(ctx context.Context, input string) (string, error) {
	t.calls.Add(1)
	return t.fn(ctx, input)
}

// fixture is a run over a git workspace, and file tools wrapped for it.
type fixture struct {
	ws                       string
	run                      *host.Run
	audit                    *audit.Memory
	read, write, del         *fnTool
	tools                    []tools.Tool
	checkpointsAtWrite       atomic.Int32
	errWriteFailedAfterWrite error
}

func newFixture(t *testing.T, approver reins.Approver) *fixture {
	t.Helper()
	testenv.RequireTool(t, "git", "checkpoints are git snapshots (apt-get install git)")
	ctx := context.Background()
	f := &fixture{ws: t.TempDir(), audit: audit.NewMemory(0), errWriteFailedAfterWrite: errors.New("the disk is full")}
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, "README.md"), []byte("hello from the workspace\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".env"), []byte("SECRET=canary-0b7e\n"), 0o600))
	out, err := exec.Command("git", "-C", f.ws, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	f.run, err = host.New(ctx, f.ws, profile.Dev, &host.Options{Approver: approver, Audit: f.audit,
		Logger: slog.New(slog.DiscardHandler), ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.run.Close() })

	f.read = &fnTool{name: "read_file", fn: func(_ context.Context, path string) (string, error) {
		b, err := os.ReadFile(filepath.Join(f.ws, path))
		return string(b), err
	}}
	f.write = &fnTool{name: "write_file", fn: func(ctx context.Context, input string) (string, error) {
		list, err := f.run.Checkpointer.List(ctx)
		if err != nil {
			return "", err
		}
		f.checkpointsAtWrite.Store(int32(len(list)))
		var in struct{ Path, Content string }
		if err := json.Unmarshal([]byte(input), &in); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(f.ws, in.Path), []byte(in.Content), 0o644); err != nil {
			return "", err
		}
		if strings.Contains(in.Content, "FAIL") {
			return "", f.errWriteFailedAfterWrite
		}
		return "wrote " + in.Path, nil
	}}
	f.del = &fnTool{name: "delete_file", fn: func(_ context.Context, path string) (string, error) {
		return "deleted " + path, os.Remove(filepath.Join(f.ws, path))
	}}
	f.tools = []tools.Tool{
		reinslc.Wrap(f.run, f.read, reins.ToolSpec{Operation: policy.OpRead, Reads: []string{reins.WholeInput}}),
		reinslc.Wrap(f.run, f.write, reins.ToolSpec{Operation: policy.OpWrite, Writes: []string{"path"}}),
		reinslc.Wrap(f.run, f.del, reins.ToolSpec{Operation: policy.OpDelete, Writes: []string{reins.WholeInput}}),
		reinslc.Shell(f.run, "bash", "Runs a bash command line in the workspace."),
	}
	return f
}

// agent runs langchaingo's own agent executor over the wrapped tools, with langchaingo's fake
// model answering with the given completions (the agent's actions, then its final answer).
// It returns the executor's steps and error.
func (f *fixture) agent(t *testing.T, completions ...string) ([]schema.AgentStep, error) {
	t.Helper()
	llm := fake.NewFakeLLM(append(completions, "Final Answer: done"))
	exec := agents.NewExecutor(agents.NewOneShotAgent(llm, f.tools),
		agents.WithMaxIterations(len(completions)+1), agents.WithReturnIntermediateSteps())
	out, err := chains.Call(context.Background(), exec, map[string]any{"input": "do the task"})
	if err != nil {
		return nil, err
	}
	assert.Equal(t, "done", out["output"])
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	require.Len(t, steps, len(completions))
	return steps, nil
}

func action(tool, input string) string { return "Action: " + tool + "\nAction Input: " + input }

func (f *fixture) records(kind audit.Kind, tool string) []audit.Record {
	var out []audit.Record
	for _, r := range f.audit.Records() {
		if r.Kind == kind && r.Tool == tool {
			out = append(out, r)
		}
	}
	return out
}

func answer(v policy.Verdict, by string) reins.Approver {
	return reins.ApproverFunc(func(context.Context, reins.Request) (reins.Answer, error) {
		return reins.Answer{Verdict: v, By: by}, nil
	})
}

func TestAgentCallAllowed(t *testing.T) {
	f := newFixture(t, nil)
	steps, err := f.agent(t, action("read_file", "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "hello from the workspace\n", steps[0].Observation)
	assert.EqualValues(t, 1, f.read.calls.Load())
	d := f.records(audit.KindDecision, "read_file")
	require.Len(t, d, 1)
	assert.Equal(t, policy.Allow, d[0].Decision)
	assert.Equal(t, []string{"README.md"}, d[0].Targets)
}

// TestAgentCallDenied: a refusal is the observation the model reads, with the reason; the agent
// goes on, and the tool never ran.
func TestAgentCallDenied(t *testing.T) {
	f := newFixture(t, nil)
	steps, err := f.agent(t,
		action("read_file", ".env"),
		action("write_file", `{"path": "notes.txt", "PATH": ".env", "content": "x"}`),
		action("bash", "cat .env"),
		action("delete_file", "README.md"),                                // high risk, and nobody to ask
		action("write_file", `{"path": "../escape.txt", "content": "x"}`), // a hard stop: last
		action("read_file", "README.md"),                                  // the run is halted from then on
	)
	require.NoError(t, err, "a refusal does not end the agent's run")
	for i, s := range steps {
		assert.Contains(t, s.Observation, "reins denied this call of "+s.Action.Tool, "step %d", i)
		assert.NotContains(t, s.Observation, "canary")
	}
	assert.Contains(t, steps[0].Observation, "protected")
	assert.Contains(t, steps[1].Observation, `is also given as "PATH"`)
	assert.Contains(t, steps[2].Observation, "protected")
	assert.NotContains(t, steps[3].Observation, "halted")
	assert.Contains(t, steps[5].Observation, "halted")
	assert.EqualValues(t, 0, f.read.calls.Load()+f.write.calls.Load()+f.del.calls.Load())
	assert.FileExists(t, filepath.Join(f.ws, "README.md"))
	assert.NoFileExists(t, filepath.Join(filepath.Dir(f.ws), "escape.txt"))
}

// TestAgentCallConfirmed: a delete is high risk under PROFILE-DEV: the approver is asked, and
// the answer decides, recorded with who gave it.
func TestAgentCallConfirmed(t *testing.T) {
	for name, c := range map[string]struct {
		verdict policy.Verdict
		ran     bool
	}{"yes": {policy.Allow, true}, "no": {policy.Deny, false}} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, answer(c.verdict, "erin"))
			steps, err := f.agent(t, action("delete_file", "README.md"))
			require.NoError(t, err)
			assert.Equal(t, c.ran, f.del.calls.Load() == 1, steps[0].Observation)
			if c.ran {
				assert.Equal(t, "deleted README.md", steps[0].Observation)
				assert.NoFileExists(t, filepath.Join(f.ws, "README.md"))
			} else {
				assert.Contains(t, steps[0].Observation, "reins denied this call of delete_file")
				assert.FileExists(t, filepath.Join(f.ws, "README.md"))
			}
			appr := f.records(audit.KindApproval, "delete_file")
			require.Len(t, appr, 1)
			assert.Equal(t, "erin", appr[0].Approver)
		})
	}
}

// TestAgentWriteCheckpointed: the checkpoint exists when the tool runs; a tool that fails after
// writing has the workspace rolled back, and its error ends the agent's run as langchaingo's
// executor does with any tool error.
func TestAgentWriteCheckpointed(t *testing.T) {
	f := newFixture(t, nil)
	steps, err := f.agent(t, action("write_file", `{"path": "notes.txt", "content": "first\n"}`))
	require.NoError(t, err)
	assert.Equal(t, "wrote notes.txt", steps[0].Observation)
	assert.EqualValues(t, 1, f.checkpointsAtWrite.Load(), "the checkpoint is taken before the tool runs")

	_, err = f.agent(t, action("write_file", `{"path": "notes.txt", "content": "FAIL\n"}`))
	require.Error(t, err)
	assert.ErrorIs(t, err, f.errWriteFailedAfterWrite)
	var ae *reins.ActionError
	require.ErrorAs(t, err, &ae)
	assert.True(t, ae.RolledBack)
	got, err := os.ReadFile(filepath.Join(f.ws, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "first\n", string(got))
}

// TestAgentShell: the shell tool's command line runs through Run.DoCommand, in the hardened
// sandbox where this machine has it; a failing command is an observation, not an error.
func TestAgentShell(t *testing.T) {
	f := newFixture(t, answer(policy.Allow, "frank"))
	if !f.run.Sandboxed {
		testenv.Missing(t, "the hardened sandbox is not available: %v", f.run.SandboxErr)
	}
	steps, err := f.agent(t,
		action("bash", "cat README.md"),
		action("bash", "ls no-such-file"),
		action("bash", "echo made > made.txt"),
	)
	require.NoError(t, err)
	assert.Equal(t, "hello from the workspace\n", steps[0].Observation)
	assert.Contains(t, steps[1].Observation, "[exit status 2]")
	assert.FileExists(t, filepath.Join(f.ws, "made.txt"))
	d := f.records(audit.KindDecision, "bash")
	require.Len(t, d, 3)
	assert.NotZero(t, d[0].Obligations&policy.Sandbox, "a read-only line runs sandboxed: %+v", d[0])
	assert.Equal(t, "cat README.md", d[0].Command)
}

// TestWrapKeepsTheTool: the wrapped tool keeps the name and description the agent's prompt
// shows, and an invalid spec is refused when wrapping, not at the first call.
func TestWrapKeepsTheTool(t *testing.T) {
	f := newFixture(t, nil)
	assert.Equal(t, "read_file", f.tools[0].Name())
	assert.Equal(t, "the read_file tool", f.tools[0].Description())
	assert.Panics(t, func() {
		reinslc.Wrap(f.run, f.read, reins.ToolSpec{Reads: []string{reins.WholeInput, "path"}})
	})
	assert.Panics(t, func() { reinslc.Wrap(f.run, nil, reins.ToolSpec{}) })
	assert.Panics(t, func() { reinslc.Wrap((*reins.Run)(nil), f.read, reins.ToolSpec{}) })
}
