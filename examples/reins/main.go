// Command reins is a small command-line front end to the library: decide or explain one action,
// list, show and switch profiles, verify and read an audit log, and list or rewind checkpoints.
// It shows how a host wires the packages together; it is an example, not a product.
//
//	reins [-C dir] check   [-tool T] [-op OP] [-target PATH]... [-host H] [-- command line]
//	reins [-C dir] explain [same flags as check]
//	reins [-C dir] profile list | current | show NAME | set NAME
//	reins audit verify FILE | audit show FILE [-decision D] [-tool T]
//	reins [-C dir] timeline | rewind [ID|N] | diff ID
//
// check exits 0 for ALLOW, 1 for DENY, 2 for CONFIRM and 3 on an error.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

func main() {
	code, err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reins:", err)
		if code == 0 {
			code = 3
		}
	}
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, out io.Writer) (int, error) {
	top := flag.NewFlagSet("reins", flag.ContinueOnError)
	dir := top.String("C", ".", "the workspace (project) directory")
	if err := top.Parse(args); err != nil {
		return 3, err
	}
	ws, err := filepath.Abs(*dir)
	if err != nil {
		return 3, err
	}
	args = top.Args()
	if len(args) == 0 {
		return 3, errors.New("missing command: check, explain, profile, audit, timeline, rewind or diff")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "check", "explain":
		return check(ctx, ws, cmd == "explain", rest, out)
	case "profile":
		return 0, profileCmd(ctx, ws, rest, stdin, out)
	case "audit":
		return auditCmd(rest, out)
	case "timeline", "rewind", "diff":
		return 0, checkpointCmd(ctx, ws, cmd, rest, out)
	default:
		return 3, fmt.Errorf("unknown command %q", cmd)
	}
}

// load reads the user and project profile files for the workspace.
func load(ctx context.Context, ws string) (*profile.Loaded, error) {
	return profile.Load(ctx, &profile.LoadOptions{ProjectDir: ws})
}

func check(ctx context.Context, ws string, explain bool, args []string, out io.Writer) (int, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var a policy.Action
	var targets multi
	fs.StringVar(&a.Tool, "tool", "bash", "the tool name")
	op := fs.String("op", "", "the operation (read, write, delete, shell, network, ...); shell when a command is given")
	fs.Var(&targets, "target", "a path the action touches (repeatable)")
	fs.StringVar(&a.Host, "host", "", "the host a network action reaches")
	if err := fs.Parse(args); err != nil {
		return 3, err
	}
	a.Targets, a.Command, a.Operation = targets, strings.Join(fs.Args(), " "), policy.Operation(*op)
	if a.Operation == "" && a.Command != "" {
		a.Operation = policy.OpShell
	}
	loaded, err := load(ctx, ws)
	if err != nil {
		return 3, err
	}
	g, err := gate.New(loaded.Profile, &gate.Options{Workspace: []string{ws}})
	if err != nil {
		return 3, err
	}
	if explain {
		e, err := g.Explain(ctx, a)
		if err != nil {
			return 3, err
		}
		fmt.Fprint(out, e.String())
		return verdictCode(e.Decision.Verdict), nil
	}
	d, err := g.Check(ctx, a)
	if err != nil {
		return 3, err
	}
	fmt.Fprintln(out, d)
	return verdictCode(d.Verdict), nil
}

func verdictCode(v policy.Verdict) int {
	switch v {
	case policy.Allow:
		return 0
	case policy.Confirm:
		return 2
	}
	return 1
}

