package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

func checkFlags(fs *flag.FlagSet) {
	fs.String("op", "", "the `operation`: "+strings.Join(opNames(), ", ")+" (default: shell for a command line, network for -host)")
	fs.String("custom-op", "", "an operation of the host's own `name`, for testing rules that name it (decided by -risk; without it as destructive)")
	fs.String("tool", "", "the `tool` the agent called (default: bash, read_file, write_file, delete_file or web_fetch, by operation)")
	fs.Var(&multi{}, "target", "a `path` the action reads, writes or deletes (repeatable; required for read, write and delete)")
	fs.String("host", "", "the `host` a network action reaches (required for network)")
	fs.String("risk", "", "the risk `levels` the tool declares, comma-separated: "+strings.Join(strs(risk.Levels()), ", "))
	fs.String("workdir", "", "the `directory` a command runs in (default: the workspace)")
}

var checkCmd = &command{name: "check", args: "[-- command line]", synopsis: "decide one action: ALLOW (exit 0), DENY (1) or CONFIRM (2)",
	flags: checkFlags, run: func(c *cli, fs *flag.FlagSet) (int, error) { return c.decide(fs, false) }}

var explainCmd = &command{name: "explain", args: "[-- command line]", synopsis: "decide one action and show every layer and rule considered",
	flags: checkFlags, run: func(c *cli, fs *flag.FlagSet) (int, error) { return c.decide(fs, true) }}

// opSpec is an operation the CLI knows, with what it needs.
type opSpec struct {
	op    policy.Operation
	needs string // "target", "command", "host" or ""
	tool  string // the default tool
}

// operations are the operations the CLI knows: the policy package's.
var operations = []opSpec{
	{policy.OpRead, "target", "read_file"},
	{policy.OpWrite, "target", "write_file"},
	{policy.OpDelete, "target", "delete_file"},
	{policy.OpShell, "command", "bash"},
	{policy.OpNetwork, "host", "web_fetch"},
	{policy.OpTool, "", ""},
	{policy.OpPlan, "", ""},
	{policy.OpSelfUpgrade, "", ""},
}

func opNames() []string {
	names := make([]string, len(operations))
	for i, o := range operations {
		names[i] = string(o.op)
	}
	return names
}

// decisionView is a decision in JSON.
type decisionView struct {
	Verdict     string             `json:"decision"`
	Obligations policy.Obligations `json:"obligations"`
	Layer       string             `json:"layer"`
	RuleID      string             `json:"rule_matched,omitempty"`
	Reason      string             `json:"reason"`
	Profile     string             `json:"active_profile"`
	Commands    []commandView      `json:"commands,omitempty"`
	Trace       string             `json:"trace,omitempty"`
}

// commandView is the outcome of one simple command of a shell line. A command the decision did
// not reach (an earlier layer decided the whole line) has no verdict of its own: Reached is false,
// and Layer and RuleID name what decided the line.
type commandView struct {
	Command string `json:"command"`
	Reached bool   `json:"reached"`
	Verdict string `json:"decision,omitempty"`
	Layer   string `json:"layer"`
	RuleID  string `json:"rule_matched,omitempty"`
	Opaque  bool   `json:"opaque,omitempty"`
}

