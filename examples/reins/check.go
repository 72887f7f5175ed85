package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

func checkFlags(fs *flag.FlagSet) {
	fs.String("tool", "bash", "the tool the agent called")
	fs.String("op", "", "the operation: read, write, delete, shell, network, tool, ... (shell when a command line is given)")
	fs.Var(&multi{}, "target", "a `path` the action reads, writes or deletes (repeatable)")
	fs.String("host", "", "the `host` a network action reaches")
	fs.String("workdir", "", "the `directory` a command runs in (default: the workspace)")
}

var checkCmd = &command{name: "check", args: "[-- command line]", synopsis: "decide one action: ALLOW (exit 0), DENY (1) or CONFIRM (2)",
	flags: checkFlags, run: func(c *cli, fs *flag.FlagSet) (int, error) { return c.decide(fs, false) }}

var explainCmd = &command{name: "explain", args: "[-- command line]", synopsis: "decide one action and show every layer and rule considered",
	flags: checkFlags, run: func(c *cli, fs *flag.FlagSet) (int, error) { return c.decide(fs, true) }}

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

// commandView is the outcome of one simple command of a shell line.
type commandView struct {
	Command string `json:"command"`
	Verdict string `json:"decision"`
	Layer   string `json:"layer"`
	RuleID  string `json:"rule_matched,omitempty"`
	Opaque  bool   `json:"opaque,omitempty"`
}

func (c *cli) decide(fs *flag.FlagSet, explain bool) (int, error) {
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	a := policy.Action{Tool: get("tool"), Operation: policy.Operation(get("op")), Host: get("host"), WorkDir: get("workdir"),
		Targets: []string(*fs.Lookup("target").Value.(*multi)), Command: strings.Join(fs.Args(), " ")}
	if a.Operation == "" {
		switch {
		case a.Command != "":
			a.Operation = policy.OpShell
		case a.Host != "":
			a.Operation = policy.OpNetwork
		default:
			return exitError, usagef("%s: say what the action does: -op read -target PATH, -host HOST, or -- a command line", fs.Name())
		}
	}
	l, ws, err := c.load()
	if err != nil {
		return exitError, err
	}
	g, err := gate.New(l.Profile, &gate.Options{Workspace: []string{ws}})
	if err != nil {
		return exitError, err
	}
	e := g.Explain(nil, a)
	d := e.Decision
	v := decisionView{Verdict: d.Verdict.String(), Obligations: d.Obligations, Layer: d.Layer.String(),
		RuleID: d.RuleID, Reason: d.Reason, Profile: d.Profile}
	for _, co := range e.Commands {
		v.Commands = append(v.Commands, commandView{Command: co.Command.Text, Verdict: co.Verdict.String(),
			Layer: co.Layer.String(), RuleID: co.RuleID, Opaque: co.Command.Opaque})
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
				fmt.Fprintf(w, "%s\t%s\t%s\n", cv.Command, cv.Verdict, by)
			}
		}
		if explain {
			fmt.Fprintf(w, "\n%s", v.Trace)
		}
	})
	if err != nil {
		return exitError, err
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
