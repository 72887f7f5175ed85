package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

var profileCmd = &command{name: "profile", args: "<list|current|show|set>", synopsis: "list, show and switch autonomy profiles", sub: []*command{
	{name: "list", synopsis: "list the profiles; * marks the active one", run: profileList},
	{name: "current", synopsis: "show the active profile and where each setting came from", run: profileCurrent},
	{name: "show", args: "NAME", synopsis: "show a profile's settings, rules and limits", run: profileShow},
	{name: "set", args: "NAME", synopsis: "switch the user's profile (loosening asks first)", run: profileSet,
		flags: func(fs *flag.FlagSet) { fs.Bool("yes", false, "confirm a loosening switch without asking") }},
}}

var permissionsCmd = &command{name: "permissions", args: "list", synopsis: "what the active profile lets an agent do", sub: []*command{
	{name: "list", synopsis: "the permission mode, autonomy band, matrix, rules and protected paths in force", run: permissionsList},
}}

// load reads the user and project profile files for the workspace.
func (c *cli) load() (*loader.Loaded, string, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, "", err
	}
	l, err := loader.Load(c.ctx, &loader.Options{ProjectDir: ws})
	if err != nil {
		return nil, "", fmt.Errorf("%w (fix or remove the file named above)", err)
	}
	return l, ws, nil
}

// profileView is a profile in JSON, with the profile files' field names.
type profileView struct {
	Name           string        `json:"name"`
	Family         string        `json:"family"`
	Description    string        `json:"description"`
	Autonomy       float64       `json:"autonomy"`
	Band           string        `json:"band"`
	PermissionMode string        `json:"permission_mode"`
	Active         bool          `json:"active,omitempty"`
	Rules          []policy.Rule `json:"custom_rules,omitempty"`
	DeniedPaths    []string      `json:"denied_paths,omitempty"`
	ShellAllowlist []string      `json:"shell_allowlist,omitempty"`
	ShellBlocklist []string      `json:"shell_blocklist,omitempty"`
	AllowedTools   []string      `json:"allowed_tools,omitempty"`
}

func viewOf(p profile.Profile, active bool) profileView {
	band := "invalid"
	if b, err := policy.BandOf(p.Autonomy); err == nil {
		band = b.String()
	}
	return profileView{Name: p.Name, Family: fmt.Sprint(p.Family), Description: p.Description, Autonomy: p.Autonomy,
		Band: band, PermissionMode: fmt.Sprint(p.Mode), Active: active, Rules: p.Rules, DeniedPaths: p.ProtectedPaths,
		ShellAllowlist: p.ShellAllowlist, ShellBlocklist: p.ShellBlocklist, AllowedTools: p.AllowedTools}
}

func profileList(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments"); err != nil {
		return exitError, err
	}
	l, _, err := c.load()
	if err != nil {
		return exitError, err
	}
	var views []profileView
	for _, p := range profile.All() {
		v := viewOf(p, p.Name == l.Profile.Name)
		v.Rules, v.DeniedPaths, v.ShellAllowlist, v.ShellBlocklist, v.AllowedTools = nil, nil, nil, nil, nil
		views = append(views, v)
	}
	return exitOK, c.emit(views, func(w io.Writer) {
		fmt.Fprintln(w, "\tNAME\tFAMILY\tBAND\tDESCRIPTION")
		for _, v := range views {
			mark := ""
			if v.Active {
				mark = "*"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", mark, v.Name, v.Family, v.Band, v.Description)
		}
	})
}

func profileCurrent(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments"); err != nil {
		return exitError, err
	}
	l, _, err := c.load()
	if err != nil {
		return exitError, err
	}
	if c.json {
		return exitOK, c.emit(viewOf(l.Profile, true), nil)
	}
	_, err = io.WriteString(c.stdout, l.Describe())
	return exitOK, err
}

func profileShow(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "a profile name (see 'reins profile list')"); err != nil {
		return exitError, err
	}
	l, _, err := c.load()
	if err != nil {
		return exitError, err
	}
	p, err := l.Rebase(fs.Arg(0))
	if err != nil {
		return exitError, fmt.Errorf("%w (see 'reins profile list')", err)
	}
	if c.json {
		return exitOK, c.emit(viewOf(p.Profile, p.Profile.Name == l.Profile.Name), nil)
	}
	_, err = io.WriteString(c.stdout, p.Describe())
	return exitOK, err
}

