// Command quickstart tells the whole reins story in under a minute, with no setup: in a new git
// workspace, a short scripted agent run goes through the gate. It prints what the gate decides
// for everyday actions under two profiles, then runs the agent's steps end to end (a reins.Run)
// and, under each step, the audit records the step wrote: an edit a human approves for the
// session, with its checkpoint; a failing command rolled back; a denied write to .env; the same
// edit again, answered by the session grant; a read-only command that must run in a sandbox; a
// command that reaches outside the workspace and halts the run; a profile switch refused
// without confirmation. It ends by verifying the audit log's hash chain, counting its records by
// kind, and printing the checkpoint timeline.
//
// The run has no enforcing sandbox on purpose (its output must be the same on every machine,
// with or without Landlock), so a line the gate allows on condition that it runs confined is
// asked about instead, as reins.Options.Sandbox documents.
//
// The workspace and the audit log are kept, in a temporary directory whose path goes to
// standard error with the commands to explore it. Standard output names no path, id or time
// (the directory is written DIR), so the README shows it verbatim (a test keeps the two equal).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
)

func main() {
	dir, err := os.MkdirTemp("", "reins-quickstart-")
	if err == nil {
		err = run(context.Background(), dir, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
	ws := filepath.Join(dir, "project")
	fmt.Fprintf(os.Stderr, "\nquickstart: DIR is %s (kept; remove it when done). Explore it with:\n", dir)
	for _, c := range []string{"-C " + ws + " timeline", "-C " + ws + " diff 1", "-C " + ws + " rewind 1",
		"audit tail " + filepath.Join(dir, "audit.jsonl")} {
		fmt.Fprintf(os.Stderr, "  go run ./examples/reins %s\n", c)
	}
}

func shell(cmd string) policy.Action {
	return policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd}
}

func file(op policy.Operation, tool, path string) policy.Action {
	return policy.Action{Tool: tool, Operation: op, Targets: []string{path}}
}

// the two profiles the story compares: the policy spec's developer profile and the autonomy
// dial's supervised band, which the agent's run uses.
var profiles = []string{profile.Dev.Name(), profile.Supervised.Name()}

var table = []policy.Action{
	file(policy.OpRead, "read_file", "main.go"),
	file(policy.OpWrite, "edit_file", "main.go"),
	shell("git log --oneline"),
	shell("go test ./..."),
	shell("rm -rf build"),
	shell("git push --force origin main"),
	shell("go test ./... && rm -rf ~"),
	shell(`V=.env; cat "$V"`),
	file(policy.OpWrite, "write_file", ".env"),
	{Tool: "web_fetch", Operation: policy.OpNetwork, Host: "example.com"},
}

// story is the agent's run: its output, the run and what the steps share.
type story struct {
	out     io.Writer
	dir, ws string
	real    string // dir with its symbolic links resolved, as the gate writes paths
	log     *audit.Memory
	seen    int // records of log already shown
	run     *reins.Run
	asked   int            // how many times the human was asked
	grantBy map[string]int // the step that made each grant, by grant id
	step    int            // the step running, and its action
	action  policy.Action
}

// width is where say wraps a line.
const width = 96

// say prints a line, with the temporary directory written DIR, wrapped at width with the
// continuation indented two more spaces.
func (s *story) say(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	for _, d := range []string{s.real, s.dir} {
		text = strings.ReplaceAll(text, d, "DIR")
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintln(s.out, wrap(line, width))
	}
}

// wrap breaks line at spaces so that no piece is longer than w (a word longer than that stays
// whole), indenting each continuation two spaces more than the line.
func wrap(line string, w int) string {
	indent := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " "))+2)
	var b strings.Builder
	col := 0
	for i, word := range strings.Split(line, " ") {
		switch {
		case i == 0:
		case col+1+len(word) > w && strings.TrimSpace(word) != "" && col > len(indent):
			b.WriteString("\n" + indent)
			col = len(indent)
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}

// run tells the story in dir (which must exist), writing it to out. It keeps the workspace
// (dir/project) and the audit log (dir/audit.jsonl).
func run(ctx context.Context, dir string, out io.Writer) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	s := &story{out: out, dir: dir, real: real, ws: filepath.Join(dir, "project"), grantBy: map[string]int{}}
	if err := setup(s.ws); err != nil {
		return err
	}
	s.say("reins quickstart: one agent run through the gate, in a new git workspace")
	s.say("(DIR below is the temporary directory it made: DIR/project is the workspace, DIR/audit.jsonl")
	s.say("the audit log; both are kept, and standard error names DIR)")

	// 1. The decision table.
	s.say("\n1. What the gate decides, under two built-in profiles")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "   ACTION\t%s\n", strings.Join(profiles, "\t"))
	gates := map[string]*gate.Gate{}
	for _, name := range profiles {
		p, err := profile.Builtin(name)
		if err != nil {
			return err
		}
		g, err := gate.New(p, &gate.Options{Workspace: []string{s.ws}})
		if err != nil {
			return err
		}
		gates[name] = g
	}
	for _, a := range table {
		fmt.Fprintf(tw, "   %s", describe(a))
		for _, name := range profiles {
			d := gates[name].Decide(nil, a, nil)
			fmt.Fprintf(tw, "\t%s", verdict(d.Verdict, d.Obligations))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s.say("   CONFIRM asks a human. +checkpoint, +notify and +sandbox are obligations: the run takes a")
	s.say("   checkpoint first, tells the user, runs the line confined to what its analysis claims.")

	// The agent's run under supervised: a checkpointer, a plain runner (no enforcing sandbox), an
	// approver that stands in for the human, and a hash-chained audit log (with a copy in memory,
	// so each step can show what it recorded).
	logPath := filepath.Join(dir, "audit.jsonl")
	jsonl, err := audit.OpenJSONL(logPath, nil)
	if err != nil {
		return err
	}
	defer jsonl.Close(ctx)
	s.log = audit.NewMemory(0)
	cp, err := checkpoint.New(ctx, s.ws, nil)
	if err != nil {
		return err
	}
	runner, err := sandbox.NewLocal(sandbox.LocalConfig{Root: s.ws, Scripts: shellanalysis.Read})
	if err != nil {
		return err
	}
	human := reins.ApproverFunc(func(_ context.Context, req reins.Request) (reins.Answer, error) {
		s.asked++
		ans := reins.Answer{Verdict: policy.Allow, By: "the human"}
		if req.Action.Tool == "edit_file" {
			ans.Scope = reins.ForSession // "yes, and don't ask again for this edit"
		}
		return ans, nil
	})
	s.run, err = reins.New(ctx, profile.Supervised.Profile(), &reins.Options{Workspace: []string{s.ws},
		Audit: audit.FanOut{jsonl, s.log}, Checkpointer: cp, Runner: runner, Approver: human,
		Notifier: reins.NotifierFunc(func(context.Context, reins.Notice) error { return nil })})
	if err != nil {
		return err
	}
	defer s.run.Close()
	s.say("\nThe agent's run, under supervised. Under each step, the audit records it wrote:")

	edit := func(content string) reins.Func {
		return func(context.Context, gate.Decision) error {
			return os.WriteFile(filepath.Join(s.ws, "main.go"), []byte(content), 0o644)
		}
	}
	// 2. An approved edit, with its checkpoint; the human approves it for the session.
	s.do(ctx, 2, "An edit the human approves for the session", file(policy.OpWrite, "edit_file", "main.go"),
		edit("package main\n\nfunc main() { println(\"hi\") }\n"))
	// 3. A failing command, rolled back.
	s.do(ctx, 3, "A command that fails halfway", shell("echo broken > main.go && echo junk > extra.txt && false"), nil)
	b, _ := os.ReadFile(filepath.Join(s.ws, "main.go"))
	_, extra := os.Stat(filepath.Join(s.ws, "extra.txt"))
	s.say("   main.go holds the approved edit again: %s; extra.txt is gone: %s",
		yes(strings.Contains(string(b), "println")), yes(errors.Is(extra, os.ErrNotExist)))
	// 4. A denied write to .env.
	s.do(ctx, 4, "A write to a secret", file(policy.OpWrite, "write_file", ".env"),
		func(context.Context, gate.Decision) error {
			return os.WriteFile(filepath.Join(s.ws, ".env"), nil, 0o600)
		})
	// 5. The same edit again: the session grant answers.
	s.do(ctx, 5, "Another edit of main.go", file(policy.OpWrite, "edit_file", "main.go"),
		edit("package main\n\nfunc main() { println(\"hello\") }\n"))
	// 6. A read-only line: allowed, on condition that it runs confined.
	s.do(ctx, 6, "A read-only command", shell("git log --oneline"), nil)
	s.say("   With an enforcing sandbox (Options.Sandbox: local-hardened, on Linux with Landlock) it runs")
	s.say("   confined without asking; with Options.TrustAnalysis it runs unconfined without asking, and")
	s.say("   the log records that as sandbox_waived.")
	// 7. A command that reaches outside the workspace: a hard stop that halts the run.
	s.do(ctx, 7, "A command that writes outside the workspace", shell("cp main.go ../elsewhere.go"), nil)
	s.do(ctx, 8, "Anything after the hard stop", file(policy.OpRead, "read_file", "main.go"),
		func(context.Context, gate.Decision) error { return nil })
	if err := s.run.Reset(ctx, "looked at it"); err != nil {
		return err
	}
	s.records(nil)

	// 9. A profile switch the agent asks for, refused without confirmation.
	s.say("\n9. The agent asks to switch to %s", profile.FullAuto.Name())
	if _, err := s.run.SwitchTo(ctx, profile.FullAuto.Name()); err == nil {
		return errors.New("a loosening switch went through without confirmation")
	}
	s.records(nil)
	s.say("   the active profile is still %s", s.run.Profile().Name())

	// 10. The audit log, verified, and counted by kind.
	if err := jsonl.Close(ctx); err != nil {
		return err
	}
	res, err := audit.Verify(logPath)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	var kinds []audit.Kind
	count := map[audit.Kind]int{}
	total := 0
	for r, err := range audit.Scan(logPath, nil) {
		if err != nil {
			return err
		}
		if count[r.Kind] == 0 {
			kinds = append(kinds, r.Kind)
		}
		count[r.Kind]++
		total++
	}
	if total != res.Records || total != s.log.Len() {
		return fmt.Errorf("audit log: %d records verified, %d read, %d shown", res.Records, total, s.log.Len())
	}
	s.say("\n10. The audit log, DIR/audit.jsonl: hash chain verified; %d records, each shown above:", res.Records)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, k := range kinds {
		fmt.Fprintf(tw, "    %s\t%d\n", k, count[k])
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	// 11. The timeline, numbered as `reins rewind N` and `reins diff N` take it.
	list, err := cp.List(ctx)
	if err != nil {
		return err
	}
	s.say("\n11. The checkpoint timeline, newest first")
	ids := make([]string, 0, 2*len(list))
	for i, c := range list {
		ids = append(ids, c.ID, fmt.Sprintf("checkpoint %d", i+1))
	}
	names := strings.NewReplacer(ids...)
	for i, c := range list {
		s.say("    %d  %s", i+1, names.Replace(c.Label))
	}
	for i, c := range list {
		if strings.HasPrefix(c.Label, "before rewind to ") {
			s.say("    (the rollback of step 3 took checkpoint %d first, so that it can be undone too)", i+1)
		}
	}
	s.say("\nTry the CLI on what this run kept: go run ./examples/reins -C DIR/project timeline, then")
	s.say("diff N, rewind N (undoable), and audit tail DIR/audit.jsonl (standard error spells them out).")
	return nil
}

// do runs one step: the action through the run (DoCommand when fn is nil), then the records it
// wrote.
func (s *story) do(ctx context.Context, n int, title string, a policy.Action, fn reins.Func) {
	s.say("\n%d. %s: %s", n, title, describe(a))
	s.step, s.action = n, a
	// The gate's trace holds the confinement an allowed line must run under: decided here for
	// the step's explanation (the run decides on its own, against the same profile).
	var tr gate.Trace
	s.run.Gate().Decide(nil, a, &tr)
	confined, isConfined := tr.Confinement()
	asked := s.asked
	if fn != nil {
		_, _ = s.run.Do(ctx, a, fn)
	} else {
		_, _, _ = s.run.DoCommand(ctx, a, sandbox.Command{})
	}
	s.records(func(r audit.Record) {
		if r.Kind == audit.KindDecision && r.Decision == policy.Allow && r.Obligations.Has(policy.Sandbox) && s.asked > asked {
			claim := ""
			if isConfined {
				claim = ": " + describeConfinement(confined)
			}
			s.say("   (+sandbox: the line may run only confined to what its analysis claims%s. This run has no "+
				"sandbox that enforces that, so that its output is the same on every machine; rather than run "+
				"the line unconfined on the analysis's word, it asks.)", claim)
		}
	})
}

// records prints the records written since the last call, one a line, calling after (if not
// nil) after each.
func (s *story) records(after func(audit.Record)) {
	all := s.log.Records()
	recs := all[s.seen:]
	s.seen = len(all)
	for _, r := range recs {
		if r.Kind == audit.KindGrant {
			s.grantBy[strings.TrimPrefix(r.RuleMatched, gate.CheckGrantPrefix)] = s.step
		}
		s.say("   %s: %s", r.Kind, s.describeRecord(r))
		if after != nil {
			after(r)
		}
	}
}

// describeRecord says what a record says, in words, without ids or times.
func (s *story) describeRecord(r audit.Record) string {
	switch r.Kind {
	case audit.KindDecision:
		text := verdict(r.Decision, r.Obligations) + " by " + s.decider(r)
		if r.Reason != "" {
			text += ": " + r.Reason
		}
		return text
	case audit.KindApproval:
		if r.Decision != policy.Allow {
			return "refused by " + r.Approver
		}
		scope := map[string]string{"once": "once", "session": "for the session", "always": "from now on"}[r.ApprovalScope]
		return "approved by " + r.Approver + ", " + scope
	case audit.KindGrant:
		return "kept for the session, for exactly this action: " + describe(s.action)
	case audit.KindCheckpointCreated:
		return "taken before it runs"
	case audit.KindCheckpointRestored:
		return "the workspace is back as it was at that checkpoint"
	case audit.KindOutcome:
		how := ""
		switch {
		case r.Obligations.Has(policy.Sandbox):
			how = " (ran confined)"
		case r.Command != "":
			how = " (ran unconfined)"
		}
		switch r.Outcome {
		case audit.OutcomeSucceeded:
			return "succeeded" + how
		case audit.OutcomeRolledBack:
			return "failed: " + r.Error + how + "; rolled back"
		case audit.OutcomeFailed:
			return "failed: " + r.Error + how
		case audit.OutcomeDenied:
			return "not run"
		}
		return string(r.Outcome)
	case audit.KindHalt:
		return "the run halts until a human resets it: " + r.Reason
	case audit.KindReset:
		return "a human resets the halt: " + r.Reason
	case audit.KindProfileSwitchRequested:
		return r.Profile + " -> " + r.RequestedProfile
	case audit.KindProfileSwitchRefused:
		return r.Reason
	}
	return r.Reason
}

// decider names who decided a decision record, in words for a grant.
func (s *story) decider(r audit.Record) string {
	if id, ok := strings.CutPrefix(r.RuleMatched, gate.CheckGrantPrefix); ok {
		if n, ok := s.grantBy[id]; ok {
			return fmt.Sprintf("the session grant of step %d", n)
		}
		return "a standing grant"
	}
	by := r.Layer.String()
	if r.RuleMatched != "" && r.RuleMatched != by {
		by += " " + r.RuleMatched
	}
	return by
}

func describeConfinement(c gate.Confinement) string {
	w := "it writes nothing"
	if len(c.Writable) > 0 {
		w = "it writes only " + strings.Join(c.Writable, ", ")
	}
	n := "reaches no host"
	if c.Network {
		n = "reaches only the hosts the profile allows"
	}
	return w + " and " + n
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// verdict prints a verdict with its obligations: VERDICT+obligation+...
func verdict(v policy.Verdict, o policy.Obligations) string {
	if o != 0 {
		return v.String() + "+" + o.String()
	}
	return v.String()
}

func describe(a policy.Action) string {
	switch {
	case a.Command != "":
		return a.Command
	case a.Host != "":
		return a.Tool + " " + a.Host
	}
	return a.Tool + " " + strings.Join(a.Targets, " ")
}

// setup makes a small git workspace with a committed program and an ignored secret.
func setup(ws string) error {
	files := map[string]string{
		"main.go":    "package main\n\nfunc main() {}\n",
		"go.mod":     "module example.com/app\n\ngo 1.22\n",
		".env":       "TOKEN=s3cret\n",
		".gitignore": ".env\nbuild/\n",
		"build/app":  "binary",
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
		return nil
	}
	if err := git("init", "-q"); err != nil {
		return err
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	return git("commit", "-q", "-m", "initial")
}