// action builds the action the flags describe, refusing a description that does not say what the
// action does or says something that does not apply to it.
func action(fs *flag.FlagSet) (policy.Action, error) {
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	a := policy.Action{Tool: get("tool"), Host: get("host"), WorkDir: get("workdir"),
		Targets: slices.Clone([]string(*fs.Lookup("target").Value.(*multi))), Command: strings.Join(fs.Args(), " ")}
	if s := get("risk"); s != "" {
		set, err := risk.ParseSet(s)
		if err != nil {
			return a, usagef("-risk: %v (levels: %s)", err, strings.Join(strs(risk.Levels()), ", "))
		}
		a.Risk = set
	}
	op, custom := get("op"), get("custom-op")
	switch {
	case op != "" && custom != "":
		return a, usagef("give -op or -custom-op, not both")
	case custom != "":
		if slices.Contains(opNames(), string(policy.Operation(custom).Canonical())) {
			return a, usagef("-custom-op %s: reins knows that operation: use -op %s", custom, policy.Operation(custom).Canonical())
		}
		a.Operation = policy.Operation(custom)
		if a.Tool == "" {
			return a, usagef("-custom-op %s: name the -tool", custom)
		}
		return a, nil
	case op != "":
		a.Operation = policy.Operation(op).Canonical()
	case a.Command != "":
		a.Operation = policy.OpShell
	case a.Host != "":
		a.Operation = policy.OpNetwork
	default:
		return a, usagef("say what the action does: -op read -target PATH, -host HOST, or -- a command line (see '%s --help')", fs.Name())
	}
	i := slices.IndexFunc(operations, func(o opSpec) bool { return o.op == a.Operation })
	if i < 0 {
		return a, usagef("unknown operation %q: want one of %s (an operation of the host's own: -custom-op NAME)", op, strings.Join(opNames(), ", "))
	}
	o := operations[i]
	switch {
	case o.needs == "target" && len(a.Targets) == 0:
		return a, usagef("-op %s needs the path it %ss: -target PATH", a.Operation, a.Operation)
	case o.needs == "command" && a.Command == "":
		return a, usagef("-op shell needs the command line, after --")
	case o.needs == "host" && a.Host == "":
		return a, usagef("-op network needs the host it reaches: -host HOST")
	case a.Command != "" && a.Operation != policy.OpShell:
		return a, usagef("a command line is a shell action: drop -op %s, or say -op shell", a.Operation)
	case a.Host != "" && a.Operation != policy.OpNetwork && a.Operation != policy.OpTool:
		return a, usagef("-host applies to network and tool actions, not to %s", a.Operation)
	case a.Operation == policy.OpNetwork && len(a.Targets) > 0:
		return a, usagef("-target does not apply to a network action (it reaches -host)")
	}
	if a.Tool == "" {
		a.Tool = o.tool
	}
	if a.Tool == "" {
		return a, usagef("-op %s: name the -tool", a.Operation)
	}
	return a, nil
}

func (c *cli) decide(fs *flag.FlagSet, explain bool) (int, error) {
	a, err := action(fs)
	if err != nil {
		return 0, err
	}
	l, ws, err := c.load()
	if err != nil {
		return 0, err
	}
	g, err := gate.New(l.Profile, &gate.Options{Workspace: []string{ws}})
	if err != nil {
		return 0, err
	}
	e := g.Explain(nil, a)
	d := e.Decision
	v := decisionView{Verdict: d.Verdict.String(), Obligations: d.Obligations, Layer: d.Layer.String(),
		RuleID: d.RuleID, Reason: d.Reason, Profile: d.Profile}
	for _, co := range e.Commands {
		cv := commandView{Command: co.Command.Text, Reached: co.Decided, Layer: co.Layer.String(), RuleID: co.RuleID, Opaque: co.Command.Opaque}
		if co.Decided {
			cv.Verdict = co.Verdict.String()
		} else {
			// An earlier layer decided the whole line before this command's parts were reached.
			cv.Layer, cv.RuleID = d.Layer.String(), d.RuleID
		}
		v.Commands = append(v.Commands, cv)
	}
	if explain {
		v.Trace = e.String()
	}
	err = c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "%s\n", d)
		if len(v.Commands) > 1 || explain && len(v.Commands) > 0 {
			fmt.Fprintln(w, "\nCOMMAND\tDECISION\tBY")
			for _, cv := range v.Commands {
				by := cv.Layer
				if cv.RuleID != "" && cv.RuleID != cv.Layer {
					by += " " + cv.RuleID
				}
				verdict := cv.Verdict
				if !cv.Reached {
					verdict, by = "not reached", "the line: "+by
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", cv.Command, verdict, by)
			}
		}
		if explain {
			fmt.Fprintf(w, "\n%s", v.Trace)
		}
	})
	if err != nil {
		return 0, err
	}
	return verdictCode(d.Verdict), nil
}

func verdictCode(v policy.Verdict) int {
	switch v {
	case policy.Allow:
		return exitOK
	case policy.Confirm:
		return exitConfirm
	}
	return exitDeny
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