func profileSet(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "a profile name (see 'reins profile list')"); err != nil {
		return exitError, err
	}
	name := fs.Arg(0)
	l, _, err := c.load()
	if err != nil {
		return exitError, err
	}
	next, err := l.Rebase(name)
	if err != nil {
		return exitError, fmt.Errorf("%w (see 'reins profile list')", err)
	}
	// The spec's switching rules: tightening always, loosening only when confirmed.
	if ok, why := profile.AtLeastAsRestrictive(next.Profile, l.Profile); !ok && !fs.Lookup("yes").Value.(flag.Getter).Get().(bool) {
		fmt.Fprintf(c.stdout, "%s is looser than %s (%s). Switch? [y/N] ", name, l.Profile.Name, why)
		line, _ := bufio.NewReader(c.stdin).ReadString('\n')
		if answer := strings.TrimSpace(strings.ToLower(line)); answer != "y" && answer != "yes" {
			return exitError, errors.New("profile set: not confirmed; the active profile is unchanged (pass --yes to confirm without a prompt)")
		}
	}
	if err := setUserProfile(name); err != nil {
		return exitError, err
	}
	return exitOK, c.emit(map[string]string{"active_profile": name}, func(w io.Writer) {
		fmt.Fprintf(w, "active profile: %s\n", name)
	})
}

// setUserProfile writes active_profile into the user profile file, keeping its other settings.
func setUserProfile(name string) error {
	dir, err := os.UserConfigDir()
	if err != nil {
		return fmt.Errorf("no user configuration directory (set $XDG_CONFIG_HOME or $HOME): %w", err)
	}
	path := filepath.Join(dir, "reins", "profile.json")
	doc := map[string]any{}
	switch b, err := os.ReadFile(path); {
	case err == nil:
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w (fix the file or remove it)", path, err)
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
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// permissionsView is what the active profile lets an agent do.
type permissionsView struct {
	Profile        string            `json:"active_profile"`
	PermissionMode string            `json:"permission_mode"`
	Band           string            `json:"band"`
	Matrix         map[string]string `json:"matrix"`
	Rules          []policy.Rule     `json:"rules"`
	DeniedPaths    []string          `json:"denied_paths"`
	ShellAllowlist []string          `json:"shell_allowlist,omitempty"`
	ShellBlocklist []string          `json:"shell_blocklist,omitempty"`
}

func permissionsList(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments"); err != nil {
		return exitError, err
	}
	l, _, err := c.load()
	if err != nil {
		return exitError, err
	}
	p := l.Profile
	v := permissionsView{Profile: p.Name, PermissionMode: fmt.Sprint(p.Mode), Matrix: map[string]string{},
		Rules: p.Rules, DeniedPaths: p.ProtectedPaths, ShellAllowlist: p.ShellAllowlist, ShellBlocklist: p.ShellBlocklist}
	b, err := policy.BandOf(p.Autonomy)
	if err != nil {
		return exitError, err
	}
	v.Band = b.String()
	for _, lvl := range risk.Levels() {
		v.Matrix[lvl.String()] = policy.Matrix(b, lvl).String()
	}
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "profile\t%s\n", v.Profile)
		fmt.Fprintf(w, "permission mode\t%s\n", v.PermissionMode)
		fmt.Fprintf(w, "autonomy band\t%s\n", v.Band)
		fmt.Fprintf(w, "protected paths\t%s\n", strings.Join(v.DeniedPaths, " "))
		fmt.Fprintln(w, "\nRISK\tWITHOUT A MATCHING RULE")
		for _, lvl := range risk.Levels() {
			fmt.Fprintf(w, "%s\t%s\n", lvl, v.Matrix[lvl.String()])
		}
		fmt.Fprintln(w, "\nPRIORITY\tRULE\tVERDICT\tWHEN")
		for _, r := range v.Rules {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", r.Priority, r.ID, r.Action, when(r.Condition))
		}
	})
}

// when summarises a rule's condition in one line.
func when(c policy.Condition) string {
	var parts []string
	add := func(name string, vals []string) {
		if len(vals) > 0 {
			parts = append(parts, name+"="+strings.Join(vals, ","))
		}
	}
	add("op", strs(c.OperationType))
	add("risk", c.Risk.Names())
	add("tool", c.Tools)
	add("host", c.Hosts)
	add("command", c.Commands)
	if c.TargetPattern != "" {
		parts = append(parts, "target="+c.TargetPattern)
	}
	if c.CommandPattern != "" {
		parts = append(parts, "command~"+c.CommandPattern)
	}
	if c.OutsideWorkspace {
		parts = append(parts, "outside-workspace")
	}
	if len(parts) == 0 {
		return "always"
	}
	return strings.Join(parts, " ")
}

// strs prints each element of a slice.
func strs[T any](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprint(x)
	}
	return out
}
