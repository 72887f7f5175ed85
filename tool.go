package reins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/sandbox"
)

// RunProvider is a *Run, or a value that embeds one (host.Run): what Guard and GuardCommand run
// tool calls through.
type RunProvider interface{ governingRun() *Run }

func (r *Run) governingRun() *Run { return r }

// Guard wraps a tool's body so that every call goes through run r first: the call's input is
// read through spec (strictly: see ToolSpec), and the action it describes goes through Run.Do,
// which decides it, asks the approver about a CONFIRM, carries out the obligations (a
// checkpoint first, a notification), runs fn, rolls the workspace back when fn fails, and
// records every step. It is the tool middleware of any framework whose tools are functions of
// an input: the adapters for mcp-go and langchaingo are built on it.
//
// The input is read as the tool receives it: a string as plain text (ToolSpec.ActionText), a
// []byte or json.RawMessage as JSON, anything else (the struct an SDK decoded the arguments
// into) as json.Marshal writes it. Guard panics when spec is not valid, or names a field that
// In, a struct, does not have: a spec that reads nothing would let every call through
// undescribed.
//
// What the wrapped function returns:
//   - the tool ran: fn's output and error; when fn failed, the error is an *ActionError holding
//     fn's error (errors.As reaches it) and saying whether the workspace was rolled back;
//   - the run refused the call (the gate, the human, an obligation that could not be honoured,
//     an input the spec cannot read) or parked it for review: denied's output for the
//     model-facing Denial, and a nil error; with a nil denied, the zero Out and the refusal
//     itself (it matches gate.ErrDenied: a *gate.DeniedError or a *ParkedError);
//   - anything else (the run state could not be read, the context ended): the zero Out and that
//     error.
//
// A tool that runs a shell command line itself gets no sandbox from Guard: the gate's Sandbox
// obligation can be honoured only by running the line in the run's sandbox, so such a call is
// asked about (CONFIRM) instead. Use GuardCommand for shell tools.
func Guard[In, Out any](rp RunProvider, spec ToolSpec, fn func(context.Context, In) (Out, error), denied func(Denial) Out) func(context.Context, In) (Out, error) {
	r := mustGuard[In](rp, spec, "Guard")
	if fn == nil {
		panic("reins: Guard: nil tool function")
	}
	return func(ctx context.Context, in In) (Out, error) {
		var out Out
		a, err := actionOf(spec, in)
		if err != nil {
			return refused(denied, spec, out, r.refuseInput(ctx, a, err))
		}
		_, err = r.Do(ctx, a, func(ctx context.Context, _ gate.Decision) error {
			var ferr error
			out, ferr = fn(ctx, in)
			return ferr
		})
		return refused(denied, spec, out, err)
	}
}

// GuardCommand returns the body of a shell tool: the command line that spec.Command names in
// the input (and the working directory spec.WorkDir names) goes through Run.DoCommand, which
// runs it with bash in the run's sandbox, confined to what the gate's analysis claims for it,
// when the decision carries the Sandbox obligation (see Options.Sandbox), and otherwise in the
// run's plain runner. format turns the command's result into the tool's output (CommandOutput
// writes it as text); it is called for a command that failed too, whose error is then an
// *ActionError (a non-zero exit status is a *CommandError within it). Denials are handled as
// Guard handles them. spec.Operation defaults to policy.OpShell; GuardCommand panics when spec
// names no Command field or is not valid.
func GuardCommand[In, Out any](rp RunProvider, spec ToolSpec, format func(sandbox.Result) Out, denied func(Denial) Out) func(context.Context, In) (Out, error) {
	if spec.Operation == "" {
		spec.Operation = policy.OpShell
	}
	if spec.Command == "" {
		panic("reins: GuardCommand: tool spec " + spec.Tool + " names no Command field")
	}
	r := mustGuard[In](rp, spec, "GuardCommand")
	if format == nil {
		panic("reins: GuardCommand: nil format")
	}
	return func(ctx context.Context, in In) (Out, error) {
		var out Out
		a, err := actionOf(spec, in)
		if err != nil {
			return refused(denied, spec, out, r.refuseInput(ctx, a, err))
		}
		o, res, err := r.DoCommand(ctx, a, sandbox.Command{})
		if o.Ran {
			out = format(res)
		}
		return refused(denied, spec, out, err)
	}
}

// CommandOutput writes a command's result as a model reads it: its standard output, then its
// standard error, then "[exit status N]" when it did not succeed, each truncation noted.
func CommandOutput(res sandbox.Result) string {
	var b strings.Builder
	b.Write(res.Stdout)
	if res.StdoutTruncated {
		b.WriteString("\n[output truncated]\n")
	}
	if len(res.Stderr) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.Write(res.Stderr)
		if res.StderrTruncated {
			b.WriteString("\n[error output truncated]\n")
		}
	}
	if res.ExitCode != 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[exit status %d]", res.ExitCode)
	}
	return b.String()
}

func mustGuard[In any](rp RunProvider, spec ToolSpec, fn string) *Run {
	if rp == nil {
		panic("reins: " + fn + ": nil run")
	}
	r := rp.governingRun()
	if r == nil {
		panic("reins: " + fn + ": nil run")
	}
	if err := spec.Validate(); err != nil {
		panic("reins: " + fn + ": " + strings.TrimPrefix(err.Error(), "reins: "))
	}
	if err := specFitsInput(spec, reflect.TypeFor[In]()); err != nil {
		panic("reins: " + fn + ": " + err.Error())
	}
	return r
}

