package langchaingo_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/reins-go/reins"
	reinslc "github.com/reins-go/reins/examples/langchaingo"
	"github.com/reins-go/reins/host"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// A langchaingo agent whose read_file tool passes reins: the README is read, the .env file is
// refused, and the model reads why as the tool's observation. langchaingo's fake model plays
// the model here.
func ExampleWrap() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "reins-langchaingo-example-")
	defer os.RemoveAll(ws)
	shadow, _ := os.MkdirTemp("", "reins-langchaingo-example-shadow-") // checkpoints of a plain directory
	defer os.RemoveAll(shadow)
	_ = os.WriteFile(filepath.Join(ws, "README.md"), []byte("hello"), 0o644)
	readFile := &fnTool{name: "read_file", fn: func(_ context.Context, path string) (string, error) {
		b, err := os.ReadFile(filepath.Join(ws, path))
		return string(b), err
	}}
	llm := fake.NewFakeLLM([]string{
		"Action: read_file\nAction Input: README.md",
		"Action: read_file\nAction Input: .env",
		"Final Answer: done",
	})

	// The ten lines.
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{ShadowRoot: shadow, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer run.Close()
	agentTools := []tools.Tool{
		reinslc.Wrap(run, readFile, reins.ToolSpec{Operation: policy.OpRead, Reads: []string{reins.WholeInput}}),
		reinslc.Shell(run, "bash", "Runs a bash command line in the workspace."),
	}
	executor := agents.NewExecutor(agents.NewOneShotAgent(llm, agentTools), agents.WithReturnIntermediateSteps())

	out, err := chains.Call(ctx, executor, map[string]any{"input": "read the README and the .env file"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, step := range out["intermediateSteps"].([]schema.AgentStep) {
		fmt.Printf("%s(%s): %s\n", step.Action.Tool, step.Action.ToolInput, step.Observation)
	}
	// Output:
	// read_file(README.md): hello
	// read_file(.env): reins denied this call of read_file; it did not run. Reason: target ".env" is protected (.env).
}
