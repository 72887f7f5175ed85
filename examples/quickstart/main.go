// Command quickstart tells the whole reins story in under a minute, with no setup: in a
// throwaway git workspace, a short scripted agent run goes through the gate. It prints what the
// gate decides for everyday actions under two profiles, then runs the agent's steps end to end
// (a reins.Run): an edit a human approves, with its checkpoint; a failing command rolled back; a
// denied write to .env; a command that reaches outside the workspace; a grant used twice; a
// profile switch refused without confirmation. It ends by verifying the audit log's hash chain
// and printing the checkpoint timeline.
//
// The output names no ids or times, so the README can show it verbatim (a test keeps the two
// equal).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func shell(cmd string) policy.Action {
	return policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd}
}

func file(op policy.Operation, tool, path string) policy.Action {
	return policy.Action{Tool: tool, Operation: op, Targets: []string{path}}
}

// the two profiles the story compares: the policy spec's developer profile and the autonomy
// dial's supervised band.
var profiles = []string{profile.ProfileDev, profile.PermissionSupervised}

var table = []policy.Action{
	file(policy.OpRead, "read_file", "main.go"),
	file(policy.OpWrite, "edit_file", "main.go"),
	shell("go test ./..."),
	shell("rm -rf build"),
	shell("git push --force origin main"),
	shell("go test ./... && rm -rf ~"),
	shell(`V=.env; cat "$V"`),
	file(policy.OpWrite, "write_file", ".env"),
	{Tool: "web_fetch", Operation: policy.OpNetwork, Host: "example.com"},
}