// refused turns a refusal into the model-facing denial (when denied is set) and leaves every
// other result as it is.
func refused[Out any](denied func(Denial) Out, spec ToolSpec, out Out, err error) (Out, error) {
	if d, ok := DenialOf(spec.Tool, err); ok {
		if denied != nil {
			return denied(d), nil
		}
		var zero Out
		return zero, err
	}
	return out, err
}

// actionOf reads a call's input through spec: text, JSON, or a value encoded as JSON.
func actionOf[In any](spec ToolSpec, in In) (policy.Action, error) {
	switch v := any(in).(type) {
	case string:
		return spec.ActionText(v)
	case json.RawMessage:
		return spec.Action(v)
	case []byte:
		return spec.Action(v)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return spec.baseAction(""), spec.inputErr("", "cannot be encoded as JSON: "+err.Error())
	}
	return spec.Action(b)
}

// specFitsInput checks, for a struct input, that every field the spec names is one of the
// struct's JSON fields, spelled as encoding/json writes it.
func specFitsInput(spec ToolSpec, t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	names := map[string]bool{}
	jsonNames(t, names, 0)
	for _, f := range spec.fields() {
		if f.name == WholeInput {
			return fmt.Errorf("tool spec %q reads WholeInput of %s, which is not text", spec.Tool, t)
		}
		if !names[f.name] {
			return fmt.Errorf("tool spec %q names field %q, which %s does not have", spec.Tool, f.name, t)
		}
	}
	return nil
}

func jsonNames(t reflect.Type, names map[string]bool, depth int) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			if depth < 8 {
				jsonNames(ft, names, depth+1)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
}

// refuseInput records the denial of a call whose input its spec cannot read (a decision of the
// input layer, with its outcome) and returns it as the refusal.
func (r *Run) refuseInput(ctx context.Context, a policy.Action, cause error) error {
	act := r.act.Load()
	now := r.clock.Now()
	id := newV7(now)
	d := gate.Decision{Verdict: policy.Deny, Layer: policy.LayerInput, RuleID: CheckToolInput, Reason: cause.Error(),
		Profile: act.name, Risk: a.Risk, DecisionID: id, CorrelationID: correlation(a, id)}
	derr := &gate.DeniedError{Decision: d}
	if err := r.writeDecision(ctx, act, a, d, now); err != nil {
		r.log.Error("reins: the denial of a tool input could not be recorded", "tool", a.Tool, "err", err)
		return derr
	}
	_ = r.recordAbout(ctx, act, a, d, audit.Record{Kind: audit.KindOutcome, Decision: policy.Deny, Outcome: audit.OutcomeDenied})
	return derr
}

// Denial is what the model is told when the run refuses a tool call: the reason and the ways
// forward, in words (Message). It is the model-facing side of a refusal; Err keeps the Go side.
type Denial struct {
	// Tool is the tool's name as the spec gives it.
	Tool string
	// Reason says why, as the decision says it.
	Reason string
	// Alternatives describe what could go ahead instead (gate.Alternative descriptions).
	Alternatives []string
	// Parked is the id under which the call waits for a human's review, when it was parked.
	Parked string
	// Decision is the decision that refused the call.
	Decision gate.Decision
	// Err is the refusal as an error: a *gate.DeniedError or a *ParkedError.
	Err error
}

// DenialOf returns the model-facing denial of err when err is the run's refusal of a call of
// the tool (it matches gate.ErrDenied: a *gate.DeniedError or a *ParkedError), and false for
// anything else: nil, the failure of a tool that ran (an *ActionError, even one whose tool
// error was itself a denial), any other error.
func DenialOf(tool string, err error) (Denial, bool) {
	var ae *ActionError
	if err == nil || errors.As(err, &ae) {
		return Denial{}, false
	}
	if pe, ok := errors.AsType[*ParkedError](err); ok {
		return Denial{Tool: tool, Reason: pe.Decision.Reason, Parked: pe.ID, Decision: pe.Decision, Err: err}, true
	}
	de, ok := errors.AsType[*gate.DeniedError](err)
	if !ok {
		return Denial{}, false
	}
	d := Denial{Tool: tool, Reason: de.Decision.Reason, Decision: de.Decision, Err: err}
	for _, alt := range de.Alternatives {
		if alt.Description != "" {
			d.Alternatives = append(d.Alternatives, alt.Description)
		}
	}
	return d, true
}

// Message says the denial to the model: that the call did not run, why, and what could go
// ahead instead.
func (d Denial) Message() string {
	var b strings.Builder
	tool := d.Tool
	if tool == "" {
		tool = "the tool"
	}
	if d.Parked != "" {
		fmt.Fprintf(&b, "reins did not run this call of %s: it waits for a human's review (parked as %s)", tool, d.Parked)
	} else {
		fmt.Fprintf(&b, "reins denied this call of %s; it did not run", tool)
	}
	if d.Reason != "" {
		b.WriteString(". Reason: ")
		b.WriteString(strings.TrimSuffix(d.Reason, "."))
	}
	b.WriteByte('.')
	if len(d.Alternatives) > 0 {
		b.WriteString(" Instead, you could try: ")
		b.WriteString(strings.Join(d.Alternatives, "; "))
		b.WriteByte('.')
	}
	return b.String()
}
