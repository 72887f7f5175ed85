package langchaingo

import (
	"context"
	"errors"

	"github.com/tmc/langchaingo/tools"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/policy"
)

// Wrap returns t with every Call passing run first (reins.Guard): the call's input is read
// through spec (reins.WholeInput for a tool whose whole input is the path, command line or
// host; named fields for a tool that takes a JSON object), and the action it describes is
// decided, asked about, checkpointed and recorded before t.Call runs. spec.Tool, when empty,
// is t.Name(). Name and Description are t's.
//
// A call the run refuses returns the model-facing denial (the reason and the alternatives) as
// the observation, with a nil error, so the agent reads it and carries on. A failure of t
// itself is returned as an error, as langchaingo's executor expects of a tool (it ends the
// run), after the workspace was rolled back to the checkpoint taken before the call: the error
// is a *reins.ActionError holding t's error (errors.As reaches it). Wrap panics when t is nil
// or spec is not valid (reins.ToolSpec.Validate), as reins.Guard does.
func Wrap(run reins.RunProvider, t tools.Tool, spec reins.ToolSpec) tools.Tool {
	if t == nil {
		panic("langchaingo: Wrap: nil tool")
	}
	if spec.Tool == "" {
		spec.Tool = t.Name()
	}
	return &tool{name: t.Name(), description: t.Description(),
		call: reins.Guard(run, spec, t.Call, reins.Denial.Message)}
}

// Shell returns a shell tool: its input is a bash command line, which runs through
// Run.DoCommand, in the run's sandbox, confined to what the gate's analysis claims for it,
// when the decision says so. The observation is the command's output (standard output, then
// standard error, then "[exit status N]" when it failed); a command that failed is an
// observation too (its workspace changes rolled back, and the observation says so), not an
// error, so the agent can read why. A refusal is the model-facing denial, as with Wrap.
func Shell(run reins.RunProvider, name, description string) tools.Tool {
	spec := reins.ToolSpec{Tool: name, Operation: policy.OpShell, Command: reins.WholeInput}
	call := reins.GuardCommand[string](run, spec, reins.CommandOutput, reins.Denial.Message)
	return &tool{name: name, description: description, call: func(ctx context.Context, line string) (string, error) {
		out, err := call(ctx, line)
		var ae *reins.ActionError
		var ce *reins.CommandError
		if errors.As(err, &ae) && errors.As(ae.Err, &ce) {
			switch {
			case ae.RolledBack:
				out += "\n[reins rolled the workspace back to the checkpoint taken before this command]"
			case ae.RollbackErr != nil:
				out += "\n[reins could not roll the workspace back: " + ae.RollbackErr.Error() + "]"
			}
			return out, nil
		}
		return out, err
	}}
}

// tool is a langchaingo tool whose calls pass a reins run.
type tool struct {
	name, description string
	call              func(context.Context, string) (string, error)
}

var _ tools.Tool = (*tool)(nil)

// Name implements tools.Tool.
func (t *tool) Name() string { return t.name }

// Description implements tools.Tool.
func (t *tool) Description() string { return t.description }

// Call implements tools.Tool: the call passes the run before the tool runs.
func (t *tool) Call(ctx context.Context, input string) (string, error) { return t.call(ctx, input) }
