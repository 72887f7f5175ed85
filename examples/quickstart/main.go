// Command quickstart runs a fixed list of realistic agent actions through several built-in reins
// profiles and prints what the gate decides for each: verdict, obligations, the layer or rule
// that decided, and why. It needs no flags or files: it makes a throwaway workspace in a temporary
// directory.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

type step struct {
	what   string
	action policy.Action
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	ws, err := os.MkdirTemp("", "reins-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	for _, dir := range []string{"cmd/app", "build", ".git"} {
		if err := os.MkdirAll(filepath.Join(ws, dir), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "cmd/app/main.go"), []byte("package main\n"), 0o644); err != nil {
		return err
	}

	outside := filepath.Join(filepath.Dir(ws), "elsewhere.txt")
	steps := []step{
		{"read a file", policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"cmd/app/main.go"}}},
		{"edit a file", policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"cmd/app/main.go"}}},
		{"go test ./...", policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "go test ./..."}},
		{"rm -rf build", policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "rm -rf build"}},
		{"git push --force", policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "git push --force https://github.com/acme/app main"}},
		{"test, then rm -rf ~", policy.Action{Tool: "bash", Operation: policy.OpShell, Command: "go test ./... && rm -rf ~"}},
		{"cat .env", policy.Action{Tool: "bash", Operation: policy.OpShell, Command: `V=.env; cat "$V"`}},
		{"write .env", policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{".env"}}},
		{"write outside", policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{outside}}},
		{"fetch a URL", policy.Action{Tool: "web_fetch", Operation: policy.OpNetwork, Host: "example.com"}},
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tPROFILE\tVERDICT\tOBLIGATIONS\tDECIDED BY\tREASON")
	fmt.Printf("workspace %s; host group %q = [github.com] (reins ships no host names)\n\n", ws, profile.GroupConfiguredHosts)
	for _, name := range []string{profile.ProfileSafe, profile.ProfileDev, profile.ProfileFullAuto, profile.ModeTrusted, profile.ApprovalAuto} {
		p := profile.MustBuiltin(name).WithHostGroup(profile.GroupConfiguredHosts, "github.com")
		for _, s := range steps {
			// A fresh gate per action: the external write latches a hard stop that would otherwise
			// deny everything after it (which is the point of a hard stop).
			g, err := gate.New(p, &gate.Options{Workspace: []string{ws}})
			if err != nil {
				return err
			}
			d, err := g.Check(context.Background(), s.action)
			if err != nil {
				return err
			}
			by := d.Layer.String()
			if d.RuleID != "" && d.RuleID != by {
				by += " " + d.RuleID
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.what, name, d.Verdict, orDash(d.Obligations.String()), by, shorten(d.Reason, 70))
		}
		fmt.Fprintln(tw, "\t\t\t\t\t")
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