func run(ctx context.Context, out io.Writer) error {
	tmp, err := os.MkdirTemp("", "reins-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ws := filepath.Join(tmp, "project")
	if err := setup(ws); err != nil {
		return err
	}
	// Printed text names no temporary directory and no id, so that every run prints the same.
	say := func(format string, args ...any) {
		text := strings.ReplaceAll(fmt.Sprintf(format, args...), tmp, "$TMP")
		fmt.Fprintln(out, uuidPattern.ReplaceAllString(text, "<id>"))
	}
	say("reins quickstart: one agent run through the gate, in a throwaway git workspace")

	// 1. The decision table.
	say("\n1. What the gate decides, under two built-in profiles")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "   ACTION\t%s\n", strings.Join(profiles, "\t"))
	gates := map[string]*gate.Gate{}
	for _, name := range profiles {
		g, err := gate.New(profile.MustBuiltin(name), &gate.Options{Workspace: []string{ws}})
		if err != nil {
			return err
		}
		gates[name] = g
	}
	for _, a := range table {
		fmt.Fprintf(tw, "   %s", describe(a))
		for _, name := range profiles {
			d := gates[name].Decide(nil, a, nil)
			fmt.Fprintf(tw, "\t%s", verdict(d))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	// The agent's run under supervised: a checkpointer, a runner, an approver that stands in for
	// the human, and a hash-chained audit log.
	logPath := filepath.Join(tmp, "audit.jsonl")
	log, err := audit.OpenJSONL(logPath, nil)
	if err != nil {
		return err
	}
	defer log.Close(ctx)
	cp, err := checkpoint.New(ctx, ws, &checkpoint.Options{ShadowRoot: filepath.Join(tmp, "shadow")})
	if err != nil {
		return err
	}
	runner, err := sandbox.NewLocal(sandbox.LocalConfig{Root: ws, Scripts: shellanalysis.Read})
	if err != nil {
		return err
	}
	var asked []string
	human := reins.ApproverFunc(func(_ context.Context, req reins.Request) (reins.Answer, error) {
		asked = append(asked, describe(req.Action))
		ans := reins.Answer{Verdict: policy.Allow, By: "the human"}
		if req.Action.Command == "go vet ./..." {
			ans.Scope = reins.ForSession // "yes, and don't ask again for this"
		}
		return ans, nil
	})
	s, err := reins.New(ctx, profile.Supervised.Profile(), &reins.Options{Workspace: []string{ws}, Audit: log,
		Checkpointer: cp, Runner: runner, Approver: human,
		Notifier: reins.NotifierFunc(func(context.Context, reins.Notice) error { return nil })})
	if err != nil {
		return err
	}
	defer s.Close()
	step := func(n int, title string, a policy.Action, fn reins.Func) {
		say("\n%d. %s", n, title)
		before := len(asked)
		var o reins.Outcome
		var err error
		if fn != nil {
			o, err = s.Do(ctx, a, fn)
		} else {
			o, _, err = s.DoCommand(ctx, a, sandbox.Command{})
		}
		say("   %s: %s", describe(a), verdict(o.Decision))
		if len(asked) > before {
			say("   asked the human, who approved")
		} else if o.Decision.Verdict == policy.Allow && strings.HasPrefix(o.Decision.RuleID, "grant:") {
			say("   not asked: a session grant covers it")
		}
		if o.CheckpointID != "" {
			say("   checkpoint taken before it ran")
		}
		switch {
		case errors.Is(err, gate.ErrDenied):
			say("   not run: %s", o.Decision.Reason)
		case o.RolledBack:
			say("   it failed, and the workspace was rolled back to the checkpoint")
		case err != nil:
			say("   failed: %v", err)
		default:
			say("   ran")
		}
	}

	// 2. An approved edit, with its checkpoint.
	step(2, "An edit the human approves", file(policy.OpWrite, "edit_file", "main.go"),
		func(context.Context, gate.Decision) error {
			return os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() { println(\"hi\") }\n"), 0o644)
		})
	// 3. A failing command, rolled back.
	step(3, "A command that half-works, then fails", shell("echo broken > main.go && echo junk > extra.txt && false"), nil)
	b, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	_, extra := os.Stat(filepath.Join(ws, "extra.txt"))
	say("   main.go is the approved edit again: %v; extra.txt is gone: %v",
		strings.Contains(string(b), "println"), errors.Is(extra, os.ErrNotExist))
	// 4. A denied write to .env.
	step(4, "A write to a secret", file(policy.OpWrite, "write_file", ".env"),
		func(context.Context, gate.Decision) error { return os.WriteFile(filepath.Join(ws, ".env"), nil, 0o600) })
	// 5. A grant used twice.
	step(5, "A command approved for the session", shell("go vet ./..."), nil)
	step(6, "The same command again", shell("go vet ./..."), nil)
	// 7. A command that reaches outside the workspace: a hard stop that halts the run.
	step(7, "A command that writes outside the workspace", shell("cp main.go ../elsewhere.go"), nil)
	step(8, "Anything after the hard stop", file(policy.OpRead, "read_file", "main.go"),
		func(context.Context, gate.Decision) error { return nil })
	if err := s.Reset(ctx, "the human looked at it"); err != nil {
		return err
	}
	say("   the human resets the halt")

	// 9. A profile switch the agent asks for, refused without confirmation.
	say("\n9. The agent asks to switch to %s", profile.ProfileFullAuto)
	if _, err := s.SwitchTo(ctx, profile.ProfileFullAuto); err != nil {
		say("   refused: %v", err)
	} else {
		say("   switched (this should not happen without confirmation)")
	}
	say("   the active profile is still %s", s.Profile().Name())

	// 10. The audit log and the timeline.
	if err := log.Close(ctx); err != nil {
		return err
	}
	res, err := audit.Verify(logPath)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	kinds := map[audit.Kind]int{}
	for r, err := range audit.Scan(logPath, nil) {
		if err != nil {
			return err
		}
		kinds[r.Kind]++
	}
	say("\n10. The audit log: %d records (%d decisions, %d approvals, %d outcomes), hash chain verified",
		res.Records, kinds[audit.KindDecision], kinds[audit.KindApproval], kinds[audit.KindOutcome])
	list, err := cp.List(ctx)
	if err != nil {
		return err
	}
	say("    The checkpoint timeline, newest first (rewind any of them with `reins rewind N`):")
	for i, c := range list {
		say("    %d  %s", i+1, c.Label)
	}
	return nil
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// verdict prints a decision as VERDICT+obligations.
func verdict(d gate.Decision) string {
	if d.Obligations != 0 {
		return d.Verdict.String() + "+" + d.Obligations.String()
	}
	return d.Verdict.String()
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
