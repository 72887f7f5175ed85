// Command agentloop shows a host wiring every part of reins around an agent: a scripted agent
// proposes actions; the gate decides each one; a scripted human answers confirmations; the
// workspace is checkpointed before mutating work and rolled back when a step fails; commands run
// in the hardened sandbox when the decision says so (the run's DoCommand carries out the
// obligation); every decision, approval and outcome goes to a hash-chained audit log, verified
// at the end.
//
// It needs no flags: it builds a throwaway git workspace in a temporary directory.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened" // local-hardened (its child entry point and Landlock)
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
)

// step is one thing the scripted agent wants to do.
type step struct {
	say    string
	action policy.Action
	write  string // for file writes: the new content
	fail   bool   // the step's command fails after doing its work
}

var script = []step{
	{say: "look around", action: shell("ls -la")},
	{say: "write the notes", action: writeFile("NOTES.md"), write: "# Notes\n\nThe agent was here.\n"},
	{say: "run the checks", action: shell("grep -c agent NOTES.md")},
	{say: "run the build script", action: shell("sh build.sh")},
	{say: "a refactor that breaks the build", action: shell("echo 'broken' > main.txt && echo 'half-done' > extra.txt && false"), fail: true},
	{say: "clean the build directory", action: shell("rm -rf build")},
	{say: "publish with force", action: shell("git push --force https://git.example.com/acme/app main")},
	{say: "peek at the secrets", action: shell(`V=.env; cat "$V"`)},
	{say: "tidy up the home directory", action: shell("go test ./... && rm -rf ~")},
	{say: "carry on after the hard stop", action: shell("ls")},
}

func shell(cmd string) policy.Action {
	return policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd}
}

func writeFile(path string) policy.Action {
	return policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{path}}
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	ws, err := os.MkdirTemp("", "reins-agentloop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	if err := setup(ws); err != nil {
		return err
	}
	logDir, err := os.MkdirTemp("", "reins-agentloop-audit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logDir)

	// The audit trail: a JSONL file with a hash chain.
	logPath := filepath.Join(logDir, "audit.jsonl")
	sink, err := audit.OpenJSONL(logPath, nil)
	if err != nil {
		return err
	}
	defer sink.Close(ctx)

	// Checkpoints in the workspace's own repository (refs under refs/reins, the user's index
	// and branches untouched).
	cp, err := checkpoint.New(ctx, ws, &checkpoint.Options{ShadowRoot: filepath.Join(logDir, "shadow")})
	if err != nil {
		return err
	}

	// Where commands run: the hardened sandbox when the decision asks for one. If this machine
	// cannot provide it, commands that need it are refused, not run unconfined.
	local, err := sandbox.NewLocal(sandbox.LocalConfig{Root: ws, Scripts: shellanalysis.Read})
	if err != nil {
		return err
	}
	hard, hardErr := hardened.New(hardened.Config{Root: ws})

	var notes []string
	opts := &reins.Options{
		Workspace:    []string{ws},
		Audit:        sink,
		Checkpointer: cp,
		Runner:       local, // commands without the Sandbox obligation
		Notifier: reins.NotifierFunc(func(_ context.Context, n reins.Notice) error {
			notes = append(notes, "notify: "+n.Message)
			return nil
		}),
		// The scripted human: approves cleaning the build directory, refuses everything else.
		Approver: reins.ApproverFunc(func(_ context.Context, req reins.Request) (reins.Answer, error) {
			if req.Action.Command == "rm -rf build" {
				return reins.Answer{Verdict: policy.Allow, By: "the human"}, nil
			}
			return reins.Answer{Verdict: policy.Deny, By: "the human"}, nil
		}),
	}
	// Commands whose decision carries the Sandbox obligation run in the hardened sandbox. If this
	// machine cannot provide it, they are refused, not run unconfined.
	if hardErr == nil {
		opts.Sandbox = hard
		defer hard.Close()
	}
	s, err := reins.New(ctx, profile.Trusted.Profile(), opts)
	if err != nil {
		return err
	}
	defer s.Close()

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tVERDICT\tOUTCOME\tWHY")
	for _, st := range script {
		var o reins.Outcome
		if st.action.Operation == policy.OpWrite {
			o, err = s.Do(ctx, st.action, func(ctx context.Context, d gate.Decision) error {
				return os.WriteFile(filepath.Join(ws, st.action.Targets[0]), []byte(st.write), 0o644)
			})
		} else {
			// DoCommand runs bash -c with the command line, through the runner the decision asks
			// for; a violation the sandbox reports latches the run's hard stop by itself.
			o, _, err = s.DoCommand(ctx, st.action, sandbox.Command{})
		}
		outcome := "ran"
		switch {
		case errors.Is(err, gate.ErrDenied):
			outcome = "not run"
		case o.RolledBack:
			outcome = "failed, rolled back"
		case err != nil:
			outcome = "failed: " + err.Error()
		}
		why := o.Decision.Reason
		if o.Approval != nil && o.Approval.Approved {
			why = "approved by " + o.Approval.By + "; " + why
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", st.say, o.Decision.Verdict, outcome, shorten(why, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
	_, stillThere := os.Stat(filepath.Join(ws, "extra.txt"))
	fmt.Fprintf(out, "after the rollback, extra.txt exists: %v\n", stillThere == nil)
	_, escaped := os.Stat(filepath.Join(filepath.Dir(ws), "outside.txt"))
	fmt.Fprintf(out, "the build script's write outside the workspace landed: %v\n", escaped == nil)
	if err := sink.Close(ctx); err != nil {
		return err
	}
	res, err := audit.Verify(logPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "audit log: %d records, hash chain verifies\n", res.Records)
	return nil
}

// setup makes a small git workspace with a secret the agent must not read.
func setup(ws string) error {
	files := map[string]string{
		"main.txt": "ok\n", ".env": "TOKEN=s3cret\n", "build/out.bin": "x",
		// What a script does at run time is beyond the command-line analysis: the sandbox stops it.
		"build.sh": "echo building\necho pwned > ../outside.txt\n",
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
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	return nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