func profileCmd(ctx context.Context, ws string, args []string, stdin io.Reader, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("profile: want list, current, show NAME or set NAME")
	}
	loaded, err := load(ctx, ws)
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		for _, p := range profile.All() {
			mark := " "
			if p.Name == loaded.Profile.Name {
				mark = "*"
			}
			fmt.Fprintf(out, "%s %-18s %-16s %s\n", mark, p.Name, p.Family, p.Description)
		}
		return nil
	case "current":
		fmt.Fprint(out, loaded.Describe())
		return nil
	case "show":
		if len(args) != 2 {
			return errors.New("profile show: want a profile name")
		}
		p, err := loaded.Rebase(args[1])
		if err != nil {
			return err
		}
		fmt.Fprint(out, p.Describe())
		return nil
	case "set":
		if len(args) != 2 {
			return errors.New("profile set: want a profile name")
		}
		next, err := loaded.Rebase(args[1])
		if err != nil {
			return err
		}
		// The spec's switching rules: tightening always, loosening only when confirmed.
		if ok, why := profile.AtLeastAsRestrictive(next.Profile, loaded.Profile); !ok {
			fmt.Fprintf(out, "%s is looser than %s (%s). Switch? [y/N] ", args[1], loaded.Profile.Name, why)
			line, _ := bufio.NewReader(stdin).ReadString('\n')
			if answer := strings.TrimSpace(strings.ToLower(line)); answer != "y" && answer != "yes" {
				return errors.New("profile set: not confirmed")
			}
		}
		if err := setUserProfile(args[1]); err != nil {
			return err
		}
		fmt.Fprintf(out, "active profile: %s\n", args[1])
		return nil
	}
	return fmt.Errorf("profile: unknown subcommand %q", args[0])
}

// setUserProfile writes active_profile into the user profile file, keeping its other settings.
func setUserProfile(name string) error {
	dir, err := os.UserConfigDir()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "reins", "profile.json")
	doc := map[string]any{}
	switch b, err := os.ReadFile(path); {
	case err == nil:
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	doc["active_profile"] = name
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

func auditCmd(args []string, out io.Writer) (int, error) {
	if len(args) < 2 {
		return 3, errors.New("audit: want verify FILE or show FILE")
	}
	switch args[0] {
	case "verify":
		res, err := audit.Verify(args[1])
		if err != nil {
			return 1, err
		}
		fmt.Fprintf(out, "%d records in %d files verify; head %d %x\n", res.Records, len(res.Files), res.Seq, res.Head)
		return 0, nil
	case "show":
		fs := flag.NewFlagSet("audit show", flag.ContinueOnError)
		decision := fs.String("decision", "", "only this verdict (ALLOW, DENY, CONFIRM)")
		tool := fs.String("tool", "", "only this tool")
		if err := fs.Parse(args[2:]); err != nil {
			return 3, err
		}
		var f audit.Filter
		if *decision != "" {
			v, err := policy.ParseVerdict(*decision)
			if err != nil {
				return 3, err
			}
			f.Decisions = []policy.Verdict{v}
		}
		if *tool != "" {
			f.Tools = []string{*tool}
		}
		for r, err := range audit.Scan(args[1], &f) {
			if err != nil {
				return 1, err
			}
			fmt.Fprintf(out, "%s %-8s %-7s %-12s %-28s %s\n", r.Time.Format("2006-01-02 15:04:05"), r.Kind, r.Decision, r.Tool, r.RuleMatched, r.Reason)
		}
		return 0, nil
	}
	return 3, fmt.Errorf("audit: unknown subcommand %q", args[0])
}

func checkpointCmd(ctx context.Context, ws, cmd string, args []string, out io.Writer) error {
	cp, err := checkpoint.New(ctx, ws, nil)
	if err != nil {
		return err
	}
	switch cmd {
	case "timeline":
		list, err := cp.List(ctx)
		if err != nil {
			return err
		}
		for i, c := range list {
			fmt.Fprintf(out, "%2d  %s  %s  %3d files  %s\n", i+1, c.ID, c.Time.Format("2006-01-02 15:04:05"), c.FilesChanged, c.Label)
		}
		return nil
	case "diff":
		if len(args) != 1 {
			return errors.New("diff: want a checkpoint id")
		}
		changes, err := cp.Diff(ctx, args[0])
		if err != nil {
			return err
		}
		for _, ch := range changes {
			fmt.Fprintln(out, ch)
		}
		return nil
	}
	// rewind [id|n]: the seed's "rewind restores any checkpoint"; no argument is the latest.
	var res checkpoint.RewindResult
	switch {
	case len(args) == 0:
		res, err = cp.RewindN(ctx, 1)
	case isNumber(args[0]):
		n, _ := strconv.Atoi(args[0])
		res, err = cp.RewindN(ctx, n)
	default:
		res, err = cp.Rewind(ctx, args[0])
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "restored %s (%s); %d files changed; undo with: reins rewind %s\n",
		res.Restored.ID, res.Restored.Label, len(res.Changes), res.Undo.ID)
	return nil
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
